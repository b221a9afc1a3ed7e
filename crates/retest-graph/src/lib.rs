//! `retest-graph`: the language-neutral control-flow graph model and the graph
//! algorithms every other part of retest builds on.
//!
//! * [`cfg`](mod@cfg) — procedures as CFGs with uniquely labelled out-edges, stable ids,
//!   source spans, declaration entities, and contraction (condition level →
//!   statement level).
//! * [`coverage`] — probes, cell layout, edge coverage from hit cells.
//! * [`dom`] — node and edge dominators (Lengauer–Tarjan).
//! * [`reach`] — reachability, depth-first back edges, strongly connected components.
//! * [`pathnum`] — Ball–Larus acyclic path numbering with the back-edge
//!   decomposition of Ball's §5 (four kinds of paths), encode and decode.
//! * [`recording`] — run-time recording beyond edge probes (MC/DC evaluations,
//!   Ball–Larus paths): registers, increments and where values are recorded.
//! * [`stopped`] — coverage of a test whose code may have stopped part-way,
//!   across procedures: which may have been running, and what each claims.
//! * [`text`] — a compact text rendering.
//! * [`unit`](mod@unit) — a translation unit: procedures, declarations, call facts.
//! * [`dot`] — a general DOT parser and the writer/reader for our CFGs.
//!
//! Architecture invariant: this crate does no I/O beyond writing to a
//! `std::io::Write` it is handed, and knows nothing about C.

pub mod cfg;
pub mod coverage;
pub mod dom;
pub mod dot;
pub mod pathnum;
pub mod reach;
pub mod recording;
pub mod stopped;
pub mod summary;
pub mod text;
pub mod unit;

pub use cfg::{
    Cfg, CfgBuilder, CfgError, Contraction, DeclKind, Declaration, Edge, EdgeId, EdgeLabel, Node, NodeId, NodeKind,
    Span,
};
pub use unit::{Class, Method, MethodKind, Problem, Procedure, SourceFile, Unit};
