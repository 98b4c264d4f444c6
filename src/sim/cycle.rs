//! A cycle of a run as the two-phase clock drives it ([`Clocked`]): every switch level from
//! the last, then the sources, evaluate; then the clock edge commits departures, the sources'
//! injections and arrivals. With a gang, the switches' evaluation, departures and arrivals are
//! split across its threads, each owning the same runs of switches in every phase; where
//! level 0's runs start words of the sources' bitmap, each thread's sources (the inputs of
//! its level-0 run) decide after it evaluates that run and commit after its departures, so
//! that their queues and injection registers stay in one core's cache.

use super::Simulation;
use crate::kernel::Clocked;

impl Clocked for Simulation {
    fn components(&self) -> usize {
        self.fabric.topo.node_count() + self.config.inputs as usize
    }

    /// Last level first (their registers drain unconditionally), then upward, then sources.
    fn settle_order(&self) -> Vec<usize> {
        let f = &self.fabric;
        let mut order: Vec<usize> = (0..f.topo.levels)
            .rev()
            .flat_map(|l| {
                let r = f.level_switches(l);
                r.start as usize..r.end as usize
            })
            .collect();
        let switches = f.topo.node_count();
        order.extend(switches..switches + self.config.inputs as usize);
        order
    }

    /// Levels from the last, then the sources: the settle order, one level at a time. With a
    /// gang, a level's switches evaluate on its threads, and the levels of the column plan
    /// ([`Fabric::plan_columns`]) as one column run per thread.
    fn evaluate_settled(&mut self, order: &[usize]) {
        if self.config.mode == crate::config::FlowControl::Greedy {
            for &c in order {
                self.evaluate(c);
            }
            return;
        }
        let fabric = &mut self.fabric;
        let levels = fabric.topo.levels;
        let mut gang = self.gang.as_mut();
        let from = match gang.as_deref_mut() {
            Some(gang) if self.column_from < levels => {
                fabric.evaluate_columns(gang);
                self.column_from
            }
            _ => levels,
        };
        let (true, Some(gang), true) = (self.sources.is_cut(), gang.as_deref_mut(), from > 0)
        else {
            for level in (0..from).rev() {
                fabric.evaluate_level(level, gang.as_deref_mut());
            }
            return self.sources.evaluate_all(&self.fabric);
        };
        for level in (1..from).rev() {
            fabric.evaluate_level(level, Some(gang));
        }
        // Each thread's sources decide from the run of level 0 it has just evaluated.
        let parts = self.sources.parts();
        let peaks = fabric.evaluate_level_then(0, gang, parts, |view, mut part| {
            part.evaluate(view);
            part.peak
        });
        self.sources.add_peak(peaks.into_iter().max().unwrap_or(0));
    }

    fn evaluate(&mut self, c: usize) -> bool {
        let switches = self.fabric.topo.node_count();
        if c < switches {
            self.fabric
                .evaluate_switch(c as u32, self.messages.headers())
        } else {
            self.sources.evaluate((c - switches) as u32, &self.fabric);
            false
        }
    }

    /// Departures (on the gang's threads if there is one), the sources' injections (each
    /// thread's sources after its departures, where the sources are cut), then the arrivals.
    fn commit(&mut self) {
        self.transfers.clear();
        match self.gang.as_mut().filter(|_| self.sources.is_cut()) {
            Some(gang) => {
                // Each thread's sources commit after its departures, into a list of their own.
                let parts = self.sources.parts();
                let lists = self.transfers.take_injected(parts.len());
                let b = self.config.vcs;
                let done = self.fabric.commit_departures_then(
                    &mut self.transfers,
                    Some(gang),
                    parts.into_iter().zip(lists).collect(),
                    |(mut part, mut list)| {
                        part.commit(&mut list, |input, vc| input * b + vc);
                        (part.sending, list)
                    },
                );
                let mut started = 0;
                for (sending, list) in done {
                    started += sending;
                    self.transfers.put_injected(list);
                }
                self.sources.add_sending(started);
            }
            None => {
                self.fabric
                    .commit_departures_split(&mut self.transfers, self.gang.as_mut());
                self.sources
                    .commit(self.transfers.injected_mut(), &self.fabric);
            }
        }
        let headers = self.messages.headers();
        self.fabric
            .commit_arrivals_split(&self.transfers, headers, self.gang.as_mut());
    }
}
