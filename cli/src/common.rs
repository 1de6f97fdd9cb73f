//! Helpers several subcommands share: operand and argument checks, and the
//! device `--device` opens. Subcommand files import from here (and from the
//! libraries), never from each other.
use anyhow::{anyhow, bail, Result};
use clap::Args;
use ptap_cuda::{Device, DeviceOptions};
use std::path::PathBuf;
use std::sync::Arc;

/// A whole number in `LO..=HI`, for clap: every count option is bounded before
/// any work starts, so none sizes an allocation or a loop without limit.
pub fn count_in<const LO: usize, const HI: usize>(s: &str) -> Result<usize, String> {
    let v: usize = s
        .trim()
        .parse()
        .map_err(|_| format!("`{s}` is not a whole number in {LO}..={HI}"))?;
    if (LO..=HI).contains(&v) {
        Ok(v)
    } else {
        Err(format!("{v} is outside {LO}..={HI}"))
    }
}

/// `--rtol`: CG's relative tolerance in `[1e-15, 1)` (below 1e-15 double
/// precision cannot certify the residual).
pub fn rtol(s: &str) -> Result<f64, String> {
    let v: f64 = s.trim().parse().map_err(|_| format!("`{s}` is not a number"))?;
    let min = ptap_runtime::solver::MIN_RTOL;
    if v >= min && v < 1.0 {
        Ok(v)
    } else {
        Err(format!(
            "{v:e} is outside [{min:e}, 1): below {min:e} double precision cannot certify the residual"
        ))
    }
}

/// Where the operators come from: the beam hierarchy or files.
#[derive(Args, Debug)]
pub struct Operands {
    /// The beam at refinement K (1 to 200): its whole AMG hierarchy, one product per level.
    #[arg(long, value_name = "K", conflicts_with_all = ["a", "p"], value_parser = count_in::<1, 200>)]
    pub beam: Option<usize>,
    /// Fine operator A (Matrix Market or PETSc binary; block size from the file or inferred).
    #[arg(long, value_name = "FILE", requires = "p")]
    pub a: Option<PathBuf>,
    /// Prolongator P (same formats).
    #[arg(long, value_name = "FILE", requires = "a")]
    pub p: Option<PathBuf>,
}

/// Largest `k` we try at all: node ids must fit in u32 with room to spare.
const K_HARD_LIMIT: i64 = 200;

fn available_memory_bytes() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = s.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// `--k` of the 3D beam.
pub fn validate_k(k: i64) -> Result<usize> {
    validate_beam(3, k)
}

/// Checks `--k` for the beam in `dim` dimensions: positive, not absurd, fits in memory.
pub fn validate_beam(dim: usize, k: i64) -> Result<usize> {
    if k < 1 {
        bail!("--k must be a positive integer (the beam has 10k x k x k elements), got {k}");
    }
    if k > K_HARD_LIMIT {
        bail!(
            "--k {k} is far beyond what one machine can hold (about {:.0e} unknowns); use k <= {K_HARD_LIMIT}",
            dim as f64 * 20.0 * (k as f64) * (2.0 * k as f64 + 1.0).powi(dim as i32 - 1)
        );
    }
    let k = k as usize;
    let need = ptap_fem::estimate_bytes_in(dim, k);
    if let Some(avail) = available_memory_bytes() {
        if need > avail {
            let largest = (1..=k)
                .rev()
                .find(|&kk| ptap_fem::estimate_bytes_in(dim, kk) <= avail)
                .unwrap_or(0);
            bail!(
                "--k {k} needs about {:.1} GiB of memory but only {:.1} GiB is available; choose k <= {largest}",
                need as f64 / (1u64 << 30) as f64,
                avail as f64 / (1u64 << 30) as f64
            );
        }
    }
    Ok(k)
}

/// Checks prolongator-filter thresholds (`[0, 1)`) and the per-level factor (`(0, 1]`).
pub fn validate_pf(pf: &[f64], pf_scale: f64) -> Result<()> {
    if let Some(bad) = pf.iter().find(|p| !(**p >= 0.0 && **p < 1.0)) {
        bail!("--pf must be in [0, 1), got {bad}");
    }
    if !(pf_scale > 0.0 && pf_scale <= 1.0) {
        bail!("--pf-scale must be in (0, 1], got {pf_scale}");
    }
    Ok(())
}

/// The device `--device` asks for: `None` is the CPU. `cuda` without a usable
/// GPU is an error of one sentence; `auto` falls back to the CPU and says so.
pub fn open(device: &str) -> Result<Option<Arc<Device>>> {
    let choice: ptap::DeviceChoice = device.parse()?;
    let (target, fallback) =
        ptap::Target::open(choice, DeviceOptions::default()).map_err(|e| anyhow!("--device {device}: {e}"))?;
    match (target, fallback) {
        (ptap::Target::Cuda(d), _) => {
            if choice == ptap::DeviceChoice::Auto {
                errln!("--device auto: solving on {} ({})", d.name(), d.arch());
            }
            Ok(Some(d))
        }
        (ptap::Target::Cpu, Some(why)) => {
            errln!("--device auto: {why}; solving on the CPU");
            Ok(None)
        }
        (ptap::Target::Cpu, None) => Ok(None),
    }
}

/// Writes `value` as pretty JSON to `path` atomically (a temporary file in the
/// same directory, then a rename), refusing to replace anything but a regular
/// file (a device, FIFO, directory or symlink stays as it was).
pub fn write_json<T: serde::Serialize>(path: &std::path::Path, value: &T) -> Result<()> {
    let text = serde_json::to_string_pretty(value)? + "\n";
    ptap_io::fsio::write_atomic(path, |w| w.write_all(text.as_bytes()))
        .map_err(|e| anyhow!("cannot write the JSON report to {}: {e}", path.display()))
}

/// `--aggregation`: how mesh setup forms aggregates (`natural` or `petsc`;
/// see `ptap_amg::Aggregation`).
pub fn aggregation(s: &str) -> Result<ptap_amg::Aggregation, String> {
    s.trim().parse()
}

/// The help text every `--aggregation` shares.
pub const AGGREGATION_HELP: &str = "How aggregates are formed: natural (greedy MIS visiting nodes in their \
natural order; the default) or petsc (PETSc GAMG's aggressive coarsening as the paper ran it: MIS on the square \
graph, then MIS-1 on coarser levels, visiting nodes in a fixed pseudo-random order; the paper's tab:hier)";
