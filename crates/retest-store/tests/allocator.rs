//! SQLite on mimalloc ([`retest_store::sqlite_on_mimalloc`]), tested in a
//! process of its own: nothing here uses SQLite before the test asks.

use retest_store::Store;

#[test]
fn sqlite_allocates_through_mimalloc_when_asked_before_use() {
    assert!(retest_store::sqlite_on_mimalloc(), "SQLite takes the allocator before its first use");
    let d = tempfile::tempdir().unwrap();
    let s = Store::init(&Store::dir_for(d.path())).unwrap();
    assert!(s.meta("schema_version").unwrap().is_some(), "the store works");
    // SAFETY: SQLite's own allocation, freed by SQLite
    unsafe {
        let p = rusqlite::ffi::sqlite3_malloc(100);
        assert!(!p.is_null());
        assert!(libmimalloc_sys::mi_is_in_heap_region(p), "SQLite's memory is mimalloc's");
        assert!(rusqlite::ffi::sqlite3_msize(p) >= 100);
        rusqlite::ffi::sqlite3_free(p);
    }
    assert!(!retest_store::sqlite_on_mimalloc(), "refused once SQLite is in use");
    drop(s);
}
