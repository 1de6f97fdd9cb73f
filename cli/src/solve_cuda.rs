//! `ptap solve --device cuda|auto`: the CPU builds the hierarchy (mesh
//! setup), the device takes its structure once and runs the matrix setup and
//! the CG solve (`ptap_cuda::DeviceHierarchy`). The report gets the
//! device's phases and its transfer counters per phase.
use anyhow::{anyhow, bail, Result};
use ptap_cuda::{Device, DeviceHierarchy, DeviceOptions, DeviceSolveOptions, TransferCounters};
use ptap_runtime::{CgOptions, CgReport, Hierarchy};
use serde::Serialize;
use std::sync::Arc;

/// The device `--device` asks for: `None` is the CPU. `cuda` without a usable
/// GPU is an error of one sentence; `auto` falls back to the CPU and says so.
pub fn open(device: &str) -> Result<Option<Arc<Device>>> {
    match device {
        "cpu" => Ok(None),
        "cuda" => Device::open(DeviceOptions::default())
            .map(Some)
            .map_err(|e| anyhow!("--device cuda: {e}")),
        "auto" => match Device::open(DeviceOptions::default()) {
            Ok(d) => {
                eprintln!("--device auto: solving on {} ({})", d.name(), d.arch());
                Ok(Some(d))
            }
            Err(e) => {
                eprintln!("--device auto: {e}; solving on the CPU");
                Ok(None)
            }
        },
        other => bail!("--device must be cpu, cuda or auto, got {other}"),
    }
}

/// What the device solve adds to the report (JSON key `cuda`).
#[derive(Serialize)]
pub struct CudaSolveInfo {
    pub name: String,
    pub arch: String,
    pub product_variant: &'static str,
    pub coarse_rows: usize,
    /// `lambda_max(D^-1 A)` per smoothed level, estimated on the device, and the CPU's.
    pub lambda_max: Vec<f64>,
    pub cpu_lambda_max: Vec<f64>,
    pub kernels_compiled: usize,
    pub kernels_from_cache: usize,
    /// Structure upload and device-variant inspection (once).
    pub upload_s: f64,
    /// First matrix setup on the device, and a second one (hot).
    pub matrix_setup_s: f64,
    pub hot_matrix_setup_s: f64,
    pub hot_galerkin_numeric_s: f64,
    /// First CG solve on the device, then a second from zero (hot).
    pub solve_s: f64,
    pub hot_solve_s: f64,
    pub hot_iterations: usize,
    pub hot_s_per_iteration: f64,
    /// Bytes per phase over the first upload, matrix setup and solve (the
    /// hot repetitions are not counted).
    pub transfers: TransferCounters,
    #[serde(skip)]
    pub history: Vec<f64>,
}

/// Matrix setup and solve on the device from the CPU-built `h`; `x` comes
/// back with the solution of the first solve (from the `x` given).
pub fn solve(
    dev: &Arc<Device>,
    h: &Hierarchy,
    b: &[f64],
    cg: &CgOptions,
    x: &mut [f64],
    progress: &mut dyn FnMut(&str),
) -> Result<(CgReport, CudaSolveInfo)> {
    dev.reset_counters();
    progress("uploading the hierarchy's structure to the device");
    let opts = DeviceSolveOptions::default();
    let mut dh = DeviceHierarchy::new(dev, h, opts.clone())?;
    progress("matrix setup on the device");
    let matrix_setup_s = dh.matrix_setup()?;
    progress("solving on the device");
    let first = dh.solve(b, x, cg)?;
    let transfers = dev.counters();
    // Hot repetitions: matrix setup and a solve from zero again.
    let hot_matrix_setup_s = dh.matrix_setup()?;
    let mut x2 = vec![0.0; x.len()];
    let hot = dh.solve(b, &mut x2, cg)?;
    if hot.cg.iterations != first.cg.iterations {
        bail!(
            "the device solve is not repeatable: {} then {} iterations",
            first.cg.iterations,
            hot.cg.iterations
        );
    }
    let stats = dev.compile_stats();
    let info = CudaSolveInfo {
        name: dev.name().to_string(),
        arch: dev.arch().to_string(),
        product_variant: opts.variant.name(),
        coarse_rows: dh.coarse_rows(),
        lambda_max: dh.lambda_max(),
        cpu_lambda_max: h
            .levels()
            .iter()
            .filter_map(|l| l.smoother.as_ref().map(|s| s.lambda_max))
            .collect(),
        kernels_compiled: stats.compiled,
        kernels_from_cache: stats.cached,
        upload_s: dh.timings.upload_s,
        matrix_setup_s,
        hot_matrix_setup_s,
        hot_galerkin_numeric_s: dh.timings.galerkin_numeric_s,
        solve_s: first.solve_s,
        hot_solve_s: hot.solve_s,
        hot_iterations: hot.cg.iterations,
        hot_s_per_iteration: hot.solve_s / hot.cg.iterations.max(1) as f64,
        transfers,
        history: first.history,
    };
    Ok((first.cg, info))
}

pub fn print(c: &CudaSolveInfo) {
    println!();
    println!(
        "device {} ({}), products {}, coarse Cholesky of {} rows on the device",
        c.name, c.arch, c.product_variant, c.coarse_rows
    );
    println!(
        "device phases: upload {:.3} s, matrix setup {:.4} s (hot {:.4} s, numeric P^T A P {:.4} s), solve {:.4} s (hot {:.4} s, {:.3} ms per iteration)",
        c.upload_s,
        c.matrix_setup_s,
        c.hot_matrix_setup_s,
        c.hot_galerkin_numeric_s,
        c.solve_s,
        c.hot_solve_s,
        1e3 * c.hot_s_per_iteration
    );
    println!(
        "lambda_max per level: device {:?}, CPU {:?}",
        c.lambda_max, c.cpu_lambda_max
    );
    println!(
        "{:<22} {:>14} {:>8} {:>14} {:>8}",
        "transfers", "host->device", "copies", "device->host", "copies"
    );
    for (phase, t) in &c.transfers.phases {
        println!(
            "{:<22} {:>14} {:>8} {:>14} {:>8}",
            phase, t.h2d_bytes, t.h2d_copies, t.d2h_bytes, t.d2h_copies
        );
    }
}
