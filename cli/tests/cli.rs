//! The `ptap` binary as a user meets it: exit codes, messages, the JSON report.
use std::process::{Command, Output};

fn ptap(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ptap"))
        .args(args)
        .output()
        .expect("the ptap binary runs")
}

/// A refusal: non-zero exit, one line on stderr starting with `error:`, no panic.
fn assert_clear_refusal(args: &[&str], needle: &str) {
    let out = ptap(args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{args:?} must fail");
    assert!(!err.contains("panicked"), "{args:?} panicked: {err}");
    assert!(err.trim_start().starts_with("error:"), "{args:?}: {err}");
    assert!(err.contains(needle), "{args:?}: expected {needle:?} in {err}");
}

#[test]
fn zero_negative_and_absurd_k_are_refused_clearly() {
    assert_clear_refusal(&["solve", "--k", "0"], "--k must be a positive integer");
    assert_clear_refusal(&["solve", "--k", "-3"], "--k must be a positive integer");
    assert_clear_refusal(&["solve", "--k", "100000"], "far beyond");
    assert_clear_refusal(&["solve", "--k", "150"], "GiB of memory");
    assert_clear_refusal(&["solve", "--k", "two"], "invalid value 'two'");
}

#[test]
fn unknown_option_and_bad_tolerance_are_refused() {
    assert_clear_refusal(&["solve", "--frobnicate"], "unexpected argument '--frobnicate'");
    assert_clear_refusal(&["solve", "--k", "1", "--rtol", "2"], "outside [1e-15, 1)");
    assert_clear_refusal(
        &["solve", "--k", "1", "--json", "/nonexistent-dir/x.json"],
        "cannot write the JSON report",
    );
}

#[test]
fn help_explains_the_solve() {
    let out = ptap(&["solve", "--help"]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("cantilever beam") && text.contains("--json"), "{text}");
}

#[test]
fn solve_k1_writes_the_json_report_with_the_promised_keys() {
    let dir = std::env::temp_dir().join(format!("ptap-cli-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("k1.json");
    let x = dir.join("k1.x.petsc");
    let out = ptap(&[
        "solve",
        "--k",
        "1",
        "--quiet",
        "--json",
        path.to_str().unwrap(),
        "--x-out",
        x.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(v["dofs"], 540);
    // --x-out writes the beam's solution too: its largest entry is the tip.
    let u = ptap_io::read_petsc_vec(&x).unwrap();
    assert_eq!(u.len(), 540);
    assert_eq!(
        u.iter().fold(0.0f64, |m, v| m.max(v.abs())),
        v["max_displacement"].as_f64().unwrap()
    );
    assert_eq!(v["converged"], true);
    assert!(v["iterations"].as_u64().unwrap() >= 1);
    let tip = v["max_displacement"].as_f64().unwrap();
    assert!((tip - 12.625).abs() < 1e-3, "k = 1 tip displacement {tip}");
    let levels = v["levels"].as_array().unwrap();
    assert_eq!(levels[0]["block_rows"], 180);
    assert_eq!(levels[0]["blocks"], 6156);
    assert_eq!(levels[0]["block_size"], 3);
    for key in ["assembly_s", "mesh_setup_s", "matrix_setup_s", "solve_s"] {
        assert!(v["phases"][key].as_f64().unwrap() >= 0.0, "{key}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn model_reports_every_variant_and_a_choice_per_level() {
    let dir = std::env::temp_dir().join(format!("ptap-cli-model-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("model.json");
    let out = ptap(&[
        "model",
        "--beam",
        "2",
        "--machine",
        "a100",
        "--json",
        path.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("V0 stream (floor)") && text.contains("predicted best"),
        "{text}"
    );
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let levels = v["levels"].as_array().unwrap();
    assert_eq!(levels.len(), 1, "k = 2 has one product");
    assert_eq!(
        levels[0]["predictions"].as_array().unwrap().len(),
        ptap_schedules::Variant::ALL.len()
    );
    // V1's predicted time exceeds V0's at the beam's n_P (well above the crossover).
    let t = |name: &str| {
        levels[0]["predictions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["variant"] == name)
            .unwrap()["time_s"]
            .as_f64()
            .unwrap()
    };
    assert!(t("FusedRowWise") > 2.0 * t("TwoPass"));
    assert_clear_refusal(&["model", "--beam", "2", "--machine", "cray1"], "--machine cray1");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn bench_runs_selected_variants_and_reports_against_v0() {
    let out = ptap(&["bench", "--k", "1", "--repeat", "1", "--variants", "v0,v3,v2b"]);
    // k = 1 has a single level: no product to time, but the run must succeed.
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_clear_refusal(&["bench", "--k", "1", "--variants", "v9"], "unknown variant 'v9'");
}

#[test]
fn progress_is_plain_lines_when_piped_and_nothing_with_quiet() {
    // stderr is a pipe here: no bar is drawn; the bench prints its phases as
    // plain lines, as it always has.
    let out = ptap(&["bench", "--k", "1", "--repeat", "1", "--variants", "v0"]);
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.lines().any(|l| l == "building the beam hierarchy at k = 1 ..."),
        "{err}"
    );
    assert!(!err.contains('\u{1b}'), "no terminal escapes on a pipe: {err:?}");
    // --quiet: nothing on either stream, whatever the command.
    for args in [
        &["bench", "--k", "1", "--repeat", "1", "--variants", "v0", "--quiet"][..],
        &["solve", "--k", "1", "--quiet"],
        &["run", "--k", "1", "--steps", "2", "--quiet"],
        &["sweep-filter", "--k", "1", "--pf", "0", "--repeat", "1", "--quiet"],
    ] {
        let out = ptap(args);
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            out.stdout.is_empty() && out.stderr.is_empty(),
            "{args:?}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// Runs `ptap solve ARGS --quiet --json PATH` and returns the parsed report.
fn solve_report(tag: &str, args: &[&str]) -> serde_json::Value {
    let dir = std::env::temp_dir().join(format!("ptap-cli-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("report.json");
    let mut all = vec!["solve", "--quiet", "--json", path.to_str().unwrap()];
    all.extend_from_slice(args);
    let out = ptap(&all);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    std::fs::remove_dir_all(&dir).ok();
    v
}

#[test]
fn solve_dim2_k2_converges_through_2x3_and_3x3_blocks() {
    // Arrange: a coarse limit below the 400 dofs so level 0 is coarsened.
    let args = ["--dim", "2", "--k", "2", "--coarse-eq-limit", "50"];
    // Act
    let v = solve_report("dim2", &args);
    // Assert
    assert_eq!(v["dim"], 2);
    assert_eq!(v["dofs"], 400, "2 * 20k (2k+1) at k = 2");
    assert_eq!(v["elements"], 40);
    assert_eq!(v["converged"], true);
    assert!(v["iterations"].as_u64().unwrap() <= 30);
    let tip = v["max_displacement"].as_f64().unwrap();
    assert!((tip - 46.9646).abs() < 1e-3, "2D k = 2 tip displacement {tip}");
    let levels = v["levels"].as_array().unwrap();
    assert_eq!(levels.len(), 2);
    assert_eq!(levels[0]["block_size"], 2);
    assert_eq!(levels[0]["blocks"], 2652, "(80k - 4)(8k + 1) at k = 2");
    assert_eq!(levels[1]["block_size"], 3);
    assert_clear_refusal(&["solve", "--dim", "4"], "invalid value '4' for '--dim <DIM>'");
}

#[test]
fn filtered_solve_at_k4_stays_within_two_iterations_of_unfiltered_with_fewer_p_blocks() {
    // Arrange / Act
    let plain = solve_report("pf0", &["--k", "4", "--pf", "0"]);
    let filtered = solve_report("pf3", &["--k", "4"]);
    // Assert
    let its = |v: &serde_json::Value| v["iterations"].as_i64().unwrap();
    let z_p = |v: &serde_json::Value| v["levels"][0]["product"]["z_p"].as_u64().unwrap();
    assert_eq!(filtered["converged"], true);
    assert!(
        (its(&filtered) - its(&plain)).abs() <= 2,
        "{} vs {}",
        its(&filtered),
        its(&plain)
    );
    assert!(
        10 * z_p(&filtered) < 7 * z_p(&plain),
        "{} vs {}",
        z_p(&filtered),
        z_p(&plain)
    );
    let tip = |v: &serde_json::Value| v["max_displacement"].as_f64().unwrap();
    assert!((tip(&filtered) - tip(&plain)).abs() < 1e-6 * tip(&plain));
    assert_clear_refusal(&["solve", "--k", "1", "--pf", "1.5"], "--pf must be in [0, 1)");
}

#[test]
fn model_reads_a_machine_file_and_names_a_missing_key() {
    let dir = std::env::temp_dir().join(format!("ptap-cli-machine-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let good = dir.join("box.json");
    std::fs::write(
        &good,
        r#"{"name": "box", "dram_bandwidth": 2e10, "l2_bandwidth": 1e11, "l2_bytes": 3.2e7,
            "onchip_bandwidth": 2e11, "fp64_flops": 3e10, "atomic_penalty": 4}"#,
    )
    .unwrap();
    let json = dir.join("model.json");
    let out = ptap(&[
        "model",
        "--beam",
        "2",
        "--machine",
        good.to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["machine"]["name"], "box");
    assert_eq!(v["machine"]["dram_bandwidth"], 2e10);
    let missing = dir.join("missing.json");
    std::fs::write(&missing, r#"{"dram_bandwidth": 2e10}"#).unwrap();
    assert_clear_refusal(
        &["model", "--beam", "2", "--machine", missing.to_str().unwrap()],
        "has no key \"l2_bandwidth\"",
    );
    // `cpu` is this machine, measured.
    let out = ptap(&[
        "model",
        "--beam",
        "2",
        "--machine",
        "cpu",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert!(
        v["machine"]["name"].as_str().unwrap().contains("measured"),
        "{}",
        v["machine"]
    );
    assert!(v["machine"]["dram_bandwidth"].as_f64().unwrap() > 1e8);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn hier_k2_json_has_every_product_and_the_aggregation() {
    let dir = std::env::temp_dir().join(format!("ptap-cli-hier-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("hier2.json");
    for aggregation in ["petsc", "natural"] {
        let out = ptap(&[
            "hier",
            "--k",
            "2",
            "--aggregation",
            aggregation,
            "--quiet",
            "--json",
            path.to_str().unwrap(),
        ]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        assert!(out.stdout.is_empty(), "--quiet prints nothing");
        let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(v["k"], 2);
        assert_eq!(v["dofs"], 3000);
        assert_eq!(v["aggregation"], aggregation);
        assert_eq!(v["pf"], 0.03);
        let levels = v["levels"].as_array().unwrap();
        let products = v["products"].as_array().unwrap();
        assert_eq!(products.len() + 1, levels.len());
        let l0 = &products[0];
        assert_eq!(l0["product"], "l0");
        assert_eq!(l0["blocks"], "3x3/3x6");
        for key in ["m_f", "z_a", "n_a", "z_p", "n_p", "z_w", "w", "m_c", "z_c", "n_c"] {
            assert!(l0["stats"][key].is_number(), "{aggregation}: stats.{key}");
        }
        assert_eq!(l0["stats"]["m_f"], 1000);
        assert_eq!(l0["stats"]["m_c"], l0["aggregates"]);
        assert!(l0.get("paper").is_none(), "the paper's rows are at k = 16 only");
        assert!(v["operator_complexity"].as_f64().unwrap() > 1.0);
    }
    // The human table: ours per product, no paper rows at k = 2.
    let out = ptap(&["hier", "--k", "2", "--aggregation", "petsc"]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("l0   ours") && text.contains("operator complexity"),
        "{text}"
    );
    assert!(!text.contains("paper "), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn unknown_aggregation_is_refused_by_every_command() {
    for cmd in ["solve", "run", "bench", "sweep-filter", "hier"] {
        let out = ptap(&[cmd, "--k", "1", "--aggregation", "mis3"]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{cmd}: {err}");
        assert!(
            err.contains("unknown aggregation 'mis3'") && err.contains("natural, petsc"),
            "{cmd}: {err}"
        );
    }
}

/// Under a launcher (`mpirun` announces the rank count in the environment), a
/// build without the feature `mpi` refuses more than one rank in one sentence
/// (each would solve the whole problem alone) and runs one rank as usual.
#[cfg(not(feature = "mpi"))]
#[test]
fn without_the_mpi_feature_more_than_one_rank_is_refused() {
    let launched = |size: &str, args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_ptap"))
            .args(args)
            .env("OMPI_COMM_WORLD_SIZE", size)
            .env("OMPI_COMM_WORLD_RANK", "1")
            .output()
            .unwrap()
    };
    let out = launched("2", &["solve", "--k", "1", "--quiet"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("error (rank 1): this ptap was built without the feature `mpi`"),
        "{err}"
    );
    let out = launched("1", &["solve", "--k", "1", "--quiet"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}
