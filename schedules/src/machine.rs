//! Machine parameters from the machine at hand: the CPU measured here
//! ([`MachineParams::measure_cpu`]), a GPU from numbers its backend measures
//! ([`MachineParams::gpu`]), or a JSON file ([`MachineParams::from_json_file`]).
//!
//! The presets ([`MachineParams::a100`], [`MachineParams::h200`],
//! [`MachineParams::cpu`]) stay for reproducing the paper's table; a variant
//! pick (`auto`) should be made on one of the three sources above.
use crate::model::MachineParams;
use crate::two_pass::TwoPassSchedule;
use rayon::prelude::*;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Instant;
use thiserror::Error;

/// Last-level cache assumed when the OS does not say (`/sys` absent or
/// unreadable): 32 MiB, a common server L3 slice and close to the old preset's 30 MB.
pub const DEFAULT_LLC_BYTES: f64 = 32.0 * 1024.0 * 1024.0;

/// Per-core rates of [`MachineParams::cpu_host`] (conservative, see there).
const CPU_L2_BYTES_PER_S_PER_CORE: f64 = 48e9;
const CPU_ONCHIP_BYTES_PER_S_PER_CORE: f64 = 96e9;
const CPU_FP64_PER_S_PER_CORE: f64 = 16e9;

/// Per-SM, per-clock rates of [`MachineParams::gpu`] (Hopper-class SMs).
/// Shared memory: 128 B/clk. L2: 38 B/clk, the H200 preset's 10 TB/s over
/// 132 SMs at 1.98 GHz. FP64 FMA: 64 per clock, i.e. 128 flop/clk.
pub const GPU_SHARED_BYTES_PER_SM_CLK: f64 = 128.0;
pub const GPU_L2_BYTES_PER_SM_CLK: f64 = 38.0;
pub const GPU_FP64_FLOPS_PER_SM_CLK: f64 = 128.0;

/// Best-of-`repeats` parallel copy of `bytes_per_buffer` bytes (rounded down to
/// whole `f64`s), counting read plus write bytes: B/s. The buffers must be well
/// beyond the last-level cache for this to be a DRAM figure.
pub fn copy_bandwidth(bytes_per_buffer: usize, repeats: usize) -> f64 {
    let n = (bytes_per_buffer / 8).max(1 << 16);
    let src = vec![1.0f64; n];
    let mut dst = vec![0.0f64; n];
    let mut best = f64::INFINITY;
    for _ in 0..repeats.max(1) {
        let t = Instant::now();
        dst.par_chunks_mut(1 << 16)
            .zip(src.par_chunks(1 << 16))
            .for_each(|(d, s)| d.copy_from_slice(s));
        best = best.min(t.elapsed().as_secs_f64());
    }
    std::hint::black_box(&dst);
    2.0 * (n * 8) as f64 / best.max(1e-9)
}

/// The benchmark's copy bandwidth: best of 5 copies of 256 MiB (B/s, read plus write).
pub fn measure_copy_bandwidth() -> f64 {
    copy_bandwidth(256 << 20, 5)
}

/// Size in bytes of the largest cache level the OS lists for CPU 0, or `None`.
pub fn last_level_cache_bytes() -> Option<f64> {
    let dir = std::fs::read_dir("/sys/devices/system/cpu/cpu0/cache").ok()?;
    let mut best: Option<(u32, f64)> = None;
    for entry in dir.flatten() {
        let path = entry.path();
        if !entry.file_name().to_string_lossy().starts_with("index") {
            continue;
        }
        let read = |f: &str| std::fs::read_to_string(path.join(f)).ok();
        let (Some(level), Some(size)) = (read("level"), read("size")) else {
            continue;
        };
        let (Ok(level), Some(bytes)) = (level.trim().parse::<u32>(), parse_cache_size(&size)) else {
            continue;
        };
        if best.is_none_or(|(l, b)| (level, bytes) > (l, b)) {
            best = Some((level, bytes));
        }
    }
    best.map(|(_, b)| b)
}

/// `"32768K"`, `"30M"`, `"512"` as sysfs writes cache sizes.
fn parse_cache_size(s: &str) -> Option<f64> {
    let s = s.trim();
    let (digits, unit) = match s.char_indices().find(|(_, c)| !c.is_ascii_digit()) {
        Some((i, _)) => s.split_at(i),
        None => (s, ""),
    };
    let n: f64 = digits.parse().ok()?;
    let scale = match unit.trim().to_ascii_uppercase().as_str() {
        "" | "B" => 1.0,
        "K" | "KB" | "KIB" => 1024.0,
        "M" | "MB" | "MIB" => 1024.0 * 1024.0,
        "G" | "GB" | "GIB" => 1024.0 * 1024.0 * 1024.0,
        _ => return None,
    };
    (n > 0.0).then_some(n * scale)
}

/// The copy bandwidth and last-level cache of this host, measured once per process.
fn measured_host() -> (f64, f64) {
    static HOST: OnceLock<(f64, f64)> = OnceLock::new();
    *HOST.get_or_init(|| {
        let llc = last_level_cache_bytes().unwrap_or(DEFAULT_LLC_BYTES);
        // Each buffer twice the LLC (so the pair is four times it) keeps the
        // copy in DRAM without the 256 MiB of the benchmark's figure.
        let per_buffer = (2.0 * llc).clamp(16.0 * 1024.0 * 1024.0, 256.0 * 1024.0 * 1024.0) as usize;
        (copy_bandwidth(per_buffer, 3), llc)
    })
}

impl MachineParams {
    /// A CPU host: `copy_bandwidth` (B/s, read plus write, as
    /// [`copy_bandwidth`] measures it) is the DRAM term, `llc_bytes` the last
    /// cache before DRAM, `cores` the worker threads that run the products.
    /// Per core: L2/L3 requests 48 GB/s (16 B per cycle at 3 GHz, a sustained
    /// gather rate well under the 64 B/clk peak), L1 96 GB/s, FP64 16 GF/s
    /// (what small dense block kernels sustain, not the AVX-512 peak); atomics
    /// 4x a plain read-modify-write (an FP64 add is a compare-and-swap loop).
    pub fn cpu_host(name: &str, copy_bandwidth: f64, llc_bytes: f64, cores: usize) -> Self {
        let cores = cores.max(1) as f64;
        Self {
            name: name.into(),
            dram_bandwidth: copy_bandwidth,
            l2_bandwidth: cores * CPU_L2_BYTES_PER_S_PER_CORE,
            l2_bytes: llc_bytes,
            onchip_bandwidth: cores * CPU_ONCHIP_BYTES_PER_S_PER_CORE,
            fp64_flops: cores * CPU_FP64_PER_S_PER_CORE,
            atomic_penalty: 4.0,
        }
    }

    /// This host, measured: copy bandwidth (a parallel copy of buffers twice
    /// the last-level cache, best of 3; tens of ms, once per process), the
    /// last-level cache from `/sys/devices/system/cpu/cpu0/cache` (else
    /// [`DEFAULT_LLC_BYTES`]) and rayon's worker threads as cores. Later calls
    /// reuse the measurement.
    pub fn measure_cpu() -> Self {
        let (bw, llc) = measured_host();
        let cores = rayon::current_num_threads();
        Self::cpu_host(&format!("this host ({cores} threads, measured)"), bw, llc, cores)
    }

    /// A GPU from what its backend measures or queries: `copy_bandwidth`
    /// (B/s, read plus write, e.g. a device-to-device copy), `l2_bytes` (the
    /// device's L2 size), `sm_count` and the SM clock in Hz. The per-SM rates
    /// are Hopper's ([`GPU_SHARED_BYTES_PER_SM_CLK`],
    /// [`GPU_L2_BYTES_PER_SM_CLK`], [`GPU_FP64_FLOPS_PER_SM_CLK`]); for another
    /// generation replace the fields that differ (every field is public, or
    /// use [`MachineParams::with_overrides`]). Atomics as for the A100 preset.
    pub fn gpu(name: &str, copy_bandwidth: f64, l2_bytes: f64, sm_count: u32, clock_hz: f64) -> Self {
        let per_clk = sm_count as f64 * clock_hz;
        Self {
            name: name.into(),
            dram_bandwidth: copy_bandwidth,
            l2_bandwidth: per_clk * GPU_L2_BYTES_PER_SM_CLK,
            l2_bytes,
            onchip_bandwidth: per_clk * GPU_SHARED_BYTES_PER_SM_CLK,
            fp64_flops: per_clk * GPU_FP64_FLOPS_PER_SM_CLK,
            atomic_penalty: 1.0,
        }
    }

    /// Reads machine parameters from a JSON object with the keys
    /// `dram_bandwidth`, `l2_bandwidth`, `l2_bytes`, `onchip_bandwidth`,
    /// `fp64_flops`, `atomic_penalty` (positive finite numbers, units as on
    /// [`MachineParams`]) and an optional `name` (default: the file's path).
    /// Every error names the file and, where there is one, the key.
    pub fn from_json_file(path: impl AsRef<Path>) -> Result<Self, MachineFileError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|source| MachineFileError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        Self::from_json_str(&text, path)
    }

    /// As [`MachineParams::from_json_file`], for text already read from `path`.
    pub fn from_json_str(text: &str, path: &Path) -> Result<Self, MachineFileError> {
        let value: serde_json::Value = serde_json::from_str(text).map_err(|e| MachineFileError::NotJson {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
        let serde_json::Value::Object(map) = value else {
            return Err(MachineFileError::NotObject {
                path: path.to_path_buf(),
            });
        };
        if let Some(key) = map.keys().find(|k| *k != "name" && !MACHINE_KEYS.contains(&k.as_str())) {
            return Err(MachineFileError::UnknownKey {
                path: path.to_path_buf(),
                key: key.clone(),
            });
        }
        let number = |key: &'static str| -> Result<f64, MachineFileError> {
            let v = map.get(key).ok_or_else(|| MachineFileError::MissingKey {
                path: path.to_path_buf(),
                key,
            })?;
            match v.as_f64() {
                Some(x) if x > 0.0 && x.is_finite() => Ok(x),
                _ => Err(MachineFileError::InvalidKey {
                    path: path.to_path_buf(),
                    key,
                    value: v.to_string(),
                }),
            }
        };
        let name = match map.get("name") {
            None => path.display().to_string(),
            Some(serde_json::Value::String(s)) => s.clone(),
            Some(v) => {
                return Err(MachineFileError::InvalidKey {
                    path: path.to_path_buf(),
                    key: "name",
                    value: v.to_string(),
                })
            }
        };
        Ok(Self {
            name,
            dram_bandwidth: number("dram_bandwidth")?,
            l2_bandwidth: number("l2_bandwidth")?,
            l2_bytes: number("l2_bytes")?,
            onchip_bandwidth: number("onchip_bandwidth")?,
            fp64_flops: number("fp64_flops")?,
            atomic_penalty: number("atomic_penalty")?,
        })
    }
}

/// The numeric keys of a machine file, in [`MachineParams`] order.
pub const MACHINE_KEYS: [&str; 6] = [
    "dram_bandwidth",
    "l2_bandwidth",
    "l2_bytes",
    "onchip_bandwidth",
    "fp64_flops",
    "atomic_penalty",
];

/// A machine file that cannot be used.
#[derive(Debug, Error)]
pub enum MachineFileError {
    #[error("cannot read machine parameters from {}: {source}", path.display())]
    Read { path: PathBuf, source: std::io::Error },
    #[error("{} is not JSON: {message}", path.display())]
    NotJson { path: PathBuf, message: String },
    #[error("{} must hold a JSON object of machine parameters (keys: name, {})", path.display(), MACHINE_KEYS.join(", "))]
    NotObject { path: PathBuf },
    #[error("{} has no key \"{key}\"; machine parameters need {}", path.display(), MACHINE_KEYS.join(", "))]
    MissingKey { path: PathBuf, key: &'static str },
    #[error("{}: \"{key}\" is {value}; it must be a positive finite number (a string for \"name\")", path.display())]
    InvalidKey {
        path: PathBuf,
        key: &'static str,
        value: String,
    },
    #[error("{}: unknown key \"{key}\"; the keys are name, {}", path.display(), MACHINE_KEYS.join(", "))]
    UnknownKey { path: PathBuf, key: String },
}

/// V0's stream floor in bytes (paper, `sec:variants`):
/// `B_A Z_A + 2 B_P Z_P + 2 B_W Z_W + B_C Z_C` for `b_f x b_c` blocks of `P`.
pub fn v0_floor(s: &TwoPassSchedule, bf: usize, bc: usize) -> f64 {
    let st = &s.stats;
    let (ba, bp, bcc) = ((8 * bf * bf) as f64, (8 * bf * bc) as f64, (8 * bc * bc) as f64);
    ba * st.z_a as f64 + 2.0 * bp * st.z_p as f64 + 2.0 * bp * st.z_w as f64 + bcc * st.z_c as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(name: &str, text: &str) -> PathBuf {
        let path = std::env::temp_dir().join(format!("ptap-machine-{}-{name}", std::process::id()));
        std::fs::write(&path, text).unwrap();
        path
    }

    const GOOD: &str = r#"{"name": "box", "dram_bandwidth": 2.0e10, "l2_bandwidth": 1.0e11,
        "l2_bytes": 3.2e7, "onchip_bandwidth": 2.0e11, "fp64_flops": 3.0e10, "atomic_penalty": 4}"#;

    #[test]
    fn machine_file_good_missing_and_not_json() {
        let good = write("good.json", GOOD);
        let m = MachineParams::from_json_file(&good).unwrap();
        assert_eq!(
            (m.name.as_str(), m.dram_bandwidth, m.l2_bytes, m.atomic_penalty),
            ("box", 2.0e10, 3.2e7, 4.0)
        );
        m.validate().unwrap();

        let missing = write("missing.json", &GOOD.replace(r#""l2_bytes": 3.2e7,"#, ""));
        let e = MachineParams::from_json_file(&missing).unwrap_err().to_string();
        assert!(
            e.contains(&missing.display().to_string()) && e.contains("\"l2_bytes\""),
            "{e}"
        );

        let bad = write("bad.json", &GOOD.replace("2.0e10", "-1"));
        let e = MachineParams::from_json_file(&bad).unwrap_err().to_string();
        assert!(e.contains("\"dram_bandwidth\" is -1") && e.contains("positive"), "{e}");

        let unknown = write("unknown.json", &GOOD.replace("\"name\"", "\"dram_bw\": 1, \"name\""));
        let e = MachineParams::from_json_file(&unknown).unwrap_err().to_string();
        assert!(e.contains("unknown key \"dram_bw\""), "{e}");

        let not_json = write("not.json", "dram_bandwidth = 2e10\n");
        let e = MachineParams::from_json_file(&not_json).unwrap_err().to_string();
        assert!(
            e.contains(&not_json.display().to_string()) && e.contains("is not JSON"),
            "{e}"
        );

        let e = MachineParams::from_json_file(write("array.json", "[1, 2]")).unwrap_err();
        assert!(matches!(e, MachineFileError::NotObject { .. }), "{e}");

        let absent = std::env::temp_dir().join("ptap-machine-no-such-file.json");
        let e = MachineParams::from_json_file(&absent).unwrap_err().to_string();
        assert!(
            e.starts_with("cannot read machine parameters from") && e.contains("no-such-file"),
            "{e}"
        );

        // Without a name the file's path names the machine; a preset written out reads back.
        let unnamed = write("unnamed.json", &GOOD.replace(r#""name": "box","#, ""));
        assert_eq!(
            MachineParams::from_json_file(&unnamed).unwrap().name,
            unnamed.display().to_string()
        );
        let h200 = write("h200.json", &serde_json::to_string(&MachineParams::h200()).unwrap());
        assert_eq!(MachineParams::from_json_file(&h200).unwrap(), MachineParams::h200());
        for p in [good, missing, bad, unknown, not_json, unnamed, h200] {
            std::fs::remove_file(p).ok();
        }
    }

    #[test]
    fn measure_cpu_is_positive_finite_and_memoized() {
        let m = MachineParams::measure_cpu();
        m.validate().unwrap();
        assert!(
            m.dram_bandwidth > 1e8 && m.dram_bandwidth < 1e13,
            "{}",
            m.dram_bandwidth
        );
        assert!(m.l2_bytes >= 64.0 * 1024.0, "{}", m.l2_bytes);
        let again = MachineParams::measure_cpu();
        assert_eq!(again.dram_bandwidth, m.dram_bandwidth);
        if let Some(llc) = last_level_cache_bytes() {
            assert_eq!(m.l2_bytes, llc);
        }
    }

    #[test]
    fn cache_sizes_parse_as_sysfs_writes_them() {
        assert_eq!(parse_cache_size("32768K\n"), Some(32.0 * 1024.0 * 1024.0));
        assert_eq!(parse_cache_size("30M"), Some(30.0 * 1024.0 * 1024.0));
        assert_eq!(parse_cache_size("512"), Some(512.0));
        assert_eq!(parse_cache_size("lots"), None);
        assert_eq!(parse_cache_size("0K"), None);
    }

    #[test]
    fn host_and_gpu_constructors_match_the_presets() {
        // The 2-core preset is the host constructor at its own figures.
        let mut two = MachineParams::cpu_host("x", 11e9, 30.0 * 1024.0 * 1024.0, 2);
        two.name = MachineParams::cpu(11e9).name;
        assert_eq!(two, MachineParams::cpu(11e9));
        // The H200's own numbers through `gpu` land within 5 % of the preset.
        let g = MachineParams::gpu("NVIDIA H200", 4250e9, 60.0 * 1024.0 * 1024.0, 132, 1.98e9);
        let h = MachineParams::h200();
        for (got, want) in [
            (g.l2_bandwidth, h.l2_bandwidth),
            (g.onchip_bandwidth, h.onchip_bandwidth),
            (g.fp64_flops, h.fp64_flops),
        ] {
            assert!((got / want - 1.0).abs() < 0.05, "{got} vs {want}");
        }
        assert_eq!((g.dram_bandwidth, g.l2_bytes), (h.dram_bandwidth, h.l2_bytes));
    }
}
