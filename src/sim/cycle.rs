//! A cycle of a run as the two-phase clock drives it ([`Clocked`]): every switch level from
//! the last, then the sources, evaluate; then the clock edge commits departures, the sources'
//! injections and arrivals. With a gang, the switches' evaluation, departures and arrivals are
//! split across its threads; the sources stay on the calling thread.

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
        for level in (0..from).rev() {
            fabric.evaluate_level(level, gang.as_deref_mut());
        }
        self.sources.evaluate_all(&self.fabric);
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

    /// Departures (on the gang's threads if there is one), the sources' injections, then the
    /// arrivals.
    fn commit(&mut self) {
        self.transfers.clear();
        self.fabric
            .commit_departures_split(&mut self.transfers, self.gang.as_mut());
        self.sources
            .commit(self.transfers.injected_mut(), &self.fabric);
        let headers = self.messages.headers();
        self.fabric
            .commit_arrivals_split(&self.transfers, headers, self.gang.as_mut());
    }
}
