//! `ptap solve` and `ptap run` under `mpirun -np 1, 2, 3` (feature `mpi`;
//! needs `mpirun` on PATH).
//!
//! - AMG-CG (the distributed hierarchy on `DistBackend`) on the beam (k = 2:
//!   two levels; k = 4 with a coarse limit of 100: three distributed levels
//!   and the whole coarsest) and on a user's operator (scikit-fem P1
//!   tetrahedra, PETSc binary, rigid-body modes from its coordinates): every
//!   rank count gives the same hierarchy and iteration count as one rank,
//!   the same tip displacement and solution to 1e-8 relative, a residual
//!   below the target against the global operator, and (3 ranks, twice) the
//!   same bits run to run; consolidated onto fewer ranks, the same solve;
//!   with filtered prolongators (the default filter), the same agreement.
//! - Hot steps (`--steps`): refreshed hierarchies agree across rank counts
//!   and with the serial solver on the same modulus fields.
//! - Jacobi-PCG against the single-process reference: the same iteration
//!   count within 1, the solution and tip to 1e-8, one rank bit for bit.
//! - GPU ranks (`--device cuda`, one rank per GPU; skipped without a CUDA
//!   driver and NCCL): every step against the CPU ranks (iterations within
//!   1, tip to 1e-8 relative), the hot steps assembled on the GPUs with only
//!   the slab's modulus field going up, matrix setup and solve moving only
//!   scalars; every distributed level's time balance over the ranks (CPU and
//!   GPU ranks alike: its keys, max / mean at least 1); the f32 smoothers on
//!   GPU ranks against their f64 run; more ranks than GPUs refused in one
//!   sentence.
use ptap_dist::{reference, CgOptions};
use ptap_fem::BeamProblem;
use ptap_io::BlockSpec;
use ptap_sparse::BlockCsr;
use std::path::{Path, PathBuf};
use std::process::Command;

struct Run {
    iterations: usize,
    tip: f64,
    solution: Vec<f64>,
    report: serde_json::Value,
}

/// `mpirun -np NP ptap ARGS --quiet --json ...` (ARGS start with the
/// subcommand; `solve` also writes its solution with `--x-out`).
fn mpirun(np: usize, args: &[&str], dir: &Path, tag: &str) -> Run {
    let json = dir.join(format!("{tag}-np{np}.json"));
    let vec = dir.join(format!("{tag}-np{np}.vec.petsc"));
    let solve = args[0] == "solve";
    let mut cmd = Command::new("mpirun");
    cmd.args(["--allow-run-as-root", "--oversubscribe", "-np", &np.to_string()])
        .arg(env!("CARGO_BIN_EXE_ptap"))
        .args(args)
        .args(["--quiet", "--json"])
        .arg(&json);
    if solve {
        cmd.arg("--x-out").arg(&vec);
    }
    // Ranks share the machine's cores; one rayon thread each.
    let out = cmd.env("RAYON_NUM_THREADS", "1").output().unwrap_or_else(|e| {
        panic!("mpirun could not be started ({e}); the `mpi` feature needs OpenMPI's mpirun on PATH")
    });
    assert!(
        out.status.success(),
        "mpirun -np {np} {args:?} failed ({}):\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(report["ranks"], np);
    assert_eq!(report["converged"], true);
    for phase in ["mesh_setup", "matrix_setup", "solve"] {
        let p = &report["phases"][phase];
        assert!(
            p["max_s"].as_f64().unwrap() >= p["mean_s"].as_f64().unwrap(),
            "{phase}: {p}"
        );
    }
    Run {
        iterations: report["iterations"].as_u64().unwrap() as usize,
        tip: report["tip_displacement"].as_f64().unwrap(),
        solution: if solve {
            ptap_io::read_petsc_vec(&vec).unwrap()
        } else {
            Vec::new()
        },
        report,
    }
}

fn scratch(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ptap-mpirun-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn rel_diff(x: &[f64], y: &[f64]) -> f64 {
    assert_eq!(x.len(), y.len());
    let d: f64 = x.iter().zip(y).map(|(p, q)| (p - q) * (p - q)).sum::<f64>().sqrt();
    d / y.iter().map(|q| q * q).sum::<f64>().sqrt()
}

/// `||b - A x|| / ||b||` with the global operator.
fn relative_residual(a: &BlockCsr, b: &[f64], x: &[f64]) -> f64 {
    let mut r = vec![0.0; b.len()];
    ptap_sparse::spmv::residual(a, x, b, &mut r);
    let n = |v: &[f64]| v.iter().map(|t| t * t).sum::<f64>().sqrt();
    n(&r) / n(b)
}

fn bitwise(x: &[f64], y: &[f64]) -> bool {
    x.len() == y.len() && x.iter().zip(y).all(|(p, q)| p.to_bits() == q.to_bits())
}

/// Every distributed level of `report` has its time balance over the `np`
/// ranks: the CPU ranks' keys, positive times, max at least mean, and a
/// max / mean ratio of at least 1 (to rounding: the mean of equal times may
/// round a last bit up); the replicated coarsest level has none.
fn assert_balance(report: &serde_json::Value, np: usize) {
    for l in report["levels"].as_array().unwrap() {
        let b = &l["balance"];
        if l["replicated"] == true {
            assert!(b.is_null(), "np {np}: {l}");
            continue;
        }
        let f = |k: &str| b[k].as_f64().unwrap_or_else(|| panic!("np {np}: no {k} in {l}"));
        let holding = l["rows_per_rank"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r.as_u64() > Some(0))
            .count();
        assert_eq!(b["ranks_with_rows"].as_u64(), Some(holding as u64), "np {np}: {l}");
        for (max, mean) in [("product_max_s", "product_mean_s"), ("spmv_max_s", "spmv_mean_s")] {
            assert!(f(mean) > 0.0 && f(max) >= f(mean) * (1.0 - 1e-12), "np {np}: {l}");
        }
        let ratio = f("time_max_over_mean");
        assert!(
            ratio.is_finite() && ratio >= 1.0 - 1e-12,
            "np {np}: ratio {ratio} in {l}"
        );
        if np == 1 {
            assert_eq!(ratio, 1.0, "one rank: {l}");
        }
    }
}

/// AMG-CG on 1, 2 and 3 ranks (and 3 again): the runs agree as the module
/// docs say; returns the runs.
fn amg_runs_agree(args: &[&str], tag: &str, a: &BlockCsr, b: &[f64]) -> Vec<Run> {
    let dir = scratch(tag);
    let runs: Vec<Run> = (1..=3).map(|np| mpirun(np, args, &dir, tag)).collect();
    let again = mpirun(3, args, &dir, &format!("{tag}-again"));
    std::fs::remove_dir_all(&dir).ok();
    assert_eq!(again.iterations, runs[2].iterations);
    assert!(
        bitwise(&again.solution, &runs[2].solution),
        "{tag}: two runs on 3 ranks differ"
    );
    let levels = |r: &Run| -> Vec<(u64, u64, u64)> {
        r.report["levels"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| {
                (
                    l["block_rows"].as_u64().unwrap(),
                    l["aggregates"].as_u64().unwrap_or(0),
                    l["p_blocks"].as_u64().unwrap_or(0),
                )
            })
            .collect()
    };
    let one = &runs[0];
    for (i, run) in runs.iter().enumerate() {
        let np = i + 1;
        let res = relative_residual(a, b, &run.solution);
        eprintln!(
            "{tag} np {np}: {} iterations (one rank {}), levels {:?}, tip {:.15e} (one rank {:.15e}, rel. diff {:.1e}), solution rel. diff {:.1e}, residual {res:.2e}",
            run.iterations,
            one.iterations,
            levels(run),
            run.tip,
            one.tip,
            (run.tip - one.tip).abs() / one.tip,
            rel_diff(&run.solution, &one.solution)
        );
        assert_eq!(run.report["solver"], "amg");
        assert_balance(&run.report, np);
        for l in run.report["levels"].as_array().unwrap() {
            assert!(l["rank_deficient_aggregates"].as_u64().unwrap_or(0) == 0, "{tag}: {l}");
        }
        assert_eq!(
            levels(run),
            levels(one),
            "{tag} np {np}: the hierarchy depends on the rank count"
        );
        assert!(
            run.iterations.abs_diff(one.iterations) <= 1,
            "{tag} np {np}: {} iterations against {} on one rank",
            run.iterations,
            one.iterations
        );
        assert!(
            (run.tip - one.tip).abs() <= 1e-8 * one.tip,
            "{tag} np {np}: tip {} vs {}",
            run.tip,
            one.tip
        );
        assert!(
            rel_diff(&run.solution, &one.solution) <= 1e-8,
            "{tag} np {np}: solution differs"
        );
        assert!(res <= 1e-8, "{tag} np {np}: residual {res:e} above the target");
    }
    runs
}

#[test]
fn amg_on_the_beam_agrees_on_one_two_and_three_ranks() {
    let beam = BeamProblem::build(2).unwrap();
    let runs = amg_runs_agree(&["solve", "--k", "2", "--pf", "0"], "beam2", &beam.a, &beam.rhs);
    // Level 0 distributed, its coarse level whole on every rank.
    let levels = runs[0].report["levels"].as_array().unwrap();
    assert_eq!(levels.len(), 2);
    assert_eq!(levels[1]["replicated"], true);
    assert_eq!(
        runs[2].report["levels"][0]["rows_per_rank"],
        serde_json::json!([334, 333, 333])
    );

    // Filtered prolongators (the default filter): fewer blocks in P, the same agreement.
    let filtered = amg_runs_agree(&["solve", "--k", "2"], "beam2-pf", &beam.a, &beam.rhs);
    let blocks = |r: &Run| r.report["levels"][0]["p_blocks"].as_u64().unwrap();
    eprintln!(
        "default pf: {} blocks in P (unfiltered {}), {} iterations (unfiltered {})",
        blocks(&filtered[0]),
        blocks(&runs[0]),
        filtered[0].iterations,
        runs[0].iterations
    );
    assert!(blocks(&filtered[0]) < blocks(&runs[0]));
    assert!(filtered[0].iterations <= runs[0].iterations + 2);
}

#[test]
fn rank_deficient_aggregates_are_merged_alike_on_one_two_and_three_ranks() {
    // At strength threshold 0.15 the beam's aggregation leaves small
    // aggregates that cannot carry the 6 rigid-body modes (before the merge:
    // a singular coarse operator); at 0.2 most have no strong neighbour and
    // are dissolved. Either way: none left, the same aggregates, merges and
    // solve on every rank count.
    let beam = BeamProblem::build(2).unwrap();
    let count = |r: &Run, k: &str| r.report["levels"][0][k].as_u64().unwrap();
    let merged = amg_runs_agree(
        &["solve", "--k", "2", "--threshold", "0.15"],
        "merge",
        &beam.a,
        &beam.rhs,
    );
    let dissolved = amg_runs_agree(
        &["solve", "--k", "2", "--threshold", "0.2"],
        "dissolve",
        &beam.a,
        &beam.rhs,
    );
    for (runs, key) in [(&merged, "merged_aggregates"), (&dissolved, "dissolved_aggregates")] {
        let counts: Vec<u64> = runs.iter().map(|r| count(r, key)).collect();
        eprintln!("{key}: {counts:?}, aggregates {}", count(&runs[0], "aggregates"));
        assert!(counts[0] > 0, "{key}: {counts:?}");
        assert!(counts.iter().all(|&c| c == counts[0]), "{key}: {counts:?}");
        assert!(runs.iter().all(|r| r.iterations == runs[0].iterations));
    }
}

#[test]
fn uneven_coarse_levels_are_rebalanced_by_rows_without_changing_the_hierarchy() {
    // Coarse nodes live on their roots' ranks; on 5 ranks the beam's coarse
    // levels come out uneven and move to an even split (max over mean of the
    // rows above 1.1 before). The hierarchy and the solve are one rank's.
    let beam = BeamProblem::build(4).unwrap();
    let dir = scratch("rebalance");
    let args = [
        "solve",
        "--k",
        "4",
        "--coarse-eq-limit",
        "100",
        "--process-eq-limit",
        "20",
    ];
    let one = mpirun(1, &args, &dir, "rebalance");
    let five = mpirun(5, &args, &dir, "rebalance");
    std::fs::remove_dir_all(&dir).ok();
    let levels = |r: &Run| r.report["levels"].as_array().unwrap().clone();
    let (l1, l5) = (levels(&one), levels(&five));
    assert_eq!(l1.len(), l5.len());
    let mut rebalanced = 0;
    for (i, (a, b)) in l1.iter().zip(&l5).enumerate() {
        for key in ["block_rows", "aggregates", "p_blocks"] {
            assert_eq!(a[key], b[key], "level {i} {key}");
        }
        if b["replicated"] == true {
            continue;
        }
        let rows: Vec<u64> = b["rows_per_rank"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap())
            .filter(|&r| r > 0)
            .collect();
        let (max, min) = (*rows.iter().max().unwrap(), *rows.iter().min().unwrap());
        let mean = rows.iter().sum::<u64>() as f64 / rows.len() as f64;
        let came_rebalanced = i > 0 && l5[i - 1]["coarse_rebalanced"] == true;
        eprintln!(
            "5 ranks, level {i}: rows {rows:?}, max / mean {:.3}, rebalanced {came_rebalanced}",
            max as f64 / mean
        );
        if came_rebalanced {
            rebalanced += 1;
            assert!(max - min <= 1, "level {i}: {rows:?}");
        } else {
            assert!(max as f64 <= 1.1 * mean, "level {i}: {rows:?}");
        }
    }
    assert!(rebalanced > 0, "no level was rebalanced: {l5:?}");
    assert_eq!(five.iterations, one.iterations);
    assert!((five.tip - one.tip).abs() <= 1e-8 * one.tip);
    assert!(relative_residual(&beam.a, &beam.rhs, &five.solution) <= 1e-8);
}

#[test]
fn amg_with_distributed_coarse_levels_agrees_on_one_two_and_three_ranks() {
    let beam = BeamProblem::build(4).unwrap();
    let runs = amg_runs_agree(
        &["solve", "--k", "4", "--coarse-eq-limit", "100"],
        "beam4",
        &beam.a,
        &beam.rhs,
    );
    let levels = runs[2].report["levels"].as_array().unwrap();
    assert!(levels.len() >= 3, "{levels:?}");
    // Levels 0 and 1 are split over the 3 ranks; the last is whole.
    for l in &levels[..2] {
        let rows: Vec<u64> = l["rows_per_rank"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap())
            .collect();
        assert_eq!(rows.len(), 3);
        assert!(rows.iter().all(|&r| r > 0), "{l}");
        assert_eq!(l["replicated"], false);
    }
    assert_eq!(levels.last().unwrap()["replicated"], true);
    // Each rank assembled only the elements touching its slab (10 x 4 x 4
    // elements: its layers of 16, plus at most one layer each side and one
    // for an even start); one rank, all 640.
    let elements = |r: &Run| -> Vec<u64> {
        r.report["assembled_elements"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap())
            .collect()
    };
    assert_eq!(elements(&runs[0]), [640]);
    for r in &runs[1..] {
        let e = elements(r);
        let np = e.len() as u64;
        assert!(e.iter().all(|&n| n < 640 && n <= 640 / np + 3 * 16), "{e:?}");
    }
    eprintln!(
        "assembled elements per rank: {:?}",
        runs.iter().map(elements).collect::<Vec<_>>()
    );
    // Level 2 (41 rows of 6: 82 scalars per rank, above 50) stays on the 3
    // ranks, its roots' (14 / 12 / 15: max over mean 1.10, not rebalanced).
    assert_eq!(levels[2]["rows_per_rank"], serde_json::json!([14, 12, 15]));

    // Consolidation below 500 rows per rank: level 1 (191 rows of 6) onto 2
    // ranks, level 2 (41) onto 1; the hierarchy and the solve do not change.
    let dir = scratch("beam4-consolidated");
    let args = [
        "solve",
        "--k",
        "4",
        "--coarse-eq-limit",
        "100",
        "--process-eq-limit",
        "500",
    ];
    let c = mpirun(3, &args, &dir, "beam4c");
    std::fs::remove_dir_all(&dir).ok();
    let rows: Vec<&serde_json::Value> = c.report["levels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| &l["rows_per_rank"])
        .collect();
    assert_eq!(
        rows[..3],
        [
            &serde_json::json!([2160, 2160, 2160]),
            &serde_json::json!([96, 95, 0]),
            &serde_json::json!([41, 0, 0])
        ]
    );
    assert_eq!(c.iterations, runs[0].iterations);
    assert!((c.tip - runs[0].tip).abs() <= 1e-8 * runs[0].tip);
    assert!(rel_diff(&c.solution, &runs[0].solution) <= 1e-8);
    assert!(relative_residual(&beam.a, &beam.rhs, &c.solution) <= 1e-8);
}

#[test]
fn amg_on_a_user_operator_agrees_on_one_two_and_three_ranks() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/data/operators/skfem_tet3d_eliminated");
    let a = ptap_io::read_petsc_mat(dir.join("A.petsc"), BlockSpec::Infer).unwrap();
    let b = ptap_io::read_vector(dir.join("b.petsc")).unwrap();
    let x_ref = ptap_io::read_vector(dir.join("x_ref.mtx")).unwrap();
    let (ap, bp, cp) = (dir.join("A.petsc"), dir.join("b.petsc"), dir.join("coords.mtx"));
    let args = [
        "solve",
        "--a",
        ap.to_str().unwrap(),
        "--b",
        bp.to_str().unwrap(),
        "--coords",
        cp.to_str().unwrap(),
        "--coarse-eq-limit",
        "100",
    ];
    let runs = amg_runs_agree(&args, "skfem", &a, &b);
    for run in &runs {
        // The direct solution (SuperLU) to the accuracy rtol 1e-8 buys.
        let d = rel_diff(&run.solution, &x_ref);
        assert!(d <= 1e-6, "solution {d:e} from x_ref");
    }
}

#[test]
fn jacobi_pcg_on_one_two_and_three_ranks_matches_the_single_process_reference() {
    const K: usize = 2;
    let beam = BeamProblem::build(K).unwrap();
    let mut x_ref = vec![0.0; beam.a.scalar_rows()];
    let reference = reference::jacobi_pcg(&beam.a, &beam.rhs, &mut x_ref, &CgOptions::default()).unwrap();
    assert!(reference.converged);
    let tip_ref = x_ref.iter().fold(0.0f64, |m, v| m.max(v.abs()));

    let dir = scratch("jacobi");
    let args = ["solve", "--k", "2", "--solver", "jacobi"];
    let runs: Vec<Run> = (1..=3).map(|np| mpirun(np, &args, &dir, "jacobi")).collect();
    // Run to run, a rank count gives the same bits (reductions in rank order).
    let again = mpirun(3, &args, &dir, "jacobi-again");
    std::fs::remove_dir_all(&dir).ok();
    assert_eq!(again.iterations, runs[2].iterations);
    assert!(
        bitwise(&again.solution, &runs[2].solution),
        "two runs on 3 ranks differ"
    );

    // One rank runs the reference's operations in the same order.
    assert_eq!(runs[0].iterations, reference.iterations);
    assert!(bitwise(&runs[0].solution, &x_ref));
    for (i, run) in runs.iter().enumerate() {
        let np = i + 1;
        eprintln!(
            "jacobi np {np}: {} iterations (reference {}), tip {:.15e} (reference {tip_ref:.15e}), solution rel. diff {:.2e}",
            run.iterations,
            reference.iterations,
            run.tip,
            rel_diff(&run.solution, &x_ref)
        );
        assert_eq!(run.report["plan_matches_global"], true, "np {np}");
        assert!(
            run.iterations.abs_diff(runs[0].iterations) <= 1,
            "np {np}: {} iterations against {} on one rank",
            run.iterations,
            runs[0].iterations
        );
        assert!(rel_diff(&run.solution, &x_ref) <= 1e-8, "np {np}: solution differs");
        assert!(
            (run.tip - tip_ref).abs() <= 1e-8 * tip_ref,
            "np {np}: tip {} vs {tip_ref}",
            run.tip
        );
    }
}

#[test]
fn a_failure_on_one_rank_stops_every_rank_with_its_sentence() {
    // The scikit-fem operator with one negative diagonal entry in its last
    // row, which rank 2 of 3 owns: that rank refuses it while smoothing P,
    // the others learn of it at the same point; nobody waits forever.
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/data/operators/skfem_tet3d_eliminated/A.petsc");
    let mut a = ptap_io::read_petsc_mat(&src, BlockSpec::Infer).unwrap();
    let last = a.nrows() - 1;
    let k = a.pattern().find(last, last).unwrap();
    a.block_mut(k)[8] = -1.0;
    let dir = scratch("bad");
    let bad = dir.join("A.petsc");
    ptap_io::write_petsc_mat(&bad, &a).unwrap();
    let out = Command::new("timeout")
        .args(["120", "mpirun", "--allow-run-as-root", "--oversubscribe", "-np", "3"])
        .arg(env!("CARGO_BIN_EXE_ptap"))
        .args(["solve", "--a"])
        .arg(&bad)
        .args(["--coarse-eq-limit", "100", "--quiet"])
        .env("RAYON_NUM_THREADS", "1")
        .output()
        .unwrap();
    std::fs::remove_dir_all(&dir).ok();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(124), "mpirun hung:\n{err}");
    assert!(!out.status.success());
    assert!(
        err.contains(
            "error (rank 2): the operator on level 0 has a non-positive diagonal entry (-1e0) in scalar row 335"
        ),
        "{err}"
    );
    for r in [0, 1] {
        assert!(
            err.contains(&format!("error (rank {r}): 1 other rank(s) failed")),
            "{err}"
        );
    }
}

#[test]
fn hot_steps_refresh_over_the_ranks_and_agree_with_the_serial_time_loop() {
    // `--steps 3`: the stiffening front of `ptap run`; steps 2 and 3 refresh
    // the hierarchy (numeric products over the ranks, no inspection).
    const STEPS: usize = 3;
    let dir = scratch("steps");
    let args = ["run", "--k", "2", "--steps", "3"];
    let runs: Vec<Run> = (1..=3).map(|np| mpirun(np, &args, &dir, "steps")).collect();
    std::fs::remove_dir_all(&dir).ok();
    // The serial solver on the same fields (its own hierarchy, rtol 1e-8).
    let mut beam = BeamProblem::build(2).unwrap();
    let mut serial_tips = Vec::new();
    for step in 2..=STEPS {
        beam.reassemble(&ptap_fem::stiffening_front(&beam.mesh, step, STEPS))
            .unwrap();
        let options = ptap_runtime::HierarchyOptions::default();
        let mut h =
            ptap_runtime::Hierarchy::build(beam.a.clone(), &beam.near_null, beam.modes, &options, &mut |_| {}).unwrap();
        let mut ws = h.workspace(500).unwrap();
        let mut x = vec![0.0; beam.a.scalar_rows()];
        h.solve(&beam.rhs, &mut x, &ptap_runtime::CgOptions::default(), &mut ws)
            .unwrap();
        serial_tips.push(x.iter().fold(0.0f64, |m, v| m.max(v.abs())));
    }
    let steps = |r: &Run| -> Vec<(u64, f64)> {
        r.report["steps"]
            .as_array()
            .unwrap()
            .iter()
            .skip(1)
            .map(|s| {
                assert_eq!(s["converged"], true);
                (
                    s["iterations"].as_u64().unwrap(),
                    s["tip_displacement"].as_f64().unwrap(),
                )
            })
            .collect()
    };
    let one = steps(&runs[0]);
    assert_eq!(one.len(), STEPS - 1);
    for (i, run) in runs.iter().enumerate() {
        let mine = steps(run);
        for (s, ((its, tip), ((its1, tip1), serial))) in mine.iter().zip(one.iter().zip(&serial_tips)).enumerate() {
            eprintln!(
                "np {}: step {}: {its} iterations (one rank {its1}), tip {tip:.12e} (one rank {tip1:.12e}, serial {serial:.12e})",
                i + 1,
                s + 2
            );
            assert!(its.abs_diff(*its1) <= 1);
            assert!((tip - tip1).abs() <= 1e-8 * tip1);
            assert!((tip - serial).abs() <= 1e-7 * serial);
        }
        // The top level is the cold step's.
        assert_eq!(
            run.report["steps"][0]["tip_displacement"],
            run.report["tip_displacement"]
        );
        assert_eq!(run.report["steps"][0]["inspected"], true);
        assert!(run.report["steps"].as_array().unwrap()[1..]
            .iter()
            .all(|s| s["inspected"] == false));
    }
}

#[test]
fn a_sequence_of_user_operators_is_read_refreshed_and_solved_on_one_two_and_three_ranks() {
    // `ptap run --a A_1.petsc A_2.petsc A_3.mtx`: the scikit-fem operator,
    // then 2A (PETSc binary) and 4A (Matrix Market) of the same pattern:
    // steps 2 and 3 refresh the hierarchy; each solution is x_ref / scale.
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/data/operators/skfem_tet3d_eliminated");
    let a = ptap_io::read_petsc_mat(src.join("A.petsc"), BlockSpec::Infer).unwrap();
    let x_ref = ptap_io::read_vector(src.join("x_ref.mtx")).unwrap();
    let dir = scratch("sequence");
    let scaled = |f: f64| {
        let mut s = a.clone();
        s.values_mut().iter_mut().for_each(|v| *v *= f);
        s
    };
    let files = [dir.join("A_1.petsc"), dir.join("A_2.petsc"), dir.join("A_3.mtx")];
    ptap_io::write_petsc_mat(&files[0], &a).unwrap();
    ptap_io::write_petsc_mat(&files[1], &scaled(2.0)).unwrap();
    ptap_io::write_matrix_market(&files[2], &scaled(4.0), false).unwrap();
    let (bp, cp) = (src.join("b.petsc"), src.join("coords.mtx"));
    let mut per_np = Vec::new();
    for np in 1..=3 {
        let xs = dir.join(format!("x{np}"));
        std::fs::create_dir_all(&xs).unwrap();
        let mut args = vec!["run", "--a"];
        args.extend(files.iter().map(|f| f.to_str().unwrap()));
        args.extend(["--b", bp.to_str().unwrap(), "--coords", cp.to_str().unwrap()]);
        args.extend(["--block-size", "3", "--x-out", xs.to_str().unwrap()]);
        let run = mpirun(np, &args, &dir, "sequence");
        let steps = run.report["steps"].as_array().unwrap().clone();
        assert_eq!(steps.len(), 3);
        let mut its = Vec::new();
        for (i, (st, (name, scale))) in steps
            .iter()
            .zip([("A_1.x.petsc", 1.0), ("A_2.x.petsc", 2.0), ("A_3.x.mtx", 4.0)])
            .enumerate()
        {
            assert_eq!(st["converged"], true);
            assert_eq!(st["inspected"], i == 0, "np {np} step {}: {st}", i + 1);
            let x = ptap_io::read_vector(xs.join(name)).unwrap();
            let want: Vec<f64> = x_ref.iter().map(|v| v / scale).collect();
            let d = rel_diff(&x, &want);
            eprintln!(
                "sequence np {np} step {}: {} iterations, solution {d:.1e} from x_ref / {scale}",
                i + 1,
                st["iterations"]
            );
            assert!(d <= 1e-6, "np {np} step {}: {d:e}", i + 1);
            its.push(st["iterations"].as_u64().unwrap());
        }
        per_np.push(its);
    }
    std::fs::remove_dir_all(&dir).ok();
    for its in &per_np[1..] {
        for (m, o) in its.iter().zip(&per_np[0]) {
            assert!(m.abs_diff(*o) <= 1, "{per_np:?}");
        }
    }
}

/// `mpirun -np 2 ptap ARGS`, expected to fail on every rank with `sentence`.
fn fails_on_every_rank(args: &[&str], sentence: &str) {
    let out = Command::new("timeout")
        .args(["120", "mpirun", "--allow-run-as-root", "--oversubscribe", "-np", "2"])
        .arg(env!("CARGO_BIN_EXE_ptap"))
        .args(args)
        .env("RAYON_NUM_THREADS", "1")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(124), "mpirun hung:\n{err}");
    assert!(!out.status.success(), "{args:?} succeeded");
    for r in [0, 1] {
        assert!(
            err.contains(&format!("error (rank {r}): {sentence}")),
            "{args:?}:\n{err}"
        );
    }
}

#[test]
fn what_does_not_run_over_ranks_is_refused_in_one_sentence_on_every_rank() {
    fails_on_every_rank(&["hier", "--k", "2"], "`ptap hier` does not run over MPI ranks");
    fails_on_every_rank(
        &["solve", "--k", "2", "--device", "auto"],
        "under mpirun --device is cpu (CPU ranks) or cuda (one rank per GPU)",
    );
    fails_on_every_rank(
        &["run", "--a", "/nonexistent/A.petsc", "--length", "2"],
        "--length stretches the beam; drop it with --a",
    );
    fails_on_every_rank(
        &["run", "--k", "2", "--aggregation", "petsc"],
        "under mpirun the aggregates are the single-process greedy MIS in natural order",
    );
    fails_on_every_rank(
        &["run", "--k", "2", "--smoother-precision", "f32"],
        "CPU ranks' smoothers apply the f64 values",
    );
    fails_on_every_rank(
        &["solve", "--k", "2", "--dim", "2"],
        "under mpirun the beam is the 3D one",
    );
    // A missing file: the rank that cannot read it, and the others, stop together.
    fails_on_every_rank(&["solve", "--a", "/nonexistent/A.petsc"], "");
    fails_on_every_rank(
        &["run", "--k", "2", "--steps", "2", "--solver", "jacobi"],
        "point-block Jacobi CG (--solver jacobi) solves one step",
    );
}

/// `mpirun -np NP ptap ARGS --quiet --json` with `PTAP_KEY_FILE=key`:
/// the report and stderr.
fn mpirun_keyed(np: usize, args: &[&str], json: &Path, key: &Path) -> (serde_json::Value, String) {
    let out = Command::new("timeout")
        .args([
            "300",
            "mpirun",
            "--allow-run-as-root",
            "--oversubscribe",
            "-np",
            &np.to_string(),
        ])
        .arg(env!("CARGO_BIN_EXE_ptap"))
        .args(args)
        .args(["--quiet", "--json"])
        .arg(json)
        .env("RAYON_NUM_THREADS", "1")
        .env("PTAP_KEY_FILE", key)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(out.status.success(), "mpirun -np {np} {args:?} failed:\n{err}");
    (
        serde_json::from_str(&std::fs::read_to_string(json).unwrap()).unwrap(),
        err,
    )
}

#[test]
fn per_rank_schedule_cache_entries_reload_bit_for_bit_and_refuse_what_is_not_theirs() {
    let dir = scratch("cache");
    let (cache, key, json) = (dir.join("cache"), dir.join("schedule.key"), dir.join("r.json"));
    let c = cache.to_str().unwrap();
    let args = ["run", "--k", "2", "--steps", "2", "--schedule-cache", c];
    // Each step's iterations and tip, as their bits.
    let steps = |r: &serde_json::Value| -> Vec<(u64, u64)> {
        r["steps"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| {
                (
                    s["iterations"].as_u64().unwrap(),
                    s["tip_displacement"].as_f64().unwrap().to_bits(),
                )
            })
            .collect()
    };
    let status = |r: &serde_json::Value| r["schedule_cache"]["status"].as_str().unwrap().to_string();
    let (first, _) = mpirun_keyed(2, &args, &json, &key);
    assert_eq!(status(&first), "written");
    let (again, _) = mpirun_keyed(2, &args, &json, &key);
    assert_eq!(status(&again), "loaded");
    assert_eq!(steps(&again), steps(&first), "a loaded hierarchy solves to other bits");
    // The levels as decided (timings aside).
    let decided = |r: &serde_json::Value| -> Vec<serde_json::Value> {
        let mut levels = r["levels"].as_array().unwrap().clone();
        for l in levels.iter_mut() {
            let o = l.as_object_mut().unwrap();
            o.remove("setup_s");
            o.remove("balance");
        }
        levels
    };
    assert_eq!(decided(&again), decided(&first));
    eprintln!("cache np 2: steps {:?} written, then loaded", steps(&first));

    // Another rank count: named, rebuilt for it, its own entries written.
    let (three, err) = mpirun_keyed(3, &args, &json, &key);
    assert_eq!(status(&three), "written");
    assert!(
        err.contains("entries for this problem exist for [2] ranks, not 3"),
        "{err}"
    );
    assert_eq!(status(&mpirun_keyed(3, &args, &json, &key).0), "loaded");

    let entry = |rank: usize| {
        let mut found: Vec<PathBuf> = std::fs::read_dir(&cache)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.to_string_lossy().ends_with(&format!("-np2-r{rank}.ptapsched")))
            .collect();
        assert_eq!(found.len(), 1);
        found.pop().unwrap()
    };
    let (r0, r1) = (entry(0), entry(1));
    // Each damage: the rank's sentence, a rebuild, the first run's bits.
    let damaged = |what: &str, damage: &dyn Fn(), sentence: &str| {
        damage();
        let (r, err) = mpirun_keyed(2, &args, &json, &key);
        eprintln!("cache, {what}: {}", err.trim());
        assert_eq!(status(&r), "rebuilt", "{what}");
        assert!(err.contains(sentence), "{what}: {err}");
        // The cache's own words: what is wrong and that the run rebuilds it.
        assert!(
            err.contains("; refused, so this run rebuilds the entry") && !err.contains("ptap inspect"),
            "{what}: {err}"
        );
        assert_eq!(steps(&r), steps(&first), "{what}");
        assert_eq!(status(&mpirun_keyed(2, &args, &json, &key).0), "loaded", "{what}");
    };
    damaged(
        "a flipped byte",
        &|| {
            let mut b = std::fs::read(&r1).unwrap();
            let n = b.len() / 2;
            b[n] ^= 0x40;
            std::fs::write(&r1, b).unwrap();
        },
        "schedule cache (rank 1): schedule cache entry",
    );
    damaged(
        "a truncated file",
        &|| {
            let b = std::fs::read(&r0).unwrap();
            std::fs::write(&r0, &b[..b.len() / 3]).unwrap();
        },
        "is truncated",
    );
    damaged(
        "rank 0's entry as rank 1's",
        &|| {
            std::fs::copy(&r0, &r1).unwrap();
        },
        "schedule cache (rank 1): schedule cache entry",
    );
    assert!(
        std::fs::read_to_string(dir.join("r.json")).is_ok(),
        "the report is written"
    );
    // Another problem's entry under this problem's name.
    let other_dir = dir.join("other");
    let oc = other_dir.to_str().unwrap();
    mpirun_keyed(
        2,
        &["run", "--k", "2", "--steps", "1", "--pf", "0", "--schedule-cache", oc],
        &json,
        &key,
    );
    let other: Vec<PathBuf> = std::fs::read_dir(&other_dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with("-np2-r0.ptapsched"))
        .collect();
    damaged(
        "another problem's entry",
        &|| {
            std::fs::copy(&other[0], &r0).unwrap();
        },
        "is not this problem's entry for rank 0 of 2",
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// GPUs usable by `mpirun` children here, or why none (no driver, no NCCL).
fn gpus() -> Result<usize, String> {
    ptap_cuda::libraries_present().map_err(|e| e.to_string())?;
    ptap_dist::nccl::nccl_present().map_err(|e| e.to_string())?;
    let out = Command::new("nvidia-smi")
        .arg("-L")
        .output()
        .map_err(|e| format!("nvidia-smi: {e}"))?;
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.starts_with("GPU "))
        .count())
}

#[test]
fn gpu_ranks_run_the_steps_as_the_cpu_ranks_do_with_device_assembly() {
    let n = match gpus() {
        Ok(n) if n > 0 => n,
        Ok(_) => return eprintln!("skipping: no GPU"),
        Err(why) => return eprintln!("skipping: {why}"),
    };
    let dir = scratch("gpus");
    for np in (1..=2).filter(|&np| np <= n) {
        let length = np.to_string();
        let args = ["run", "--k", "2", "--steps", "3", "--length", &length];
        let cpu = mpirun(np, &args, &dir, "gpus-cpu");
        let gpu = mpirun(np, &[&args[..], &["--device", "cuda"]].concat(), &dir, "gpus-cuda");
        let r = &gpu.report;
        assert_eq!(r["length"], np, "{r}");
        // The GPU ranks' per-level balance, measured on the devices.
        assert_balance(r, np);
        let (cs, gs) = (cpu.report["steps"].as_array().unwrap(), r["steps"].as_array().unwrap());
        assert_eq!(gs.len(), 3);
        for (c, g) in cs.iter().zip(gs) {
            let (ic, ig) = (c["iterations"].as_u64().unwrap(), g["iterations"].as_u64().unwrap());
            let (tc, tg) = (
                c["tip_displacement"].as_f64().unwrap(),
                g["tip_displacement"].as_f64().unwrap(),
            );
            assert!(ic.abs_diff(ig) <= 1, "np {np}: {ic} against {ig} iterations");
            assert!((tc - tg).abs() <= 1e-8 * tc, "np {np}: tips {tc:e} against {tg:e}");
            assert!(g["galerkin_per_level"][0]["max_s"].as_f64().unwrap() > 0.0);
        }
        let t = &r["transfers_per_hot_step_max_over_ranks"];
        for phase in ["matrix setup", "solve"] {
            assert_eq!(t[phase]["scalars_only"], true, "np {np} {phase}: {t}");
        }
        // The hot assembly uploads the slab's modulus part (8 bytes an
        // element) and nothing else; no value comes back.
        let elements = r["assembled_elements"].as_array().unwrap();
        let most = elements.iter().map(|e| e.as_f64().unwrap()).fold(0.0, f64::max);
        assert_eq!(t["assembly"]["h2d_bytes"].as_f64().unwrap(), 8.0 * most, "{t}");
        assert_eq!(t["assembly"]["d2h_bytes"].as_f64().unwrap(), 0.0, "{t}");
        assert_eq!(t["fine values upload"]["h2d_bytes"].as_f64().unwrap(), 0.0, "{t}");

        // The smoothers on the f32 copies of the distributed levels: the same
        // solve to the f64 run's tolerance, scalars only in the hot phases.
        let f32 = mpirun(
            np,
            &[&args[..], &["--device", "cuda", "--smoother-precision", "f32"]].concat(),
            &dir,
            "gpus-f32",
        );
        let f = &f32.report;
        for (g, s) in gs.iter().zip(f["steps"].as_array().unwrap()) {
            let (ig, is) = (g["iterations"].as_u64().unwrap(), s["iterations"].as_u64().unwrap());
            let (tg, ts) = (
                g["tip_displacement"].as_f64().unwrap(),
                s["tip_displacement"].as_f64().unwrap(),
            );
            assert!(is <= ig + 2, "np {np} f32: {is} against {ig} iterations");
            assert!((tg - ts).abs() <= 1e-6 * tg, "np {np} f32: tips {ts:e} against {tg:e}");
        }
        let t = &f["transfers_per_hot_step_max_over_ranks"];
        for phase in ["matrix setup", "solve"] {
            assert_eq!(t[phase]["scalars_only"], true, "np {np} f32 {phase}: {t}");
        }
    }
    // One rank per GPU: one more is refused on every rank that has none.
    let out = Command::new("timeout")
        .args([
            "120",
            "mpirun",
            "--allow-run-as-root",
            "--oversubscribe",
            "-np",
            &(n + 1).to_string(),
        ])
        .arg(env!("CARGO_BIN_EXE_ptap"))
        .args(["run", "--k", "2", "--steps", "2", "--device", "cuda", "--quiet"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(err.contains("this node runs more ranks than it has GPUs"), "{err}");
    std::fs::remove_dir_all(&dir).ok();
}
