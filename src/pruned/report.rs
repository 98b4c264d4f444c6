//! What a pruned-butterfly run reports ([BB] §3.3): per stage and in total, with the lemma
//! bounds and how often they were exceeded.

use super::switch::RuleCounts;
use serde::Serialize;

/// One stage's figures.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct StageReport {
    pub stage: u32,
    /// Records with this peak at the start of the stage, `|M_i|`.
    pub records: usize,
    /// Rounds `R_i = max_T λ_T`.
    pub rounds: u32,
    /// Records that landed on a leaf other than their destination.
    pub sidetracked: usize,
    pub cycles: u64,
}

/// The outcome of routing a message set.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct RouteReport {
    pub leaves: u32,
    pub messages: usize,
    pub delivered: usize,
    /// Records ever landed on a leaf other than their destination (counted per landing).
    pub sidetracked: usize,
    /// Stages run, `L`.
    pub stages: u32,
    pub rounds: u32,
    /// Total routing time in cycles.
    pub routing_cycles: u64,
    /// Of which the network moved bits (compressions and expansions).
    pub network_cycles: u64,
    pub load_factor_cut: f64,
    pub load_factor_dir: f64,
    /// Degree `d` (interpretation: 'Degree', docs/interpretations.md).
    pub degree: u32,
    /// `max_i max_T λ_T`.
    pub max_lambda_t: u32,
    /// Lemma 6 bound `2·⌈λ_dir⌉`, and how many `λ_T` exceeded it.
    pub lemma6_bound: u32,
    pub lemma6_violations: usize,
    /// Most sidetracked records one leaf stored at a batch boundary, the Lemma 7 bound
    /// `(d + 1)·L + d`, and how many boundaries exceeded it.
    pub max_stored_sidetracked: usize,
    pub lemma7_bound: usize,
    pub lemma7_violations: usize,
    /// Compression conflicts and unresolved comparisons (both must be 0).
    pub compression_conflicts: usize,
    pub unresolved_ties: usize,
    /// Records sitting at the peak node at once, most over all nodes (`2·W_p` buffers:
    /// interpretation 'Root buffers', docs/interpretations.md).
    pub max_sorter_occupancy: usize,
    /// Decisions of the expansion switches by case of the §3.3 table.
    pub rules: RuleCounts,
    /// FNV-1a hash of every landing `(round, leaf, message, active)` in message order and of
    /// the final direction bits: equal runs (e.g. the two engines) have equal hashes.
    pub trace_hash: String,
    pub per_stage: Vec<StageReport>,
}

impl RouteReport {
    /// A readable multi-line summary.
    pub fn summary(&self) -> String {
        let mut s = format!(
            "pruned butterfly, N = {}: {} messages, {} delivered, {} sidetracked\n\
             {} stages, {} rounds, {} cycles ({} of them moving bits)\n\
             load factor {:.3} (per direction; {:.3} both ways), degree {}\n\
             max lambda_T {} (Lemma 6 bound {}, {} over), stored sidetracked at most {} per leaf (Lemma 7 bound {}, {} over)\n\
             compression conflicts {}, unresolved comparisons {}\n\
             decisions: {} single active, {} two active split, {} conflicts (rule b), {} active over sidetracked (rule c), {} single sidetracked (rule d), {} two sidetracked",
            self.leaves,
            self.messages,
            self.delivered,
            self.sidetracked,
            self.stages,
            self.rounds,
            self.routing_cycles,
            self.network_cycles,
            self.load_factor_dir,
            self.load_factor_cut,
            self.degree,
            self.max_lambda_t,
            self.lemma6_bound,
            self.lemma6_violations,
            self.max_stored_sidetracked,
            self.lemma7_bound,
            self.lemma7_violations,
            self.compression_conflicts,
            self.unresolved_ties,
            self.rules.single_active,
            self.rules.two_active_split,
            self.rules.conflict,
            self.rules.active_beats_sidetracked,
            self.rules.single_sidetracked,
            self.rules.two_sidetracked,
        );
        s.push_str("\nstage  records  rounds  sidetracked  cycles");
        for st in &self.per_stage {
            s.push_str(&format!(
                "\n{:>5}  {:>7}  {:>6}  {:>11}  {:>6}",
                st.stage, st.records, st.rounds, st.sidetracked, st.cycles
            ));
        }
        s
    }
}
