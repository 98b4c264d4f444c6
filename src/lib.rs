//! flitforge: routing-network switches modelled the way hardware builds them, cycle by cycle.
//!
//! Layers, each changing for its own reasons: [`topology`] (pure graphs and routing rules),
//! [`switch`] (registers and next-state logic), [`kernel`] (the two-phase clock), [`source`]
//! and [`traffic`] (what is injected), [`sim`] (a whole run), [`invariants`], [`stats`], and
//! [`config`], and the waveform back end [`wave`]. [`run`] is any run from its configuration
//! and the one report schema. The command-line interface (`src/cli/`) is a thin layer over
//! these.

#![allow(rustdoc::broken_intra_doc_links)] // [CMS], [BB], ... cite docs/references.md

pub mod bench;
pub mod cms;
pub mod config;
pub mod cosim;
pub mod delta;
pub mod digest;
pub mod error;
pub mod files;
pub mod flit;
pub mod fpga;
pub mod gang;
pub mod interrupt;
pub mod invariants;
pub mod kernel;
pub mod lfsr;
pub mod limits;
pub mod lines;
pub mod multibutterfly;
pub mod plot;
pub mod pruned;
pub mod rng;
pub mod rtl;
pub mod run;
pub mod shard;
pub mod silicon;
pub mod sim;
pub mod sorter;
pub mod source;
pub mod stats;
pub mod sweep;
pub mod switch;
pub mod tables;
pub mod tools;
pub mod topology;
pub mod traffic;
pub mod universal;
pub mod wave;

pub use config::SimConfig;
pub use error::{Error, Result};
pub use sim::Simulation;
