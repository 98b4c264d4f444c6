//! `cargo bench`: switch-cycles per second of the foundation benchmark (1024-input butterfly,
//! B = 2, L = 4, Bernoulli traffic at rate 0.3, 10 000 cycles, wormhole, invariant checks off).
//! The same measurement is `flitforge bench`: on the bit-plane kernel, then on the general
//! kernel on one thread and on two (`--kernel general --threads 2`: the speed-up of one
//! simulation split over cores). Best of three runs. Then the pruned-butterfly
//! benchmark (`flitforge bench --topology pruned-butterfly`): vertex-cycles per second of the
//! bit-serial network routing a 1024-leaf random permutation.

use flitforge::bench::{self, BenchResult};
use flitforge::error::Result;
use flitforge::sim::Kernel;

fn best_of_three(name: &str, what: &str, run: impl Fn() -> Result<BenchResult>) {
    let mut best: Option<BenchResult> = None;
    for _ in 0..3 {
        match run() {
            Ok(r) => {
                if best.as_ref().is_none_or(|b| r.seconds < b.seconds) {
                    best = Some(r);
                }
            }
            Err(e) => {
                eprintln!("bench failed: {e}");
                std::process::exit(1);
            }
        }
    }
    if let Some(r) = best {
        println!(
            "{name}: {} {what}s x {} cycles in {:.3} s = {:.1} million {what}-cycles/s",
            r.switches,
            r.cycles,
            r.seconds,
            r.switch_cycles_per_second / 1e6
        );
    }
}

fn main() {
    best_of_three("switch_cycles", "switch", || {
        bench::run(bench::default_config(), 1, Kernel::BitPlanes)
    });
    best_of_three("switch_cycles_general", "switch", || {
        bench::run(bench::default_config(), 1, Kernel::General)
    });
    best_of_three("switch_cycles_general_2_threads", "switch", || {
        bench::run(bench::default_config(), 2, Kernel::General)
    });
    best_of_three("pruned_vertex_cycles", "vertex", || {
        bench::run_pruned(bench::default_pruned_config())
    });
}
