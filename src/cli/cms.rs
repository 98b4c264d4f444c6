//! `flitforge cms`: the algorithms of [CMS] one problem at a time (the experiment runs them in
//! bulk: `experiment cole-maggs-sitaraman`).

use super::experiment::OutDir;
use super::files::write;
use clap::{Args, Subcommand};
use flitforge::cms::butterfly::{self, ButterflyConfig, PassMode};
use flitforge::cms::schedule::{self, RMode};
use flitforge::cms::{Problem, lower_bound};
use flitforge::{Error, Result};

#[derive(Subcommand)]
pub enum CmsCommand {
    /// [CMS] Theorem 2.2.1: write the lower-bound instance (graph.json, paths.json) and run
    /// every release policy on it against (L - D)·M/B.
    ///
    /// Every set of B + 1 base messages shares a primary link; each base message is copied
    /// C/(B + 1) times. Replay it with
    ///   flitforge sim --topology graph --graph DIR/graph.json --paths DIR/paths.json --vcs B --flits L
    #[command(verbatim_doc_comment)]
    LowerBound(LowerBoundArgs),
    /// [CMS] §2 footnote 5 and Theorem 2.1.6: colour the messages of a graph and paths file
    /// into classes of at most B per link and write the release schedule (paths.json with
    /// release cycles, schedule.json); the schedule is run and checked never to block.
    ///
    /// Example:
    ///   flitforge cms lower-bound --vcs 2 --congestion 6 --dilation 11 --out lb
    ///   flitforge cms schedule --graph lb/graph.json --paths lb/paths.json --vcs 2 --flits 10 --out lb-sched
    #[command(verbatim_doc_comment)]
    Schedule(ScheduleArgs),
    /// A random leveled network ([CMS] §1.2's leveled networks): levels of switches, each
    /// linked to random switches of the next level, and random paths from level 0 to the last
    /// (graph.json, paths.json).
    ///
    /// Example:
    ///   flitforge cms leveled --width 8 --levels 16 --messages 64 --out lev
    ///   flitforge sim --topology graph --graph lev/graph.json --paths lev/paths.json --vcs 2
    #[command(verbatim_doc_comment)]
    Leveled(LeveledArgs),
    /// [CMS] §3.1: route a random q-relation on the doubled butterfly in rounds of Δ colours,
    /// with the per-round checks of Invariant 3.1.2 and Lemmas 3.1.4 and 3.1.5.
    Butterfly(ButterflyArgs),
}

#[derive(Args)]
pub struct LowerBoundArgs {
    /// Virtual channels B, 1..=8.
    #[arg(long, default_value_t = 2)]
    vcs: u32,
    /// Congestion C, a multiple of B + 1.
    #[arg(long, default_value_t = 6)]
    congestion: u32,
    /// Dilation D (at most; the instance has 2·binom(M' - 1, B) - 1 links per path), at least
    /// B + 1.
    #[arg(long, default_value_t = 11)]
    dilation: u32,
    /// Flits per worm L. [default: twice the instance's dilation]
    #[arg(long)]
    flits: Option<u32>,
    /// Seed of the random-release policy and the refinement.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    #[command(flatten)]
    out: OutDir,
}

#[derive(Args)]
pub struct LeveledArgs {
    /// Switches per level, 1..=1024.
    #[arg(long, default_value_t = 8)]
    width: u32,
    /// Link levels (the dilation D of every path), 1..=256.
    #[arg(long, default_value_t = 16)]
    levels: u32,
    /// Links out of every switch, to distinct switches of the next level, 1..=8.
    #[arg(long, default_value_t = 2)]
    degree: u32,
    /// Messages, each a random walk from a random level-0 switch to the last level.
    #[arg(long, default_value_t = 64)]
    messages: u32,
    /// Seed of the wiring and the paths.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    #[command(flatten)]
    out: OutDir,
}

#[derive(Args)]
pub struct ScheduleArgs {
    /// Graph file (`sim --graph` format). [default: none, required]
    #[arg(long, value_name = "FILE")]
    graph: String,
    /// Paths file (`sim --paths` format; releases ignored). The output graph.json lists the
    /// links in tail order and the output paths.json refers to those: replay the two together.
    /// [default: none, required]
    #[arg(long, value_name = "FILE")]
    paths: String,
    /// Virtual channels B, 1..=16.
    #[arg(long, default_value_t = 2)]
    vcs: u32,
    /// Flits per worm L, 1..=4096.
    #[arg(long, default_value_t = 8)]
    flits: u32,
    /// naive (footnote 5: a proper colouring of the conflict graph), greedy (at most B per
    /// link, greedily) or refined (Lemma 2.1.5 and Theorem 2.1.6).
    #[arg(long, default_value = "refined", value_parser = ["naive", "greedy", "refined"])]
    algorithm: String,
    /// refined: r of each step as the paper sets it, or the smallest that works.
    #[arg(long, default_value = "adaptive", value_parser = ["paper", "adaptive"])]
    r_mode: String,
    /// Seed of the refinement's random sub-classes.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    #[command(flatten)]
    out: OutDir,
}

#[derive(Args)]
pub struct ButterflyArgs {
    /// Inputs n, a power of two in 4..=4096.
    #[arg(long, default_value_t = 64)]
    inputs: u32,
    /// Messages per input and per output (q random permutations), 1..=64.
    #[arg(long, default_value_t = 4)]
    q: u32,
    /// Flits per worm L, 1..=4096.
    #[arg(long, default_value_t = 8)]
    flits: u32,
    /// Virtual channels B, 1..=8.
    #[arg(long, default_value_t = 2)]
    vcs: u32,
    /// β of Δ = ⌈β q_eff lg^(1/B) n / B⌉ colours, q_eff = max(q, ⌈lg n⌉); 0.01..=1000000, at
    /// most 2^20 colours.
    #[arg(long, default_value_t = 1.0)]
    beta: f64,
    /// Seed of the q-relation, colours and intermediate columns.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Pass 2 on a second butterfly below the first (doubled, [CMS] Fig. 2) or a second lap of
    /// the wrap-around butterfly (wrap: a cyclic network, so registered back-pressure, VCs of
    /// two flits and sub-rounds L + 1 cycles apart; copies whose laps would share a link are
    /// discarded at the source).
    #[arg(long, default_value = "doubled", value_parser = ["doubled", "wrap"])]
    pass_mode: String,
    /// Also write the run (every round's counts) as JSON ("-": standard output). [default: not
    /// written]
    #[arg(long, value_name = "FILE|-")]
    json: Option<String>,
}

pub fn run(command: &CmsCommand) -> Result<()> {
    match command {
        CmsCommand::LowerBound(a) => lower(a),
        CmsCommand::Leveled(a) => leveled(a),
        CmsCommand::Schedule(a) => schedule_cmd(a),
        CmsCommand::Butterfly(a) => fly(a),
    }
}

fn describe(p: &Problem) -> String {
    format!(
        "{} switches, {} links, M = {} messages, C = {}, D = {}",
        p.graph.nodes,
        p.graph.links.len(),
        p.messages(),
        p.congestion(),
        p.dilation()
    )
}

fn lower(a: &LowerBoundArgs) -> Result<()> {
    let lb = lower_bound::generate(a.vcs, a.congestion, a.dilation)?;
    let p = &lb.problem;
    let flits = a.flits.unwrap_or(2 * p.dilation());
    if !(1..=4096).contains(&flits) {
        return Err(Error::invalid("flits", flits, "1..=4096"));
    }
    let dir = a.out.dir("cms-lower-bound")?;
    let bound = lb.bound(flits);
    say!(
        "lower-bound instance: M' = {} base messages x {} copies; {}",
        lb.base,
        lb.copies,
        describe(p)
    );
    say!(
        "(L - D)·M/B = {bound:.1} flit steps (L = {flits}, B = {})",
        a.vcs
    );
    let mut rows = Vec::new();
    for (name, releases) in lower_bound::policies(p, a.vcs, flits, a.seed)? {
        let out = p.simulate(p.config(a.vcs, flits), &releases)?;
        say!(
            "  {name:<20} makespan {:>8}  ({:.3} x bound, {} worms blocked)",
            out.makespan,
            out.makespan as f64 / bound.max(1e-9),
            out.blocked
        );
        if (out.makespan as f64) < bound {
            return Err(Error::Invariant {
                cycle: out.makespan,
                message: format!("{name} beat the lower bound {bound}"),
            });
        }
        rows.push(
            serde_json::json!({"policy": name, "makespan": out.makespan, "blocked": out.blocked}),
        );
    }
    write(dir.join("graph.json"), &p.graph_json())?;
    write(
        dir.join("paths.json"),
        &p.paths_json(&vec![0; p.messages()]),
    )?;
    let summary = serde_json::json!({
        "vcs": a.vcs, "flits": flits, "base_messages": lb.base, "copies": lb.copies,
        "messages": p.messages(), "congestion": p.congestion(), "dilation": p.dilation(),
        "bound": bound, "policies": rows,
    });
    write(dir.join("lower-bound.json"), &format!("{summary:#}\n"))
}

fn leveled(a: &LeveledArgs) -> Result<()> {
    let p = flitforge::cms::random_leveled(a.width, a.levels, a.degree, a.messages, a.seed)?;
    let dir = a.out.dir("cms-leveled")?;
    say!("leveled network: {}", describe(&p));
    write(dir.join("graph.json"), &p.graph_json())?;
    write(
        dir.join("paths.json"),
        &p.paths_json(&vec![0; p.messages()]),
    )
}

/// Most messages the greedy colourings take (their class search is quadratic).
const MAX_GREEDY: usize = 1 << 16;

fn schedule_cmd(a: &ScheduleArgs) -> Result<()> {
    if !(1..=16).contains(&a.vcs) {
        return Err(Error::invalid("vcs", a.vcs, "1..=16"));
    }
    if !(1..=4096).contains(&a.flits) {
        return Err(Error::invalid("flits", a.flits, "1..=4096"));
    }
    let (p, _) = Problem::read(&a.graph, &a.paths)?;
    if a.algorithm != "refined" && p.messages() > MAX_GREEDY {
        return Err(Error::invalid(
            "messages",
            p.messages(),
            format!(
                "at most {MAX_GREEDY} for --algorithm {} (its colouring is quadratic)",
                a.algorithm
            ),
        ));
    }
    let dir = a.out.dir("cms-schedule")?;
    let (graph_out, paths_out) = (dir.join("graph.json"), dir.join("paths.json"));
    super::files::outputs_apart(
        &[
            ("out", graph_out.to_str()),
            ("out", paths_out.to_str()),
            ("out", dir.join("schedule.json").to_str()),
        ],
        &[&a.graph, &a.paths],
    )?;
    let s = match a.algorithm.as_str() {
        "naive" => schedule::greedy_colouring(&p, 1),
        "greedy" => schedule::greedy_colouring(&p, a.vcs),
        _ => schedule::refine(&p, a.vcs, RMode::parse(&a.r_mode)?, a.seed)?,
    };
    let d = p.dilation();
    if s.length(a.flits, d) > flitforge::traffic::MAX_CYCLE {
        return Err(Error::invalid(
            "schedule",
            format!("{} classes x {} cycles", s.classes, a.flits + d.max(1) - 1),
            format!("at most {} cycles in all", flitforge::traffic::MAX_CYCLE),
        ));
    }
    let releases = s.releases(a.flits, d);
    let out = p.simulate(p.config(a.vcs, a.flits), &releases)?;
    say!("{}", describe(&p));
    for step in &s.steps {
        say!(
            "  case {}: multiplex {} -> {} with r = {} ({} re-samplings)",
            step.case,
            step.from,
            step.to,
            step.r,
            step.resamples
        );
    }
    say!(
        "{} schedule: {} classes of multiplex {} (links and injection ports), released {} cycles apart; makespan {} of {} promised; {} worms blocked",
        a.algorithm,
        s.classes,
        s.multiplex,
        a.flits + d.max(1) - 1,
        out.makespan,
        s.length(a.flits, d),
        out.blocked
    );
    if s.multiplex <= a.vcs && (out.blocked > 0 || out.slowed > 0) {
        return Err(Error::Invariant {
            cycle: out.makespan,
            message: format!(
                "a schedule of multiplex {} <= B blocked {} worms",
                s.multiplex, out.blocked
            ),
        });
    }
    write(graph_out, &p.graph_json())?;
    write(paths_out, &p.paths_json(&releases))?;
    // What the schedule had to respect: links and injection ports.
    let c_ports = p
        .resource_users()
        .iter()
        .map(|u| u.len() as u32)
        .max()
        .unwrap_or(0);
    let summary = serde_json::json!({
        "algorithm": a.algorithm, "vcs": a.vcs, "flits": a.flits,
        "congestion": p.congestion(), "congestion_with_ports": c_ports,
        "dilation": d, "messages": p.messages(),
        "schedule": s, "outcome": out,
        "theorem_2_1_6_classes": schedule::theorem_classes(c_ports, d, a.vcs),
    });
    write(dir.join("schedule.json"), &format!("{summary:#}\n"))
}

fn fly(a: &ButterflyArgs) -> Result<()> {
    let config = ButterflyConfig {
        inputs: a.inputs,
        q: a.q,
        flits: a.flits,
        vcs: a.vcs,
        beta: a.beta,
        seed: a.seed,
        pass_mode: PassMode::parse(&a.pass_mode)?,
    };
    if let Some(j) = &a.json {
        super::files::outputs_apart(&[("json", Some(j))], &[])?;
    }
    let run = butterfly::run(&config)?;
    say!(
        "n = {}, q = {} (q_eff {}), L = {}, B = {}, β = {}: Δ = {} colours, {} cycles per round, the paper's {} rounds",
        a.inputs,
        a.q,
        run.q_eff,
        a.flits,
        a.vcs,
        a.beta,
        run.colours,
        run.round_cycles,
        run.paper_rounds
    );
    say!(
        "round  undelivered   copies  src-discards  delivered  copies/in  copies/out  distinct  left  cycles"
    );
    for (i, r) in run.rounds.iter().enumerate() {
        say!(
            "{i:>5}  {:>11}  {:>7}  {:>12}  {:>9}  {:>9}  {:>10}  {:>8.3}  {:>4.2}  {:>6}",
            r.undelivered,
            r.copies,
            r.source_discards,
            r.delivered,
            r.max_copies_per_input,
            r.max_copies_per_output,
            r.min_distinct_colour_fraction,
            r.max_remaining_fraction,
            r.cycles
        );
    }
    say!(
        "all {} messages delivered in {} rounds; makespan {} cycles (Theorem 3.1.1 shape L(q + lg n) lg^(1/B) n lg lg(qn)/B = {:.1})",
        run.messages,
        run.rounds.len(),
        run.makespan,
        config.bound_shape()
    );
    if let Some(j) = &a.json {
        let v = serde_json::json!({"config": config, "run": run});
        write(j, &format!("{v:#}\n"))?;
    }
    Ok(())
}
