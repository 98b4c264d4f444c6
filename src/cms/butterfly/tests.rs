use super::*;

#[test]
fn every_message_is_delivered_within_the_round_budget() {
    let c = ButterflyConfig {
        inputs: 32,
        q: 2,
        flits: 4,
        vcs: 2,
        beta: 1.0,
        seed: 3,
        pass_mode: PassMode::Doubled,
    };
    let run = run(&c).unwrap();
    assert_eq!(run.messages, 64);
    assert_eq!(run.q_eff, 5);
    let delivered: u64 = run.rounds.iter().map(|r| r.delivered).sum();
    assert_eq!(delivered, 64);
    // Copies double: no round sends fewer copies per undelivered message than the last.
    assert!(run.rounds[0].max_copies_per_input >= u64::from(run.q_eff));
    assert!(run.makespan > 0);
}

#[test]
fn one_copy_per_colour_and_input_is_never_discarded() {
    // Δ large enough that (almost) no two copies meet: everything arrives in round 0.
    let c = ButterflyConfig {
        inputs: 8,
        q: 1,
        flits: 3,
        vcs: 4,
        beta: 200.0,
        seed: 1,
        pass_mode: PassMode::Doubled,
    };
    let run = run(&c).unwrap();
    assert_eq!(run.rounds[0].delivered, 8);
    assert_eq!(run.rounds.len(), 1);
}

#[test]
fn the_second_pass_can_go_round_the_wrap_around_butterfly() {
    let c = ButterflyConfig {
        inputs: 16,
        q: 2,
        flits: 3,
        vcs: 2,
        beta: 1.0,
        seed: 5,
        pass_mode: PassMode::Wrap,
    };
    let run = run(&c).unwrap();
    let delivered: u64 = run.rounds.iter().map(|r| r.delivered).sum();
    assert_eq!(delivered, 32);
    assert_eq!(run.round_cycles, u64::from(run.colours - 1) * 4 + 8 + 2);
}

#[test]
fn matching_counts_distinct_colours() {
    assert_eq!(matching(&[vec![0], vec![0], vec![0, 1]], 2), 2);
    assert_eq!(matching(&[vec![0, 1], vec![1], vec![2]], 3), 3);
}
