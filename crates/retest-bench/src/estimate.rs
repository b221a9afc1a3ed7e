//! Coverage that is not recomputed, for the comparison of 004 §4 (Tables 3–8):
//!
//! * *outdated* — the matrix of v0 reused unchanged: each covered edge keeps its
//!   procedure and its number inside the procedure;
//! * *estimated* — the previous version's estimate mapped onto the next version
//!   through a statement matching (the role JDiff plays in the paper): source
//!   lines are matched by a longest common subsequence (gaps of equal length
//!   between matched lines pair up line by line), condition-level nodes of
//!   a procedure by kind, text and matched line (then, for nodes left over, by
//!   kind and matched line alone: a modified statement corresponds to its old
//!   self), edges by their matched ends and label. An edge with no image is lost.
//!
//! Both work on `retest cfg --level condition --format json` of each version;
//! edge ids there are the ids the matrix uses (position in the procedure's
//! sorted edge list, offset by the sizes of the procedures before it).

use std::collections::{BTreeMap, BTreeSet, HashMap};

use anyhow::{Context, Result};

/// One procedure's condition-level CFG.
pub struct Proc {
    pub name: String,
    /// Unit-wide id of its first edge.
    pub base: u64,
    /// (kind, text, line)
    pub nodes: Vec<(String, String, u64)>,
    /// (from, to, label), by local edge id
    pub edges: Vec<(usize, usize, String)>,
}

/// A version's CFGs (one translation unit) and its source lines.
pub struct Version {
    pub procs: Vec<Proc>,
    pub by_name: HashMap<String, usize>,
    pub lines: Vec<String>,
}

impl Version {
    pub fn parse(cfg_json: &str, source: &str) -> Result<Version> {
        let v: serde_json::Value = serde_json::from_str(cfg_json).context("parsing `retest cfg` output")?;
        let tus = v["translation_units"].as_array().context("no translation_units")?;
        anyhow::ensure!(tus.len() == 1, "one translation unit expected, got {}", tus.len());
        let mut procs = Vec::new();
        let mut base = 0u64;
        for f in tus[0]["functions"].as_array().context("no functions")? {
            let name = f["name"].as_str().context("a function without a name")?.to_string();
            let mut nodes = Vec::new();
            for (i, n) in f["nodes"].as_array().context("no nodes")?.iter().enumerate() {
                anyhow::ensure!(n["id"].as_u64() == Some(i as u64), "{name}: nodes out of order");
                nodes.push((
                    n["kind"].as_str().unwrap_or("").to_string(),
                    n["text"].as_str().unwrap_or("").to_string(),
                    n["line"].as_u64().unwrap_or(0),
                ));
            }
            let mut edges = Vec::new();
            for (i, e) in f["edges"].as_array().context("no edges")?.iter().enumerate() {
                anyhow::ensure!(e["id"].as_u64() == Some(i as u64), "{name}: edges out of order");
                edges.push((
                    e["from"].as_u64().context("edge without from")? as usize,
                    e["to"].as_u64().context("edge without to")? as usize,
                    e["label"].as_str().unwrap_or("").to_string(),
                ));
            }
            let n = edges.len() as u64;
            procs.push(Proc { name, base, nodes, edges });
            base += n;
        }
        let by_name = procs.iter().enumerate().map(|(i, p)| (p.name.clone(), i)).collect();
        Ok(Version { procs, by_name, lines: source.lines().map(|l| l.trim().to_string()).collect() })
    }

    pub fn edge_count(&self) -> u64 {
        self.procs.iter().map(|p| p.edges.len() as u64).sum()
    }

    /// Unit-wide edge id → (procedure index, local edge id).
    fn locate(&self, g: u64) -> Option<(usize, usize)> {
        let i = self.procs.partition_point(|p| p.base <= g).checked_sub(1)?;
        let local = (g - self.procs[i].base) as usize;
        (local < self.procs[i].edges.len()).then_some((i, local))
    }
}

/// Edge ids of one unit.
pub type Edges = BTreeSet<u64>;

/// A test's coverage for [`select`]: known or not, and per unit key its edges.
pub type TestCov = Option<(bool, BTreeMap<String, Edges>)>;

/// Outdated: v0's edges read as the same (procedure, local number) in `now`.
pub fn outdated(v0: &Version, now: &Version, e: &Edges) -> Edges {
    e.iter()
        .filter_map(|g| {
            let (pi, local) = v0.locate(*g)?;
            let p = &now.procs[*now.by_name.get(&v0.procs[pi].name)?];
            (local < p.edges.len()).then_some(p.base + local as u64)
        })
        .collect()
}

/// 1-based old line → 1-based new line, for the lines a longest common
/// subsequence (of trimmed lines) keeps.
fn line_map(old: &[String], new: &[String]) -> HashMap<u64, u64> {
    let (n, m) = (old.len(), new.len());
    let mut dp = vec![vec![0u32; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            dp[i][j] = if old[i] == new[j] { dp[i + 1][j + 1] + 1 } else { dp[i + 1][j].max(dp[i][j + 1]) };
        }
    }
    let (mut i, mut j, mut out) = (0, 0, HashMap::new());
    while i < n && j < m {
        if old[i] == new[j] {
            out.insert(i as u64 + 1, j as u64 + 1);
            i += 1;
            j += 1;
        } else if dp[i + 1][j] >= dp[i][j + 1] {
            i += 1;
        } else {
            j += 1;
        }
    }
    // between two matched lines, gaps of equal length pair up line by line (modified lines)
    let mut anchors: Vec<(u64, u64)> = out.iter().map(|(a, b)| (*a, *b)).collect();
    anchors.sort_unstable();
    anchors.insert(0, (0, 0));
    anchors.push((n as u64 + 1, m as u64 + 1));
    for w in anchors.windows(2) {
        let ((a0, b0), (a1, b1)) = (w[0], w[1]);
        if a1 - a0 == b1 - b0 {
            for d in 1..a1 - a0 {
                out.insert(a0 + d, b0 + d);
            }
        }
    }
    out
}

/// The estimated correspondence of edges from `old` to `new`.
pub struct EdgeMap {
    map: HashMap<u64, u64>,
}

impl EdgeMap {
    pub fn new(old: &Version, new: &Version) -> EdgeMap {
        let lines = line_map(&old.lines, &new.lines);
        let mut map = HashMap::new();
        for po in &old.procs {
            let Some(&ni) = new.by_name.get(&po.name) else { continue };
            let pn = &new.procs[ni];
            // nodes: (kind, text, matched line), k-th occurrence to k-th occurrence
            let mut nodes: HashMap<usize, usize> = HashMap::new();
            let mut taken: BTreeSet<usize> = BTreeSet::new();
            let mut by_key: BTreeMap<(&str, &str, u64), Vec<usize>> = BTreeMap::new();
            for (i, (k, t, l)) in pn.nodes.iter().enumerate() {
                by_key.entry((k, t, *l)).or_default().push(i);
            }
            let mut used: BTreeMap<(&str, &str, u64), usize> = BTreeMap::new();
            for (i, (k, t, l)) in po.nodes.iter().enumerate() {
                let Some(&nl) = lines.get(l) else { continue };
                let key = (k.as_str(), t.as_str(), nl);
                let c = used.entry(key).or_default();
                if let Some(&j) = by_key.get(&key).and_then(|v| v.get(*c)) {
                    nodes.insert(i, j);
                    taken.insert(j);
                    *c += 1;
                }
            }
            // left over: a unique node of the same kind on the matched line (a modified
            // statement), or the same kind at all for entry and exit
            for (i, (k, _, l)) in po.nodes.iter().enumerate() {
                if nodes.contains_key(&i) {
                    continue;
                }
                let line = if k == "entry" || k == "exit" { None } else { lines.get(l).copied() };
                if line.is_none() && k != "entry" && k != "exit" {
                    continue;
                }
                let cands: Vec<usize> = pn
                    .nodes
                    .iter()
                    .enumerate()
                    .filter(|(j, (k2, _, l2))| k2 == k && !taken.contains(j) && line.is_none_or(|nl| *l2 == nl))
                    .map(|(j, _)| j)
                    .collect();
                let olds = po
                    .nodes
                    .iter()
                    .enumerate()
                    .filter(|(i2, (k2, _, l2))| k2 == k && !nodes.contains_key(i2) && (line.is_none() || l2 == l))
                    .count();
                if cands.len() == 1 && olds == 1 {
                    nodes.insert(i, cands[0]);
                    taken.insert(cands[0]);
                }
            }
            let new_edges: HashMap<(usize, usize, &str), usize> =
                pn.edges.iter().enumerate().map(|(i, (a, b, l))| ((*a, *b, l.as_str()), i)).collect();
            for (i, (a, b, l)) in po.edges.iter().enumerate() {
                if let (Some(na), Some(nb)) = (nodes.get(a), nodes.get(b))
                    && let Some(&j) = new_edges.get(&(*na, *nb, l.as_str()))
                {
                    map.insert(po.base + i as u64, pn.base + j as u64);
                }
            }
        }
        EdgeMap { map }
    }

    pub fn apply(&self, e: &Edges) -> Edges {
        e.iter().filter_map(|g| self.map.get(g).copied()).collect()
    }

    pub fn len(&self) -> usize {
        self.map.len()
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }
}

/// DejaVu's selection on a matrix: tests whose coverage is unknown or missing, and
/// tests that cover a dangerous edge (per unit key, condition-level ids).
pub fn select<'a>(
    tests: impl Iterator<Item = &'a str>,
    cov: &dyn Fn(&str) -> TestCov,
    dangerous: &BTreeMap<String, Edges>,
) -> BTreeSet<String> {
    tests
        .filter(|t| match cov(t) {
            None | Some((false, _)) => true,
            Some((true, units)) => {
                dangerous.iter().any(|(k, d)| units.get(k).is_some_and(|e| e.intersection(d).next().is_some()))
            }
        })
        .map(String::from)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    type ProcSpec<'a> = (&'a str, &'a [(&'a str, &'a str, u64)], &'a [(usize, usize, &'a str)]);

    fn version(src: &str, procs: &[ProcSpec]) -> Version {
        let mut base = 0;
        let procs: Vec<Proc> = procs
            .iter()
            .map(|(n, nodes, edges)| {
                let p = Proc {
                    name: n.to_string(),
                    base,
                    nodes: nodes.iter().map(|(k, t, l)| (k.to_string(), t.to_string(), *l)).collect(),
                    edges: edges.iter().map(|(a, b, l)| (*a, *b, l.to_string())).collect(),
                };
                base += edges.len() as u64;
                p
            })
            .collect();
        let by_name = procs.iter().enumerate().map(|(i, p)| (p.name.clone(), i)).collect();
        Version { procs, by_name, lines: src.lines().map(|l| l.trim().to_string()).collect() }
    }

    #[test]
    fn a_modified_predicate_keeps_its_edges_and_an_inserted_line_shifts_the_rest() {
        let old = version(
            "f\nif a\nx\n",
            &[(
                "f",
                &[("entry", "f", 1), ("predicate", "a", 2), ("statement", "x", 3), ("exit", "", 3)],
                &[(0, 1, "ε"), (1, 2, "T"), (1, 3, "F"), (2, 3, "ε")],
            )],
        );
        let new = version(
            "f\nnew\nif b\nx\n",
            &[(
                "f",
                &[("entry", "f", 1), ("predicate", "b", 3), ("statement", "x", 4), ("exit", "", 4)],
                &[(0, 1, "ε"), (1, 2, "T"), (1, 3, "F"), (2, 3, "ε")],
            )],
        );
        let m = EdgeMap::new(&old, &new);
        // `if a` → `if b` is not on a matched line: its node has no image, nor its edges
        assert_eq!(m.apply(&[0, 1, 2, 3].into()), Edges::from([3]));
        assert_eq!(outdated(&old, &new, &[1, 3].into()), Edges::from([1, 3]));
        let d: BTreeMap<String, Edges> = [("u".to_string(), Edges::from([1]))].into();
        let cov = |t: &str| match t {
            "a" => Some((true, [("u".to_string(), Edges::from([0, 1]))].into())),
            "b" => Some((true, [("u".to_string(), Edges::from([2]))].into())),
            "c" => Some((false, BTreeMap::new())),
            _ => None,
        };
        let s = select(["a", "b", "c", "d"].into_iter(), &cov, &d);
        assert_eq!(s, ["a", "c", "d"].into_iter().map(String::from).collect());
    }
}
