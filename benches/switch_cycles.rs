//! `cargo bench`: switch-cycles per second of the foundation benchmark (1024-input butterfly,
//! B = 2, L = 4, Bernoulli traffic at rate 0.3, 10 000 cycles, wormhole, invariant checks off).
//! The same measurement is `flitforge bench`. Best of three runs.

fn main() {
    let mut best: Option<flitforge::bench::BenchResult> = None;
    for _ in 0..3 {
        match flitforge::bench::run(flitforge::bench::default_config()) {
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
            "switch_cycles: {} switches x {} cycles in {:.3} s = {:.1} million switch-cycles/s",
            r.switches,
            r.cycles,
            r.seconds,
            r.switch_cycles_per_second / 1e6
        );
    }
}
