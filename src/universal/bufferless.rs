//! The bufferless link arbiter that [SV] §3 and [CMSV] share: worms whose flits move one link
//! per cycle and are never delayed, only discarded. In every cycle each link's arbiter sees the
//! flits that want it and keeps at most B of them:
//!
//! - [`Contention::RankPreempt`] ([SV] §3, [CMSV] Algorithm 2): the B smallest keys (rank,
//!   then generator or worm id, then sequence) cross; every other flit is cut;
//! - [`Contention::DiscardAll`] ([CMSV] Algorithm 1): if more than B want the link, all of
//!   them are discarded there.
//!
//! A cut flit and every later flit of its worm vanish at the cutting link ([`Flight::cut`]);
//! they never compete there, while the flits in front go on and the flits behind still
//! compete upstream.

/// How a link with more than B requests decides.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Contention {
    RankPreempt,
    DiscardAll,
}

/// A flit that wants `link` this cycle: data flit `flit` at path position `hop`, or an
/// acknowledgement. `key` orders requests under [`Contention::RankPreempt`] (lowest first).
#[derive(Clone, Copy, Debug)]
pub struct Request {
    pub link: u32,
    pub key: (u64, u32, u64),
    pub worm: u32,
    pub flit: u32,
    pub hop: u32,
    pub ack: bool,
}

/// Decides every link of one cycle: sorts `requests` by link (and key) and passes each
/// winner to `win` and each loser to `lose`. At most `bandwidth` requests of one link win.
pub fn arbitrate(
    requests: &mut [Request],
    bandwidth: u32,
    contention: Contention,
    mut win: impl FnMut(&Request),
    mut lose: impl FnMut(&Request),
) {
    requests.sort_unstable_by_key(|r| (r.link, r.key, r.worm, r.ack));
    let mut i = 0;
    while i < requests.len() {
        let link = requests[i].link;
        let mut end = i;
        while end < requests.len() && requests[end].link == link {
            end += 1;
        }
        let crowded = end - i > bandwidth as usize;
        for (k, r) in requests[i..end].iter().enumerate() {
            let wins = match contention {
                Contention::RankPreempt => k < bandwidth as usize,
                Contention::DiscardAll => !crowded,
            };
            if wins { win(r) } else { lose(r) }
        }
        i = end;
    }
}

/// One try of one worm: flit j (0-based) crosses path position h in cycle `start + j + h`
/// unless it was cut before h.
#[derive(Clone, Debug)]
pub struct Flight {
    pub start: u64,
    /// `limit[j]`: flit j crosses positions `0..limit[j]` (non-increasing in j).
    limit: Box<[u32]>,
}

impl Flight {
    /// A flight of `flits` flits (not started).
    pub fn new(flits: u32) -> Flight {
        Flight {
            start: 0,
            limit: vec![0; flits as usize].into(),
        }
    }

    /// Starts a try in cycle `start` along a path of `len` links.
    pub fn restart(&mut self, start: u64, len: u32) {
        self.start = start;
        self.limit.fill(len);
    }

    /// Pushes a request for every flit of this flight that wants a link in `cycle`.
    pub fn requests(
        &self,
        cycle: u64,
        path: &[u32],
        key: (u64, u32, u64),
        worm: u32,
        out: &mut Vec<Request>,
    ) {
        if cycle < self.start {
            return;
        }
        let flits = self.limit.len() as u64;
        let len = path.len() as u64;
        let age = cycle - self.start; // flit j is at position age − j
        for h in age.saturating_sub(flits - 1)..len.min(age + 1) {
            let j = (age - h) as usize;
            if (h as u32) < self.limit[j] {
                out.push(Request {
                    link: path[h as usize],
                    key,
                    worm,
                    flit: j as u32,
                    hop: h as u32,
                    ack: false,
                });
            }
        }
    }

    /// Cuts flit `flit` and every later one at position `hop`; returns the flits that had
    /// not been cut before.
    pub fn cut(&mut self, flit: u32, hop: u32) -> u64 {
        let mut lost = 0;
        for l in &mut self.limit[flit as usize..] {
            if *l > hop {
                *l = hop;
                lost += 1;
            }
        }
        lost
    }

    /// Whether every flit crossed all `len` links.
    pub fn complete(&self, len: u32) -> bool {
        self.limit[self.limit.len() - 1] == len
    }

    /// The cycle the tail crosses the last of `len` links (if not cut).
    pub fn tail_arrival(&self, len: u32) -> u64 {
        (self.start + self.limit.len() as u64 + u64::from(len)).saturating_sub(2)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(link: u32, rank: u64, worm: u32) -> Request {
        Request {
            link,
            key: (rank, worm, 0),
            worm,
            flit: 0,
            hop: 0,
            ack: false,
        }
    }

    #[test]
    fn rank_preempt_keeps_the_b_lowest_and_discard_all_keeps_none() {
        let mut r = vec![req(1, 5, 0), req(1, 2, 1), req(1, 9, 2), req(0, 7, 3)];
        let (mut won, mut lost) = (Vec::new(), Vec::new());
        arbitrate(
            &mut r,
            2,
            Contention::RankPreempt,
            |x| won.push(x.worm),
            |x| lost.push(x.worm),
        );
        assert_eq!(won, vec![3, 1, 0]);
        assert_eq!(lost, vec![2]);
        let (mut won, mut lost) = (Vec::new(), Vec::new());
        arbitrate(
            &mut r,
            2,
            Contention::DiscardAll,
            |x| won.push(x.worm),
            |x| lost.push(x.worm),
        );
        assert_eq!(won, vec![3]);
        assert_eq!(lost, vec![1, 0, 2]);
    }

    #[test]
    fn a_cut_stops_the_flit_and_all_behind_it_at_that_link() {
        let mut f = Flight::new(4);
        f.restart(10, 5);
        let path = [7, 8, 9, 10, 11];
        let mut out = Vec::new();
        f.requests(12, &path, (0, 0, 0), 0, &mut out);
        // flits 0, 1, 2 at positions 2, 1, 0
        let at: Vec<(u32, u32)> = out.iter().map(|r| (r.flit, r.link)).collect();
        assert_eq!(at, vec![(2, 7), (1, 8), (0, 9)]);
        assert_eq!(f.cut(1, 1), 3);
        out.clear();
        f.requests(13, &path, (0, 0, 0), 0, &mut out);
        // flit 0 goes on; flit 3, behind the cut, still crosses position 0 before it
        let at: Vec<(u32, u32)> = out.iter().map(|r| (r.flit, r.hop)).collect();
        assert_eq!(at, vec![(3, 0), (0, 3)]);
        assert!(!f.complete(5));
        assert_eq!(f.tail_arrival(5), 10 + 4 + 5 - 2);
    }
}
