//! `ptap inspect` / `ptap replay` across processes: the same `A_c` bytes as the
//! in-process product, and clear refusals of damaged or foreign schedule files.
use ptap_fem::BeamProblem;
use ptap_runtime::{Hierarchy, HierarchyOptions, TwoPassExecutor};
use ptap_schedules::TwoPassSchedule;
use ptap_sparse::BlockCsr;
use ptap_tests::{random_block_csr, Rng};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Arc;

fn ptap(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ptap"))
        .args(args)
        .output()
        .expect("the ptap binary runs")
}

fn ok(args: &[&str]) -> String {
    let out = ptap(args);
    assert!(
        out.status.success(),
        "{args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Non-zero exit, one `error:` line naming `needle`, no panic.
fn refused(args: &[&str], needle: &str) {
    let out = ptap(args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{args:?} must fail");
    assert!(!err.contains("panicked"), "{args:?} panicked: {err}");
    assert!(err.trim_start().starts_with("error:"), "{args:?}: {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: one line expected: {err}");
    assert!(err.contains(needle), "{args:?}: expected {needle:?} in {err}");
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ptap-sched-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn beam_schedule_replayed_in_another_process_gives_the_in_process_bytes() {
    // Arrange: the in-process hierarchy (V0) and its first coarse operator.
    let dir = scratch("beam");
    let problem = BeamProblem::build(2).unwrap();
    let h = Hierarchy::build(
        problem.a,
        &problem.near_null,
        6,
        &HierarchyOptions::default(),
        &mut |_| {},
    )
    .unwrap();
    assert_eq!(h.num_levels(), 2, "k = 2 has one product");
    let expected = dir.join("expected.petsc");
    ptap_io::write_petsc_mat(&expected, &h.levels()[1].a).unwrap();
    let expected = std::fs::read(&expected).unwrap();
    // V0, and the V0-order variants that promise V0's bytes.
    for variant in ["two-pass", "slot-tiled", "flat-stream", "column-split", "panel-tiled"] {
        let sched = dir.join(format!("{variant}.ptaps"));
        let got = dir.join(format!("{variant}.petsc"));
        // Act: inspect in one process, replay in another.
        ok(&[
            "inspect",
            "--beam",
            "2",
            "--variant",
            variant,
            "--out",
            s(&sched),
            "--quiet",
        ]);
        let json = dir.join(format!("{variant}.json"));
        ok(&[
            "replay",
            "--schedule",
            s(&sched),
            "--beam",
            "2",
            "--repeat",
            "2",
            "--out",
            s(&got),
            "--json",
            s(&json),
            "--quiet",
        ]);
        // Assert: byte-identical A_c, and the report names the variant.
        assert!(std::fs::read(&got).unwrap() == expected, "{variant}: A_c bytes differ");
        let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        assert_eq!(v["levels"][0]["variant"], variant);
        assert_eq!(v["levels"][0]["coarse_block_rows"], h.levels()[1].a.nrows());
        assert!(v["levels"][0]["numeric_best_s"].as_f64().unwrap() > 0.0);
    }
}

#[test]
fn file_operands_round_trip_through_a_schedule() {
    // Arrange: random A (3x3 blocks) and P (3x6) in Matrix Market files.
    let dir = scratch("files");
    let mut rng = Rng::new(7);
    let a = random_block_csr(&mut rng, 40, 40, 3, 3, 0.15, true);
    let p = random_block_csr(&mut rng, 40, 9, 3, 6, 0.2, false);
    let (af, pf) = (dir.join("a.mtx"), dir.join("p.mtx"));
    ptap_io::write_matrix_market(&af, &a, false).unwrap();
    ptap_io::write_matrix_market(&pf, &p, false).unwrap();
    // The reference: V0 in process on what the files hold.
    let a = ptap_io::read_matrix(&af, ptap_io::BlockSpec::Infer).unwrap();
    let p = ptap_io::read_matrix(&pf, ptap_io::BlockSpec::Infer).unwrap();
    assert_eq!(p.block_shape(), (3, 6));
    let sched = Arc::new(TwoPassSchedule::inspect(a.pattern_arc().clone(), p.pattern_arc().clone()).unwrap());
    let mut ac = BlockCsr::zeros(sched.c.clone(), 6, 6);
    TwoPassExecutor::new(sched, 3, 6).numeric(&a, &p, &mut ac).unwrap();
    let expected = dir.join("expected.mtx");
    ptap_io::write_matrix_market(&expected, &ac, false).unwrap();
    for variant in ["V0", "V3", "column-split", "V2b"] {
        let (sf, got) = (dir.join(format!("{variant}.ptaps")), dir.join(format!("{variant}.mtx")));
        // Act
        ok(&[
            "inspect",
            "--a",
            s(&af),
            "--p",
            s(&pf),
            "--variant",
            variant,
            "--out",
            s(&sf),
            "--quiet",
        ]);
        ok(&[
            "replay",
            "--schedule",
            s(&sf),
            "--a",
            s(&af),
            "--p",
            s(&pf),
            "--out",
            s(&got),
            "--quiet",
        ]);
        // Assert
        assert!(
            std::fs::read(&got).unwrap() == std::fs::read(&expected).unwrap(),
            "{variant}: A_c differs from the in-process V0 product"
        );
    }
}

#[test]
fn damaged_or_foreign_schedule_files_are_refused_clearly() {
    // Arrange: a valid schedule for the beam at k = 1... and k = 2.
    let dir = scratch("bad");
    let good = dir.join("k2.ptaps");
    ok(&["inspect", "--beam", "2", "--out", s(&good), "--quiet"]);
    let bytes = std::fs::read(&good).unwrap();
    let write = |name: &str, b: &[u8]| {
        let p = dir.join(name);
        std::fs::write(&p, b).unwrap();
        p
    };
    let truncated = write("truncated.ptaps", &bytes[..bytes.len() / 2]);
    let mut flipped = bytes.clone();
    let mid = flipped.len() * 3 / 4;
    flipped[mid] ^= 0x10;
    let flipped = write("flipped.ptaps", &flipped);
    let mut version = bytes.clone();
    version[8..12].copy_from_slice(&99u32.to_le_bytes());
    let version = write("version.ptaps", &version);
    let not_schedule = write("garbage.ptaps", b"this is not a schedule file at all, just text\n");
    // Act + Assert: each case one clear sentence and a non-zero exit.
    let replay = |p: &Path, k: &str, needle: &str| refused(&["replay", "--schedule", s(p), "--beam", k], needle);
    replay(&truncated, "2", "is truncated");
    replay(&flipped, "2", "is corrupt");
    replay(&version, "2", "format version 99");
    replay(&not_schedule, "2", "is not a ptap schedule file");
    replay(&dir.join("missing.ptaps"), "2", "cannot read schedule file");
    replay(&good, "1", "was built for a different A pattern");
    refused(
        &["replay", "--schedule", s(&good), "--beam", "2", "--repeat", "0"],
        "0 is outside 1..=1000",
    );
    refused(
        &["inspect", "--beam", "1", "--out", s(&dir.join("k1.ptaps"))],
        "no Galerkin product to inspect",
    );
}
