//! Reference configurations whose generated Verilog lives in `rtl/<name>/` and whose model
//! waveform lives in `waves/<name>.vcd`. `flitforge reference` regenerates them on purpose; a
//! test regenerates them in memory and fails on any byte difference.

use crate::config::{Backpressure, FlowControl, LinkBandwidth, SimConfig};
use crate::cosim::{Prepared, prepare};
use crate::error::{Error, Result};
use crate::pruned::PrunedConfig;
use crate::rtl::STIMULUS_FILE;
use crate::sorter::{SortConfig, SorterParams};
use crate::topology::TopologyKind;
use crate::traffic::Traffic;
use std::path::{Path, PathBuf};

/// The reference configurations, by name.
pub fn configs() -> Vec<(&'static str, SimConfig)> {
    let base = SimConfig {
        inputs: 8,
        vcs: 2,
        flits: 4,
        flit_bits: 8,
        traffic: Traffic::RandomPermutation,
        seed: 1,
        ..SimConfig::default()
    };
    vec![
        ("butterfly8_b2_l4_w8", base.clone()),
        (
            "butterfly8_b2_l4_w8_registered",
            SimConfig {
                backpressure: Backpressure::Registered,
                traffic: Traffic::Uniform { q: 2 },
                ..base.clone()
            },
        ),
        (
            "dilated8_d2_b1_l4_w8_drop_one",
            SimConfig {
                topology: TopologyKind::Dilated,
                dilation: 2,
                vcs: 1,
                mode: FlowControl::Drop,
                link_bandwidth: LinkBandwidth::One,
                traffic: Traffic::Uniform { q: 2 },
                ..base.clone()
            },
        ),
        (
            "karyfly16_k4_b2_l4_w8",
            SimConfig {
                topology: TopologyKind::KaryFly,
                inputs: 16,
                radix: 4,
                traffic: Traffic::Uniform { q: 2 },
                ..base
            },
        ),
    ]
}

/// The pruned-butterfly reference configurations, by name: 16 leaves, a hot region of one
/// leaf, which exercises conflicts, sidetracking and the direction bits.
pub fn pruned_configs() -> Vec<(&'static str, PrunedConfig)> {
    vec![(
        "pruned16_hot1",
        PrunedConfig::new(16, Traffic::HotRegion { region: 1 }, 1),
    )]
}

/// The flexible-sorter reference: `(b, s, l) = (8, 8, 64)` sorting 16 words (`w = 2`, four
/// Columnsort phases with permuting steps).
pub fn sorter_configs() -> Vec<(&'static str, SortConfig)> {
    vec![(
        "fsort_b8_s8_l64_r16",
        SortConfig {
            params: SorterParams {
                s: 8,
                l: 64,
                bits: 8,
            },
            r: 16,
            seed: 1,
        },
    )]
}

/// Every reference file as (path relative to the repository root, contents).
pub fn files() -> Result<Vec<(PathBuf, Vec<u8>)>> {
    let mut out = Vec::new();
    for (name, config) in sorter_configs() {
        let p = config.prepare(&format!("flitforge reference ({name})"))?;
        let dir = Path::new("rtl").join(name);
        for (file, text) in p.design.files {
            out.push((dir.join(file), text.into_bytes()));
        }
        out.push((dir.join(STIMULUS_FILE), p.stimulus.to_hex().into_bytes()));
        out.push((Path::new("waves").join(format!("{name}.vcd")), p.model_vcd));
    }
    for (name, config) in pruned_configs() {
        let p = config.prepare(&format!("flitforge reference ({name})"))?;
        let dir = Path::new("rtl").join(name);
        for (file, text) in p.design.files {
            out.push((dir.join(file), text.into_bytes()));
        }
        out.push((dir.join(STIMULUS_FILE), p.stimulus.to_hex().into_bytes()));
        out.push((Path::new("waves").join(format!("{name}.vcd")), p.model_vcd));
    }
    for (name, config) in configs() {
        let Prepared {
            model_vcd,
            design,
            stimulus,
            ..
        } = prepare(config, &format!("flitforge reference ({name})"))?;
        let dir = Path::new("rtl").join(name);
        for (file, text) in design.files {
            out.push((dir.join(file), text.into_bytes()));
        }
        out.push((dir.join(STIMULUS_FILE), stimulus.to_hex().into_bytes()));
        out.push((Path::new("waves").join(format!("{name}.vcd")), model_vcd));
    }
    Ok(out)
}

/// Writes every reference file under `root` and returns the paths written.
pub fn write(root: &Path) -> Result<Vec<PathBuf>> {
    let mut written = Vec::new();
    for (rel, bytes) in files()? {
        let path = root.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| Error::io(parent.display(), e))?;
        }
        crate::files::write_atomic(&path, bytes)?;
        written.push(path);
    }
    Ok(written)
}
