//! Sharded runs: which tests of a list one of N workers runs
//! (`retest run --partition hash:K/N` or `count:K/N`), with cargo-nextest's
//! semantics.
//!
//! * `hash:K/N` — a test is in shard K when `xxh64(key, seed 0) mod N = K − 1`.
//!   XXH64 is a specified function (fixed output on every platform, word
//!   size, endianness and Rust version; `xxhash-rust`'s implementation is
//!   checked against the reference vectors below), computed over the UTF-8
//!   bytes of the test's *key* — what identifies it across versions (its
//!   name; a universe test's command) — so a test stays in its shard when
//!   others are added or removed, on every machine.
//! * `count:K/N` — the list is sorted by key (byte order, so every machine
//!   agrees whatever order discovery returned), and the test at position
//!   `i` (from 0) is in shard K when `i mod N = K − 1`: round-robin, shards
//!   differing in size by at most one; adding a test may move others.
//!
//! Either way every test is in exactly one of the N shards
//! (`every_test_is_in_exactly_one_shard`). The partition applies after every
//! other filter: `--filter` and `--selected` partition the tests they keep.

use std::fmt;
use std::str::FromStr;

/// How the tests are split among the shards.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    /// By a stable hash of the key: independent of the other tests.
    Hash,
    /// Round-robin over the list sorted by key: even sizes.
    Count,
}

/// Shard `shard` (from 1) of `total`, by `method`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Partition {
    pub method: Method,
    pub shard: u64,
    pub total: u64,
}

/// A `--partition` value that does not parse, and why.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("--partition `{given}`: {why}")]
pub struct ParseError {
    pub given: String,
    pub why: String,
}

impl FromStr for Partition {
    type Err = ParseError;

    fn from_str(s: &str) -> Result<Partition, ParseError> {
        let err = |why: String| ParseError { given: s.to_string(), why };
        let (method, rest) = if let Some(r) = s.strip_prefix("hash:") {
            (Method::Hash, r)
        } else if let Some(r) = s.strip_prefix("count:") {
            (Method::Count, r)
        } else {
            return Err(err("it must start with `hash:` or `count:` (e.g. hash:1/4)".to_string()));
        };
        let (k, n) = rest.split_once('/').ok_or_else(|| err("expected K/N after the method, e.g. 2/4".to_string()))?;
        let num = |v: &str, what: &str| -> Result<u64, ParseError> {
            // digits only: `+3`, ` 3` and `3 ` are not shard numbers
            if v.is_empty() || !v.bytes().all(|b| b.is_ascii_digit()) {
                return Err(err(format!("{what} `{v}` is not a whole number")));
            }
            v.parse().map_err(|_| err(format!("{what} `{v}` is too large")))
        };
        let (shard, total) = (num(k, "the shard")?, num(n, "the number of shards")?);
        if total == 0 {
            return Err(err("the number of shards must be at least 1".to_string()));
        }
        if shard == 0 || shard > total {
            return Err(err(format!("the shard must be between 1 and {total}")));
        }
        Ok(Partition { method, shard, total })
    }
}

impl fmt::Display for Partition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let m = match self.method {
            Method::Hash => "hash",
            Method::Count => "count",
        };
        write!(f, "{m}:{}/{}", self.shard, self.total)
    }
}

/// The stable hash of a test key that `hash:K/N` shards by: XXH64 with seed 0.
pub fn key_hash(key: &str) -> u64 {
    xxhash_rust::xxh64::xxh64(key.as_bytes(), 0)
}

impl Partition {
    /// Which of `keys` are in this shard: one flag per key, in their order.
    pub fn members<S: AsRef<str>>(&self, keys: &[S]) -> Vec<bool> {
        let want = self.shard - 1;
        match self.method {
            Method::Hash => keys.iter().map(|k| key_hash(k.as_ref()) % self.total == want).collect(),
            Method::Count => {
                let mut order: Vec<usize> = (0..keys.len()).collect();
                order.sort_by(|&a, &b| keys[a].as_ref().as_bytes().cmp(keys[b].as_ref().as_bytes()));
                let mut mine = vec![false; keys.len()];
                for (pos, &i) in order.iter().enumerate() {
                    mine[i] = pos as u64 % self.total == want;
                }
                mine
            }
        }
    }

    /// The items of `items` in this shard, in their order; `key` gives each one's key.
    pub fn select<T: Clone>(&self, items: &[T], key: impl Fn(&T) -> &str) -> Vec<T> {
        let keys: Vec<&str> = items.iter().map(&key).collect();
        items.iter().zip(self.members(&keys)).filter(|(_, m)| *m).map(|(t, _)| t.clone()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// XXH64 reference values (the xxHash project's `xxhsum -H64`): the
    /// shards of `hash:K/N` are the same on every machine.
    #[test]
    fn the_key_hash_is_xxh64_with_seed_zero() {
        assert_eq!(key_hash(""), 0xef46db3751d8e999);
        assert_eq!(key_hash("a"), 0xd24ec4f1a98c6e5b);
        assert_eq!(key_hash("abc"), 0x44bc2cf5ad770999);
    }

    #[test]
    fn partitions_parse_like_nextests() {
        let p: Partition = "hash:2/4".parse().unwrap();
        assert_eq!(p, Partition { method: Method::Hash, shard: 2, total: 4 });
        assert_eq!(p.to_string(), "hash:2/4");
        assert_eq!("count:1/1".parse::<Partition>().unwrap().method, Method::Count);
        for bad in [
            "",
            "hash",
            "hash:",
            "hash:1",
            "hash:1/",
            "hash:0/2",
            "hash:3/2",
            "hash:m/2",
            "hash:1/n",
            "hash:1/2/3",
            "slice:1/2",
            "hash:+1/2",
            "hash: 1/2",
            "count:1/0",
            "count:1/99999999999999999999",
        ] {
            let e = bad.parse::<Partition>().unwrap_err();
            assert!(e.to_string().starts_with(&format!("--partition `{bad}`: ")), "{e}");
        }
    }

    /// Round-robin over the keys in byte order, whatever order they come in.
    #[test]
    fn count_deals_the_sorted_keys_round_robin() {
        let keys = ["d", "b", "a", "e", "c"];
        let shard = |k| Partition { method: Method::Count, shard: k, total: 2 }.members(&keys);
        // sorted: a b c d e → shard 1: a c e, shard 2: b d
        assert_eq!(shard(1), [false, false, true, true, true]);
        assert_eq!(shard(2), [true, true, false, false, false]);
    }

    /// A test's hashed shard depends on its key alone.
    #[test]
    fn a_hashed_test_keeps_its_shard_when_others_come_and_go() {
        let p = Partition { method: Method::Hash, shard: 3, total: 5 };
        let all: Vec<String> = (0..200).map(|i| format!("test-{i}")).collect();
        let in_all = p.members(&all);
        let fewer: Vec<&String> = all.iter().step_by(3).collect();
        let in_fewer = p.members(&fewer);
        for (i, k) in fewer.iter().enumerate() {
            let j = all.iter().position(|a| a == *k).unwrap();
            assert_eq!(in_fewer[i], in_all[j]);
        }
    }

    proptest! {
        /// Invariant: every test is in exactly one shard, for both methods and
        /// any number of shards; round-robin shards differ in size by at most one.
        #[test]
        fn every_test_is_in_exactly_one_shard(
            keys in proptest::collection::btree_set(".{0,12}", 0..60),
            total in 1u64..9,
            shuffle in any::<u64>(),
        ) {
            let mut keys: Vec<String> = keys.into_iter().collect();
            // discovery order must not matter
            let n = keys.len().max(1);
            keys.rotate_left((shuffle as usize) % n);
            for method in [Method::Hash, Method::Count] {
                let mut owners = vec![0u32; keys.len()];
                let mut sizes = Vec::new();
                for shard in 1..=total {
                    let m = Partition { method, shard, total }.members(&keys);
                    sizes.push(m.iter().filter(|x| **x).count());
                    for (o, x) in owners.iter_mut().zip(m) {
                        *o += x as u32;
                    }
                }
                prop_assert!(owners.iter().all(|o| *o == 1), "{method:?} {total}: {owners:?}");
                if method == Method::Count {
                    let (lo, hi) = (sizes.iter().min().unwrap(), sizes.iter().max().unwrap());
                    prop_assert!(hi - lo <= 1, "{sizes:?}");
                }
            }
        }
    }
}
