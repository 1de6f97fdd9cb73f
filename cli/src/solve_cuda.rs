//! What a device solve adds to a report, and its product options (the device
//! `--device` opens is `common::open`). The solve itself is the one generic
//! path over `ptap_runtime::Backend` (mesh setup on the host, matrix setup and
//! CG on the backend).
use anyhow::{anyhow, bail, Result};
use ptap_cuda::{Cuda, TransferCounters, DEVICE_VARIANTS};
use ptap_runtime::{Backend, CgOptions, CgReport, CgWorkspace, Hierarchy, HierarchyOptions, MeshSetup};
use ptap_schedules::Variant;
use serde::Serialize;

/// Product options for the CUDA backend: `variant` as given (`None` = the
/// device default, column split); `auto` picks per level among the device's
/// variants with the model of this device, measured.
pub fn device_product_options(opts: &mut HierarchyOptions, cuda: &Cuda, variant: Option<&str>) -> Result<()> {
    match variant {
        Some(v) if v.eq_ignore_ascii_case("auto") => {
            opts.variant = None;
            opts.machine = Some(cuda.machine()?);
            opts.candidates = DEVICE_VARIANTS.to_vec();
        }
        Some(v) => opts.variant = Some(v.parse().map_err(|e: String| anyhow!("--variant: {e}"))?),
        None => opts.variant = Some(Variant::ColumnSplit),
    }
    Ok(())
}

/// What the device solve adds to the report (JSON key `cuda`).
#[derive(Serialize)]
pub struct CudaSolveInfo {
    pub name: String,
    pub arch: String,
    pub product_variants: Vec<&'static str>,
    pub coarse_rows: usize,
    /// `lambda_max(D^-1 A)` per smoothed level, estimated on the device.
    pub lambda_max: Vec<f64>,
    pub kernels_compiled: usize,
    pub kernels_from_cache: usize,
    /// First matrix setup on the device (cold), and a second one (hot).
    pub matrix_setup_s: f64,
    pub hot_matrix_setup_s: f64,
    pub hot_galerkin_numeric_s: f64,
    /// First CG solve on the device, then a second from zero (hot).
    pub solve_s: f64,
    pub hot_solve_s: f64,
    pub hot_iterations: usize,
    pub hot_s_per_iteration: f64,
    /// Bytes per phase over the upload, the first matrix setup and solve (the
    /// hot repetitions are not counted).
    pub transfers: TransferCounters,
}

/// The outcome of one solve on any backend.
pub struct Solved<B: Backend> {
    pub h: Hierarchy<B>,
    pub cg: CgReport,
    pub history: Vec<f64>,
}

/// Puts `setup` on `backend` (matrix setup there) and solves `A x = b` from the `x` given.
pub fn solve_on<B: Backend>(
    backend: B,
    setup: MeshSetup,
    b: &[f64],
    cg: &CgOptions,
    x: &mut [f64],
    progress: &mut dyn FnMut(&str),
) -> Result<Solved<B>> {
    let mut h = Hierarchy::new(backend, setup, progress)?;
    progress("solving with CG + AMG V-cycle");
    let mut ws: CgWorkspace<B> = h.workspace(cg.max_iterations)?;
    let rep = h.solve(b, x, cg, &mut ws)?;
    Ok(Solved {
        cg: rep,
        history: ws.history().to_vec(),
        h,
    })
}

/// The device's figures after a solve: a hot matrix setup and a hot solve from
/// zero are run again and timed (not counted in the transfers).
pub fn device_info(s: &mut Solved<Cuda>, b: &[f64], cg: &CgOptions) -> Result<CudaSolveInfo> {
    let dev = s.h.backend().device().clone();
    let transfers = dev.counters();
    let matrix_setup_s = s.h.timings.matrix_setup_s;
    let hot_matrix_setup_s = s.h.matrix_setup()?;
    let mut ws = s.h.workspace(cg.max_iterations)?;
    let mut x2 = vec![0.0; b.len()];
    let hot = s.h.solve(b, &mut x2, cg, &mut ws)?;
    if hot.iterations != s.cg.iterations {
        bail!(
            "the device solve is not repeatable: {} then {} iterations",
            s.cg.iterations,
            hot.iterations
        );
    }
    let stats = dev.compile_stats();
    Ok(CudaSolveInfo {
        name: dev.name().to_string(),
        arch: dev.arch().to_string(),
        product_variants: s.h.level_variants().iter().map(|v| v.name()).collect(),
        coarse_rows: s.h.coarse_rows(),
        lambda_max: s.h.lambda_max(),
        kernels_compiled: stats.compiled,
        kernels_from_cache: stats.cached,
        matrix_setup_s,
        hot_matrix_setup_s,
        hot_galerkin_numeric_s: s.h.timings.galerkin_numeric_s,
        solve_s: s.cg.solve_s,
        hot_solve_s: hot.solve_s,
        hot_iterations: hot.iterations,
        hot_s_per_iteration: hot.solve_s / hot.iterations.max(1) as f64,
        transfers,
    })
}

pub fn print(c: &CudaSolveInfo) {
    outln!();
    outln!(
        "device {} ({}), products {}, coarse Cholesky of {} rows on the device",
        c.name,
        c.arch,
        c.product_variants.join(" / "),
        c.coarse_rows
    );
    outln!(
        "device phases: matrix setup {:.4} s (hot {:.4} s, numeric P^T A P {:.4} s), solve {:.4} s (hot {:.4} s, {:.3} ms per iteration)",
        c.matrix_setup_s,
        c.hot_matrix_setup_s,
        c.hot_galerkin_numeric_s,
        c.solve_s,
        c.hot_solve_s,
        1e3 * c.hot_s_per_iteration
    );
    outln!("lambda_max per level (device): {:?}", c.lambda_max);
    print_transfers(&c.transfers);
}

pub fn print_transfers(t: &TransferCounters) {
    outln!(
        "{:<22} {:>14} {:>8} {:>14} {:>8}",
        "transfers",
        "host->device",
        "copies",
        "device->host",
        "copies"
    );
    for (phase, t) in &t.phases {
        outln!(
            "{:<22} {:>14} {:>8} {:>14} {:>8}",
            phase,
            t.h2d_bytes,
            t.h2d_copies,
            t.d2h_bytes,
            t.d2h_copies
        );
    }
}
