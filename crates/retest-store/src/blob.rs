//! Encodings of the blobs the store keeps: units (binary, LZ4-compressed), probe
//! plans, roaring bitmaps (portable format), edge indexes, what a build records
//! beyond edges, and what a test recorded beyond edges.

use retest_graph::Unit;
use retest_graph::coverage::Probe;
use retest_graph::recording::UnitRecording;
use roaring::RoaringBitmap;

use crate::{EdgeIndex, Recorded};

/// Blob format tags, so encodings can be told apart: 1 is JSON, still read (stores
/// written before version 3 of the schema hold it until migrated); 2 is
/// [`crate::unitbin`]'s binary layout without the unit's language facts, still
/// read (they are then [`crate::unitbin::legacy_facts`]); 3 is that layout
/// with them, still read; 4 adds C++'s classes and member calls (a unit of
/// tag 3 reads with none), still read; 5 puts each procedure's summary and
/// body length ahead of its body, so that bodies decode on demand, still
/// read; 6 keeps the system headers' declarations in a section of their own,
/// so that a shell is read without them, still read; 7 keeps the project's
/// declarations in a section of their own too. Tags 1–4 are LZ4-compressed
/// after the tag; 5 to 7 compress their shell and each part on its own.
const UNIT_JSON: u8 = 1;
const UNIT_BIN_NO_FACTS: u8 = 2;
const UNIT_BIN_FACTS: u8 = 3;
const UNIT_BIN_CLASSES: u8 = 4;
const UNIT_BIN_LAZY: u8 = 5;
const UNIT_BIN_SEALED: u8 = 6;
pub(crate) const UNIT_BIN: u8 = 7;

pub fn encode_unit(u: &Unit) -> Vec<u8> {
    // encoding 7 compresses its parts itself
    let mut out = vec![UNIT_BIN];
    out.extend(crate::unitbin::encode(u));
    out
}

/// The JSON encoding (tag 1) that stores before schema version 3 hold.
#[cfg(test)]
pub fn encode_unit_json(u: &Unit) -> Vec<u8> {
    let json = serde_json::to_vec(u).expect("a unit always serialises");
    let mut out = vec![UNIT_JSON];
    out.extend(lz4_flex::compress_prepend_size(&json));
    out
}

/// Whether a unit blob is in the current encoding.
pub fn unit_is_current(b: &[u8]) -> bool {
    b.first() == Some(&UNIT_BIN)
}

pub fn decode_unit(b: &[u8]) -> Result<Unit, String> {
    match b.split_first() {
        Some((&UNIT_BIN, rest)) => crate::unitbin::decode(rest, crate::unitbin::Version::Apart),
        Some((&UNIT_BIN_SEALED, rest)) => crate::unitbin::decode(rest, crate::unitbin::Version::Sealed),
        Some((&UNIT_BIN_LAZY, rest)) => crate::unitbin::decode(rest, crate::unitbin::Version::Lazy),
        Some((&tag @ (UNIT_BIN_CLASSES | UNIT_BIN_FACTS | UNIT_BIN_NO_FACTS), rest)) => {
            use crate::unitbin::Version;
            let raw = lz4_flex::decompress_size_prepended(rest).map_err(|e| e.to_string())?;
            let version = match tag {
                UNIT_BIN_NO_FACTS => Version::NoFacts,
                UNIT_BIN_FACTS => Version::Facts,
                _ => Version::Classes,
            };
            crate::unitbin::decode(&raw, version)
        }
        Some((&UNIT_JSON, rest)) => {
            let json = lz4_flex::decompress_size_prepended(rest).map_err(|e| e.to_string())?;
            let mut u: Unit = serde_json::from_slice(&json).map_err(|e| e.to_string())?;
            crate::unitbin::legacy_facts(&mut u);
            Ok(u)
        }
        Some((v, _)) => Err(format!("unknown unit encoding {v}")),
        None => Err("empty unit blob".to_string()),
    }
}

/// [`decode_unit_lazy_of`] of a borrowed blob.
#[cfg(test)]
pub fn decode_unit_lazy(b: &[u8]) -> Result<(Unit, Option<crate::unitbin::StoredBodies>), String> {
    decode_unit_lazy_of(b.to_vec())
}

/// A unit whose procedure bodies decode on demand, when its encoding allows
/// it (5; 6, whose shell leaves out the system headers' declarations; 7,
/// whose shell leaves out all declarations); a unit of an older encoding is
/// decoded whole (no bodies). The bodies keep the blob, not a copy of
/// their bytes.
pub fn decode_unit_lazy_of(b: Vec<u8>) -> Result<(Unit, Option<crate::unitbin::StoredBodies>), String> {
    use crate::unitbin::{Version, decode_shell_of};
    let version = match b.first() {
        Some(&UNIT_BIN) => Version::Apart,
        Some(&UNIT_BIN_SEALED) => Version::Sealed,
        Some(&UNIT_BIN_LAZY) => Version::Lazy,
        _ => return decode_unit(&b).map(|u| (u, None)),
    };
    decode_shell_of(b, 1, version).map(|(u, b)| (u, Some(b)))
}

pub fn encode_plan(p: &[Vec<Probe>]) -> Vec<u8> {
    serde_json::to_vec(p).expect("a plan always serialises")
}

pub fn decode_plan(b: &[u8]) -> Result<Vec<Vec<Probe>>, String> {
    serde_json::from_slice(b).map_err(|e| e.to_string())
}

pub fn encode_bitmap(bm: &RoaringBitmap) -> Vec<u8> {
    let mut bm = bm.clone();
    bm.optimize();
    let mut out = Vec::with_capacity(bm.serialized_size());
    bm.serialize_into(&mut out).expect("writing to a Vec cannot fail");
    out
}

pub fn decode_bitmap(b: &[u8]) -> Result<RoaringBitmap, String> {
    RoaringBitmap::deserialize_from(b).map_err(|e| e.to_string())
}

/// `u32 count`, then per edge (ascending): `u32 edge`, `u32 len`, `len` bytes
/// of bitmap — a whole unit's index, as stores before version 7 kept it
/// (a block of one is [`encode_edges`]).
#[cfg(test)]
pub fn encode_index(idx: &EdgeIndex) -> Vec<u8> {
    let mut edges: Vec<(u32, &RoaringBitmap)> = idx.edges.iter().map(|(e, b)| (*e, b)).collect();
    edges.sort_by_key(|(e, _)| *e);
    encode_edges(&edges)
}

/// [`encode_index`] of some edges, ascending (a block of an index).
pub fn encode_edges(edges: &[(u32, &RoaringBitmap)]) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend((edges.len() as u32).to_le_bytes());
    for (e, bm) in edges {
        let b = encode_bitmap(bm);
        out.extend(e.to_le_bytes());
        out.extend((b.len() as u32).to_le_bytes());
        out.extend(b);
    }
    out
}

/// Tag of an `edge_index` row: the unit's index is stored in `edge_blocks`,
/// in blocks of the `u32` (little-endian) that follows.
const INDEX_IN_BLOCKS: u8 = 2;

/// The `edge_index` row of a unit whose index is stored in blocks of `block` edges.
pub fn encode_index_mark(block: u32) -> Vec<u8> {
    let mut out = vec![INDEX_IN_BLOCKS];
    out.extend(block.to_le_bytes());
    out
}

/// The block size an `edge_index` row gives.
pub fn decode_index_mark(b: &[u8]) -> Result<u32, String> {
    match b.split_first() {
        Some((&INDEX_IN_BLOCKS, rest)) if rest.len() == 4 => {
            let block = u32::from_le_bytes(rest.try_into().expect("four bytes"));
            if block == 0 { Err("an edge index in blocks of 0 edges".to_string()) } else { Ok(block) }
        }
        _ => Err("an edge index mark of an unknown format".to_string()),
    }
}

pub fn decode_index(b: &[u8]) -> Result<EdgeIndex, String> {
    let mut pos = 0usize;
    let u32_at = |pos: &mut usize| -> Result<u32, String> {
        let s = b.get(*pos..*pos + 4).ok_or("truncated edge index")?;
        *pos += 4;
        Ok(u32::from_le_bytes(s.try_into().unwrap()))
    };
    let n = u32_at(&mut pos)?;
    let mut idx = EdgeIndex::default();
    for _ in 0..n {
        let e = u32_at(&mut pos)?;
        let len = u32_at(&mut pos)? as usize;
        let s = b.get(pos..pos + len).ok_or("truncated edge index")?;
        pos += len;
        idx.edges.insert(e, decode_bitmap(s)?);
    }
    if pos != b.len() {
        return Err("trailing bytes after edge index".to_string());
    }
    Ok(idx)
}

/// Tag of the [`Recorded`] encoding.
const RECORDED_V1: u8 = 1;
/// Tag of the encoding with execution counts (schema version 8).
const RECORDED_V2: u8 = 2;

/// `u8 tag`, three length-prefixed bitmaps (MC/DC cells, path cells, frames),
/// `u32 keys`, per key (ascending) `u32 key`, `u32 n`, `n` × `u64` ids; with
/// tag 2 then `u32 n` and `n` × (edge gap, count), both LEB128 varints —
/// the edges' counts, only those not zero (a recording without counts has
/// tag 1 and nothing after the ids).
pub fn encode_recorded(r: &Recorded) -> Vec<u8> {
    // version 2 adds execution counts; without them the blob is version 1's
    let mut out = vec![if r.counts.is_empty() { RECORDED_V1 } else { RECORDED_V2 }];
    for bm in [&r.mcdc, &r.paths, &r.frames] {
        let b = encode_bitmap(bm);
        out.extend((b.len() as u32).to_le_bytes());
        out.extend(b);
    }
    out.extend((r.ids.len() as u32).to_le_bytes());
    for (k, ids) in &r.ids {
        out.extend(k.to_le_bytes());
        out.extend((ids.len() as u32).to_le_bytes());
        for id in ids {
            out.extend(id.to_le_bytes());
        }
    }
    if !r.counts.is_empty() {
        // (edge, count) of the edges that ran, edges increasing: the edge as
        // the gap from the one before, both as LEB128 varints
        out.extend((r.counts.len() as u32).to_le_bytes());
        let mut prev = 0u32;
        for (i, (&e, &n)) in r.counts.iter().enumerate() {
            put_varint(&mut out, u64::from(if i == 0 { e } else { e - prev }));
            put_varint(&mut out, n);
            prev = e;
        }
    }
    out
}

/// `v` as an unsigned LEB128 varint.
fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

pub fn decode_recorded(b: &[u8]) -> Result<Recorded, String> {
    let (&tag, mut rest) = b.split_first().ok_or("empty recording blob")?;
    if tag != RECORDED_V1 && tag != RECORDED_V2 {
        return Err(format!("unknown recording encoding {tag}"));
    }
    let mut take = |n: usize| -> Result<&[u8], String> {
        if rest.len() < n {
            return Err("truncated recording blob".to_string());
        }
        let (a, b) = rest.split_at(n);
        rest = b;
        Ok(a)
    };
    let mut r = Recorded::default();
    let mut bms = Vec::with_capacity(3);
    for _ in 0..3 {
        let n = u32::from_le_bytes(take(4)?.try_into().unwrap()) as usize;
        bms.push(decode_bitmap(take(n)?)?);
    }
    r.frames = bms.pop().unwrap();
    r.paths = bms.pop().unwrap();
    r.mcdc = bms.pop().unwrap();
    let keys = u32::from_le_bytes(take(4)?.try_into().unwrap());
    for _ in 0..keys {
        let k = u32::from_le_bytes(take(4)?.try_into().unwrap());
        let n = u32::from_le_bytes(take(4)?.try_into().unwrap()) as usize;
        let raw = take(n.checked_mul(8).ok_or("bad id count")?)?;
        let ids = raw.chunks_exact(8).map(|c| u64::from_le_bytes(c.try_into().unwrap())).collect();
        r.ids.insert(k, ids);
    }
    if tag == RECORDED_V2 {
        let n = u32::from_le_bytes(take(4)?.try_into().unwrap());
        let mut varint = || -> Result<u64, String> {
            let mut v = 0u64;
            for shift in (0..64).step_by(7) {
                let b = take(1)?[0];
                v |= u64::from(b & 0x7f) << shift;
                if b & 0x80 == 0 {
                    return Ok(v);
                }
            }
            Err("bad varint in recording blob".to_string())
        };
        let mut prev: Option<u32> = None;
        for _ in 0..n {
            let gap = u32::try_from(varint()?).map_err(|_| "edge out of range in recording blob")?;
            let e = match prev {
                None => gap,
                Some(p) if gap > 0 => p.checked_add(gap).ok_or("edge out of range in recording blob")?,
                Some(_) => return Err("edges not increasing in recording blob".to_string()),
            };
            let count = varint()?;
            r.counts.insert(e, count);
            prev = Some(e);
        }
    }
    if !rest.is_empty() {
        return Err("trailing bytes in recording blob".to_string());
    }
    Ok(r)
}

pub fn encode_recording(r: &UnitRecording) -> Vec<u8> {
    let json = serde_json::to_vec(r).expect("a recording always serialises");
    lz4_flex::compress_prepend_size(&json)
}

pub fn decode_recording(b: &[u8]) -> Result<UnitRecording, String> {
    let json = lz4_flex::decompress_size_prepended(b).map_err(|e| e.to_string())?;
    serde_json::from_slice(&json).map_err(|e| e.to_string())
}
