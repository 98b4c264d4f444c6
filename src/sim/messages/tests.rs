//! The message table's tests: its rings across growth and reuse, and a saturated run's records.

use super::*;

/// The record of message `id` while it waits.
fn waiting(id: u32) -> MessageRecord {
    MessageRecord::waiting(id, id % 7, id % 5, 0, u64::from(id))
}

/// Bits of a source in a header's id in these tests (sources `id % 7`).
const SOURCE_BITS: u32 = 3;

/// The header of message `id`, whose id names its source `id % 7` in its low bits.
fn header(id: u32) -> Header {
    Header {
        destination: id % 5,
        middle: 0,
        path: 0,
        id: (id << SOURCE_BITS) | (id % 7),
    }
}

/// A waiting message holds its header and release, a quarter of what a record takes (as
/// the module's documentation says).
#[test]
fn a_waiting_message_costs_a_quarter_of_a_record() {
    assert_eq!(size_of::<Header>() + size_of::<Released>(), 24);
    assert_eq!(size_of::<Message>(), 96);
}

/// A release keeps its cycle when its message is marked finished, up to the latest cycle a
/// run may reach; and a header's id names its source for every width of address.
#[test]
fn a_release_and_a_source_pack_without_loss() {
    for release in [0, 1, 12_345, crate::traffic::MAX_CYCLE] {
        let mut r = Released::new(release);
        assert!(!r.finished());
        r.set_finished();
        assert_eq!((r.release(), r.finished()), (release, true));
    }
    for bits in [1, 3, 10, 31, 32] {
        let table = MessageTable::new(bits);
        for (k, source) in [(0u64, 0u64), (5, 1), (1 << 40, (1 << bits) - 1)] {
            // As the simulator numbers a source's messages, truncated to 32 bits.
            let id = ((k << bits) | source) as u32;
            assert_eq!(u64::from(id & table.source_mask), source, "{bits} bits");
        }
    }
}

/// Across chunks, the ring's doubling (live ids spanning every chunk) and its reuse of
/// retired chunks, every held record and header is the one pushed with its id (a waiting
/// message's record made from its header and release, a started one's written when it
/// started), and the live records are exactly those not retired, in id order.
#[test]
fn records_survive_growth_and_reuse_of_chunks() {
    for keep in [false, true] {
        let mut table = MessageTable::new(SOURCE_BITS);
        table.keep(keep);
        let mut finished = std::collections::BTreeSet::new();
        let mut next = 0u32;
        // Waves of arrivals larger, then smaller, than what finishes: the live span
        // grows over several chunks, then shrinks and wraps.
        for (wave, (arrive, finish)) in [(5000, 1000), (3000, 6000), (4000, 500), (100, 9000)]
            .into_iter()
            .enumerate()
        {
            for _ in 0..arrive {
                let id = table.push(u64::from(next), header(next));
                assert_eq!(id, next);
                next += 1;
            }
            // Finish messages from the oldest (in even waves every third stays live, so
            // that the oldest live id holds back the ring while it grows; odd waves
            // finish them all, and the next pushes wrap round onto retired chunks).
            let mut done = 0;
            for id in table.base..table.end {
                if done == finish {
                    break;
                }
                if id % 3 != 0 || wave % 2 == 1 {
                    // (One finished in an earlier wave counts again, as it stays held.)
                    if finished.insert(id) {
                        assert!(!table.start(id, u64::from(id)).1, "a first attempt");
                        let m = table.get_mut(id);
                        m.gone = 1;
                        m.record.status = Status::Delivered;
                        m.record.tail_arrival = Some(u64::from(id) + 1);
                    }
                    done += 1;
                }
            }
            table.retire(std::iter::empty());
            // A request ahead for any id, held or not, is only a hint.
            for id in table.base.saturating_sub(3)..table.end + 3 {
                table.prefetch(id);
            }
            for id in table.base..table.end {
                let m = table.get(id).expect("a held id has its record");
                let mut expected = waiting(id);
                if finished.contains(&id) {
                    expected.status = Status::Delivered;
                    expected.attempts = 1;
                    expected.injected = Some(u64::from(id));
                    expected.tail_arrival = Some(u64::from(id) + 1);
                }
                assert_eq!(m.record, expected, "wave {wave}");
                assert_eq!(table.header(id), header(id), "wave {wave}");
            }
            let live: Vec<u32> = table.live().map(|m| m.record.id).collect();
            let expected: Vec<u32> = (table.base..table.end).collect();
            assert_eq!(live, expected, "wave {wave}");
            assert_eq!(table.held() as usize, live.len());
            if keep {
                assert_eq!(table.base, 0, "every record is kept");
            } else {
                if wave == 1 {
                    assert_eq!(table.base, 6000, "wave 1 retires every id below 6000");
                }
                // Retired: a prefix of finished ids, and the first held one is not.
                assert!((0..table.base).all(|id| finished.contains(&id)));
                assert!(table.base == table.end || !finished.contains(&table.base));
            }
        }
        assert_eq!(table.issued(), 12_100);
    }
}

/// Where many messages wait at their sources (the first of them holding back the
/// front), those that finish after them fold into the tally at once: their records leave
/// (their chunks put aside once empty, and taken again where a worm of their ids
/// starts), the waiting ones keep theirs, and the front passes the folded ids when the
/// first ones finish. The tally counts every message once.
#[test]
fn finished_messages_behind_a_waiting_front_fold_in_at_once() {
    const WAITING: u32 = OUT_OF_ORDER_AFTER + CHUNK as u32;
    let mut table = MessageTable::new(SOURCE_BITS);
    let mut next = 0;
    let mut push = |table: &mut MessageTable, count: u32| {
        let ids = next..next + count;
        for id in ids.clone() {
            assert_eq!(table.push(u64::from(id), header(id)), id);
        }
        next += count;
        ids
    };
    let finish = |table: &mut MessageTable, id: u32| {
        let m = table.get_mut(id);
        m.gone = 1;
        m.record.status = Status::Delivered;
        m.record.tail_arrival = Some(u64::from(id) + 100);
        Transfer {
            flit: FlitSlot {
                msg: id,
                seq: 0,
                hop: 0,
            },
            from: 0,
            to: 0,
            kind: TransferKind::Arrived,
        }
    };
    let first = push(&mut table, WAITING);
    // Chunk after chunk of later messages start and finish, one a cycle.
    for cycle in 0..4 {
        let ids = push(&mut table, CHUNK as u32);
        for id in ids.clone() {
            table.start(id, cycle);
        }
        table.retire(std::iter::empty());
        assert!(table.parking(), "{} wait", table.never_started());
        assert_eq!(table.started().count(), CHUNK);
        let edge: Vec<Transfer> = ids.clone().map(|id| finish(&mut table, id)).collect();
        table.retire(edge.iter());
        assert_eq!(table.base, 0, "the waiting messages hold back the front");
        assert!(ids.clone().all(|id| table.get(id).is_none()), "folded in");
        assert_eq!(table.started().count(), 0, "no record left");
        assert_eq!(table.spare.len(), 1, "the chunk put aside is taken again");
    }
    assert_eq!(table.tally.delivered, 4 * CHUNK as u64);
    for id in first.clone() {
        assert_eq!(table.get(id).expect("waiting").record, waiting(id));
    }
    // The waiting ones start and finish: the front passes every id, and the tally
    // holds each message once.
    for id in first.clone() {
        table.start(id, 9);
    }
    let edge: Vec<Transfer> = first.map(|id| finish(&mut table, id)).collect();
    table.retire(edge.iter());
    assert!(!table.parking(), "the queues are empty");
    assert_eq!((table.held(), table.never_started()), (0, 0));
    assert_eq!(table.tally.delivered, u64::from(WAITING) + 4 * CHUNK as u64);
    // The slots have chunks again: a new message's worm starts where it would.
    let ids = push(&mut table, 1);
    assert!(!table.start(ids.start, 10).1);
}
