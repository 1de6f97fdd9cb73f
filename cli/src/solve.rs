//! `ptap solve`: the beam end to end, on the CPU or a GPU (arguments and
//! printing; the solve is `ptap_drivers::solve`).
use crate::out::Progress;
use anyhow::{bail, Result};
use clap::Args;
use ptap_cuda::TransferCounters;
use ptap_drivers::solve::{CudaSolveInfo, SolveOptions, SolveReport};
use ptap_drivers::target::Target;
use ptap_runtime::CgOptions;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct SolveArgs {
    /// Beam refinement: 10k x k x k Q2 elements, 3 * 20k (2k+1)^2 unknowns
    /// (k = 16 is the paper's 1.05M-dof base case).
    #[arg(long, default_value_t = 4, allow_negative_numbers = true, value_name = "K")]
    k: i64,
    /// Spatial dimension: 3 (Q2 hexahedra, 3x3 blocks, 6 rigid modes) or 2
    /// (plane strain on [0,10] x [-0.5,0.5], 10k x k Q2 quadrilaterals, 2x2
    /// blocks, 3 rigid modes, end traction (1 - y, 0)).
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u8).range(2..=3))]
    dim: u8,
    /// Write the report as JSON to PATH (keys: dofs, iterations, converged,
    /// max_displacement, levels, products, phases, ...).
    #[arg(long, value_name = "PATH")]
    json: Option<PathBuf>,
    /// Relative tolerance on the unpreconditioned residual norm, in [1e-15, 1).
    #[arg(long, default_value_t = 1e-8, value_parser = crate::common::rtol)]
    rtol: f64,
    /// CG iteration cap, 1 to 1,000,000.
    #[arg(long, default_value_t = 500, value_parser = crate::common::count_in::<1, 1000000>)]
    max_iterations: usize,
    /// Stop coarsening at this many scalar rows, 1 to 8000 (the dense coarse
    /// solve's limit; the paper: 2000).
    #[arg(long, default_value_t = 2000, value_parser = crate::common::count_in::<1, 8000>)]
    coarse_eq_limit: usize,
    /// Level-0 strength threshold, halved on each coarser level (the paper: 0.05).
    #[arg(long, default_value_t = 0.05)]
    threshold: f64,
    #[arg(long, default_value = "natural", value_parser = crate::common::aggregation, help = crate::common::AGGREGATION_HELP)]
    aggregation: ptap_amg::Aggregation,
    /// Prolongator filter: drop blocks of P below PF times their row's largest
    /// block, then restore the near-null space row by row (the paper: 0.03;
    /// 0 = off).
    #[arg(long, default_value_t = 0.0, value_name = "PF")]
    pf: f64,
    /// Per-level factor on --pf (the paper: 0.5).
    #[arg(long, default_value_t = 0.5, value_name = "S")]
    pf_scale: f64,
    /// Galerkin-product variant on every level (two-pass, fused, fused-rcm,
    /// slot-tiled, panel-tiled, flat-stream, outer-product, column-split, or the
    /// paper's labels V0..V4), `auto` to pick per level from the traffic model
    /// of this machine (measured), or `default`: two-pass on the CPU, column
    /// split on the GPU. outer-product is
    /// the one non-deterministic variant: its atomic scatter adds in a run-dependent
    /// order, so the last bits of A_c (and of the solution) change from run to run.
    #[arg(long, default_value = "default")]
    variant: String,
    /// Do not print progress or the human-readable report.
    #[arg(long)]
    quiet: bool,
    /// Where matrix setup and solve run: cpu, cuda (fails without a GPU) or
    /// auto (CUDA when present, else the CPU, said so).
    #[arg(long, default_value = "cpu", value_parser = ["cpu", "cuda", "auto"])]
    device: String,
}

pub fn run(args: &SolveArgs) -> Result<()> {
    let dim = args.dim as usize;
    let k = crate::common::validate_beam(dim, args.k)?;
    if !(args.threshold >= 0.0 && args.threshold < 1.0) {
        bail!("--threshold must be in [0, 1), got {}", args.threshold);
    }
    crate::common::validate_pf(&[args.pf], args.pf_scale)?;
    let target = match crate::common::open(&args.device)? {
        Some(dev) => Target::Cuda(dev),
        None => Target::Cpu,
    };
    let options = SolveOptions {
        dim,
        k,
        cg: CgOptions {
            rtol: args.rtol,
            max_iterations: args.max_iterations,
        },
        coarse_eq_limit: args.coarse_eq_limit,
        threshold: args.threshold,
        aggregation: args.aggregation,
        pf: args.pf,
        pf_scale: args.pf_scale,
        variant: (args.variant != "default").then(|| args.variant.clone()),
    };
    let progress = Progress::spinner(args.quiet);
    let report = ptap_drivers::solve::run(&options, &target, &mut |m: &str| progress.phase(m))?;
    progress.finish();
    if !args.quiet {
        print_report(&report);
        if let Some(c) = &report.cuda {
            print_cuda(c);
        }
    }
    if let Some(path) = &args.json {
        crate::common::write_json(path, &report)?;
    }
    if !report.converged {
        bail!(
            "CG did not reach rtol {:e} in {} iterations (relative residual {:.3e}); raise --max-iterations or check the operator",
            args.rtol,
            report.iterations,
            report.relative_residual
        );
    }
    Ok(())
}

fn thousands(n: usize) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn print_report(r: &SolveReport) {
    let (shape, cells) = if r.dim == 2 {
        (
            "plane-strain cantilever beam",
            format!("{}x{} Q2 quadrilaterals", 10 * r.k, r.k),
        )
    } else {
        ("cantilever beam", format!("{}x{}x{} Q2 hexahedra", 10 * r.k, r.k, r.k))
    };
    outln!(
        "{shape} k = {}: {cells}, {} dofs, {} threads",
        r.k,
        thousands(r.dofs),
        r.threads
    );
    outln!();
    outln!(
        "{:>5} {:>11} {:>12} {:>10} {:>6}",
        "level",
        "block_rows",
        "blocks",
        "blocks/row",
        "block"
    );
    for l in &r.levels {
        outln!(
            "{:>5} {:>11} {:>12} {:>10.1} {:>6}",
            l.level,
            thousands(l.block_rows),
            thousands(l.blocks),
            l.blocks_per_row,
            format!("{0}x{0}", l.block_size)
        );
    }
    outln!();
    outln!(
        "{:<8} {:>9} {:>10} {:>12} {:>6} {:>11} {:>6} {:>11} {:>6} {:>8} {:>10} {:>6}  variant",
        "product",
        "A/P",
        "m_F",
        "Z_A",
        "n_A",
        "Z_P",
        "n_P",
        "Z_W",
        "w",
        "m_C",
        "Z_C",
        "n_C"
    );
    for (i, l) in r.levels.iter().enumerate() {
        if let Some(p) = &l.product {
            let bc = r.levels[i + 1].block_size;
            outln!(
                "{:<8} {:>9} {:>10} {:>12} {:>6.1} {:>11} {:>6.2} {:>11} {:>6.2} {:>8} {:>10} {:>6.1}  {}",
                format!("l{i}"),
                format!("{0}x{0}/{0}x{1}", l.block_size, bc),
                thousands(p.m_f),
                thousands(p.z_a),
                p.n_a,
                thousands(p.z_p),
                p.n_p,
                thousands(p.z_w),
                p.w,
                thousands(p.m_c),
                thousands(p.z_c),
                p.n_c,
                l.variant.unwrap_or("-")
            );
        }
    }
    if r.levels.iter().any(|l| l.variant == Some("outer-product")) {
        outln!("note: outer-product is non-deterministic (atomic scatter): the last bits of A_c and of the solution change from run to run");
    }
    outln!();
    outln!(
        "CG: {} iterations, {} (||r||/||b|| = {:.3e}), operator complexity {:.3} (aggregation {}, pf {})",
        r.iterations,
        if r.converged { "converged" } else { "NOT converged" },
        r.relative_residual,
        r.operator_complexity,
        r.aggregation,
        r.pf
    );
    outln!("tip displacement ||u||_inf = {:.10e}", r.max_displacement);
    outln!();
    let p = &r.phases;
    outln!("phase                seconds");
    outln!(
        "problem setup     {:>10.3}   (mesh, pattern, element-to-block map)",
        p.problem_setup_s
    );
    outln!("FEM assembly      {:>10.3}", p.assembly_s);
    outln!(
        "mesh setup        {:>10.3}   (strength, aggregation, P, symbolic products)",
        p.mesh_setup_s
    );
    outln!(
        "matrix setup      {:>10.3}   (numeric P^T A P {:.3}, smoothers, coarse factor)",
        p.matrix_setup_s,
        p.galerkin_numeric_s
    );
    outln!(
        "solve             {:>10.3}   ({:.1} ms per iteration)",
        p.solve_s,
        1e3 * p.solve_s / r.iterations.max(1) as f64
    );
}

fn print_cuda(c: &CudaSolveInfo) {
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

fn print_transfers(t: &TransferCounters) {
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
