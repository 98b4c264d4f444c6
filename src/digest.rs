//! Stable 64-bit FNV-1a digests: of configurations (cache keys, report fields) and of the
//! input files a sharded run read.

/// The FNV-1a offset basis: the digest of no bytes.
pub const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;

/// `hash` extended by `bytes` (FNV-1a, 64 bits).
pub fn fnv1a(hash: u64, bytes: &[u8]) -> u64 {
    bytes.iter().fold(hash, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// The digest of any configuration's JSON form, as 16 hex digits.
pub fn config_hash(config: &impl serde::Serialize) -> String {
    let json = serde_json::to_string(config).unwrap_or_default();
    format!("{:016x}", fnv1a(FNV_OFFSET, json.as_bytes()))
}

/// The digest of the file at `path`, read in blocks, as 16 hex digits.
pub fn file_hash(path: &std::path::Path) -> crate::Result<String> {
    use std::io::Read;
    let io = |e| crate::Error::io(path.display(), e);
    let mut file = std::fs::File::open(path).map_err(io)?;
    let (mut hash, mut buf) = (FNV_OFFSET, vec![0u8; 1 << 16]);
    loop {
        match file.read(&mut buf).map_err(io)? {
            0 => return Ok(format!("{hash:016x}")),
            n => hash = fnv1a(hash, &buf[..n]),
        }
    }
}
