//! Invariants checked after every clock edge (in debug builds and tests, or on request), and
//! the deadlock report of the watchdog.
//!
//! * Link capacity: at most `B` flits (or one, in the restricted model) cross a link per cycle,
//!   each of a different message ([CMS] §1.1).
//! * Registers: a VC holds at most `depth` flits, all of its owner, in worm order; an idle VC
//!   is empty.
//! * Conservation and contiguity: the flits of a message's current attempt in the network are
//!   exactly those sent and not yet delivered or discarded, and the VCs its worm owns form one
//!   unbroken chain of consecutive levels, flits further along the path being earlier in the
//!   worm. No flit is lost or duplicated.
//! * Every message is pending, waiting, in flight, delivered or dropped, and only in-flight
//!   messages have flits in the network.
//! * Every flit that reaches the last level enters a register draining into its message's
//!   destination.

use crate::config::LinkBandwidth;
use crate::error::{Error, Result};
use crate::sim::Simulation;
use crate::stats::Status;
use crate::switch::{TransferKind, VcState};
use std::collections::BTreeMap;

/// What one message occupies in the network.
#[derive(Default)]
struct Footprint {
    flits: u32,
    min_seq: u32,
    max_seq: u32,
    /// Levels of the VCs the worm owns, with the lowest and highest flit index held there.
    levels: Vec<(u32, Option<(u32, u32)>)>,
}

/// Checks every invariant after the clock edge of `cycle`.
pub fn check(sim: &Simulation, cycle: u64) -> Result<()> {
    let fail = |message: String| Err(Error::Invariant { cycle, message });
    let f = &sim.fabric;
    let b = sim.config.vcs;
    let limit = match sim.config.link_bandwidth {
        LinkBandwidth::PerVc => b,
        LinkBandwidth::One => 1,
    };
    // Link capacity and distinct messages per link (injection links included).
    let mut per_link: BTreeMap<(bool, u32), Vec<u32>> = BTreeMap::new();
    for t in sim.last_transfers() {
        if let TransferKind::Crossed { .. } = t.kind
            && f.is_ejection_vc(t.to)
            && let Some(m) = sim.messages.get(t.flit.msg)
            && f.ejection_terminal(t.to) != m.record.destination
        {
            return fail(format!(
                "flit {} of message {} (to {}) entered VC {} of output {}: misrouted",
                t.flit.seq,
                t.flit.msg,
                m.record.destination,
                t.to,
                f.ejection_terminal(t.to)
            ));
        }
        match t.kind {
            TransferKind::Crossed { ov } => per_link
                .entry((false, f.output_vc_parts(ov).0))
                .or_default()
                .push(t.flit.msg),
            TransferKind::Injected => per_link
                .entry((true, t.to / b))
                .or_default()
                .push(t.flit.msg),
            _ => {}
        }
    }
    for ((injection, link), msgs) in &per_link {
        let mut distinct = msgs.clone();
        distinct.sort_unstable();
        distinct.dedup();
        let name = if *injection {
            "injection link of input"
        } else {
            "link"
        };
        if msgs.len() as u32 > limit || distinct.len() != msgs.len() {
            return fail(format!(
                "{name} {link} carried {} flits of messages {msgs:?} (at most {limit}, all distinct)",
                msgs.len()
            ));
        }
    }
    // Registers, and each message's footprint: per VC it owns, its position along the
    // message's path (the level on a leveled network; the hop on a graph network).
    let mut footprints: BTreeMap<u32, Footprint> = BTreeMap::new();
    let mut paths: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
    for ivc in 0..f.total_vcs() as u32 {
        let state = f.state(ivc);
        let count = f.count(ivc);
        let (s, local) = f.vc_switch(ivc);
        let level = match &f.topo.graph {
            None => f.topo.node(s).level,
            Some(g) if state != VcState::Idle => {
                let owner = f.owner(ivc).unwrap_or(u32::MAX);
                let path = paths
                    .entry(owner)
                    .or_insert_with(|| sim.message_path(owner).unwrap_or_default());
                let port = local / sim.config.vcs;
                let terminal = g.switch_terminal[s as usize] != crate::topology::NO_TERMINAL;
                if terminal && port == 0 {
                    0
                } else {
                    let link = f.topo.in_link(s, port);
                    match path.iter().position(|&l| l == link) {
                        Some(k) => k as u32 + 1,
                        None => {
                            return fail(format!(
                                "VC {ivc} (switch {}, in link {link}) holds message {owner}, whose path {path:?} does not cross that link",
                                g.labels[s as usize]
                            ));
                        }
                    }
                }
            }
            Some(_) => 0,
        };
        if count > f.params.depth {
            return fail(format!(
                "VC {ivc} holds {count} flits, depth {}",
                f.params.depth
            ));
        }
        if state == VcState::Idle {
            if count > 0 {
                return fail(format!("idle VC {ivc} holds {count} flits"));
            }
            continue;
        }
        let owner = f.owner(ivc).unwrap_or(u32::MAX);
        let fp = footprints.entry(owner).or_insert_with(|| Footprint {
            min_seq: u32::MAX,
            ..Default::default()
        });
        let mut held: Option<(u32, u32)> = None;
        for k in 0..count {
            let Some(flit) = f.flit(ivc, k) else { break };
            if flit.msg != owner {
                return fail(format!(
                    "VC {ivc} owned by message {owner} holds a flit of message {}",
                    flit.msg
                ));
            }
            let seq = u32::from(flit.seq);
            if let Some((_, hi)) = held
                && seq != hi + 1
            {
                return fail(format!(
                    "VC {ivc}: flit {seq} of message {owner} follows flit {hi}"
                ));
            }
            held = Some((held.map_or(seq, |h| h.0), seq));
            fp.flits += 1;
            fp.min_seq = fp.min_seq.min(seq);
            fp.max_seq = fp.max_seq.max(seq);
        }
        fp.levels.push((level, held));
    }
    // An output VC held by a worm leads to a VC of that worm: the hardware reads "free" from
    // the downstream VC alone (except that, with one flit per link, a granted header may not
    // have crossed yet: it is then still at the front of its VC, and the VC it holds is idle).
    for ov in 0..f.output_vc_count() {
        let Some(holder) = f.allocated_to(ov) else {
            continue;
        };
        let down = f.down(ov);
        let waits = sim.config.link_bandwidth == LinkBandwidth::One
            && f.state(down) == VcState::Idle
            && f.flit(holder, 0).is_some_and(|flit| flit.seq == 0);
        if f.owner(down) != f.owner(holder) && !waits {
            return fail(format!(
                "output VC {ov} is held by VC {holder} (message {:?}) but leads to VC {down} of message {:?}",
                f.owner(holder),
                f.owner(down)
            ));
        }
    }
    for (&msg, fp) in &footprints {
        let Some(m) = sim.messages.get(msg) else {
            return fail(format!(
                "message {msg} has flits in the network but its record was freed"
            ));
        };
        let expected = u32::from(m.sent) - u32::from(m.gone);
        if fp.flits != expected {
            return fail(format!(
                "message {msg} has {} flits in the network, expected {expected} (sent {}, gone {}): a flit was lost or duplicated",
                fp.flits, m.sent, m.gone
            ));
        }
        if fp.flits > 0 && (fp.min_seq != u32::from(m.gone) || fp.max_seq + 1 != u32::from(m.sent))
        {
            return fail(format!(
                "message {msg} holds flits {}..={} but sent {} and {} left: the worm is out of order",
                fp.min_seq, fp.max_seq, m.sent, m.gone
            ));
        }
        let mut levels = fp.levels.clone();
        levels.sort_by_key(|&(l, _)| std::cmp::Reverse(l));
        for pair in levels.windows(2) {
            let ((upper, ahead), (lower, behind)) = (pair[0], pair[1]);
            if upper != lower + 1 {
                return fail(format!(
                    "message {msg} owns VCs at levels {:?}: its worm is not contiguous",
                    levels.iter().map(|l| l.0).collect::<Vec<_>>()
                ));
            }
            if let (Some((_, ahead_hi)), Some((behind_lo, _))) = (ahead, behind)
                && ahead_hi >= behind_lo
            {
                return fail(format!(
                    "message {msg}: flit {behind_lo} at level {lower} is not behind flit {ahead_hi} at level {upper}"
                ));
            }
        }
        if !matches!(m.record.status, Status::InFlight | Status::Delivered) {
            return fail(format!(
                "message {msg} has flits in the network but is {:?}",
                m.record.status
            ));
        }
    }
    let mut outstanding = 0u64;
    for m in sim.messages.live() {
        let r = &m.record;
        let in_net = m.sent > m.gone;
        if m.gone > m.sent {
            return fail(format!(
                "message {}: {} flits left the network but {} entered",
                r.id, m.gone, m.sent
            ));
        }
        outstanding += u64::from(m.sent - m.gone);
        if in_net && !footprints.contains_key(&r.id) {
            return fail(format!(
                "message {} sent {} flits and {} left, but none is in the network: flits were lost",
                r.id, m.sent, m.gone
            ));
        }
        if r.status == Status::Dropped && in_net {
            return fail(format!(
                "message {} is reported dropped but has flits in the network",
                r.id
            ));
        }
        if r.status == Status::Delivered && r.tail_arrival.is_none() {
            return fail(format!(
                "message {} is delivered without a tail arrival",
                r.id
            ));
        }
    }
    if outstanding != f.flits_in_network() {
        return fail(format!(
            "the registers hold {} flits but messages account for {outstanding}",
            f.flits_in_network()
        ));
    }
    Ok(())
}

/// Names the worms that hold VCs when the watchdog fires.
pub fn deadlock_report(sim: &Simulation, cycle: u64) -> String {
    let f = &sim.fabric;
    let b = sim.config.vcs;
    let mut worms: BTreeMap<u32, Vec<String>> = BTreeMap::new();
    for ivc in 0..f.total_vcs() as u32 {
        let Some(owner) = f.owner(ivc) else { continue };
        let (s, local) = f.vc_switch(ivc);
        let node = f.topo.node(s);
        worms.entry(owner).or_default().push(format!(
            "l{}_c{} port {} vc {} {} ({} flits)",
            node.level,
            node.column,
            local / b,
            local % b,
            VcState::NAMES[f.state(ivc) as usize],
            f.count(ivc)
        ));
    }
    let mut text = format!(
        "deadlock: no flit moved for {} cycles (watchdog) at cycle {cycle}; {} worms hold virtual channels:",
        sim.config.watchdog,
        worms.len()
    );
    for (msg, vcs) in worms.iter().take(32) {
        // A worm that holds VCs is not finished, so its record is held.
        let (source, destination) = sim.messages.get(*msg).map_or((u32::MAX, u32::MAX), |m| {
            (m.record.source, m.record.destination)
        });
        text.push_str(&format!(
            "\n  worm {msg} ({source} -> {destination}): {}",
            vcs.join(", ")
        ));
    }
    if worms.len() > 32 {
        text.push_str(&format!("\n  ... and {} more", worms.len() - 32));
    }
    text
}
