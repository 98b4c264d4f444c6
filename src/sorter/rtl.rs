//! Verilog of the flexible sorter from the same model: `templates/fsort.v` (the module
//! `ff_fsort`: controller, cells, loop switches, column sorter, Omega network and control
//! stores) and `templates/fsort_tb.v` (a testbench replaying a model run's inputs). Registers
//! are declared from [`super::layout`]; the per-element datapath statements are generated here
//! from the same constants the model uses (comparator lists, shuffle wiring, store contents).

use super::circuit::{
    CLEAR, DRAIN, FlexibleSorter, IDLE, INRING, LOAD, OFWD, OREV, REWIND, SEEK, SORT, SorterInputs,
};
use super::layout::{Field, layout, widths};
use crate::error::Result;
use crate::rtl::{RTL_VCD_FILE, RtlDesign, STIMULUS_FILE, fusesoc_core, render};
use askama::Template;

#[derive(Template)]
#[template(path = "fsort.v", escape = "none")]
struct SorterTemplate<'a> {
    version: &'a str,
    command: &'a str,
    config_hash: &'a str,
    s: u32,
    cells: u32,
    word: u32,
    bits: u32,
    depth: u32,
    lgs: u32,
    cw: u32,
    pw: u32,
    dw: u32,
    gw: u32,
    lw: u32,
    ptrw: u32,
    regs: Vec<(String, u32)>,
    /// `localparam` stores: (name, length, Verilog literal of hex chunks).
    stores: Vec<(String, usize, String)>,
    /// Cross wires: (name, store bit at the stage's position).
    crosses: Vec<(String, String)>,
    /// Per `lg w`: (value, phases, seek length, omega offset).
    widths_table: Vec<(u32, u32, u32, u32)>,
    /// Per `lg w`: bits of a w-column pass, and that plus the sorter depth and plus the Omega
    /// stages (`WORD << lg w`, `+ DEPTH`, `+ LGS`): constants instead of multipliers.
    pass_table: Vec<(u32, u32, u32, u32)>,
    /// Per in-ring dimension j: the bits of a 2^j-column span (`WORD << j`).
    span_table: Vec<(u32, u32)>,
    /// Per group count g: the bits of g columns (`g * WORD`).
    group_table: Vec<(u32, u32)>,
    /// Width of the word-position counter (count mod WORD).
    ww: u32,
    /// Per cell position, per `lg w`: its store offset.
    cell_offsets: Vec<(u32, Vec<(u32, u32)>)>,
    states: Vec<(&'static str, u8)>,
    /// Generated statement blocks.
    shift_d: Vec<String>,
    clear_d: Vec<String>,
    inring: Vec<String>,
    sorter: Vec<String>,
    omega: Vec<String>,
    pointers: Vec<String>,
    port: Vec<String>,
}

#[derive(Template)]
#[template(path = "fsort_tb.v", escape = "none")]
struct TbTemplate<'a> {
    version: &'a str,
    command: &'a str,
    config_hash: &'a str,
    s: u32,
    gw: u32,
    cycles: u64,
    stimulus: &'a str,
    dumpfile: &'a str,
}

/// Generates the sorter's Verilog and a testbench for `cycles` cycles of stimulus.
pub fn design(
    sorter: &FlexibleSorter,
    command: &str,
    config_hash: &str,
    cycles: u64,
) -> Result<RtlDesign> {
    let c = &sorter.controls;
    let p = c.params;
    let (cw, pw, dw, gw, lw, ptrw) = widths(c);
    let (s, cells, word) = (p.s, p.cells(), p.word());
    let lgs = p.lg_s();
    let depth = c.depth();
    let version = env!("CARGO_PKG_VERSION");
    let elements = layout(c);
    let regs = elements
        .iter()
        .filter(|e| !matches!(e.field, Field::Cross(..)))
        .map(|e| (e.name.clone(), e.width))
        .collect();
    // Every store is padded with zeros to a power of two and read with exactly as many
    // position bits (the positions never pass the store's last, zero, bit).
    let mut stores = Vec::new();
    let mut index_bits = std::collections::HashMap::new();
    let mut store = |name: String, v: &[bool]| {
        let ib = crate::flit::clog2(v.len() as u64);
        let padded = 1usize << ib;
        // Hex chunks of at most 1024 bits, most significant first: Icarus's scanner
        // rejects literals of 16K characters and more.
        let digits = crate::rtl::hex::digits(padded, |i| v.get(i).copied().unwrap_or(false));
        let chunks: Vec<String> = (0..digits.len())
            .step_by(256)
            .map(|at| {
                let hex = &digits[at..(at + 256).min(digits.len())];
                format!("{}'h{hex}", (hex.len() * 4).min(padded))
            })
            .collect();
        let bits = format!("{{ {} }}", chunks.join(", "));
        index_bits.insert(name.clone(), ib);
        stores.push((name, padded, bits));
    };
    for (k, stage) in c.omega.iter().enumerate() {
        for (m, st) in stage.iter().enumerate() {
            store(format!("OS_k{k}_m{m}"), st);
        }
    }
    for (rho, ring) in c.cell.iter().enumerate() {
        for (col, st) in ring.iter().enumerate() {
            store(format!("CS_r{rho}_c{col}"), st);
        }
    }
    let at = |store: &str, ptr: &str| format!("{store}[{ptr}[{}:0]]", index_bits[store] - 1);
    let mut crosses = Vec::new();
    for k in 0..lgs {
        for m in 0..s / 2 {
            crosses.push((
                format!("cross_k{k}_m{m}"),
                at(&format!("OS_k{k}_m{m}"), &format!("optr_k{k}")),
            ));
        }
    }
    let widths_table = (0..c.phases.len() as u32)
        .map(|lg| {
            (
                lg,
                c.phases[lg as usize],
                c.seek_len(lg),
                c.omega_offset[lg as usize],
            )
        })
        .collect();
    let pass_table = (0..c.phases.len() as u32)
        .map(|lg| (lg, word << lg, (word << lg) + depth, (word << lg) + lgs))
        .collect();
    let span_table = (0..c.phases.len() as u32).map(|j| (j, word << j)).collect();
    let group_table = (1..=cells).map(|g| (g, g * word)).collect();
    let ww = crate::flit::clog2(word.into());
    let cell_offsets = (0..cells)
        .map(|col| {
            (
                col,
                (0..c.phases.len() as u32)
                    .map(|lg| (lg, c.cell_offset[col as usize][lg as usize]))
                    .collect(),
            )
        })
        .collect();
    let cwv = |v: u32| format!("{cw}'d{v}");
    let d = |rho: u32, col: u32| format!("d_r{rho}_c{col}");
    let x = |rho: u32, col: u32| format!("x_r{rho}_c{col}");
    let lo = if word >= 2 {
        format!("[{}:0]", word - 2)
    } else {
        String::new()
    };
    // D chain: cell c < w takes the MSB of c + 1, the top cell the port input.
    let mut shift_d = Vec::new();
    for rho in 0..s {
        for col in 0..cells {
            let from = if col + 1 < cells {
                format!(
                    "(wcols == {}) ? pin[{rho}] : {}[{}]",
                    cwv(col + 1),
                    d(rho, col + 1),
                    word - 1
                )
            } else {
                format!("pin[{rho}]")
            };
            shift_d.push(format!(
                "if (wcols > {}) {} <= {{{}{lo}, {from}}};",
                cwv(col),
                d(rho, col),
                d(rho, col)
            ));
        }
    }
    let mut clear_d = Vec::new();
    for rho in 0..s {
        for col in 0..cells {
            clear_d.push(format!(
                "if (wcols > {}) {} <= {{1'b1, {}'d0}};",
                cwv(col),
                d(rho, col),
                p.bits
            ));
        }
    }
    // In-ring sub-steps: 0 copy, 1 rotate X down, 2 owners exchange, 3 rotate X up,
    // 4 non-owners copy back. `jmask` has bit j set.
    let mut inring = Vec::new();
    for rho in 0..s {
        for col in 0..cells {
            let (dn, xn) = (d(rho, col), x(rho, col));
            let cv = cwv(col);
            let down = if col + 1 < cells {
                format!(
                    "(wcols == {}) ? {}[{}] : {}[{}]",
                    cwv(col + 1),
                    x(rho, 0),
                    word - 1,
                    x(rho, col + 1),
                    word - 1
                )
            } else {
                format!("{}[{}]", x(rho, 0), word - 1)
            };
            let up = if col > 0 {
                format!("{}[0]", x(rho, col - 1))
            } else {
                format!("xtop_r{rho}")
            };
            let hi = if word >= 2 {
                format!("[{}:1]", word - 1)
            } else {
                String::new()
            };
            inring.push(format!(
                "if (wcols > {cv}) begin\n\
                 \x20               case (sub)\n\
                 \x20               3'd0: {xn} <= {dn};\n\
                 \x20               3'd1: {xn} <= {{{xn}{lo}, {down}}};\n\
                 \x20               3'd2: if ((jmask & {cv}) == {z} && {owner}) begin {dn} <= {xn}; {xn} <= {dn}; end\n\
                 \x20               3'd3: {xn} <= {{{up}, {xn}{hi}}};\n\
                 \x20               default: if ((jmask & {cv}) != {z}) {dn} <= {xn};\n\
                 \x20               endcase\n\
                 \x20           end",
                z = cwv(0),
                owner = at(&format!("CS_r{rho}_c{col}"), &format!("cptr_c{col}"))
            ));
        }
    }
    // Column sorter: layer t reads layer t − 1 (layer 0 the ports).
    let mut sorter_code = Vec::new();
    for (t, layer) in c.comparators.iter().enumerate() {
        let input = |line: u32| {
            if t == 0 {
                format!("port[{line}]")
            } else {
                format!("sl_t{}_n{line}", t - 1)
            }
        };
        let first = if t == 0 {
            "first_in".to_string()
        } else {
            format!("sf_t{}", t - 1)
        };
        let mut used = vec![false; s as usize];
        for (q, &(i, j)) in layer.iter().enumerate() {
            used[i as usize] = true;
            used[j as usize] = true;
            let (a, b) = (input(i), input(j));
            sorter_code.push(format!(
                "dec = !{first} && sd_t{t}_k{q};\n\
                 \x20           swp = !{first} && ss_t{t}_k{q};\n\
                 \x20           sl_t{t}_n{i} <= dec ? (swp ? {b} : {a}) : ({a} & {b});\n\
                 \x20           sl_t{t}_n{j} <= dec ? (swp ? {a} : {b}) : ({a} | {b});\n\
                 \x20           sd_t{t}_k{q} <= dec || ({a} != {b});\n\
                 \x20           ss_t{t}_k{q} <= dec ? swp : ({a} & !{b});"
            ));
        }
        for line in 0..s {
            if !used[line as usize] {
                sorter_code.push(format!("sl_t{t}_n{line} <= {};", input(line)));
            }
        }
        if t + 1 < c.comparators.len() {
            sorter_code.push(format!("sf_t{t} <= {first};"));
        }
    }
    // Omega stages: forward = shuffle then switch; reverse = switch then unshuffle.
    let mut omega = Vec::new();
    for k in 0..lgs {
        let fwd_in = |pos: u32| {
            if k == 0 {
                format!("port[{pos}]")
            } else {
                format!("o_k{}_p{pos}", k - 1)
            }
        };
        let rev_in = |pos: u32| {
            if k == lgs - 1 {
                format!("port[{pos}]")
            } else {
                format!("o_k{}_p{pos}", k + 1)
            }
        };
        let delay_f = k;
        let delay_r = lgs - 1 - k;
        let window = |delay: u32| {
            if delay == 0 {
                "(count < wbits)".to_string()
            } else {
                format!("(count >= {d}) && (count - {d} < wbits)", d = cwv(delay))
            }
        };
        omega.push(format!(
            "slot_f = {};\n\
             \x20       slot_r = {};\n\
             \x20       inslot = (state == OFWD) ? slot_f : slot_r;",
            window(delay_f),
            window(delay_r)
        ));
        // Forward: position rotl(x) receives input x.
        let mut sh = vec![String::new(); s as usize];
        for xx in 0..s {
            sh[p.rotl(xx) as usize] = fwd_in(xx);
        }
        for m in 0..s / 2 {
            let (a, b) = (&sh[(2 * m) as usize], &sh[(2 * m + 1) as usize]);
            let (ra, rb) = (rev_in(2 * m), rev_in(2 * m + 1));
            let cross = format!("(inslot && cross_k{k}_m{m})");
            // Reverse: switched position y goes to rotr(y).
            let (ta, tb) = (p.rotr(2 * m), p.rotr(2 * m + 1));
            omega.push(format!(
                "if (state == OFWD) begin\n\
                 \x20           o_k{k}_p{e} <= {cross} ? {b} : {a};\n\
                 \x20           o_k{k}_p{o} <= {cross} ? {a} : {b};\n\
                 \x20       end else begin\n\
                 \x20           o_k{k}_p{ta} <= {cross} ? {rb} : {ra};\n\
                 \x20           o_k{k}_p{tb} <= {cross} ? {ra} : {rb};\n\
                 \x20       end",
                e = 2 * m,
                o = 2 * m + 1
            ));
        }
        // The stage's pointer advances after the last bit of each word it switches: (count -
        // delay) mod WORD = WORD - 1, i.e. the word position equals (delay - 1) mod WORD.
        let last_bit = |delay: u32| (delay + word - 1) % word;
        omega.push(format!(
            "if (inslot && wpos == ((state == OFWD) ? {ww}'d{} : {ww}'d{})) optr_k{k} <= optr_k{k} + 1'b1;",
            last_bit(delay_f),
            last_bit(delay_r)
        ));
    }
    // Store positions: seek, owner advance, rewind.
    let mut pointers = Vec::new();
    for k in 0..lgs {
        pointers.push(format!(
            "if (state == SEEK && optr_k{k} < omega_off) optr_k{k} <= optr_k{k} + 1'b1;\n\
             \x20       if ((state == DRAIN || state == REWIND) && optr_k{k} != {ptrw}'d0) optr_k{k} <= optr_k{k} - 1'b1;"
        ));
    }
    for col in 0..cells {
        pointers.push(format!(
            "if (state == SEEK && cptr_c{col} < cell_off_c{col}) cptr_c{col} <= cptr_c{col} + 1'b1;\n\
             \x20       if (state == INRING && sub == 3'd2 && wcols > {cv} && (jmask & {cv}) == {z}) cptr_c{col} <= cptr_c{col} + 1'b1;\n\
             \x20       if ((state == DRAIN || state == REWIND) && cptr_c{col} != {ptrw}'d0) cptr_c{col} <= cptr_c{col} - 1'b1;",
            cv = cwv(col),
            z = cwv(0)
        ));
    }
    let port = (0..s)
        .map(|rho| format!("assign port[{rho}] = {}[{}];", d(rho, 0), word - 1))
        .chain((0..s).map(|rho| {
            let arms: String = (0..c.phases.len() as u32)
                .map(|lg| format!("(lg_w == {lw}'d{lg}) ? {}[0] : ", x(rho, (1 << lg) - 1)))
                .collect();
            format!("assign xtop_r{rho} = {arms}{}[0];", x(rho, 0))
        }))
        .collect();
    let states = vec![
        ("IDLE", IDLE),
        ("CLEAR", CLEAR),
        ("LOAD", LOAD),
        ("SEEK", SEEK),
        ("SORT", SORT),
        ("OFWD", OFWD),
        ("INRING", INRING),
        ("OREV", OREV),
        ("DRAIN", DRAIN),
        ("REWIND", REWIND),
    ];
    let t = SorterTemplate {
        version,
        command,
        config_hash,
        s,
        cells,
        word,
        bits: p.bits,
        depth,
        lgs,
        cw,
        pw,
        dw,
        gw,
        lw,
        ptrw,
        regs,
        stores,
        crosses,
        widths_table,
        pass_table,
        span_table,
        group_table,
        ww,
        cell_offsets,
        states,
        shift_d,
        clear_d,
        inring,
        sorter: sorter_code,
        omega,
        pointers,
        port,
    };
    let mut files = vec![("ff_fsort.v".to_string(), render(&t)?)];
    let tb = TbTemplate {
        version,
        command,
        config_hash,
        s,
        gw,
        cycles: cycles.max(1),
        stimulus: STIMULUS_FILE,
        dumpfile: RTL_VCD_FILE,
    };
    files.push(("tb.v".to_string(), render(&tb)?));
    let sources: Vec<&str> = files.iter().map(|(n, _)| n.as_str()).collect();
    files.push((
        "flitforge.core".to_string(),
        fusesoc_core(&sources, config_hash, "ff_fsort"),
    ));
    Ok(RtlDesign { files })
}

/// Records the sorter's inputs cycle by cycle as `$readmemh` lines (LSB first: `start`,
/// `groups`, `din`).
#[derive(Clone, Debug, Default)]
pub struct SorterStimulus {
    lines: crate::rtl::hex::Lines,
}

impl SorterStimulus {
    /// Records one cycle's inputs.
    pub fn sample(&mut self, sorter: &FlexibleSorter, inputs: &SorterInputs) {
        let (.., gw, _, _) = widths(&sorter.controls);
        let mut bits = vec![inputs.start];
        bits.extend((0..gw).map(|b| (inputs.groups >> b) & 1 == 1));
        bits.extend(inputs.data.iter().copied());
        self.lines.push(crate::rtl::hex::of_bits(&bits));
    }

    /// Cycles recorded.
    pub fn cycles(&self) -> u64 {
        self.lines.cycles()
    }

    /// The `$readmemh` file.
    pub fn to_hex(&self) -> String {
        self.lines.to_hex()
    }
}
