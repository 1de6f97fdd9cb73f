//! Helpers several subcommands share: operand and argument checks, and the
//! device `--device` opens. Subcommand files import from here (and from the
//! libraries), never from each other.
use anyhow::{anyhow, bail, Result};
use clap::Args;
use ptap_cuda::{Device, DeviceOptions};
use ptap_drivers::user::NearNullSource;
use std::path::{Path, PathBuf};
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

/// `--smoother-precision`: the values the V-cycle's smoothers and residuals
/// apply (`f64` or `f32`; see `ptap_runtime::SmootherPrecision`).
pub fn smoother_precision(s: &str) -> Result<ptap_runtime::SmootherPrecision, String> {
    s.trim().parse()
}

/// The help text every `--smoother-precision` shares.
pub const SMOOTHER_PRECISION_HELP: &str = "Values the V-cycle's Chebyshev smoothers and residuals apply: f64 (the \
default) or f32 (a copy of each smoothed level's operator rounded to f32 at every matrix setup; vectors and sums stay \
f64; CG's own A p, the Galerkin products and the eigen-estimates use the f64 values). On a GPU it halves the value bytes \
of 4 of the 5 fine-operator applications per CG iteration";

/// A user operator's near-null space and block size (`ptap solve --a`, `ptap run --a`).
#[derive(Args, Debug)]
pub struct NearNullArgs {
    /// Near-null space from FILE: n rows x m modes (a dense Matrix Market
    /// array, PETSc Vecs one per mode, or a PETSc Mat), n the operator's rows.
    #[arg(long = "near-null", value_name = "FILE", requires = "a", conflicts_with_all = ["coords", "modes"])]
    pub near_null: Option<PathBuf>,
    /// Nodal coordinates, one node per block row in the operator's order
    /// (Matrix Market array nodes x dim, PETSc Mat, or a PETSc Vec with
    /// `-vecload_block_size` in its .info): rigid-body modes (3 in 2D, 6 in 3D)
    /// when the block size is the dimension, the constant for a scalar
    /// operator. Also fixes the block size (rows / nodes) unless --block-size is given.
    #[arg(long, value_name = "FILE", requires = "a", conflicts_with = "modes")]
    pub coords: Option<PathBuf>,
    /// `translations`: the block size's translations (the constant for a scalar
    /// operator). The default when neither --near-null nor --coords is given.
    #[arg(long, value_name = "KIND", requires = "a", value_parser = ["translations"])]
    pub modes: Option<String>,
    /// The operator's block size, 1 to 64 (default: one node per block row
    /// with --coords, else the file's record or detected from the pattern).
    #[arg(long, value_name = "N", requires = "a", value_parser = count_in::<1, 64>)]
    pub block_size: Option<usize>,
}

impl NearNullArgs {
    pub fn source(&self) -> NearNullSource {
        match (&self.near_null, &self.coords) {
            (Some(f), _) => NearNullSource::File(f.clone()),
            (None, Some(c)) => NearNullSource::Coordinates(c.clone()),
            (None, None) => NearNullSource::Translations {
                default: self.modes.is_none(),
            },
        }
    }
}

/// `a` before `b` in natural order: runs of digits compare as numbers, so
/// `A_2` comes before `A_10`.
fn natural_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    let (mut x, mut y) = (a.as_bytes(), b.as_bytes());
    loop {
        match (x.first(), y.first()) {
            (None, None) => return Ordering::Equal,
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some(c), Some(d)) if c.is_ascii_digit() && d.is_ascii_digit() => {
                let n = x.iter().take_while(|c| c.is_ascii_digit()).count();
                let m = y.iter().take_while(|c| c.is_ascii_digit()).count();
                let (u, v) = (&x[..n], &y[..m]);
                let strip = |s: &[u8]| {
                    let z = s.iter().take_while(|&&c| c == b'0').count();
                    s[z..].to_vec()
                };
                let (su, sv) = (strip(u), strip(v));
                let o = su
                    .len()
                    .cmp(&sv.len())
                    .then_with(|| su.cmp(&sv))
                    .then_with(|| n.cmp(&m));
                if o != Ordering::Equal {
                    return o;
                }
                (x, y) = (&x[n..], &y[m..]);
            }
            (Some(c), Some(d)) => {
                if c != d {
                    return c.cmp(d);
                }
                (x, y) = (&x[1..], &y[1..]);
            }
        }
    }
}

/// The files a list of `--a` (or `--b`) values names: each value is a path
/// or a glob (`*`, `?`, `[...]`), expanded here in natural order (`A_2`
/// before `A_10`), so it works quoted too. A glob that matches nothing is an
/// error naming it.
pub fn expand_files(flag: &str, values: &[String]) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for v in values {
        if !v.contains(['*', '?', '[']) {
            out.push(PathBuf::from(v));
            continue;
        }
        let paths = glob::glob(v).map_err(|e| anyhow!("{flag} {v:?} is not a valid pattern ({e})"))?;
        let mut found: Vec<PathBuf> = paths.filter_map(|p| p.ok()).collect();
        if found.is_empty() {
            bail!("{flag} {v:?} matches no file; check the directory and the pattern");
        }
        found.sort_by(|a, b| natural_cmp(&a.to_string_lossy(), &b.to_string_lossy()));
        out.extend(found);
    }
    Ok(out)
}

/// Writes a solution vector to `path` atomically (a temporary file beside it,
/// then a rename; never replacing anything but a regular file): PETSc binary
/// when the name ends in `.petsc` or `.bin`, else a Matrix Market array.
pub fn write_vector(path: &Path, x: &[f64]) -> Result<()> {
    let fail = |e: &dyn std::fmt::Display| anyhow!("cannot write the solution to {}: {e}", path.display());
    ptap_io::fsio::check_replaceable(path).map_err(|e| fail(&e))?;
    let tmp = ptap_io::fsio::temp_path(path);
    let written = match path.extension().and_then(|e| e.to_str()) {
        Some("petsc" | "bin") => ptap_io::write_petsc_vec(&tmp, x),
        _ => ptap_io::write_mm_vector(&tmp, x),
    };
    let renamed = written.map_err(|e| fail(&e)).and_then(|()| {
        ptap_io::fsio::check_replaceable(path).map_err(|e| fail(&e))?;
        std::fs::rename(&tmp, path).map_err(|e| fail(&e))
    });
    if renamed.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    renamed
}

/// The front door's options from the flags `ptap solve --a` and `ptap run --a`
/// share: CG's, `--variant` (`default` or absent: the device's default), and
/// the mesh setup's `(--aggregation, --pf, --pf-scale)`.
pub fn solver_options(
    cg: ptap_runtime::CgOptions,
    variant: Option<&str>,
    (aggregation, pf, pf_scale): (ptap_amg::Aggregation, f64, f64),
    smoother_precision: ptap_runtime::SmootherPrecision,
) -> ptap::SolverOptions {
    let mut o = ptap::SolverOptions {
        cg,
        variant: variant.filter(|v| *v != "default").map(str::to_string),
        ..ptap::SolverOptions::default()
    };
    o.hierarchy.amg.aggregation = aggregation;
    (o.hierarchy.amg.pf, o.hierarchy.amg.pf_scale) = (pf, pf_scale);
    o.hierarchy.smoother_precision = smoother_precision;
    o
}

/// The preconditioner under mpirun.
#[cfg(feature = "mpi")]
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Solver {
    /// Smoothed-aggregation AMG (the V-cycle over the ranks).
    Amg,
    /// Point-block Jacobi (one step).
    Jacobi,
}

/// The flags that only mean something under `mpirun` (feature `mpi`).
#[cfg(feature = "mpi")]
#[derive(clap::Args, Debug)]
#[command(next_help_heading = "Under mpirun (feature mpi)")]
pub struct MpiArgs {
    /// Consolidation: a distributed coarse level with fewer scalar rows
    /// per rank moves onto fewer ranks (PETSc GAMG's
    /// -pc_gamg_process_eq_limit); 0 never.
    #[arg(long, default_value_t = 50, value_name = "ROWS")]
    pub process_eq_limit: usize,
    /// The preconditioner of CG over the ranks: amg, or jacobi
    /// (point-block Jacobi, one step; a check of the halo plan).
    #[arg(long, value_enum, default_value_t = Solver::Amg)]
    pub solver: Solver,
    /// The beam L times longer with the same elements (10kL x k x k
    /// hexahedra): L times the unknowns, for weak scaling over L ranks.
    #[arg(long, default_value_t = 1, value_name = "L", value_parser = crate::common::count_in::<1, 1000>)]
    pub length: usize,
}

#[cfg(test)]
mod tests {
    use super::natural_cmp;

    #[test]
    fn natural_order_compares_numbers_by_value() {
        let mut v = vec!["A_10.mtx", "A_2.mtx", "A_1.mtx", "A_02.mtx", "B_1.mtx", "A_.mtx"];
        v.sort_by(|a, b| natural_cmp(a, b));
        assert_eq!(v, ["A_.mtx", "A_1.mtx", "A_2.mtx", "A_02.mtx", "A_10.mtx", "B_1.mtx"]);
    }
}
