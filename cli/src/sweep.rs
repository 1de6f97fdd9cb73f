//! `ptap sweep-filter`: the paper's prolongator-filter sweep (`tab:pfsweep`).
//!
//! For each filter threshold, the beam hierarchy is built with that `pf`
//! (per-level factor `--pf-scale`), solved, and its matrix setup refreshed a
//! few times to time the hot numeric Galerkin products. Filtering thins `P`,
//! which thins `W = A P` and `A_c` and makes the hot product cheaper; the
//! kernel-preserving projection keeps the iteration count close.
use anyhow::{Context, Result};
use clap::Args;
use ptap_cuda::Cuda;
use ptap_fem::BeamProblem;
use ptap_runtime::{Backend, CgOptions, Cpu, Hierarchy, HierarchyOptions, MeshSetup};
use ptap_schedules::Variant;
use serde::Serialize;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct SweepArgs {
    /// Beam refinement.
    #[arg(long, default_value_t = 4, allow_negative_numbers = true, value_name = "K")]
    k: i64,
    /// Filter thresholds to sweep (comma-separated).
    #[arg(long, value_delimiter = ',', default_value = "0,0.01,0.02,0.03,0.05")]
    pf: Vec<f64>,
    /// Per-level factor on pf (the paper: 0.5).
    #[arg(long, default_value_t = 0.5)]
    pf_scale: f64,
    /// Hot refreshes timed per threshold, 1 to 1000; the fastest numeric product is reported.
    #[arg(long, default_value_t = 3, value_parser = crate::common::count_in::<1, 1000>)]
    repeat: usize,
    /// Where the hot products run: `cpu`, `cuda` (fails without a GPU) or `auto`.
    #[arg(long, default_value = "cpu", value_parser = ["cpu", "cuda", "auto"])]
    device: String,
    /// Write the rows as JSON.
    #[arg(long, value_name = "PATH")]
    json: Option<PathBuf>,
}

#[derive(Serialize)]
struct Row {
    pf: f64,
    iterations: usize,
    max_displacement: f64,
    /// Blocks of the fine prolongator P_0 and of all P.
    fine_p_blocks: usize,
    all_p_blocks: usize,
    coarse_block_rows: Vec<usize>,
    /// Fastest hot numeric Galerkin products (all levels).
    hot_numeric_s: f64,
    hot_matrix_setup_s: f64,
    /// Operators, prolongators, restrictions and `W` of the hierarchy.
    hierarchy_bytes: usize,
    operator_complexity: f64,
}

pub fn run(args: &SweepArgs) -> Result<()> {
    let k = crate::common::validate_k(args.k)?;
    crate::common::validate_pf(&args.pf, args.pf_scale)?;
    let device = crate::common::open(&args.device)?;
    let problem = BeamProblem::build(k).with_context(|| format!("building the beam at k = {k}"))?;
    let n = problem.a.scalar_rows();
    let mut rows = Vec::new();
    outln!(
        "{:>6} {:>5} {:>14} {:>11} {:>11} {:>12} {:>12} {:>11} {:>6}",
        "pf",
        "its",
        "max |u|",
        "P0 blocks",
        "all P",
        "numeric ms",
        "matrix ms",
        "hier. MB",
        "op.c."
    );
    for &pf in &args.pf {
        let mut opts = HierarchyOptions::default();
        (opts.amg.pf, opts.amg.pf_scale) = (pf, args.pf_scale);
        if device.is_some() {
            // The device's product (two-pass stays the CPU's).
            opts.variant = Some(Variant::ColumnSplit);
        }
        let setup = MeshSetup::build(problem.a.clone(), &problem.near_null, problem.modes, &opts, &mut |_| {})
            .with_context(|| format!("building the hierarchy at pf = {pf}"))?;
        let transfers = || setup.levels.iter().filter_map(|l| l.transfer.as_ref());
        // Operators, P and R, and the intermediate W every variant keeps.
        let hierarchy_bytes: usize = setup.levels.iter().map(|l| l.a.bytes()).sum::<usize>()
            + transfers()
                .map(|t| {
                    let (bf, bc) = t.p.block_shape();
                    2 * t.p.bytes() + t.schedule.w.nnzb() * bf * bc * 8
                })
                .sum::<usize>();
        let fine_p_blocks = transfers().next().map_or(0, |t| t.p.nnzb());
        let all_p_blocks = transfers().map(|t| t.p.nnzb()).sum();
        let coarse_block_rows = setup.levels.iter().skip(1).map(|l| l.a.nrows()).collect();
        let mut x = vec![0.0; n];
        let hot = match &device {
            None => hot_refreshes(Cpu::new(opts.kernels.clone()), setup, &problem.rhs, &mut x, args.repeat)?,
            Some(dev) => hot_refreshes(Cuda::new(dev)?, setup, &problem.rhs, &mut x, args.repeat)?,
        };
        let row = Row {
            pf,
            iterations: hot.iterations,
            max_displacement: x.iter().fold(0.0f64, |m, v| m.max(v.abs())),
            fine_p_blocks,
            all_p_blocks,
            coarse_block_rows,
            hot_numeric_s: hot.numeric_s,
            hot_matrix_setup_s: hot.matrix_setup_s,
            hierarchy_bytes,
            operator_complexity: hot.operator_complexity,
        };
        outln!(
            "{:>6} {:>5} {:>14.9} {:>11} {:>11} {:>12.2} {:>12.2} {:>11.1} {:>6.3}",
            pf,
            row.iterations,
            row.max_displacement,
            row.fine_p_blocks,
            row.all_p_blocks,
            1e3 * row.hot_numeric_s,
            1e3 * row.hot_matrix_setup_s,
            row.hierarchy_bytes as f64 / 1e6,
            row.operator_complexity
        );
        rows.push(row);
    }
    if let Some(base) = rows.first() {
        for r in rows.iter().skip(1) {
            outln!(
                "pf {}: {:+} iterations, hot numeric product {:.2}x faster than pf {}",
                r.pf,
                r.iterations as i64 - base.iterations as i64,
                base.hot_numeric_s / r.hot_numeric_s,
                base.pf
            );
        }
    }
    if let Some(path) = &args.json {
        std::fs::write(path, serde_json::to_string_pretty(&rows)? + "\n")
            .with_context(|| format!("cannot write the JSON report to {}", path.display()))?;
    }
    Ok(())
}

struct Hot {
    iterations: usize,
    operator_complexity: f64,
    numeric_s: f64,
    matrix_setup_s: f64,
}

/// Solves once on `backend`, then times `repeat` hot matrix setups (the fastest counts).
fn hot_refreshes<B: Backend>(backend: B, setup: MeshSetup, rhs: &[f64], x: &mut [f64], repeat: usize) -> Result<Hot> {
    let mut h = Hierarchy::new(backend, setup, &mut |_| {})?;
    let mut ws = h.workspace(500)?;
    let rep = h.solve(rhs, x, &CgOptions::default(), &mut ws)?;
    let (mut numeric, mut matrix) = (f64::INFINITY, f64::INFINITY);
    for _ in 0..repeat.max(1) {
        matrix = matrix.min(h.matrix_setup()?);
        numeric = numeric.min(h.timings.galerkin_numeric_s);
    }
    Ok(Hot {
        iterations: rep.iterations,
        operator_complexity: h.operator_complexity(),
        numeric_s: numeric,
        matrix_setup_s: matrix,
    })
}
