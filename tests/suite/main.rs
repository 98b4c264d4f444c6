//! The integration tests, as one test binary: one link of the library instead of one a file,
//! and a fraction of the disk. (`tests/pipeline_error.rs` stays a binary of its own: it sets
//! the process's memory limit.)

mod common;

mod bench;
mod cli;
mod cms;
mod conservation;
mod cosim;
mod determinism;
mod fpga;
mod help;
mod interrupt;
mod kary_fly;
mod layout;
mod multibutterfly;
mod planes;
mod pruned_cli;
mod pruned_cosim;
mod pruned_graph;
mod pruned_lemmas;
mod pruned_routing;
mod report_schema;
mod robustness;
mod shard;
mod silicon;
mod sorter;
mod sorter_cli;
mod sorter_cosim;
mod timing;
mod universal;
mod universal_cosim;
mod watchdog;
mod wave;
