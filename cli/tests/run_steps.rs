//! `ptap run`: time steps with a schedule cache, as a time-stepping user runs it.
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn ptap(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ptap"))
        .args(args)
        .output()
        .expect("the ptap binary runs")
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ptap-run-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs `ptap run --k 2 --steps 3` with the cache in `cache`; returns the JSON
/// report and stderr.
fn run_k2(cache: &Path, json: &Path) -> (serde_json::Value, String) {
    let out = ptap(&[
        "run",
        "--k",
        "2",
        "--steps",
        "3",
        "--schedule-cache",
        cache.to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "ptap run failed: {err}");
    let v = serde_json::from_str(&std::fs::read_to_string(json).unwrap()).unwrap();
    (v, err)
}

/// (iterations, max displacement bits) of every step.
fn trajectory(v: &serde_json::Value) -> Vec<(u64, u64)> {
    v["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["iterations"].as_u64().unwrap(),
                s["max_displacement"].as_f64().unwrap().to_bits(),
            )
        })
        .collect()
}

#[test]
fn a_warm_schedule_cache_is_loaded_and_changes_nothing() {
    // Arrange
    let dir = scratch("warm");
    let cache = dir.join("cache");
    // Act: the first run writes the cache, the second loads it.
    let (first, err1) = run_k2(&cache, &dir.join("1.json"));
    let (second, err2) = run_k2(&cache, &dir.join("2.json"));
    // Assert
    assert_eq!(first["schedule_cache"]["status"], "written", "{err1}");
    assert_eq!(second["schedule_cache"]["status"], "loaded", "{err2}");
    assert!(
        err2.contains("schedule cache: loaded"),
        "the second run says so: {err2}"
    );
    assert_eq!(first["steps"].as_array().unwrap().len(), 3);
    assert_eq!(trajectory(&first), trajectory(&second), "bitwise identical steps");
    // The modulus changes every step, so the displacements do too.
    let t = trajectory(&first);
    assert!(t[0].1 != t[1].1 && t[1].1 != t[2].1);
    for key in ["assembly_s", "mesh_setup_s", "matrix_setup_s", "solve_s"] {
        assert!(first["cold"][key].as_f64().is_some(), "cold.{key}");
        assert!(first["hot_mean"][key].as_f64().is_some(), "hot_mean.{key}");
    }
    assert_eq!(first["hot_mean"]["mesh_setup_s"], 0.0, "hot steps do no mesh setup");
    assert_eq!(first["hierarchy_reused"], true);
}

#[test]
fn a_corrupt_or_foreign_cache_entry_is_reported_and_rebuilt() {
    // Arrange: a good cache for k = 2 and a reference trajectory.
    let dir = scratch("bad");
    let cache = dir.join("cache");
    let (reference, _) = run_k2(&cache, &dir.join("ref.json"));
    let entry = PathBuf::from(reference["schedule_cache"]["path"].as_str().unwrap());
    let good = std::fs::read(&entry).unwrap();
    // Foreign entries under k = 2's name: another mesh (k = 3), other options (--pf).
    let foreign = |name: &str, args: &[&str]| {
        let d = dir.join(name);
        let mut all = vec![
            "run",
            "--steps",
            "1",
            "--quiet",
            "--schedule-cache",
            d.to_str().unwrap(),
        ];
        all.extend_from_slice(args);
        assert!(ptap(&all).status.success());
        std::fs::read(std::fs::read_dir(&d).unwrap().next().unwrap().unwrap().path()).unwrap()
    };
    let other_mesh = foreign("mesh", &["--k", "3"]);
    let other_options = foreign("options", &["--k", "2", "--pf", "0"]);
    let mut flipped = good.clone();
    let mid = flipped.len() / 2;
    flipped[mid] ^= 0x40;
    for (what, bytes, needle) in [
        ("flipped", flipped, "corrupt"),
        ("truncated", good[..good.len() / 3].to_vec(), "truncated"),
        ("another mesh", other_mesh, "different A pattern"),
        ("other options", other_options, "other AMG options"),
    ] {
        std::fs::write(&entry, &bytes).unwrap();
        // Act
        let (v, err) = run_k2(&cache, &dir.join(format!("{what}.json")));
        // Assert: reported, rebuilt, never trusted.
        assert_eq!(v["schedule_cache"]["status"], "rebuilt", "{what}: {err}");
        let reason = v["schedule_cache"]["reason"].as_str().unwrap();
        assert!(reason.contains(needle), "{what}: {reason}");
        assert!(err.contains("is unusable"), "{what}: {err}");
        assert_eq!(trajectory(&v), trajectory(&reference), "{what}");
        assert!(
            std::fs::read(&entry).unwrap() == good,
            "{what}: the rebuilt entry is the good one"
        );
    }
}

#[test]
fn bad_run_options_are_refused() {
    for (args, needle) in [
        (vec!["run", "--k", "1", "--steps", "0"], "0 is outside 1..=100000"),
        (vec!["run", "--k", "1", "--device", "gpu"], "invalid value 'gpu'"),
        (vec!["run", "--k", "0"], "--k must be a positive integer"),
    ] {
        let out = ptap(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && !err.contains("panicked"), "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
    }
}

#[test]
fn the_filter_sweep_reports_each_threshold() {
    let dir = scratch("sweep");
    let json = dir.join("sweep.json");
    let out = ptap(&[
        "sweep-filter",
        "--k",
        "2",
        "--pf",
        "0,0.03",
        "--repeat",
        "1",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let rows = v.as_array().unwrap();
    assert_eq!(rows.len(), 2);
    let its = |r: &serde_json::Value| r["iterations"].as_i64().unwrap();
    assert!(
        (its(&rows[1]) - its(&rows[0])).abs() <= 2,
        "filtering keeps the iterations close"
    );
    let blocks = |r: &serde_json::Value| r["fine_p_blocks"].as_u64().unwrap();
    assert!(blocks(&rows[1]) < blocks(&rows[0]), "filtering drops blocks of P");
    assert!(rows[1]["hot_numeric_s"].as_f64().unwrap() > 0.0);
}
