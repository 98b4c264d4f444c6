//! Multibutterflies and randomly-wired splitter networks around faults ([LM]).
//!
//! - [`faults`]: fault placement and the experiments' "both links" propagation (§IV);
//!   [`theory`]: the theory's erasure and "half the links" rules with the survivors of
//!   Theorem 3.4 (§III-A).
//! - [`greedy`]: the experiments' greedy store-and-forward routing (§IV) on the
//!   switch model's greedy flow-control mode, and the routing problems `1`, `10`, `1T`, `10T`;
//!   [`wave`]: its VCD waveform.
//! - [`upfal`]: Upfal's wave algorithm (§II-A) with its potential function and Lemma 2.5
//!   checked.
//! - [`run`]: one greedy routing as the configuration a report records.
//! - [`experiment`] and [`tables`]: Tables I–III; [`variants`]: how the open choices move
//!   them; [`tolerance`]: the fault-scaling experiment.

pub mod experiment;
pub mod faults;
pub mod greedy;
pub mod run;
pub mod tables;
pub mod theory;
pub mod tolerance;
pub mod upfal;
pub mod variants;
pub mod wave;
