//! `ptap-mpi-cuda` under `mpirun -np 1` and `-np 2` (feature `nccl`; needs
//! `mpirun`, a CUDA driver, NCCL, and one GPU per rank): the device solve
//! against the single-process CPU reference (the same iteration count, the
//! tip to 1e-10 relative) and, inside the program (`--check`), against the
//! CPU distributed solver on the same partition; the solve moves only the
//! reduced scalars between host and device (3 at the start, 3 per
//! iteration) and, on two ranks, a halo. The AMG (`--solver amg`, three
//! levels) on one and two GPUs: inside the program (`--check`) against the
//! CPU ranks' AMG at the same rank count (iterations within 1, tip to 1e-8
//! relative, cold and after a hot refresh), here the two rank counts against
//! each other, and matrix setup and solve moving only scalars between host
//! and device. Without a driver, NCCL or enough GPUs it prints `skipping:
//! ...` and passes.
use ptap_dist::{reference, CgOptions};
use ptap_fem::BeamProblem;
use std::path::Path;
use std::process::Command;

const K: usize = 2;

/// GPUs here, or why the test cannot run.
fn gpus() -> Result<usize, String> {
    if let Err(e) = ptap_cuda::libraries_present() {
        return Err(e.to_string());
    }
    if let Err(e) = ptap_dist::nccl::nccl_present() {
        return Err(e.to_string());
    }
    cudarc::driver::CudaContext::device_count()
        .map(|n| n.max(0) as usize)
        .map_err(|e| format!("the CUDA driver reports no usable GPU ({e})"))
}

fn mpirun(np: usize, dir: &Path) -> serde_json::Value {
    mpirun_with(np, dir, "jacobi", &["--k", &K.to_string(), "--repeat", "2"])
}

fn mpirun_with(np: usize, dir: &Path, name: &str, args: &[&str]) -> serde_json::Value {
    let json = dir.join(format!("{name}-np{np}.json"));
    let out = Command::new("mpirun")
        .args(["--allow-run-as-root", "--oversubscribe", "-np", &np.to_string()])
        .args(["-x", "NCCL_NVLS_ENABLE=0"])
        .arg(env!("CARGO_BIN_EXE_ptap-mpi-cuda"))
        .args(args)
        .args(["--check", "--quiet", "--json"])
        .arg(&json)
        .env("NCCL_NVLS_ENABLE", "0")
        .output()
        .unwrap_or_else(|e| {
            panic!("mpirun could not be started ({e}); the `nccl` feature needs OpenMPI's mpirun on PATH")
        });
    assert!(
        out.status.success(),
        "mpirun -np {np} ptap-mpi-cuda failed ({}):\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap()
}

#[test]
fn device_solve_on_one_and_two_gpus_matches_the_cpu() {
    let n_gpus = match gpus() {
        Ok(n) if n > 0 => n,
        Ok(_) => {
            eprintln!("skipping: the CUDA driver reports no GPU");
            return;
        }
        Err(why) => {
            eprintln!("skipping: {why}");
            return;
        }
    };
    let beam = BeamProblem::build(K).unwrap();
    let mut x_ref = vec![0.0; beam.a.scalar_rows()];
    let reference = reference::jacobi_pcg(&beam.a, &beam.rhs, &mut x_ref, &CgOptions::default()).unwrap();
    assert!(reference.converged);
    let tip_ref = x_ref.iter().fold(0.0f64, |m, v| m.max(v.abs()));

    let dir = std::env::temp_dir().join(format!("ptap-nccl-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for np in [1, 2] {
        if np > n_gpus {
            eprintln!("skipping: -np {np} needs {np} GPUs, {n_gpus} present");
            continue;
        }
        let r = mpirun(np, &dir);
        let iterations = r["iterations"].as_u64().unwrap() as usize;
        let tip = r["tip_displacement"].as_f64().unwrap();
        eprintln!(
            "np {np}: {iterations} iterations (reference {}), tip {tip:.15e} (reference {tip_ref:.15e}), check {}, {:.1} us per iteration",
            reference.iterations,
            r["check"],
            r["iteration_s_max"].as_f64().unwrap() * 1e6
        );
        assert_eq!(r["ranks"], np);
        assert_eq!(r["converged"], true);
        // The program itself failed unless the CPU distributed solver agreed.
        assert_eq!(r["check"]["cpu_iterations"].as_u64().unwrap() as usize, iterations);
        assert!(r["check"]["solution_rel_diff"].as_f64().unwrap() <= 1e-10);
        assert_eq!(iterations, reference.iterations, "np {np}");
        assert!(
            (tip - tip_ref).abs() <= 1e-10 * tip_ref,
            "np {np}: tip {tip} vs {tip_ref}"
        );
        // Only the reduced scalars cross the bus in the solve: 3 at the start
        // (b.b, r.r, r.z), then p.Ap and (r.r, r.z) per iteration.
        assert_eq!(r["solve_h2d_bytes_rank0"].as_f64().unwrap(), 0.0);
        assert_eq!(
            r["solve_d2h_bytes_rank0"].as_f64().unwrap(),
            (24 * (iterations + 1)) as f64
        );
        let halo = r["halo_bytes_per_iteration"].as_f64().unwrap();
        assert_eq!(halo > 0.0, np > 1, "np {np}: {halo} halo bytes");
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn device_amg_on_one_and_two_gpus_matches_the_cpu_ranks() {
    let n_gpus = match gpus() {
        Ok(n) if n > 0 => n,
        Ok(_) => {
            eprintln!("skipping: the CUDA driver reports no GPU");
            return;
        }
        Err(why) => {
            eprintln!("skipping: {why}");
            return;
        }
    };
    let dir = std::env::temp_dir().join(format!("ptap-nccl-amg-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut tips = Vec::new();
    for np in [1, 2] {
        if np > n_gpus {
            eprintln!("skipping: -np {np} needs {np} GPUs, {n_gpus} present");
            continue;
        }
        let args = [
            "--solver",
            "amg",
            "--k",
            "3",
            "--coarse-eq-limit",
            "60",
            "--repeat",
            "1",
        ];
        let r = mpirun_with(np, &dir, "amg", &args);
        eprintln!(
            "amg np {np}: cold {} / hot {} iterations, check {}, levels {}",
            r["cold"]["iterations"],
            r["hot"]["iterations"],
            r["check"],
            r["levels"].as_array().unwrap().len()
        );
        assert_eq!(r["ranks"], np);
        assert!(r["levels"].as_array().unwrap().len() >= 3);
        for step in ["cold", "hot"] {
            assert_eq!(r[step]["converged"], true);
        }
        // The program failed unless the CPU ranks agreed; the figures too.
        let c = &r["check"];
        let its = |v: &serde_json::Value| v.as_u64().unwrap() as i64;
        assert!((its(&r["cold"]["iterations"]) - its(&c["cpu_iterations"])).abs() <= 1);
        assert!((its(&r["hot"]["iterations"]) - its(&c["cpu_hot_iterations"])).abs() <= 1);
        assert!(c["tip_rel_diff"].as_f64().unwrap() <= 1e-8);
        assert!(c["hot_tip_rel_diff"].as_f64().unwrap() <= 1e-8);
        for phase in ["matrix setup", "solve"] {
            assert_eq!(r["transfers_rank0"][phase]["scalars_only"], true, "np {np}: {phase}");
        }
        tips.push((
            r["cold"]["tip_displacement"].as_f64().unwrap(),
            r["hot"]["tip_displacement"].as_f64().unwrap(),
        ));
    }
    if let [(c1, h1), (c2, h2)] = tips[..] {
        assert!((c1 - c2).abs() <= 1e-8 * c1 && (h1 - h2).abs() <= 1e-8 * h1, "{tips:?}");
    }
    std::fs::remove_dir_all(&dir).ok();
}
