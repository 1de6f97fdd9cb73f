//! `mpirun -np N ptap-mpi-cuda --k K`: the beam of `ptap-mpi` solved by
//! point-block-Jacobi CG on N GPUs, one rank per GPU (feature `nccl`).
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
use ptap_fem::{traction_rhs, uniform_modulus, Assembler, BeamProblem, BoxMesh, Constraint};
use ptap_runtime::KernelRegistry;
use ptap_sparse::BlockCsr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

#[derive(Parser, Debug)]
#[command(
    name = "ptap-mpi-cuda",
    about = "The beam by point-block-Jacobi CG on GPUs, one MPI rank per GPU, halo and reductions through NCCL (run under mpirun)."
)]
struct Args {
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
    /// Timed solves (after one warm-up); each rank reports its best.
    #[arg(long, default_value_t = 3)]
    repeat: usize,
    /// Also solve with the CPU distributed solver and compare (iterations
    /// equal, solutions within 1e-10 relative), and check one device SpMV.
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
