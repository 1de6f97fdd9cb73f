//! Hostile options and output streams (issue 13, classes 2, 3 and 7): every
//! case ends within its time bound, without a panic, with the conventional
//! exit status and, for a refusal, one `error:` sentence before any work.
//! The last line printed counts the cases.
use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn ptap() -> Command {
    Command::new(env!("CARGO_BIN_EXE_ptap"))
}

/// What a case ended with.
struct Ended {
    status: std::process::ExitStatus,
    stderr: String,
    elapsed: Duration,
}

/// Runs `cmd`, killing it after `limit` (a hang fails the test).
fn run(mut cmd: Command, limit: Duration) -> Ended {
    let t = Instant::now();
    let mut child = cmd.stderr(Stdio::piped()).spawn().expect("ptap starts");
    let mut err = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err.read_to_string(&mut s);
        s
    });
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return Ended {
                status,
                stderr: reader.join().unwrap(),
                elapsed: t.elapsed(),
            };
        }
        if t.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("hang: {cmd:?} ran past {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// A refusal of the arguments: non-zero exit within a second, one `error:`
/// sentence first, no panic.
fn refused(args: &[&str]) {
    let mut cmd = ptap();
    cmd.args(args).stdout(Stdio::null());
    let e = run(cmd, Duration::from_secs(10));
    assert!(!e.status.success(), "wrong success: {args:?}");
    assert!(!e.stderr.contains("panicked"), "panic: {args:?}: {}", e.stderr);
    assert!(e.stderr.trim_start().starts_with("error:"), "{args:?}: {}", e.stderr);
    assert!(
        e.elapsed < Duration::from_secs(1),
        "{args:?} took {:?} to refuse",
        e.elapsed
    );
}

/// [`refused`], and the one line names what was wrong (`needle`).
fn refused_saying(args: &[&str], needle: &str) {
    let mut cmd = ptap();
    cmd.args(args).stdout(Stdio::null());
    let e = run(cmd, Duration::from_secs(10));
    assert!(!e.status.success(), "wrong success: {args:?}");
    assert!(!e.stderr.contains("panicked"), "panic: {args:?}: {}", e.stderr);
    assert!(e.stderr.starts_with("error:"), "{args:?}: {}", e.stderr);
    assert_eq!(e.stderr.trim_end().lines().count(), 1, "{args:?}: {}", e.stderr);
    assert!(
        e.stderr.contains(needle),
        "{args:?}: expected {needle:?} in {}",
        e.stderr
    );
    assert!(
        e.elapsed < Duration::from_secs(1),
        "{args:?} took {:?} to refuse",
        e.elapsed
    );
}

/// A Matrix Market coordinate file of the 1D Laplacian of `n` rows, with
/// `a_01` in place of the (0, 1) entry.
fn laplacian_mm(path: &std::path::Path, n: usize, a_01: f64) {
    let mut t = format!("%%MatrixMarket matrix coordinate real general\n{n} {n} {}\n", 3 * n - 2);
    for i in 1..=n {
        t += &format!("{i} {i} 2\n");
        if i > 1 {
            t += &format!("{i} {} -1\n", i - 1);
        }
        if i < n {
            t += &format!("{i} {} {}\n", i + 1, if i == 1 { a_01 } else { -1.0 });
        }
    }
    std::fs::write(path, t).unwrap();
}

/// Users' own operators (`--a`): missing, special and mismatched files, bad
/// block sizes, beam-only flags with `--a`, a non-symmetric matrix and a glob
/// that matches nothing are each one `error:` sentence, before any solve.
#[test]
fn hostile_user_operator_files() {
    let dir = std::env::temp_dir().join(format!("ptap-hostile-user-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let p = |name: &str| dir.join(name).to_str().unwrap().to_string();
    laplacian_mm(&dir.join("A.mtx"), 10, -1.0);
    laplacian_mm(&dir.join("nonsym.mtx"), 10, -0.5);
    std::fs::write(
        dir.join("b9.mtx"),
        "%%MatrixMarket matrix array real general\n9 1\n".to_string() + &"1\n".repeat(9),
    )
    .unwrap();
    let coords = |nodes: usize| {
        let mut t = format!("%%MatrixMarket matrix array real general\n{nodes} 2\n");
        for k in 0..2 * nodes {
            t += &format!("{}\n", k % nodes);
        }
        t
    };
    std::fs::write(dir.join("coords7.mtx"), coords(7)).unwrap();
    std::fs::write(
        dir.join("nn9.mtx"),
        "%%MatrixMarket matrix array real general\n9 1\n".to_string() + &"1\n".repeat(9),
    )
    .unwrap();
    std::fs::create_dir_all(dir.join("adir")).unwrap();
    let fifo = dir.join("fifo");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let (a, fifo) = (p("A.mtx"), fifo.to_str().unwrap().to_string());
    let [none, missing, adir, b9, coords7, nn9, nonsym, missing_dir] = [
        "none_*.mtx",
        "missing.mtx",
        "adir",
        "b9.mtx",
        "coords7.mtx",
        "nn9.mtx",
        "nonsym.mtx",
        "missing-dir",
    ]
    .map(p);
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["solve", "--a", &missing], "missing.mtx"),
        (vec!["solve", "--a", &adir], "is a directory, not a regular file"),
        (vec!["solve", "--a", &fifo], "is a FIFO, not a regular file"),
        (vec!["solve", "--a", &a, "--b", &fifo], "is a FIFO, not a regular file"),
        (vec!["solve", "--a", &a, "--b", &b9], "has 9 entries but"),
        (vec!["solve", "--a", &a, "--coords", &coords7], "gives 7 nodes in 2D"),
        (
            vec!["solve", "--a", &a, "--near-null", &nn9],
            "has 9 rows but the operator has 10",
        ),
        (vec!["solve", "--a", &a, "--block-size", "0"], "--block-size"),
        (vec!["solve", "--a", &a, "--block-size", "1000000"], "--block-size"),
        (vec!["solve", "--a", &a, "--block-size", "3"], "does not tile"),
        (vec!["solve", "--a", &a, "--k", "2"], "cannot be used with"),
        (vec!["solve", "--a", &a, "--dim", "2"], "cannot be used with"),
        (vec!["solve", "--b", &b9], "--a"),
        (
            vec!["solve", "--a", &a, "--coords", &coords7, "--modes", "translations"],
            "cannot be used with",
        ),
        (vec!["solve", "--a", &a, "--modes", "rotations"], "invalid value"),
        (vec!["solve", "--a", &nonsym], "not symmetric"),
        (vec!["run", "--a", &none], "matches no file"),
        (vec!["run", "--a", &a, "--steps", "3"], "cannot be used with"),
        (vec!["run", "--a", &a, "--k", "2"], "cannot be used with"),
        (
            vec!["run", "--a", &a, &a, "--b", &a, &a, &a],
            "3 right-hand sides for 2 operators",
        ),
        (vec!["run", "--a", &a, "--x-out", &missing_dir], "is not a directory"),
    ];
    for (args, needle) in &cases {
        refused_saying(args, needle);
    }
    println!(
        "hostile-user-files: {} cases, 0 panics, 0 hangs, 0 wrong successes",
        cases.len()
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn hostile_options_and_streams() {
    let mut cases = 0;
    // Class 3: every numeric option outside its documented range, refused
    // before any work (allocation aborts, hangs and wraps before).
    let counts: &[(&[&str], &str)] = &[
        (&["run", "--k", "2"], "--steps"),
        (&["solve", "--k", "2"], "--max-iterations"),
        (&["solve", "--k", "2"], "--coarse-eq-limit"),
        (&["bench", "--k", "2"], "--repeat"),
        (&["sweep-filter", "--k", "2"], "--repeat"),
        (&["solve", "--k", "2"], "--threads"),
        (&["bench"], "--k"),
        (&["model"], "--beam"),
        (&["inspect", "--out", "/tmp/never-written.ptaps"], "--beam"),
    ];
    let bad_counts = [
        "0",
        "-1",
        "1000000000000",
        "18446744073709551615",
        "18446744073709551616",
        "1e3",
        "nan",
        "",
        "two",
    ];
    for (base, opt) in counts {
        for v in bad_counts {
            let mut args = base.to_vec();
            args.extend([*opt, v]);
            refused(&args);
            cases += 1;
        }
    }
    let reals: &[(&[&str], &str, &[&str])] = &[
        (
            &["solve", "--k", "2"],
            "--rtol",
            &["1e-300", "0", "-1e-8", "1", "2", "nan", "inf", "1e-16"],
        ),
        (&["run", "--k", "2"], "--rtol", &["1e-300", "0", "1", "nan", "inf"]),
        (&["solve", "--k", "2"], "--threshold", &["-0.1", "1", "nan", "inf"]),
        (&["solve", "--k", "2"], "--pf", &["-0.1", "1", "nan"]),
        (&["solve", "--k", "2"], "--pf-scale", &["0", "1.5", "nan"]),
        (&["run", "--k", "2"], "--pf", &["-1", "nan"]),
        (&["sweep-filter", "--k", "2"], "--pf", &["0,1", "nan"]),
        (&["solve", "--k", "2"], "--dim", &["1", "4", "-3"]),
        (&["solve"], "--k", &["0", "-3", "100000", "1e9", "nan"]),
        (&["run"], "--k", &["0", "-1", "100000"]),
    ];
    for (base, opt, values) in reals {
        for v in *values {
            let mut args = base.to_vec();
            args.extend([*opt, v]);
            refused(&args);
            cases += 1;
        }
    }

    // Class 2: a full disk on stdout is one sentence and status 74 (EX_IOERR);
    // a failing stderr never panics.
    if std::path::Path::new("/dev/full").exists() {
        for args in [
            &["solve", "--k", "2"][..],
            &["model", "--beam", "2"],
            &["solve", "--help"],
            &["run", "--k", "2", "--steps", "2"],
        ] {
            let mut cmd = ptap();
            cmd.args(args).stdout(std::fs::File::create("/dev/full").unwrap());
            let e = run(cmd, Duration::from_secs(60));
            assert_eq!(e.status.code(), Some(74), "{args:?}: {}", e.stderr);
            assert!(!e.stderr.contains("panicked"), "{args:?}: {}", e.stderr);
            assert!(
                e.stderr.contains("error: cannot write the output"),
                "{args:?}: {}",
                e.stderr
            );
            cases += 1;
        }
        let mut cmd = ptap();
        cmd.args(["solve", "--k", "0"]).stdout(Stdio::null());
        let t = Instant::now();
        let status = cmd
            .stderr(std::fs::File::create("/dev/full").unwrap())
            .status()
            .unwrap();
        assert_eq!(
            status.code(),
            Some(1),
            "a refusal with stderr full still exits 1, no abort"
        );
        assert!(t.elapsed() < Duration::from_secs(1));
        cases += 1;
    }
    // --plot: a directory, a missing folder, a FIFO or a device where the SVG
    // would go is refused in one sentence before any work (never opened, so a
    // FIFO cannot block).
    let dir = std::env::temp_dir().join(format!("ptap-hostile-plot-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let fifo = dir.join("fifo.svg");
    let made = Command::new("mkfifo").arg(&fifo).status().is_ok_and(|s| s.success());
    let mut targets = vec![dir.clone(), dir.join("missing").join("p.svg")];
    targets.extend(made.then_some(fifo));
    targets.extend(Some(std::path::PathBuf::from("/dev/full")).filter(|p| p.exists()));
    for target in &targets {
        for base in [&["bench", "--k", "2"][..], &["run", "--k", "2", "--steps", "2"]] {
            let mut args = base.to_vec();
            args.extend(["--plot", target.to_str().unwrap()]);
            refused(&args);
            cases += 1;
        }
    }
    // --peer: only with --device cuda; a missing, non-regular or non-JSON
    // report is refused before the device is opened (so also without a GPU).
    refused_saying(&["bench", "--k", "2", "--peer", "x.json"], "add --device cuda");
    let not_json = dir.join("peer.json");
    std::fs::write(&not_json, b"cold 1.0 ms").unwrap();
    for (peer, needle) in [
        (dir.join("missing.json"), "reading the peer report"),
        (dir.clone(), "reading the peer report"),
        (not_json, "is not a peer report"),
    ] {
        refused_saying(
            &[
                "bench",
                "--k",
                "2",
                "--device",
                "cuda",
                "--peer",
                peer.to_str().unwrap(),
            ],
            needle,
        );
        cases += 1;
    }
    std::fs::remove_dir_all(&dir).ok();

    // A closed pipe ends the program as SIGPIPE does (status 141 in a shell), silently.
    for args in [&["solve", "--k", "2"][..], &["model", "--beam", "2"]] {
        let mut child = ptap()
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take()); // the reader goes away before anything is written
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(
            out.status.signal(),
            Some(13),
            "{args:?}: ended by SIGPIPE, got {:?}",
            out.status
        );
        cases += 1;
    }

    // Class 7: the one non-deterministic variant says so.
    let out = ptap()
        .args(["solve", "--k", "2", "--variant", "outer-product"])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("non-deterministic"));
    let help = ptap().args(["solve", "--help"]).output().unwrap();
    assert!(String::from_utf8_lossy(&help.stdout).contains("non-deterministic"));
    cases += 2;

    println!("hostile-cli: {cases} cases, 0 panics, 0 hangs, 0 wrong successes");
    assert!(cases >= 120, "{cases} cases");
}
