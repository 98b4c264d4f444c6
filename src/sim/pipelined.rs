//! Cycles of a bit-plane run on two threads as a pipeline of levels
//! ([`crate::switch::planes::Planes::pipelined`]): the levels from `m` up on the gang's
//! other thread, and on this one the levels below, the sources, the admissions and the
//! books, cycle by cycle as [`Simulation::step`] runs them.

use super::Simulation;
use crate::error::Result;

impl Simulation {
    /// Whether [`Simulation::run`] runs its cycles as a pipeline: on the bit-plane kernel
    /// with a gang of two threads ([`Simulation::set_threads`]).
    pub(super) fn pipelines(&self) -> bool {
        self.gang.is_some() && self.planes.is_some()
    }

    /// Runs a batch of cycles as a pipeline: up to the cycle limit or the batch's size
    /// ([`crate::switch::planes::Planes::batch_room`]: some tens of milliseconds, between
    /// which the run checks for an interrupt and reports progress), and no further than a
    /// cycle that leaves the network empty (where the run may end, or skip idle cycles). On
    /// an error the upper levels may have run past the cycle it names: the simulation is
    /// marked broken ([`Simulation::step`]).
    pub(super) fn run_pipelined(&mut self) -> Result<()> {
        let (Some(mut planes), Some(mut gang)) = (self.planes.take(), self.gang.take()) else {
            unreachable!("a pipelined run has its registers and its threads")
        };
        let t0 = self.clock.cycle;
        let end = self.config.cycles.unwrap_or(u64::MAX);
        let cycles = (end - t0).min(planes.batch_room());
        let done = planes.pipelined(&mut gang, cycles, |lower| -> Result<()> {
            for _ in 0..cycles {
                let cycle = self.clock.cycle;
                self.take_due(cycle)?;
                self.admit_due(cycle);
                self.transfers.clear();
                let (lower_moved, upper) = lower.cycle(self.transfers.only_run());
                self.send_and_book(
                    cycle,
                    lower,
                    lower_moved || upper.moved,
                    upper.body_arrivals,
                );
                self.clock.cycle += 1;
                let flits = lower.flits_in_network();
                self.watchdog(cycle, flits, true)?;
                if flits == 0 && self.sources.sending() == 0 {
                    break;
                }
            }
            Ok(())
        });
        self.planes = Some(planes);
        self.gang = Some(gang);
        if done.result.is_err() {
            self.broken = true;
        }
        done.result?;
        assert!(
            !done.overran,
            "the upper levels ran past the batch's end with flits in the network"
        );
        Ok(())
    }

    /// On the bit-plane kernel, pins the first level of the other thread's run of levels in
    /// pipelined batches ([`crate::switch::planes::Planes::pipelined`]): it changes which
    /// thread computes a level, not the run (for tests; unpinned, batches move it as the
    /// threads wait).
    #[doc(hidden)]
    pub fn pin_pipeline_split(&mut self, m: usize) {
        if let Some(planes) = &mut self.planes {
            planes.pin_split(m);
        }
    }

    /// Refuses to go on with a run broken by an error in a pipelined batch.
    pub(super) fn check_unbroken(&self) -> Result<()> {
        match self.broken {
            true => Err(crate::error::Error::invalid(
                "run",
                format!("stopped at cycle {}", self.clock.cycle),
                "a run that did not stop on an error in a batch on two threads (its upper levels may be past that cycle): start it again",
            )),
            false => Ok(()),
        }
    }
}
