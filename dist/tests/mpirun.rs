//! `ptap-mpi` under `mpirun -np 1, 2, 3` against the single-process
//! reference (feature `mpi`; needs `mpirun` on PATH): the same iteration
//! count within 1, the gathered solution and the tip displacement equal to
//! the reference to 1e-8 relative, one rank bit for bit, and two runs on
//! three ranks bit for bit.
use ptap_dist::{reference, CgOptions};
use ptap_fem::BeamProblem;
use std::path::Path;
use std::process::Command;

const K: usize = 2;

struct Run {
    iterations: usize,
    tip: f64,
    solution: Vec<f64>,
    plan_matches_global: bool,
}

fn mpirun(np: usize, dir: &Path) -> Run {
    let json = dir.join(format!("np{np}.json"));
    let vec = dir.join(format!("np{np}.vec"));
    let out = Command::new("mpirun")
        .args(["--allow-run-as-root", "--oversubscribe", "-np", &np.to_string()])
        .arg(env!("CARGO_BIN_EXE_ptap-mpi"))
        .args(["--k", &K.to_string(), "--quiet", "--json"])
        .arg(&json)
        .arg("--solution")
        .arg(&vec)
        // Ranks share the machine's cores; one rayon thread each.
        .env("RAYON_NUM_THREADS", "1")
        .output()
        .unwrap_or_else(|e| {
            panic!("mpirun could not be started ({e}); the `mpi` feature needs OpenMPI's mpirun on PATH")
        });
    assert!(
        out.status.success(),
        "mpirun -np {np} failed ({}):\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(report["ranks"], np);
    assert_eq!(report["converged"], true);
    Run {
        iterations: report["iterations"].as_u64().unwrap() as usize,
        tip: report["tip_displacement"].as_f64().unwrap(),
        solution: ptap_io::read_petsc_vec(&vec).unwrap(),
        plan_matches_global: report["plan_matches_global"].as_bool().unwrap(),
    }
}

fn rel_diff(x: &[f64], y: &[f64]) -> f64 {
    let d: f64 = x.iter().zip(y).map(|(p, q)| (p - q) * (p - q)).sum::<f64>().sqrt();
    d / y.iter().map(|q| q * q).sum::<f64>().sqrt()
}

#[test]
fn one_two_and_three_ranks_match_the_single_process_reference() {
    let beam = BeamProblem::build(K).unwrap();
    let mut x_ref = vec![0.0; beam.a.scalar_rows()];
    let reference = reference::jacobi_pcg(&beam.a, &beam.rhs, &mut x_ref, &CgOptions::default()).unwrap();
    assert!(reference.converged);
    let tip_ref = x_ref.iter().fold(0.0f64, |m, v| m.max(v.abs()));

    let dir = std::env::temp_dir().join(format!("ptap-mpirun-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let runs: Vec<Run> = (1..=3).map(|np| mpirun(np, &dir)).collect();
    // Run to run, a rank count gives the same bits (reductions in rank order).
    let again = mpirun(3, &dir);
    std::fs::remove_dir_all(&dir).ok();
    assert_eq!(again.iterations, runs[2].iterations);
    assert!(
        again
            .solution
            .iter()
            .zip(&runs[2].solution)
            .all(|(p, q)| p.to_bits() == q.to_bits()),
        "two runs on 3 ranks differ"
    );

    // One rank runs the reference's operations in the same order.
    assert_eq!(runs[0].iterations, reference.iterations);
    assert!(runs[0]
        .solution
        .iter()
        .zip(&x_ref)
        .all(|(p, q)| p.to_bits() == q.to_bits()));
    for (i, run) in runs.iter().enumerate() {
        let np = i + 1;
        eprintln!(
            "np {np}: {} iterations (reference {}), tip {:.15e} (reference {tip_ref:.15e}), solution rel. diff {:.2e}",
            run.iterations,
            reference.iterations,
            run.tip,
            rel_diff(&run.solution, &x_ref)
        );
        assert!(
            run.plan_matches_global,
            "np {np}: distributed plan differs from the global one"
        );
        assert!(
            run.iterations.abs_diff(runs[0].iterations) <= 1,
            "np {np}: {} iterations against {} on one rank",
            run.iterations,
            runs[0].iterations
        );
        assert_eq!(run.solution.len(), x_ref.len());
        assert!(rel_diff(&run.solution, &x_ref) <= 1e-8, "np {np}: solution differs");
        assert!(
            (run.tip - tip_ref).abs() <= 1e-8 * tip_ref,
            "np {np}: tip {} vs {tip_ref}",
            run.tip
        );
    }
}
