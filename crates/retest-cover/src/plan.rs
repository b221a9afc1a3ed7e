//! What a build records beyond edges: the recording components of a unit for
//! `retest cc --mcdc` (MC/DC evaluations, [`crate::mcdc::McdcLayout`]) and
//! `retest cc --paths` (Ball–Larus paths, [`retest_graph::recording::PathLayout`]).

use retest_graph::Unit;
use retest_graph::recording::{PathLayout, ProcPaths, ProcRecording, UnitRecording};
use serde::{Deserialize, Serialize};

use crate::mcdc::McdcLayout;

/// Which recordings a build makes beyond edge coverage.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default, Serialize, Deserialize)]
pub struct RecordOptions {
    /// Every decision evaluation's condition vector (`--mcdc`).
    #[serde(default)]
    pub mcdc: bool,
    /// Ball–Larus acyclic paths of every procedure (`--paths`).
    #[serde(default)]
    pub paths: bool,
    /// Execution counts: edge cells become 64-bit counters (`--counts`).
    #[serde(default)]
    pub counts: bool,
}

impl RecordOptions {
    /// Whether nothing beyond edges is recorded.
    pub fn is_empty(&self) -> bool {
        !self.mcdc && !self.paths && !self.counts
    }

    /// `mcdc,paths,counts` (empty when nothing is recorded), as `RETEST_RECORD` takes it.
    pub fn to_env(&self) -> String {
        let mut v = Vec::new();
        if self.mcdc {
            v.push("mcdc");
        }
        if self.paths {
            v.push("paths");
        }
        if self.counts {
            v.push("counts");
        }
        v.join(",")
    }

    /// Parses [`RecordOptions::to_env`]'s form; unknown words are errors.
    pub fn from_env(s: &str) -> Result<RecordOptions, String> {
        let mut o = RecordOptions::default();
        for w in s.split(',').map(str::trim).filter(|w| !w.is_empty()) {
            match w {
                "mcdc" => o.mcdc = true,
                "paths" => o.paths = true,
                "counts" => o.counts = true,
                other => return Err(format!("unknown recording `{other}` (known: mcdc, paths, counts)")),
            }
        }
        Ok(o)
    }
}

/// The recording `options` ask of `unit`, before placement (the instrumenter
/// may drop components it cannot place, and says why).
pub fn recording(unit: &Unit, options: RecordOptions) -> UnitRecording {
    if options.is_empty() {
        return UnitRecording::default();
    }
    let mut r = UnitRecording {
        // counters alone place no component
        procs: if options.mcdc || options.paths {
            vec![ProcRecording::default(); unit.procedures.len()]
        } else {
            Vec::new()
        },
        mcdc_cells: None,
        path_cells: None,
        counts: options.counts,
    };
    if options.mcdc {
        let layout = McdcLayout::new(unit);
        r.mcdc_cells = Some(layout.cells);
        for (i, p) in r.procs.iter_mut().enumerate() {
            p.decisions = layout.components(i);
        }
    }
    if options.paths {
        let layout = PathLayout::new(unit);
        r.path_cells = Some(layout.cells);
        for (i, p) in r.procs.iter_mut().enumerate() {
            p.path = layout.component(unit, i);
        }
    }
    r
}

/// What `options` ask that `unit` cannot record, before placement, and why:
/// (procedure, `Some(decision)` or `None` for its paths, reason). Unanalysable
/// procedures are left out (they are reported as such already).
pub fn not_recorded(unit: &Unit, options: RecordOptions) -> Vec<(usize, Option<u32>, String)> {
    let mut out = Vec::new();
    if options.mcdc {
        let layout = McdcLayout::new(unit);
        for (i, pd) in layout.procs.iter().enumerate() {
            if unit.procedures[i].unanalysable.is_some() {
                continue;
            }
            for (j, slot) in pd.slots.iter().enumerate() {
                if let Err(why) = &slot.paths {
                    out.push((i, Some(j as u32), why.clone()));
                }
            }
        }
    }
    if options.paths {
        let layout = PathLayout::new(unit);
        for (i, pp) in layout.procs.iter().enumerate() {
            if let ProcPaths::Off(why) = pp
                && unit.procedures[i].unanalysable.is_none()
            {
                out.push((i, None, why.clone()));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_round_trip_through_the_environment() {
        for o in [
            RecordOptions::default(),
            RecordOptions { mcdc: true, ..Default::default() },
            RecordOptions { paths: true, ..Default::default() },
            RecordOptions { mcdc: true, paths: true, ..Default::default() },
            RecordOptions { counts: true, ..Default::default() },
            RecordOptions { mcdc: true, paths: true, counts: true },
        ] {
            assert_eq!(RecordOptions::from_env(&o.to_env()).unwrap(), o);
        }
        assert_eq!(
            RecordOptions::from_env(" paths , mcdc ").unwrap(),
            RecordOptions { mcdc: true, paths: true, ..Default::default() }
        );
        assert!(RecordOptions::from_env("mcdc,branches").unwrap_err().contains("branches"));
    }
}
