//! The two-phase clock ([CMS] §1.1; docs/interpretations.md, 'One cycle is one flit step'):
//! every cycle all components compute their next state from the registered state of the
//! previous cycle, then all commit at once.
//!
//! Components may also exchange combinational signals within a cycle (a switch's "this VC
//! empties now" feeds the switch upstream of it, exactly like a ready wire in RTL). Those signals
//! form an acyclic netlist, so they have one consistent value per cycle whatever the order in
//! which components are evaluated: the kernel re-evaluates until no signal changes, and a
//! settle order (downstream first) reaches that value in a single sweep.

/// A clocked model: components with registered state and combinational outputs.
pub trait Clocked {
    /// Number of components (switches, sources) evaluated every cycle.
    fn components(&self) -> usize;
    /// An order in which one sweep settles every combinational signal (consumers of a signal
    /// after its producer).
    fn settle_order(&self) -> Vec<usize>;
    /// Computes component `c`'s combinational outputs and proposed next state from registered
    /// state and the current values of its combinational inputs. Returns true if any of its
    /// combinational outputs changed.
    fn evaluate(&mut self, c: usize) -> bool;
    /// Evaluates every component in `order`, the model's settle order. A model may do it
    /// faster (in parallel, skipping what cannot change) as long as every signal gets the
    /// value the sweep in `order` gives.
    fn evaluate_settled(&mut self, order: &[usize]) {
        for &c in order {
            self.evaluate(c);
        }
    }
    /// The clock edge: every proposed next state becomes the registered state at once.
    fn commit(&mut self);
}

/// Evaluation order used by [`Clock::tick`].
#[derive(Clone, Debug)]
pub enum Order {
    /// The model's settle order: one sweep per cycle.
    Settled(Vec<usize>),
    /// Any order (a test shuffles it): sweeps repeat until no signal changes.
    Arbitrary(Vec<usize>),
}

/// Drives a [`Clocked`] model cycle by cycle.
#[derive(Clone, Debug)]
pub struct Clock {
    order: Order,
    /// Completed cycles.
    pub cycle: u64,
}

impl Clock {
    /// A clock that evaluates in the model's settle order.
    pub fn settled<M: Clocked>(model: &M) -> Self {
        Clock {
            order: Order::Settled(model.settle_order()),
            cycle: 0,
        }
    }

    /// A clock that evaluates in the given order and sweeps until stable.
    pub fn arbitrary(order: Vec<usize>) -> Self {
        Clock {
            order: Order::Arbitrary(order),
            cycle: 0,
        }
    }

    /// Runs one cycle: evaluate, then commit.
    pub fn tick<M: Clocked>(&mut self, model: &mut M) {
        match &self.order {
            Order::Settled(order) => model.evaluate_settled(order),
            Order::Arbitrary(order) => loop {
                let mut changed = false;
                for &c in order {
                    changed |= model.evaluate(c);
                }
                if !changed {
                    break;
                }
            },
        }
        model.commit();
        self.cycle += 1;
    }
}
