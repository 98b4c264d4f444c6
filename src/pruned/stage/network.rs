//! Moving one round of a stage through the network ([BB] §3.3): compression from the leaves to
//! the peak nodes, the sort there, and expansion with sidetracking, on either engine; and the
//! cycles each takes.

use super::*;

impl Router {
    /// Compression of one round: every record travels from its leaf to vertex `h` of its peak
    /// node. Returns, per peak node (by node index at level `stage`) and child, the arrived
    /// records with the vertex they arrived at.
    pub(super) fn compress(
        &mut self,
        stage: u32,
        batch: &[Moving],
        observer: &mut Option<&mut Observer<'_>>,
    ) -> Result<Arrivals> {
        let g = self.graph.clone();
        let l = g.levels();
        let mut arrived: Arrivals = vec![[Vec::new(), Vec::new()]; 1 << stage];
        let conflicts = golden::compression_conflicts(
            &g,
            stage,
            &batch.iter().map(|b| (b.leaf, b.h)).collect::<Vec<_>>(),
        );
        if conflicts > 0 {
            return Err(invariant(
                self.cycle,
                format!("{conflicts} compression conflicts in stage {stage} (Corollary 1)"),
            ));
        }
        match self.engine {
            Engine::Golden => {
                for b in batch {
                    let child = (b.leaf >> (l - stage - 1)) & 1;
                    arrived[(b.leaf >> (l - stage)) as usize][child as usize].push((b.h, b.record));
                }
                self.cycle += self.compression_cycles(stage);
            }
            Engine::Cycle => {
                let frames: Vec<(usize, usize, Vec<bool>)> = batch
                    .iter()
                    .map(|b| {
                        (
                            b.leaf as usize,
                            (b.h & 1) as usize,
                            self.format.compression_frame(b.h, b.record),
                        )
                    })
                    .collect();
                let len = self.format.compression_len(stage + 1) as usize;
                let p_vertices: Vec<Vertex> = g.level_vertices(stage).collect();
                let mut rx: Vec<[Vec<bool>; 2]> = vec![[Vec::new(), Vec::new()]; p_vertices.len()];
                let mut got = 0;
                let mut inputs = self.net.idle_inputs(stage);
                for t in 0..self.compression_cycles(stage) as usize {
                    // Each frame's wire carries its bit t, then 0.
                    for (leaf, port, bits) in &frames {
                        inputs.source[*leaf][*port] = bits.get(t).copied().unwrap_or(false);
                    }
                    self.net.step(&inputs);
                    self.cycle += 1;
                    if let Some(o) = observer.as_deref_mut() {
                        o(&self.net, &inputs)?;
                    }
                    for (pi, v) in p_vertices.iter().enumerate() {
                        let wires = self.net.child_wires(*v);
                        for c in 0..2 {
                            let buf = &mut rx[pi][c];
                            if !buf.is_empty() || wires[c] {
                                buf.push(wires[c]);
                                if buf.len() == len {
                                    let (record, pad) = self.format.decode_arrived(stage, buf);
                                    if pad != 0 {
                                        return Err(invariant(
                                            self.cycle,
                                            format!(
                                                "compression to {v} kept address bits {pad:#b}"
                                            ),
                                        ));
                                    }
                                    arrived[v.node as usize][c].push((v.index, record));
                                    buf.clear();
                                    got += 1;
                                }
                            }
                        }
                    }
                }
                if got != batch.len() || !self.net.idle() {
                    return Err(invariant(
                        self.cycle,
                        format!(
                            "compression of stage {stage} delivered {got} of {} records",
                            batch.len()
                        ),
                    ));
                }
                let (_, c) = self.net.errors();
                if c > 0 {
                    return Err(invariant(
                        self.cycle,
                        format!(
                            "{c} switches saw a compression conflict in stage {stage} (Corollary 1)"
                        ),
                    ));
                }
            }
        }
        // The arrival vertex must be the rank h (the paths are the unique ones of §1.4).
        for b in batch {
            let node = (b.leaf >> (l - stage)) as usize;
            let child = ((b.leaf >> (l - stage - 1)) & 1) as usize;
            if !arrived[node][child].contains(&(b.h, b.record)) {
                return Err(invariant(
                    self.cycle,
                    format!(
                        "record {} from leaf {} did not reach vertex {} of node ({stage},{node})",
                        b.record.body, b.leaf, b.h
                    ),
                ));
            }
        }
        Ok(arrived)
    }

    /// Cycles of a compression to level `stage`, as the network takes them: a vertex at level
    /// `m` passes the head on after 1 cycle (odd `m`) or 2 (even `m`, which reads the address
    /// bit first); the vertex below the peak goes idle one cycle after its last input bit.
    pub fn compression_cycles(&self, stage: u32) -> u64 {
        let l = self.graph.levels();
        let below = stage + 1;
        if below == l {
            return u64::from(self.format.compression_len(l)) + 1;
        }
        let head: u32 = (below + 1..l).map(|m| if m % 2 == 0 { 2 } else { 1 }).sum();
        u64::from(1 + head + self.format.compression_len(below + 1)) + 1
    }

    /// Cycles of an expansion from level `stage`: 3 per level, then the leaf frame.
    pub fn expansion_cycles(&self, stage: u32) -> u64 {
        let l = self.graph.levels();
        u64::from(3 * (l - stage) + self.format.expansion_len(l))
    }

    /// Sort at every peak node and expand: returns every landing `(leaf, packet)`.
    pub(super) fn expand(
        &mut self,
        stage: u32,
        arrived: &[[Vec<(u32, Record)>; 2]],
        observer: &mut Option<&mut Observer<'_>>,
    ) -> Result<Vec<(u32, Landed)>> {
        let g = self.graph.clone();
        let l = g.levels();
        // Root sorter (Lemma 3): each batch sorted by destination, stable by arrival vertex;
        // the batch from child c enters on logical input c at vertices 0, 1, ...
        let mut entries: Vec<Vec<Entry>> = Vec::with_capacity(arrived.len());
        let mut records: Vec<Vec<Record>> = Vec::with_capacity(arrived.len());
        for node in arrived {
            let mut e = Vec::new();
            let mut r = Vec::new();
            self.report.max_sorter_occupancy = self
                .report
                .max_sorter_occupancy
                .max(node[0].len() + node[1].len());
            for (c, batch) in node.iter().enumerate() {
                let mut sorted = batch.clone();
                sorted.sort_by_key(|&(h, rec)| (rec.destination, h));
                for (k, &(_, rec)) in sorted.iter().enumerate() {
                    e.push(Entry {
                        index: k as u32,
                        input: c as u32,
                        destination: rec.destination,
                        key: k as u32,
                        active: true,
                    });
                    r.push(rec);
                }
            }
            entries.push(e);
            records.push(r);
        }
        let mut landed = Vec::new();
        match self.engine {
            Engine::Golden => {
                for (node, e) in entries.iter().enumerate() {
                    if e.is_empty() {
                        continue;
                    }
                    let x = golden::expand_sidetracking(&g, stage, node as u32, e, &mut self.dir);
                    self.report.rules.add(&x.rules);
                    for (i, rec) in records[node].iter().enumerate() {
                        landed.push((
                            x.leaf[i],
                            Landed {
                                active: x.active[i],
                                key: e[i].key,
                                record: *rec,
                            },
                        ));
                    }
                }
                self.cycle += self.expansion_cycles(stage);
            }
            Engine::Cycle => {
                let mut frames: Vec<(usize, usize, Vec<bool>)> = Vec::new();
                for (node, e) in entries.iter().enumerate() {
                    for (i, en) in e.iter().enumerate() {
                        let v = Vertex {
                            level: stage,
                            node: node as u32,
                            index: en.index,
                        };
                        frames.push((
                            g.id(v),
                            en.input as usize,
                            self.format.expansion_frame(stage, en.key, records[node][i]),
                        ));
                    }
                }
                let expected = frames.len();
                let len = self.format.expansion_len(l) as usize;
                let mut rx: Vec<[Vec<bool>; 2]> =
                    vec![[Vec::new(), Vec::new()]; g.leaves() as usize];
                let mut inputs = self.net.idle_inputs(stage);
                for t in 0..self.expansion_cycles(stage) as usize {
                    // Each frame's wire carries its bit t, then 0.
                    for (id, x, bits) in &frames {
                        inputs.inject[*id][*x] = bits.get(t).copied().unwrap_or(false);
                    }
                    self.net.step(&inputs);
                    self.cycle += 1;
                    if let Some(o) = observer.as_deref_mut() {
                        o(&self.net, &inputs)?;
                    }
                    for leaf in 0..g.leaves() {
                        let wires = self.net.leaf_inputs(leaf);
                        for x in 0..2 {
                            let buf = &mut rx[leaf as usize][x];
                            if !buf.is_empty() || wires[x] {
                                buf.push(wires[x]);
                                if buf.len() == len {
                                    landed.push((leaf, self.format.decode_landed(buf)));
                                    buf.clear();
                                }
                            }
                        }
                    }
                }
                if landed.len() != expected || !self.net.idle() {
                    return Err(invariant(
                        self.cycle,
                        format!(
                            "expansion of stage {stage} landed {} of {expected} packets",
                            landed.len()
                        ),
                    ));
                }
            }
        }
        Ok(landed)
    }
}
