//! `ptap solve --a` and `ptap run --a`: users' own operators from files,
//! written here with the io crate's writers, checked against the beam's own
//! solve (bitwise) and against a dense direct solve.
use ptap_fem::BeamProblem;
use ptap_sparse::dense::Cholesky;
use ptap_sparse::BlockCsr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn ptap(args: &[&str]) -> Output {
    ptap_env(args, None)
}

/// Runs `ptap` with `PTAP_KEY_FILE` set to `key` (for the schedule cache).
fn ptap_env(args: &[&str], key: Option<&Path>) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_ptap"));
    cmd.args(args);
    if let Some(k) = key {
        cmd.env("PTAP_KEY_FILE", k);
    }
    cmd.output().expect("the ptap binary runs")
}

fn ok(args: &[&str]) -> Output {
    let out = ptap(args);
    assert!(
        out.status.success(),
        "{args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ptap-user-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The beam's free nodes' coordinates, row-major `nodes x dim`.
fn beam_coords(p: &BeamProblem, dim: usize) -> Vec<f64> {
    p.assembler
        .node_of_free()
        .iter()
        .flat_map(|&node| p.mesh.node_coords(node as usize)[..dim].to_vec())
        .collect()
}

/// `x = A^-1 b` by a dense Cholesky factorization (the reference).
fn dense_solve(a: &BlockCsr, b: &[f64]) -> Vec<f64> {
    let d = a.to_dense();
    let mut ch = Cholesky::with_order(d.rows);
    ch.refactor(&d.data).unwrap();
    let mut x = b.to_vec();
    ch.solve_in_place(&mut x);
    x
}

fn rel_err(x: &[f64], y: &[f64]) -> f64 {
    let num: f64 = x.iter().zip(y).map(|(a, b)| (a - b) * (a - b)).sum();
    let den: f64 = y.iter().map(|b| b * b).sum();
    (num / den).sqrt()
}

/// `||b - A x|| / ||b||`.
fn rel_residual(a: &BlockCsr, x: &[f64], b: &[f64]) -> f64 {
    let mut r = vec![0.0; b.len()];
    ptap_sparse::spmv::residual(a, x, b, &mut r);
    let n = |v: &[f64]| v.iter().map(|t| t * t).sum::<f64>().sqrt();
    n(&r) / n(b)
}

/// The 2D five-point Laplacian on an `m x m` grid, times `scale`, plus
/// `extra` symmetric couplings `(i, j, value)`: scalar CSR as 1x1 blocks.
fn poisson(m: usize, scale: f64, extra: &[(usize, usize, f64)]) -> BlockCsr {
    let n = m * m;
    let (mut i, mut j, mut v) = (vec![], vec![], vec![]);
    for r in 0..n {
        let (x, y) = (r % m, r / m);
        let mut push = |c: usize, val: f64| {
            i.push(r as u32);
            j.push(c as u32);
            v.push(scale * val);
        };
        push(r, 4.0);
        if x > 0 {
            push(r - 1, -1.0);
        }
        if x + 1 < m {
            push(r + 1, -1.0);
        }
        if y > 0 {
            push(r - m, -1.0);
        }
        if y + 1 < m {
            push(r + m, -1.0);
        }
    }
    for &(p, q, val) in extra {
        i.extend([p as u32, q as u32]);
        j.extend([q as u32, p as u32]);
        v.extend([scale * val, scale * val]);
    }
    BlockCsr::from_scalar_coo(n, n, &i, &j, &v, Some((1, 1))).unwrap()
}

/// Grid coordinates of the `m x m` Poisson nodes (row-major `n x 2`).
fn grid_coords(m: usize) -> Vec<f64> {
    (0..m * m).flat_map(|r| [(r % m) as f64, (r / m) as f64]).collect()
}

/// A varied right-hand side.
fn rhs(n: usize) -> Vec<f64> {
    (0..n).map(|k| ((k * 7919) % 101) as f64 / 101.0 - 0.3).collect()
}

/// The beam written to files, read back by `ptap solve --a`, is the beam:
/// the same iterations, residual history and, bit for bit, the same solution,
/// in both file formats.
#[test]
fn the_beam_from_files_is_the_beam_bitwise() {
    let dir = scratch("beam");
    let p = BeamProblem::build_in(3, 2).unwrap();
    ptap_io::write_matrix_market(dir.join("beam.mtx"), &p.a, false).unwrap();
    ptap_io::write_petsc_mat(dir.join("beam.petsc"), &p.a).unwrap();
    ptap_io::write_mm_vector(dir.join("rhs.mtx"), &p.rhs).unwrap();
    ptap_io::write_petsc_vec(dir.join("rhs.petsc"), &p.rhs).unwrap();
    let coords = beam_coords(&p, 3);
    ptap_io::write_mm_dense(dir.join("coords.mtx"), coords.len() / 3, 3, &coords).unwrap();

    let beam_json = dir.join("beam.json");
    ok(&["solve", "--k", "2", "--quiet", "--json", s(&beam_json)]);
    let beam = json(&beam_json);
    let reference = ptap_drivers::solve::run(
        &ptap_drivers::solve::SolveOptions::beam(2),
        &ptap_drivers::target::Target::Cpu,
        &mut |_| {},
    )
    .unwrap();
    assert_eq!(beam["iterations"], 13);

    for (a, b, x) in [("beam.mtx", "rhs.mtx", "x.mtx"), ("beam.petsc", "rhs.petsc", "x.petsc")] {
        let report = dir.join(format!("{a}.json"));
        let x_path = dir.join(x);
        let out = ok(&[
            "solve",
            "--a",
            s(&dir.join(a)),
            "--b",
            s(&dir.join(b)),
            "--coords",
            s(&dir.join("coords.mtx")),
            "--json",
            s(&report),
            "--x-out",
            s(&x_path),
        ]);
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains("rigid-body modes from the 3D coordinates"), "{text}");
        assert!(text.contains("block rows of 3x3"), "{text}");
        let r = json(&report);
        assert_eq!(r["iterations"], beam["iterations"], "{a}");
        assert_eq!(r["residual_history"], beam["residual_history"], "{a}");
        assert_eq!(r["max_abs"], beam["max_displacement"], "{a}");
        assert_eq!(r["levels"], beam["levels"], "{a}");
        assert_eq!(
            (r["scalar_rows"].as_u64(), r["block_size"].as_u64()),
            (Some(3000), Some(3))
        );
        assert_eq!(r["near_null"]["source"], "coordinates");
        assert_eq!(r["near_null"]["modes"], 6);
        assert_eq!(r["converged"], true);
        let got = ptap_io::read_vector(&x_path).unwrap();
        assert_eq!(got.len(), reference.solution.len());
        assert!(
            got.iter()
                .zip(&reference.solution)
                .all(|(u, v)| u.to_bits() == v.to_bits()),
            "{a}: the solution differs from the beam's"
        );
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// A scalar Poisson operator (block 1), in symmetric coordinate and in
/// array Matrix Market, with the default near-null space (translations, said
/// so) and with coordinates (the constant): the solution of a dense solve.
#[test]
fn a_scalar_poisson_matches_a_dense_solve() {
    let dir = scratch("poisson");
    let m = 48; // 2304 rows: two levels at the default coarse limit
    let a = poisson(m, 1.0, &[]);
    let n = a.scalar_rows();
    let b = rhs(n);
    ptap_io::write_matrix_market(dir.join("A.mtx"), &a, true).unwrap();
    ptap_io::write_petsc_vec(dir.join("b.petsc"), &b).unwrap();
    let c = grid_coords(m);
    ptap_io::write_mm_dense(dir.join("coords.mtx"), n, 2, &c).unwrap();
    let want = dense_solve(&a, &b);

    let (r1, x1) = (dir.join("r1.json"), dir.join("x1.mtx"));
    let out = ok(&[
        "solve",
        "--a",
        s(&dir.join("A.mtx")),
        "--b",
        s(&dir.join("b.petsc")),
        "--json",
        s(&r1),
        "--x-out",
        s(&x1),
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("translations (the default, as neither"), "{text}");
    let v = json(&r1);
    assert_eq!(v["near_null"]["source"], "translations");
    assert_eq!(v["near_null"]["default"], true);
    assert_eq!(
        (v["block_size"].as_u64(), v["near_null"]["modes"].as_u64()),
        (Some(1), Some(1))
    );
    assert!(v["levels"].as_array().unwrap().len() >= 2, "{v}");
    let x = ptap_io::read_vector(&x1).unwrap();
    let err = rel_err(&x, &want);
    assert!(err < 1e-6, "{err}");

    // Coordinates of a scalar operator give the constant: the same solve.
    let r2 = dir.join("r2.json");
    ok(&[
        "solve",
        "--a",
        s(&dir.join("A.mtx")),
        "--b",
        s(&dir.join("b.petsc")),
        "--coords",
        s(&dir.join("coords.mtx")),
        "--quiet",
        "--json",
        s(&r2),
    ]);
    let w = json(&r2);
    assert_eq!(w["near_null"]["source"], "coordinates");
    assert_eq!(w["block_size_source"], "coordinates");
    assert_eq!(w["iterations"], v["iterations"]);
    assert_eq!(w["residual_history"], v["residual_history"]);

    // A small one as a dense Matrix Market array (zeros dropped), default b = A * ones: x = ones.
    let small = poisson(12, 1.0, &[]);
    let d = small.to_dense();
    ptap_io::write_mm_dense(dir.join("dense.mtx"), d.rows, d.cols, &d.data).unwrap();
    let x3 = dir.join("x3.mtx");
    ok(&[
        "solve",
        "--a",
        s(&dir.join("dense.mtx")),
        "--modes",
        "translations",
        "--block-size",
        "1",
        "--quiet",
        "--x-out",
        s(&x3),
    ]);
    let x = ptap_io::read_vector(&x3).unwrap();
    assert!(rel_err(&x, &vec![1.0; 144]) < 1e-7);
    std::fs::remove_dir_all(&dir).ok();
}

/// The plane-strain beam (2x2 blocks) from PETSc binary with its coordinates
/// as a PETSc Vec (`-vecload_block_size 2`): rigid-body modes in 2D (3), and
/// the solution of a dense solve; the solution written as PETSc binary.
#[test]
fn a_2d_elasticity_operator_matches_a_dense_solve() {
    let dir = scratch("beam2d");
    let p = BeamProblem::build_in(2, 3).unwrap();
    ptap_io::write_petsc_mat(dir.join("A.petsc"), &p.a).unwrap();
    ptap_io::write_mm_vector(dir.join("b.mtx"), &p.rhs).unwrap();
    let coords = beam_coords(&p, 2);
    ptap_io::write_petsc_vec(dir.join("coords.petsc"), &coords).unwrap();
    std::fs::write(dir.join("coords.petsc.info"), "-vecload_block_size 2\n").unwrap();
    let (r, x) = (dir.join("r.json"), dir.join("x.petsc"));
    ok(&[
        "solve",
        "--a",
        s(&dir.join("A.petsc")),
        "--b",
        s(&dir.join("b.mtx")),
        "--coords",
        s(&dir.join("coords.petsc")),
        "--coarse-eq-limit",
        "100",
        "--quiet",
        "--json",
        s(&r),
        "--x-out",
        s(&x),
    ]);
    let v = json(&r);
    assert_eq!(
        (v["block_size"].as_u64(), v["near_null"]["modes"].as_u64()),
        (Some(2), Some(3))
    );
    assert_eq!(v["format"], "PETSc binary");
    assert!(v["levels"].as_array().unwrap().len() >= 2, "{v}");
    assert_eq!(v["levels"][1]["block_size"], 3);
    let got = ptap_io::read_vector(&x).unwrap();
    let err = rel_err(&got, &dense_solve(&p.a, &p.rhs));
    assert!(err < 1e-6, "{err}");
    std::fs::remove_dir_all(&dir).ok();
}

/// A CG that does not converge is an error of one sentence saying what to
/// try, with the JSON report written (converged: false) and no solution.
#[test]
fn no_convergence_is_one_sentence_and_no_solution() {
    let dir = scratch("noconv");
    ptap_io::write_matrix_market(dir.join("A.mtx"), &poisson(50, 1.0, &[]), false).unwrap();
    let (r, x) = (dir.join("r.json"), dir.join("x.mtx"));
    let out = ptap(&[
        "solve",
        "--a",
        s(&dir.join("A.mtx")),
        "--max-iterations",
        "2",
        "--quiet",
        "--json",
        s(&r),
        "--x-out",
        s(&x),
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.starts_with("error: CG did not reach rtol"), "{err}");
    assert!(err.contains("raise --max-iterations"), "{err}");
    assert_eq!(json(&r)["converged"], false);
    assert!(!x.exists());
    std::fs::remove_dir_all(&dir).ok();
}

/// A block size without device kernels (4x4) on the GPU: `auto` says which
/// `kernels!` line to add and solves on the CPU.
#[test]
fn a_block_size_without_device_kernels_names_the_kernels_line() {
    let dir = scratch("block4");
    // Four decoupled copies of a 1D Laplacian, interleaved: 4x4 blocks.
    let (nodes, b) = (60, 4);
    let (mut i, mut j, mut v) = (vec![], vec![], vec![]);
    for node in 0..nodes {
        for c in 0..b {
            let r = (node * b + c) as u32;
            i.push(r);
            j.push(r);
            v.push(2.5);
            if node + 1 < nodes {
                let t = r + b as u32;
                i.extend([r, t]);
                j.extend([t, r]);
                v.extend([-1.0, -1.0]);
            }
        }
    }
    let a = BlockCsr::from_scalar_coo(nodes * b, nodes * b, &i, &j, &v, Some((b, b))).unwrap();
    ptap_io::write_matrix_market(dir.join("A.mtx"), &a, false).unwrap();
    let out = ok(&["solve", "--a", s(&dir.join("A.mtx")), "--device", "auto", "--quiet"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("add `kernels!(pub mod blocks_4x4 { 4x4 / 4x4 / 4x4 });` to kernels-generated/src/lib.rs"),
        "{err}"
    );
    assert!(err.contains("solving on the CPU"), "{err}");
    // `cuda` refuses it in one sentence: the kernels line where a GPU is, no GPU where none is.
    let out = ptap(&["solve", "--a", s(&dir.join("A.mtx")), "--device", "cuda", "--quiet"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(err.starts_with("error:") && err.trim().lines().count() == 1, "{err}");
    assert!(err.contains("kernels!(pub mod blocks_4x4"), "{err}");
    std::fs::remove_dir_all(&dir).ok();
}

/// `ptap run --a 'dir/A_*.mtx'`: three operators of one pattern (values
/// scaled) are inspected once and refreshed; a fourth of another pattern is
/// reported and inspected anew; every step's solution solves its system; a
/// second run loads both hierarchies from the schedule cache and gives the
/// same solutions bit for bit.
#[test]
fn a_sequence_of_operators_refreshes_and_reinspects_and_caches() {
    let dir = scratch("seq");
    let ops = dir.join("ops");
    std::fs::create_dir_all(&ops).unwrap();
    let m = 46; // 2116 rows: two levels at the default coarse limit
    let scales = [1.0, 2.0, 0.25];
    let mut mats: Vec<BlockCsr> = scales.iter().map(|&sc| poisson(m, sc, &[])).collect();
    // Another pattern: two more couplings.
    mats.push(poisson(m, 1.0, &[(0, m + 1, -0.5), (5, 3 * m, -0.25)]));
    for (k, a) in mats.iter().enumerate() {
        ptap_io::write_matrix_market(ops.join(format!("A_{}.mtx", k + 1)), a, false).unwrap();
    }
    let n = m * m;
    let b = rhs(n);
    ptap_io::write_mm_vector(dir.join("b.mtx"), &b).unwrap();
    let key = dir.join("schedule.key");
    let cache = dir.join("cache");
    let glob = format!("{}/A_*.mtx", ops.display());
    let run = |tag: &str| {
        let (report, xdir) = (dir.join(format!("{tag}.json")), dir.join(format!("x-{tag}")));
        std::fs::create_dir_all(&xdir).unwrap();
        let out = ptap_env(
            &[
                "run",
                "--a",
                &glob,
                "--b",
                s(&dir.join("b.mtx")),
                "--schedule-cache",
                s(&cache),
                "--x-out",
                s(&xdir),
                "--json",
                s(&report),
            ],
            Some(&key),
        );
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(out.status.success(), "{err}");
        (
            json(&report),
            xdir,
            err,
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };
    let (v, xdir, err, stdout) = run("first");
    let steps = v["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 4);
    assert_eq!(v["inspections"], 2);
    let inspected: Vec<bool> = steps.iter().map(|s| s["inspected"].as_bool().unwrap()).collect();
    assert_eq!(inspected, [true, false, false, true]);
    assert!(steps[1]["pattern_change"].is_null());
    let change = steps[3]["pattern_change"].as_str().unwrap();
    assert!(change.contains("stored blocks"), "{change}");
    let a4 = ops.join("A_4.mtx");
    assert!(
        err.contains(&format!("{}: its block pattern differs from", a4.display())),
        "{err}"
    );
    assert!(stdout.contains("(new pattern: inspected)"), "{stdout}");
    for s in &steps[1..3] {
        assert_eq!(s["phases"]["mesh_setup_s"], 0.0);
    }
    assert_eq!(v["schedule_cache"]["status"], "written");
    assert_eq!(steps[3]["schedule_cache"]["status"], "written");

    // Every step's solution solves its own system; the scaled ones are the first scaled back.
    let xs: Vec<Vec<f64>> = (1..=4)
        .map(|k| ptap_io::read_vector(xdir.join(format!("A_{k}.x.mtx"))).unwrap())
        .collect();
    for (k, (a, x)) in mats.iter().zip(&xs).enumerate() {
        let r = rel_residual(a, x, &b);
        assert!(r <= 1.01e-8, "step {}: residual {r}", k + 1);
    }
    assert!(rel_err(&xs[0], &dense_solve(&mats[0], &b)) < 1e-6);
    for (k, &sc) in scales.iter().enumerate().skip(1) {
        let want: Vec<f64> = xs[0].iter().map(|x| x / sc).collect();
        assert!(rel_err(&xs[k], &want) < 1e-7, "step {}", k + 1);
    }

    // The second run loads both hierarchies: no mesh setup, the same bits.
    let (w, xdir2, err2, _) = run("second");
    assert_eq!(w["schedule_cache"]["status"], "loaded", "{err2}");
    assert_eq!(w["steps"][3]["schedule_cache"]["status"], "loaded", "{err2}");
    assert!(err2.contains("schedule cache: loaded"), "{err2}");
    for k in 1..=4 {
        let name = format!("A_{k}.x.mtx");
        assert_eq!(
            std::fs::read(xdir.join(&name)).unwrap(),
            std::fs::read(xdir2.join(&name)).unwrap(),
            "{name}"
        );
    }
    let its = |v: &serde_json::Value| -> Vec<u64> {
        v["steps"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["iterations"].as_u64().unwrap())
            .collect()
    };
    assert_eq!(its(&v), its(&w));
    std::fs::remove_dir_all(&dir).ok();
}

/// Every operator of `tests/data/operators/` (PyAMG's gallery and
/// scikit-fem: block sizes 1, 2 and 3, Dirichlet rows eliminated or kept as
/// identity rows), in both formats, with rigid-body modes from its
/// coordinates and a coarse limit low enough for AMG levels: CG to rtol 1e-8
/// and SciPy's direct solution `x_ref` to 1e-6; both formats bitwise alike.
#[test]
fn the_external_test_operators_match_their_reference_solutions() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/data/operators");
    // (folder, scalar rows, block size, near-null modes, levels, iterations)
    let table: [(&str, u64, u64, u64, usize, u64); 6] = [
        ("pyamg_elasticity2d", 512, 2, 3, 3, 9),
        ("pyamg_poisson2d", 2401, 1, 1, 4, 10),
        ("skfem_tet3d_eliminated", 336, 3, 6, 2, 15),
        ("skfem_tet3d_identity", 384, 3, 6, 2, 15),
        // 12 nodes: one level, the coarse direct solve. Its Matrix Market
        // pattern alone reads as 1x1; the coordinates give 3x3.
        ("skfem_tet3d_tiny", 36, 3, 6, 1, 1),
        ("skfem_tri2d_eliminated", 224, 2, 3, 2, 14),
    ];
    let found = std::fs::read_dir(&root)
        .unwrap()
        .filter(|e| e.as_ref().unwrap().path().join("A.mtx").exists())
        .count();
    assert_eq!(found, table.len(), "a folder of {} is not in the table", root.display());
    let tmp = scratch("external");
    for (name, rows, block, modes, levels, iterations) in table {
        let d = root.join(name);
        let x_ref = ptap_io::read_vector(d.join("x_ref.mtx")).unwrap();
        let mut reports = vec![];
        for (a, b) in [("A.mtx", "b.mtx"), ("A.petsc", "b.petsc")] {
            let (r, x) = (
                tmp.join(format!("{name}-{a}.json")),
                tmp.join(format!("{name}-{a}.x.mtx")),
            );
            ok(&[
                "solve",
                "--a",
                s(&d.join(a)),
                "--b",
                s(&d.join(b)),
                "--coords",
                s(&d.join("coords.mtx")),
                "--rtol",
                "1e-8",
                "--coarse-eq-limit",
                "100",
                "--quiet",
                "--json",
                s(&r),
                "--x-out",
                s(&x),
            ]);
            let v = json(&r);
            let got = (
                v["scalar_rows"].as_u64().unwrap(),
                v["block_size"].as_u64().unwrap(),
                v["near_null"]["modes"].as_u64().unwrap(),
                v["levels"].as_array().unwrap().len(),
                v["iterations"].as_u64().unwrap(),
            );
            assert_eq!(got, (rows, block, modes, levels, iterations), "{name}/{a}");
            assert!(v["relative_residual"].as_f64().unwrap() <= 1e-8, "{name}/{a}");
            let err = rel_err(&ptap_io::read_vector(&x).unwrap(), &x_ref);
            assert!(err < 1e-6, "{name}/{a}: {err:e} from x_ref");
            reports.push(v);
        }
        assert_eq!(
            reports[0]["residual_history"], reports[1]["residual_history"],
            "{name}: the two formats hold the same operator"
        );
    }
    // PyAMG's own near-null space B for its elasticity operator: the same
    // modes (e_x, e_y and the rotation) as from the coordinates.
    let d = root.join("pyamg_elasticity2d");
    let (r, x) = (tmp.join("b.json"), tmp.join("b.x.mtx"));
    ok(&[
        "solve",
        "--a",
        s(&d.join("A.petsc")),
        "--b",
        s(&d.join("b.petsc")),
        "--near-null",
        s(&d.join("near_null.mtx")),
        "--coarse-eq-limit",
        "100",
        "--quiet",
        "--json",
        s(&r),
        "--x-out",
        s(&x),
    ]);
    let v = json(&r);
    assert_eq!(
        (v["near_null"]["source"].as_str(), v["iterations"].as_u64()),
        (Some("file"), Some(9))
    );
    let x_ref = ptap_io::read_vector(d.join("x_ref.mtx")).unwrap();
    assert!(rel_err(&ptap_io::read_vector(&x).unwrap(), &x_ref) < 1e-6);
    std::fs::remove_dir_all(&tmp).ok();
}
