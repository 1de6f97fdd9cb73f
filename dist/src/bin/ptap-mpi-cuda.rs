//! `mpirun -np N ptap-mpi-cuda --k K`: the beam of `ptap-mpi` solved by
//! point-block-Jacobi CG on N GPUs, one rank per GPU (feature `nccl`);
//! `--solver amg`: by the AMG-preconditioned CG with every level on the GPUs
//! (`ptap_dist::device_amg`; see [`run_amg`]).
//!
//! Every rank assembles the whole beam and keeps its rows (as `ptap-mpi`
//! does), builds its halo plan with the distributed inspector, picks its GPU
//! by its node-local rank, joins the NCCL communicator (id from rank 0 over
//! MPI), and uploads its rows, plan and right-hand side. The solve then runs
//! on the devices: halo by NCCL send/receive into the ghost tail overlapped
//! with the interior rows, reductions by an NCCL all-gather summed in rank
//! order on the device ([`ptap_dist::device`]). One short solve warms NCCL's
//! connections up; `--repeat` timed solves follow. Rank 0 prints iterations,
//! tip displacement, time per iteration (max and mean over ranks of each
//! rank's best solve), halo bytes per iteration and the host<->device bytes
//! of the solve phase, and writes `--json` and `--solution`.
//!
//! `--check` also runs the CPU distributed solver ([`ptap_dist::jacobi_pcg`]
//! over MPI, same partition) and one device SpMV against the CPU's, and
//! fails unless the iteration counts agree and the solutions agree to 1e-10
//! relative.
//!
//! `--length L` makes the beam L times longer with the same elements
//! (`10kL x k x k`): L times the unknowns, for weak scaling on L GPUs.
use clap::Parser;
use mpi::collective::CommunicatorCollectives;
use ptap_cuda::{Device, DeviceOptions};
use ptap_dist::device::{all_reduce_dots, jacobi_pcg, DeviceBlockJacobi, DeviceCgWorkspace, DeviceDistMatrix};
use ptap_dist::mpi_comm::{self, MpiComm};
use ptap_dist::nccl::{agree, node_local_rank, DeviceError, NcclComm};
use ptap_dist::{BlockJacobi, CgOptions, CgWorkspace, Comm, DistMatrix, HaloPlan, LocalMatrix, Partition};
use ptap_fem::{
    rigid_body_modes, rigid_mode_count, stiffening_front, traction_rhs, uniform_modulus, Assembler, BeamProblem,
    BoxMesh, Constraint,
};
use ptap_runtime::KernelRegistry;
use ptap_sparse::BlockCsr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum Solver {
    /// Point-block-Jacobi CG.
    Jacobi,
    /// Smoothed-aggregation AMG-preconditioned CG, every level on the GPUs.
    Amg,
}

#[derive(Parser, Debug)]
#[command(
    name = "ptap-mpi-cuda",
    about = "The beam by point-block-Jacobi CG on GPUs, one MPI rank per GPU, halo and reductions through NCCL (run under mpirun)."
)]
struct Args {
    /// The solver.
    #[arg(long, value_enum, default_value_t = Solver::Jacobi)]
    solver: Solver,
    /// AMG: prolongator filtering threshold.
    #[arg(long, default_value_t = ptap_amg::AmgOptions::default().pf)]
    pf: f64,
    /// AMG: the coarsest level's largest scalar size (default: the AMG's).
    #[arg(long)]
    coarse_eq_limit: Option<usize>,
    /// AMG: consolidation threshold (scalar rows per active rank).
    #[arg(long, default_value_t = ptap_dist::DistOptions::default().process_eq_limit)]
    process_eq_limit: usize,
    /// AMG: the Galerkin product's variant on every level (one the device executes).
    #[arg(long, default_value = "column-split")]
    variant: String,
    /// Beam size: 10k x k x k Q2 hexahedra (times --length along x).
    #[arg(long, default_value_t = 2)]
    k: usize,
    /// Beam length factor: 10kL x k x k elements on [0, 10L] x [-0.5, 0.5]^2.
    #[arg(long, default_value_t = 1)]
    length: usize,
    /// Relative residual target.
    #[arg(long, default_value_t = 1e-8)]
    rtol: f64,
    /// CG iteration cap.
    #[arg(long, default_value_t = 10_000)]
    max_iterations: usize,
    /// Timed solves (after one warm-up); each rank reports its best. AMG:
    /// hot steps (new values, refresh, solve) after the cold one.
    #[arg(long, default_value_t = 3)]
    repeat: usize,
    /// Also solve with the CPU distributed solver and compare (iterations
    /// equal, solutions within 1e-10 relative), and check one device SpMV.
    /// AMG: the CPU ranks' AMG on the same partition, cold and after the hot
    /// refresh (iterations within 1, tip within 1e-8 relative).
    #[arg(long)]
    check: bool,
    /// Also times the parts of an iteration, each repeated 200 times: the
    /// overlapped SpMV, the halo exchange alone, the rows alone, and one
    /// reduction of two dots.
    #[arg(long)]
    profile: bool,
    /// The halo's stream at the default priority instead of the highest.
    #[arg(long)]
    default_priority_halo: bool,
    /// Writes the report as JSON (rank 0).
    #[arg(long)]
    json: Option<PathBuf>,
    /// Writes the gathered solution as a PETSc binary Vec (rank 0).
    #[arg(long)]
    solution: Option<PathBuf>,
    /// No human-readable report.
    #[arg(long)]
    quiet: bool,
}

type BoxError = Box<dyn std::error::Error>;

fn main() -> ExitCode {
    let args = Args::parse();
    let Some(universe) = mpi_comm::initialize() else {
        eprintln!("error: MPI was already initialized");
        return ExitCode::FAILURE;
    };
    let comm = MpiComm::world(&universe);
    match run(&args, &comm) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            mpi_comm::eprint_line(&format!("error (rank {}): {e}", comm.rank()));
            ExitCode::FAILURE
        }
    }
}

/// The clamped beam, `length` times longer than `BeamProblem::build(k)`'s
/// with the same elements (the same beam for `length == 1`).
fn beam(k: usize, length: usize) -> Result<(BlockCsr, Vec<f64>), BoxError> {
    if length == 1 {
        let b = BeamProblem::build(k)?;
        return Ok((b.a, b.rhs));
    }
    if length == 0 || k == 0 {
        return Err("--k and --length must be at least 1".into());
    }
    let nex = 10 * k * length;
    let mesh = BoxMesh::new(nex, k, k, [0.0, -0.5, -0.5], [10.0 * length as f64, 0.5, 0.5])?;
    let asm = Assembler::new(&mesh, Constraint::ClampXMin)?;
    let mut a = asm.zero_matrix();
    asm.assemble(&uniform_modulus(&mesh), &mut a)?;
    let rhs = traction_rhs(&mesh, &asm);
    Ok((a, rhs))
}

/// Per-rank values gathered on rank 0 (empty elsewhere).
fn gathered(comm: &MpiComm, v: f64) -> Vec<f64> {
    comm.gather(0, &[v]).unwrap_or_default()
}

fn rel_diff(x: &[f64], y: &[f64]) -> f64 {
    let d: f64 = x.iter().zip(y).map(|(p, q)| (p - q) * (p - q)).sum::<f64>().sqrt();
    d / y.iter().map(|q| q * q).sum::<f64>().sqrt()
}

/// This rank's GPU: its node-local rank modulo the GPUs it sees.
fn open_device(rank: usize) -> Result<(Arc<Device>, usize), DeviceError> {
    ptap_cuda::libraries_present()?;
    let count = cudarc::driver::CudaContext::device_count()
        .map_err(|e| ptap_cuda::CudaError::NoDevice(e.to_string()))?
        .max(0) as usize;
    if count == 0 {
        return Err(ptap_cuda::CudaError::NoDevice("0 devices".into()).into());
    }
    let ordinal = node_local_rank(rank) % count;
    Ok((Device::open_on(ordinal, DeviceOptions::default())?, ordinal))
}

fn run(args: &Args, comm: &MpiComm) -> Result<(), BoxError> {
    if args.solver == Solver::Amg {
        return run_amg(args, comm);
    }
    let (rank, size) = (comm.rank(), comm.size());
    if args.repeat == 0 {
        return Err("--repeat must be at least 1".into());
    }
    let t0 = Instant::now();
    let (a, rhs) = beam(args.k, args.length)?;
    let assembly_s = t0.elapsed().as_secs_f64();
    let bs = a.block_shape().0;

    let t1 = Instant::now();
    let part = Partition::uniform(a.nrows(), size)?;
    let local = LocalMatrix::from_global(&a, &part, &part, rank)?;
    let plan = HaloPlan::build(&local, &part, comm)?;
    let inspect_s = t1.elapsed().as_secs_f64();
    let mut d = DistMatrix { local, plan };
    let rows = part.range(rank);
    let b = &rhs[rows.start * bs..rows.end * bs];
    let opts = CgOptions {
        rtol: args.rtol,
        max_iterations: args.max_iterations,
    };
    let jacobi = BlockJacobi::local(&d.local)?;

    // The device side: GPU, communicator, operator, vectors.
    let t2 = Instant::now();
    let (dev, ordinal) = agree(comm, open_device(rank))?;
    let nccl = NcclComm::init(comm, dev.context())?;
    dev.set_phase("setup");
    let registry = KernelRegistry::shipped().clone();
    let set_up = (|| {
        let da = DeviceDistMatrix::with_comm_priority(&dev, &registry, &d, !args.default_priority_halo)?;
        let dj = DeviceBlockJacobi::new(&dev, &da, &jacobi)?;
        let ws = DeviceCgWorkspace::new(&dev, &nccl, &da, b)?;
        dev.synchronize()?;
        Ok::<_, DeviceError>((da, dj, ws))
    })();
    let (da, dj, mut ws) = agree(comm, set_up)?;
    let device_setup_s = t2.elapsed().as_secs_f64();

    // One short solve: NCCL connects its peers at their first use.
    dev.set_phase("warm-up");
    let warm = CgOptions {
        rtol: opts.rtol,
        max_iterations: 2,
    };
    jacobi_pcg(&dev, &nccl, &da, &dj, &warm, &mut ws)?;

    dev.set_phase("solve");
    let mut best = f64::INFINITY;
    let mut report = None;
    for _ in 0..args.repeat {
        ws.zero_x(&dev)?;
        dev.synchronize()?;
        comm.communicator().barrier();
        let t = Instant::now();
        let r = jacobi_pcg(&dev, &nccl, &da, &dj, &opts, &mut ws)?;
        dev.synchronize()?;
        best = best.min(t.elapsed().as_secs_f64());
        if report.is_some_and(|p: ptap_dist::CgReport| p.iterations != r.iterations) {
            return Err("two solves of the same system took different iteration counts".into());
        }
        report = Some(r);
    }
    let report = report.expect("at least one solve");
    let solve_t = dev.counters().get("solve");
    dev.set_phase("report");
    let x = dev.download(ws.x())?;
    let per_iter = best / report.iterations.max(1) as f64;

    // The parts of an iteration, each on its own (seconds per call, this rank).
    let mut profile = None;
    if args.profile {
        dev.set_phase("profile");
        const REPS: usize = 200;
        let n = da.output_len();
        let mut v = vec![0.0; da.input_len()];
        v[..n].copy_from_slice(b);
        let pv = dev.upload(&v)?;
        let mut yv = dev.zeros::<f64>(n)?;
        let time = |f: &mut dyn FnMut() -> Result<(), DeviceError>| -> Result<f64, BoxError> {
            f()?;
            dev.synchronize()?;
            comm.communicator().barrier();
            let t = Instant::now();
            for _ in 0..REPS {
                f()?;
            }
            dev.synchronize()?;
            Ok(t.elapsed().as_secs_f64() / REPS as f64)
        };
        let spmv = time(&mut || da.spmv(&dev, &nccl, &pv, &mut yv))?;
        let exchange = time(&mut || da.exchange(&dev, &nccl, &pv))?;
        let rows = time(&mut || da.local_rows(&dev, &pv, &mut yv))?;
        let x0 = ws.x().clone();
        let reduce = time(&mut || all_reduce_dots(&dev, &nccl, &ws, [(&x0, &x0), (&x0, &x0)], n).map(|_| ()))?;
        profile = Some([spmv, exchange, rows, reduce]);
    }

    // The CPU distributed solver and one SpMV, on the same partition.
    let mut check = None;
    if args.check {
        let mut xc = vec![0.0; b.len()];
        let mut cws = CgWorkspace::new(&d);
        let cpu = ptap_dist::jacobi_pcg(comm, &mut d, &jacobi, b, &mut xc, &opts, &mut cws)?;
        // y = A v for v_i = sin(global index): the device's against the CPU's.
        let n = d.output_len();
        let mut v = vec![0.0; d.input_len()];
        for (i, vi) in v[..n].iter_mut().enumerate() {
            *vi = ((rows.start * bs + i) as f64).sin();
        }
        let dv = dev.upload(&v)?;
        let mut dy = dev.zeros::<f64>(n)?;
        da.spmv(&dev, &nccl, &dv, &mut dy)?;
        let y_dev = dev.download(&dy)?;
        let mut y = vec![0.0; n];
        d.spmv(comm, &mut v, &mut y);
        let spmv_diff = gathered(comm, rel_diff(&y_dev[..n], &y));
        check = Some((cpu, comm.gather(0, &xc), spmv_diff));
    }

    let halo_bytes = (da.halo_send_len() * 8) as f64;
    let per_iter_all = gathered(comm, per_iter);
    let halo_all = gathered(comm, halo_bytes);
    let owned = gathered(comm, rows.len() as f64);
    let ghosts = gathered(comm, d.local.n_ghosts() as f64);
    let gpus = gathered(comm, ordinal as f64);
    // Collective: every rank gathers before rank 0 alone goes on.
    let profile_json = profile.map(|p| {
        let names = [
            "spmv_overlapped",
            "halo_exchange_alone",
            "rows_alone",
            "reduction_of_two_dots",
        ];
        let mut m = serde_json::Map::new();
        for (name, t) in names.iter().zip(p) {
            m.insert(format!("{name}_s_per_rank"), serde_json::json!(gathered(comm, t)));
        }
        serde_json::Value::Object(m)
    });
    let solution = comm.gather(0, &x);
    let Some(u) = solution else {
        return if report.converged {
            Ok(())
        } else {
            Err("CG did not converge".into())
        };
    };
    let tip = u.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let max_iter_s = per_iter_all.iter().fold(0.0f64, |m, &v| m.max(v));
    let mean_iter_s = per_iter_all.iter().sum::<f64>() / size as f64;
    let repeat = args.repeat as f64;
    let its = report.iterations.max(1) as f64;
    let h2d = solve_t.h2d_bytes as f64 / repeat;
    let d2h = solve_t.d2h_bytes as f64 / repeat;
    let mut verdict: Result<(), BoxError> = if report.converged {
        Ok(())
    } else {
        Err(format!("CG did not converge in {} iterations", report.iterations).into())
    };
    let check_json = check.as_ref().map(|(cpu, xc, spmv_diff)| {
        let xc = xc.as_ref().expect("rank 0 gathers");
        let diff = rel_diff(&u, xc);
        let spmv = spmv_diff.iter().fold(0.0f64, |m, &v| m.max(v));
        if cpu.iterations != report.iterations || !(diff <= 1e-10) || !(spmv <= 1e-12) {
            verdict = Err(format!(
                "the device solve differs from the CPU's: {} against {} iterations, solutions {diff:.2e} apart, SpMV {spmv:.2e} apart",
                report.iterations, cpu.iterations
            )
            .into());
        }
        serde_json::json!({
            "cpu_iterations": cpu.iterations,
            "solution_rel_diff": diff,
            "spmv_rel_diff_max": spmv,
            "cpu_tip_displacement": xc.iter().fold(0.0f64, |m, v| m.max(v.abs())),
        })
    });
    let json = serde_json::json!({
        "ranks": size,
        "k": args.k,
        "length": args.length,
        "block_rows": a.nrows(),
        "unknowns": a.scalar_rows(),
        "device": dev.name(),
        "gpu_of_rank": gpus,
        "owned_rows": owned,
        "ghosts": ghosts,
        "reduction": "ncclAllGather, summed in rank order on the device",
        "iterations": report.iterations,
        "converged": report.converged,
        "residual_norm": report.residual_norm,
        "rhs_norm": report.rhs_norm,
        "rtol": args.rtol,
        "tip_displacement": tip,
        "assembly_s": assembly_s,
        "inspect_s": inspect_s,
        "device_setup_s": device_setup_s,
        "repeat": args.repeat,
        "halo_stream_priority": if args.default_priority_halo { "default" } else { "highest" },
        "solve_s_best_rank0": best,
        "iteration_s_per_rank": per_iter_all,
        "iteration_s_max": max_iter_s,
        "iteration_s_mean": mean_iter_s,
        "halo_bytes_sent_per_iteration_per_rank": halo_all,
        "halo_bytes_per_iteration": halo_all.iter().sum::<f64>(),
        "solve_h2d_bytes_rank0": h2d,
        "solve_d2h_bytes_rank0": d2h,
        "solve_d2h_bytes_per_iteration_rank0": d2h / its,
        "solve_copies_rank0": (solve_t.h2d_copies + solve_t.d2h_copies) as f64 / repeat,
        "check": check_json,
        "profile": profile_json,
    });
    if let Some(path) = &args.json {
        std::fs::write(path, serde_json::to_string_pretty(&json)? + "\n")?;
    }
    if let Some(path) = &args.solution {
        ptap_io::write_petsc_vec(path, &u)?;
    }
    if !args.quiet {
        println!(
            "beam k = {} x length {} ({} unknowns) on {size} GPU(s) ({}), rows {:?}, ghosts {:?}",
            args.k,
            args.length,
            a.scalar_rows(),
            dev.name(),
            owned,
            ghosts
        );
        println!(
            "device Jacobi-PCG: {} iterations, converged {}, ||r||/||b|| = {:.3e}, tip ||u||_inf = {tip:.12e}",
            report.iterations,
            report.converged,
            report.residual_norm / report.rhs_norm
        );
        println!(
            "time per iteration (best of {}): max {:.1} us, mean {:.1} us over ranks",
            args.repeat,
            max_iter_s * 1e6,
            mean_iter_s * 1e6
        );
        println!(
            "halo per iteration: {} bytes sent in all ({:?} per rank); solve phase host<->device (rank 0, per solve): {h2d} B up, {d2h} B down ({:.1} B per iteration)",
            halo_all.iter().sum::<f64>(),
            halo_all,
            d2h / its
        );
        if let Some(p) = &profile_json {
            println!("parts of an iteration (s per call, per rank): {p}");
        }
        if let Some(c) = &check_json {
            println!("check against the CPU distributed solver: {c}");
        }
    }
    verdict
}

/// `[max, mean]` over ranks of each of `values` (rank 0; empty elsewhere).
fn max_mean(comm: &MpiComm, values: &[f64]) -> Vec<[f64; 2]> {
    let Some(all) = comm.gather(0, values) else {
        return Vec::new();
    };
    let m = values.len();
    let ranks = all.len() / m.max(1);
    (0..m)
        .map(|j| {
            let col = all.iter().skip(j).step_by(m);
            let max = col.clone().fold(f64::NEG_INFINITY, |a, &v| a.max(v));
            [max, col.sum::<f64>() / ranks as f64]
        })
        .collect()
}

/// The beam with what a hot step needs: mesh and assembler for new values,
/// and the rigid-body modes.
struct AmgBeam {
    mesh: BoxMesh,
    asm: Assembler,
    a: BlockCsr,
    rhs: Vec<f64>,
    near_null: Vec<f64>,
    modes: usize,
}

fn amg_beam(k: usize, length: usize) -> Result<AmgBeam, BoxError> {
    if length == 1 {
        let b = BeamProblem::build(k)?;
        return Ok(AmgBeam {
            mesh: b.mesh,
            asm: b.assembler,
            a: b.a,
            rhs: b.rhs,
            near_null: b.near_null,
            modes: b.modes,
        });
    }
    if length == 0 || k == 0 {
        return Err("--k and --length must be at least 1".into());
    }
    let mesh = BoxMesh::new(
        10 * k * length,
        k,
        k,
        [0.0, -0.5, -0.5],
        [10.0 * length as f64, 0.5, 0.5],
    )?;
    let asm = Assembler::new(&mesh, Constraint::ClampXMin)?;
    let mut a = asm.zero_matrix();
    asm.assemble(&uniform_modulus(&mesh), &mut a)?;
    let rhs = traction_rhs(&mesh, &asm);
    let near_null = rigid_body_modes(&mesh, &asm);
    Ok(AmgBeam {
        modes: rigid_mode_count(3),
        mesh,
        asm,
        a,
        rhs,
        near_null,
    })
}

/// The AMG on the GPU ranks: a cold step (assembly, the CPU ranks' mesh
/// setup, one upload, the matrix setup and the solve on the devices), then
/// `--repeat` hot steps (the beam re-assembled with a stiffer front, the
/// numeric refresh and the solve on the devices). Reports the four phases
/// of the cold and of the best hot step (max and mean over ranks),
/// iterations, time per iteration, each level's Galerkin product on the
/// device (max and mean over ranks), and the host<->device copies by phase.
fn run_amg(args: &Args, comm: &MpiComm) -> Result<(), BoxError> {
    use ptap_dist::device_amg::{build_device_hierarchy, product_seconds};
    use ptap_dist::{build_hierarchy, DistOptions, DistProblem};
    let (rank, size) = (comm.rank(), comm.size());
    let t0 = Instant::now();
    let mut beam = amg_beam(args.k, args.length)?;
    let assembly_s = t0.elapsed().as_secs_f64();
    let bs = beam.a.block_shape().0;
    let part = Partition::uniform(beam.a.nrows(), size)?;
    let rows = part.range(rank);
    let b = beam.rhs[rows.start * bs..rows.end * bs].to_vec();
    let problem = |a: &BlockCsr| -> Result<DistProblem, BoxError> {
        Ok(DistProblem {
            a: LocalMatrix::from_global(a, &part, &part, rank)?,
            part: part.clone(),
            near_null: beam.near_null[rows.start * bs * beam.modes..rows.end * bs * beam.modes].to_vec(),
            modes: beam.modes,
        })
    };
    let mut options = ptap_runtime::HierarchyOptions::default();
    options.amg.pf = args.pf;
    if let Some(limit) = args.coarse_eq_limit {
        options.amg.coarse_eq_limit = limit;
    }
    options.variant = Some(args.variant.parse().map_err(|e| format!("--variant: {e}"))?);
    let dist = DistOptions {
        process_eq_limit: args.process_eq_limit,
    };
    let opts = ptap_runtime::CgOptions {
        rtol: args.rtol,
        max_iterations: args.max_iterations,
    };

    let (dev, ordinal) = agree(comm, open_device(rank))?;
    let nccl = NcclComm::init(comm, dev.context())?;
    dev.reset_counters();
    let (mut h, setup) = build_device_hierarchy(comm, &nccl, &dev, problem(&beam.a)?, &options, &dist, &mut |_| {})?;
    let cold_products = product_seconds(&h)?;
    let mut ws = h.workspace(args.max_iterations)?;
    let mut x = vec![0.0; b.len()];
    let cold = h.solve(&b, &mut x, &opts, &mut ws)?;
    let cold_tip = x.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let cold_phases = [
        assembly_s,
        setup.setup.mesh_setup_s,
        setup.upload_s,
        h.timings.matrix_setup_s,
        cold.solve_s,
    ];

    // Hot steps: the stiffening front's last step (same pattern), refresh, solve.
    let l = bs * bs;
    let mut hot: Option<([f64; 4], ptap_runtime::CgReport, Vec<f64>)> = None;
    for _ in 0..args.repeat {
        let t = Instant::now();
        beam.asm.assemble(&stiffening_front(&beam.mesh, 2, 2), &mut beam.a)?;
        let p = beam.a.pattern();
        let values = &beam.a.values()[p.row_ptr()[rows.start] * l..p.row_ptr()[rows.end] * l];
        let assembly_s = t.elapsed().as_secs_f64();
        // The new fine values cross the bus (the assembly is the host's),
        // then the matrix setup runs from them with nothing operator-sized
        // crossing; ranks start each phase together.
        comm.communicator().barrier();
        let t = Instant::now();
        h.set_fine_values(values)?;
        ptap_runtime::Backend::synchronize(h.backend())?;
        let upload_s = t.elapsed().as_secs_f64();
        comm.communicator().barrier();
        let matrix_setup_s = h.matrix_setup()?;
        let products = product_seconds(&h)?;
        x.fill(0.0);
        let r = h.solve(&b, &mut x, &opts, &mut ws)?;
        let times = [assembly_s, upload_s, matrix_setup_s, r.solve_s];
        let better = match &hot {
            None => true,
            Some((best, _, _)) => times[2] + times[3] < best[2] + best[3],
        };
        if hot.as_ref().is_some_and(|(_, prev, _)| prev.iterations != r.iterations) {
            return Err("two hot steps of the same system took different iteration counts".into());
        }
        if better {
            hot = Some((times, r, products));
        }
    }
    let hot_tip = x.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let counters = dev.counters();

    // The CPU ranks' AMG on the same partition, cold and hot values.
    let mut check = None;
    if args.check {
        let cold_beam = amg_beam(args.k, args.length)?;
        let (mut hc, _) = build_hierarchy(comm, problem(&cold_beam.a)?, &options, &dist, &mut |_| {})?;
        let mut wsc = hc.workspace(args.max_iterations)?;
        let mut xc = vec![0.0; b.len()];
        let rc = hc.solve(&b, &mut xc, &opts, &mut wsc)?;
        let tip_c = global_tip(comm, &xc);
        let p = beam.a.pattern();
        hc.refresh(&beam.a.values()[p.row_ptr()[rows.start] * l..p.row_ptr()[rows.end] * l])?;
        xc.fill(0.0);
        let rh = hc.solve(&b, &mut xc, &opts, &mut wsc)?;
        let hot_tip_c = global_tip(comm, &xc);
        check = Some((rc.iterations, tip_c, rh.iterations, hot_tip_c));
    }

    // Collectives first (every rank), then rank 0 reports.
    let tips = comm.gather(0, &[cold_tip, hot_tip]);
    let cold_mm = max_mean(comm, &cold_phases);
    let (hot_times, hot_report, hot_products) = hot.ok_or("--repeat must be at least 1")?;
    let per_iter = |r: &ptap_runtime::CgReport| r.solve_s / r.iterations.max(1) as f64;
    let hot_mm = max_mean(
        comm,
        &[
            hot_times[0],
            hot_times[1],
            hot_times[2],
            hot_times[3],
            per_iter(&hot_report),
        ],
    );
    let cold_iter_mm = max_mean(comm, &[per_iter(&cold)]);
    let cold_prod_mm = max_mean(comm, &cold_products);
    let hot_prod_mm = max_mean(comm, &hot_products);
    let gpus = gathered(comm, ordinal as f64);
    let owned = gathered(comm, rows.len() as f64);
    let Some(tips) = tips else {
        return if cold.converged && hot_report.converged {
            Ok(())
        } else {
            Err("CG did not converge".into())
        };
    };
    let tip_of = |j: usize| tips.iter().skip(j).step_by(2).fold(0.0f64, |m, &v| m.max(v));
    let (cold_tip, hot_tip) = (tip_of(0), tip_of(1));
    let mm = |v: &[f64; 2]| serde_json::json!({ "max_s": v[0], "mean_s": v[1] });
    let names = ["assembly", "mesh_setup", "upload", "matrix_setup", "solve"];
    let cold_json: serde_json::Map<_, _> = names
        .iter()
        .zip(&cold_mm)
        .map(|(n, v)| (n.to_string(), mm(v)))
        .collect();
    let hot_json: serde_json::Map<_, _> = [
        "assembly",
        "fine_values_upload",
        "matrix_setup",
        "solve",
        "solve_per_iteration",
    ]
    .iter()
    .zip(&hot_mm)
    .map(|(n, v)| (n.to_string(), mm(v)))
    .collect();
    let per_level = |v: &[[f64; 2]]| v.iter().map(mm).collect::<Vec<_>>();
    let mut transfers = serde_json::Map::new();
    for phase in [
        "upload",
        "matrix setup",
        "rhs upload",
        "solve",
        "solution download",
        "fine values upload",
    ] {
        let t = counters.get(phase);
        let copies = t.h2d_copies + t.d2h_copies;
        transfers.insert(
            phase.into(),
            serde_json::json!({
                "h2d_bytes": t.h2d_bytes, "d2h_bytes": t.d2h_bytes,
                "h2d_copies": t.h2d_copies, "d2h_copies": t.d2h_copies,
                "scalars_only": t.h2d_bytes + t.d2h_bytes <= 64 * copies,
            }),
        );
    }
    let mut verdict: Result<(), BoxError> = if cold.converged && hot_report.converged {
        Ok(())
    } else {
        Err(format!(
            "CG did not converge ({} cold, {} hot iterations)",
            cold.iterations, hot_report.iterations
        )
        .into())
    };
    for phase in ["matrix setup", "solve"] {
        if transfers[phase]["scalars_only"] != serde_json::json!(true) {
            verdict = Err(format!("the {phase} phase moved more than scalars between host and device (rank 0)").into());
        }
    }
    let check_json = check.map(|(it_c, tip_c, it_h, tip_h)| {
        let d_cold = (cold_tip - tip_c).abs() / tip_c;
        let d_hot = (hot_tip - tip_h).abs() / tip_h;
        if cold.iterations.abs_diff(it_c) > 1 || hot_report.iterations.abs_diff(it_h) > 1 || !(d_cold <= 1e-8) || !(d_hot <= 1e-8) {
            verdict = Err(format!(
                "the GPU ranks' AMG differs from the CPU ranks': {} / {} iterations against {it_c} / {it_h}, tips {d_cold:.2e} / {d_hot:.2e} apart",
                cold.iterations, hot_report.iterations
            )
            .into());
        }
        serde_json::json!({
            "cpu_iterations": it_c, "cpu_tip_displacement": tip_c, "tip_rel_diff": d_cold,
            "cpu_hot_iterations": it_h, "cpu_hot_tip_displacement": tip_h, "hot_tip_rel_diff": d_hot,
        })
    });
    let json = serde_json::json!({
        "solver": "amg",
        "ranks": size,
        "k": args.k,
        "length": args.length,
        "block_rows": beam.a.nrows(),
        "unknowns": beam.a.scalar_rows(),
        "device": dev.name(),
        "gpu_of_rank": gpus,
        "owned_rows": owned,
        "variant": args.variant,
        "pf": args.pf,
        "levels": setup.setup.levels,
        "cold": {
            "iterations": cold.iterations,
            "converged": cold.converged,
            "tip_displacement": cold_tip,
            "phases": cold_json,
            "solve_per_iteration": mm(&cold_iter_mm[0]),
            "galerkin_per_level": per_level(&cold_prod_mm),
        },
        "hot": {
            "steps": args.repeat,
            "iterations": hot_report.iterations,
            "converged": hot_report.converged,
            "residual_norm": hot_report.residual_norm,
            "rhs_norm": hot_report.rhs_norm,
            "tip_displacement": hot_tip,
            "phases_best_step": hot_json,
            "galerkin_per_level": per_level(&hot_prod_mm),
        },
        "transfers_rank0": transfers,
        "check": check_json,
    });
    if let Some(path) = &args.json {
        std::fs::write(path, serde_json::to_string_pretty(&json)? + "\n")?;
    }
    if !args.quiet {
        println!(
            "beam k = {} x length {} ({} unknowns), AMG on {size} GPU(s) ({}), rows {:?}",
            args.k,
            args.length,
            beam.a.scalar_rows(),
            dev.name(),
            owned
        );
        for (when, its, tip, ph) in [
            ("cold", cold.iterations, cold_tip, &cold_json),
            ("hot ", hot_report.iterations, hot_tip, &hot_json),
        ] {
            println!(
                "{when}: {its} iterations, tip ||u||_inf = {tip:.12e}; phases (max/mean over ranks): {}",
                serde_json::Value::Object(ph.clone())
            );
        }
        println!(
            "Galerkin product per level, hot (device s, max/mean): {:?}",
            hot_prod_mm
        );
        println!(
            "host<->device by phase (rank 0): {}",
            serde_json::Value::Object(transfers)
        );
        if let Some(c) = &json["check"].as_object() {
            println!("check against the CPU ranks' AMG: {c:?}");
        }
    }
    verdict
}

/// `max |x_i|` over every rank's part (the same on every rank). Collective.
fn global_tip(comm: &MpiComm, x: &[f64]) -> f64 {
    let local = x.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let mut all = vec![0.0; comm.size()];
    all[comm.rank()] = local;
    comm.all_reduce_sum(&mut all);
    all.iter().fold(0.0f64, |m, &v| m.max(v))
}
