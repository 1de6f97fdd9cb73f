//! Hostile files (issue 13, classes 1, 4, 5, 6) against the `ptap` binary:
//! forged schedules, lying headers, special files and broken caches. Every
//! case runs with a 10 s limit (longer counts as a hang) and must end in one
//! `error:` line and a non-zero exit (or, for the cache, a success with at most
//! one `warning:` line), never a panic.
use ptap_schedules::file::{reseal_for_testing, validate_bytes_with_key, ArrayKind};
use ptap_schedules::key::TagKey;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const LIMIT: Duration = Duration::from_secs(10);

struct Outcome {
    code: Option<i32>,
    stdout: String,
    stderr: String,
    hung: bool,
}

struct Suite {
    dir: PathBuf,
    key: PathBuf,
    cases: usize,
    panics: Vec<String>,
    hangs: Vec<String>,
    wrong: Vec<String>,
}

impl Suite {
    fn new() -> Self {
        let dir = std::env::temp_dir().join(format!("ptap-hostile-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let key = dir.join("config").join("schedule.key");
        Self {
            dir,
            key,
            cases: 0,
            panics: Vec::new(),
            hangs: Vec::new(),
            wrong: Vec::new(),
        }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    /// Runs `ptap args` with this suite's key, killed after [`LIMIT`].
    fn ptap(&self, args: &[&str]) -> Outcome {
        let mut child = Command::new(env!("CARGO_BIN_EXE_ptap"))
            .args(args)
            .env("PTAP_KEY_FILE", &self.key)
            .env("RAYON_NUM_THREADS", "2")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Drain both pipes on threads so a chatty child cannot block on them.
        let mut out = child.stdout.take().unwrap();
        let mut err = child.stderr.take().unwrap();
        let t_out = std::thread::spawn(move || {
            let mut s = String::new();
            let _ = out.read_to_string(&mut s);
            s
        });
        let t_err = std::thread::spawn(move || {
            let mut s = String::new();
            let _ = err.read_to_string(&mut s);
            s
        });
        let start = Instant::now();
        let (code, hung) = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break (status.code(), false);
            }
            if start.elapsed() > LIMIT {
                let _ = child.kill();
                let _ = child.wait();
                break (None, true);
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        Outcome {
            code,
            stdout: t_out.join().unwrap(),
            stderr: t_err.join().unwrap(),
            hung,
        }
    }

    /// Records one case that must fail with one `error:` line containing `want`.
    fn expect_error(&mut self, name: &str, args: &[&str], want: &str) {
        self.cases += 1;
        let o = self.ptap(args);
        let label = format!("{name}: ptap {}\n{}", args.join(" "), o.stderr);
        if o.hung {
            self.hangs.push(label);
        } else if o.stderr.contains("panicked") || o.code.is_none() {
            self.panics.push(label);
        } else if o.code == Some(0) {
            self.wrong.push(label);
        } else {
            let errors = o.stderr.lines().filter(|l| l.starts_with("error:")).count();
            assert_eq!(errors, 1, "{label}");
            assert!(o.stderr.contains(want), "{label}\nwanted: {want}");
        }
    }

    /// Records one case that must succeed, with at most `warnings` `warning:` lines containing `want`.
    fn expect_success(&mut self, name: &str, args: &[&str], warnings: usize, want: &str) -> Outcome {
        self.cases += 1;
        let o = self.ptap(args);
        let label = format!("{name}: ptap {}\n{}", args.join(" "), o.stderr);
        if o.hung {
            self.hangs.push(label);
        } else if o.stderr.contains("panicked") || o.code.is_none() {
            self.panics.push(label);
        } else {
            assert_eq!(o.code, Some(0), "{label}");
            let got: Vec<&str> = o.stderr.lines().filter(|l| l.starts_with("warning:")).collect();
            assert_eq!(got.len(), warnings, "{label}");
            assert!(got.iter().all(|l| l.contains(want)), "{label}\nwanted: {want}");
            assert!(!o.stderr.contains("error:"), "{label}");
        }
        o
    }

    fn finish(self) {
        let _ = std::fs::remove_dir_all(&self.dir);
        println!(
            "hostile: {} cases, {} panics, {} hangs, {} wrong successes",
            self.cases,
            self.panics.len(),
            self.hangs.len(),
            self.wrong.len()
        );
        for (what, v) in [
            ("panic", &self.panics),
            ("hang", &self.hangs),
            ("wrong success", &self.wrong),
        ] {
            for l in v {
                eprintln!("{what}: {l}");
            }
        }
        assert!(self.panics.is_empty() && self.hangs.is_empty() && self.wrong.is_empty());
    }
}

fn mkfifo(path: &Path) {
    let ok = Command::new("mkfifo").arg(path).status().unwrap().success();
    assert!(ok, "mkfifo {}", path.display());
}

fn run_args(cache: &str) -> [&str; 7] {
    ["run", "--k", "2", "--steps", "1", "--schedule-cache", cache]
}

/// The `n`-th entry of `u32` array `name` in a tagged file that can grow by
/// one while staying below `bound` and (unless `unsorted`) below its successor.
fn forge(bytes: &[u8], key: &TagKey, level: usize, name: &str, n: usize, bound: u32, unsorted: bool) -> Vec<u8> {
    let (off, kind, len) = {
        let m = validate_bytes_with_key(bytes, key).unwrap();
        m.record(level).unwrap().array_file_offset(name).unwrap()
    };
    assert_eq!(kind, ArrayKind::U32);
    let at = |k: u64| (off + 4 * k) as usize;
    let get = |k: u64| u32::from_le_bytes(bytes[at(k)..at(k) + 4].try_into().unwrap());
    let k = (0..len)
        .filter(|&k| get(k) + 1 < bound && (unsorted || k + 1 == len || get(k + 1) != get(k) + 1))
        .nth(n)
        .expect("an editable entry");
    let mut b = bytes.to_vec();
    b[at(k)..at(k) + 4].copy_from_slice(&(get(k) + 1).to_le_bytes());
    reseal_for_testing(&mut b);
    b
}

#[test]
fn hostile_files() {
    let mut s = Suite::new();
    let d = |s: &Suite, n: &str| s.path(n).to_str().unwrap().to_owned();

    // ---- Class 1: schedules edited in range and resealed -------------------
    let base = d(&s, "base.ptaps");
    s.expect_success("inspect", &["inspect", "--beam", "2", "--out", &base], 0, "");
    let bytes = std::fs::read(&base).unwrap();
    let key = TagKey::load_or_create(&s.key).unwrap();
    let sizes = {
        let m = validate_bytes_with_key(&bytes, &key).unwrap();
        let r = m.record(0).unwrap();
        (
            r.size("m_c").unwrap() as u32,
            r.size("m_f").unwrap() as u32,
            r.size("z_p").unwrap() as u32,
        )
    };
    let (m_c, m_f, z_p) = sizes;
    let forged = d(&s, "forged.ptaps");
    for (name, bound, unsorted) in [
        ("c.col_idx", m_c, false),
        ("w.col_idx", m_c, false),
        ("r.col_idx", m_f, false),
        ("r.source", z_p, true),
    ] {
        for n in 0..3 {
            std::fs::write(&forged, forge(&bytes, &key, 0, name, n, bound, unsorted)).unwrap();
            s.expect_error(
                name,
                &["replay", "--schedule", &forged, "--beam", "2", "--repeat", "1"],
                "was not written by this user's ptap",
            );
        }
    }
    // Plain damage: flipped bytes, truncations, an older version, another user's key.
    for at in [0usize, 9, 20, 30, 70, 100, 130, bytes.len() / 2, bytes.len() - 1] {
        let mut b = bytes.clone();
        b[at] ^= 0x40;
        std::fs::write(&forged, &b).unwrap();
        s.expect_error("flip", &["replay", "--schedule", &forged, "--beam", "2"], "schedule");
    }
    for cut in [0usize, 7, 64, 127, 128, 500, bytes.len() - 1] {
        std::fs::write(&forged, &bytes[..cut]).unwrap();
        s.expect_error("cut", &["replay", "--schedule", &forged, "--beam", "2"], "schedule");
    }
    let mut b = bytes.clone();
    b[8..12].copy_from_slice(&2u32.to_le_bytes());
    std::fs::write(&forged, &b).unwrap();
    s.expect_error(
        "version 2",
        &["replay", "--schedule", &forged, "--beam", "2"],
        "re-run `ptap inspect`",
    );
    let other = TagKey::from_bytes([3; 32]);
    let mut b = bytes.clone();
    ptap_schedules::file::seal_for_testing(&mut b, &other);
    std::fs::write(&forged, &b).unwrap();
    s.expect_error(
        "other key",
        &["replay", "--schedule", &forged, "--beam", "2"],
        "was not written by this user's ptap",
    );

    // The same forgery as a cache entry: reported and rebuilt, the run succeeds.
    let cache = d(&s, "cache");
    s.expect_success(
        "cache write",
        &["run", "--k", "2", "--steps", "1", "--schedule-cache", &cache],
        0,
        "",
    );
    let entry = std::fs::read_dir(&cache)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "ptaps"))
        .expect("a cache entry");
    let good = std::fs::read(&entry).unwrap();
    let (cm_c, cz_p) = {
        let m = validate_bytes_with_key(&good, &key).unwrap();
        let r = m.record(0).unwrap();
        (r.size("m_c").unwrap() as u32, r.size("z_p").unwrap() as u32)
    };
    for (name, bound, unsorted) in [("c.col_idx", cm_c, false), ("r.source", cz_p, true)] {
        std::fs::write(&entry, forge(&good, &key, 0, name, 0, bound, unsorted)).unwrap();
        let o = s.expect_success(
            name,
            &["run", "--k", "2", "--steps", "1", "--schedule-cache", &cache],
            0,
            "",
        );
        assert!(o.stdout.contains(": rebuilt"), "{}", o.stdout);
    }

    // ---- Class 4: headers that claim more than the file holds --------------
    let mm = "%%MatrixMarket matrix coordinate real general\n";
    let a_ok = d(&s, "a.mtx");
    std::fs::write(&a_ok, format!("{mm}2 2 2\n1 1 1.0\n2 2 1.0\n")).unwrap();
    let mm_cases: [(&str, String, &str); 6] = [
        (
            "tall",
            format!("{mm}300000000 300000000 3\n1 1 1\n2 2 1\n"),
            "a 300000000x300000000 matrix",
        ),
        (
            "wide",
            format!("{mm}2 3000000000 2\n1 1 1\n2 2 1\n"),
            "a 2x3000000000 matrix",
        ),
        ("many", format!("{mm}2 2 100000000\n1 1 1\n"), "100000000 entries"),
        ("huge", format!("{mm}4294967296 2 1\n1 1 1\n"), "too large"),
        ("negative", format!("{mm}-2 2 1\n1 1 1\n"), "a non-negative size"),
        ("empty", String::new(), "neither a Matrix Market file"),
    ];
    for (name, text, want) in &mm_cases {
        let f = d(&s, &format!("{name}.mtx"));
        std::fs::write(&f, text).unwrap();
        let out = d(&s, "x.ptaps");
        s.expect_error(name, &["inspect", "--a", &f, "--p", &a_ok, "--out", &out], want);
        s.expect_error(name, &["inspect", "--a", &a_ok, "--p", &f, "--out", &out], want);
        s.expect_error(name, &["model", "--a", &f, "--p", &a_ok], want);
    }
    let be = |v: &[i32]| v.iter().flat_map(|x| x.to_be_bytes()).collect::<Vec<u8>>();
    let petsc_cases: [(&str, Vec<u8>, &str); 4] = [
        ("petsc-rows", be(&[1211216, 1 << 30, 2, 0]), "1073741824 rows"),
        (
            "petsc-cols",
            [be(&[1211216, 2, i32::MAX, 1, 1, 0, 0]), 1.0f64.to_be_bytes().to_vec()].concat(),
            "2147483647 columns",
        ),
        ("petsc-nz", be(&[1211216, 2, 2, 1 << 29]), "536870912 nonzeros"),
        ("petsc-neg", be(&[1211216, 2, -5, 0]), "negative"),
    ];
    for (name, bytes, want) in &petsc_cases {
        let f = d(&s, &format!("{name}.petsc"));
        std::fs::write(&f, bytes).unwrap();
        let out = d(&s, "x.ptaps");
        s.expect_error(name, &["inspect", "--a", &a_ok, "--p", &f, "--out", &out], want);
    }
    let p_short = d(&s, "p-short.mtx");
    std::fs::write(&p_short, format!("{mm}3 1 1\n1 1 1.0\n")).unwrap();
    s.expect_error(
        "shape",
        &["inspect", "--a", &a_ok, "--p", &p_short, "--out", &d(&s, "x.ptaps")],
        "P has 3 rows but A",
    );

    // ---- Class 5: special files where regular files are expected -----------
    let fifo = s.path("fifo");
    mkfifo(&fifo);
    let fifo = fifo.to_str().unwrap().to_owned();
    let dir = s.dir.to_str().unwrap().to_owned();
    s.expect_error(
        "fifo schedule",
        &["replay", "--schedule", &fifo, "--beam", "2"],
        "a FIFO",
    );
    s.expect_error(
        "dir schedule",
        &["replay", "--schedule", &dir, "--beam", "2"],
        "a directory",
    );
    s.expect_error(
        "device schedule",
        &["replay", "--schedule", "/dev/zero", "--beam", "2"],
        "a device",
    );
    let out = d(&s, "x.ptaps");
    s.expect_error(
        "fifo A",
        &["inspect", "--a", &fifo, "--p", &a_ok, "--out", &out],
        "a FIFO",
    );
    s.expect_error(
        "fifo P",
        &["inspect", "--a", &a_ok, "--p", &fifo, "--out", &out],
        "a FIFO",
    );
    s.expect_error("device A", &["model", "--a", "/dev/zero", "--p", &a_ok], "a device");
    s.expect_error("fifo out", &["inspect", "--beam", "2", "--out", &fifo], "a FIFO");
    s.expect_error("dir out", &["inspect", "--beam", "2", "--out", &dir], "a directory");
    let link = s.path("link.ptaps");
    std::os::unix::fs::symlink(&base, &link).unwrap();
    let link = link.to_str().unwrap().to_owned();
    let before = std::fs::read(&base).unwrap();
    s.expect_error(
        "link out",
        &["inspect", "--beam", "2", "--out", &link],
        "a symbolic link",
    );
    assert_eq!(
        std::fs::read(&base).unwrap(),
        before,
        "a link's target is never replaced"
    );
    // The key file itself must be a regular, private file.
    let saved = s.key.clone();
    s.key = s.path("fifo");
    s.expect_error("fifo key", &["replay", "--schedule", &base, "--beam", "2"], "a FIFO");
    s.key = saved;

    // ---- Class 6: caches that cannot be used --------------------------------
    let file_cache = d(&s, "a.mtx/cache");
    s.expect_success(
        "cache under a file",
        &run_args(&file_cache),
        1,
        "running without the cache",
    );
    // The entry's path is taken by a directory, then by a FIFO: not loaded, not written.
    let blocked = d(&s, "blocked");
    std::fs::create_dir_all(&blocked).unwrap();
    let name = entry.file_name().unwrap();
    std::fs::create_dir(Path::new(&blocked).join(name)).unwrap();
    s.expect_success(
        "entry is a directory",
        &run_args(&blocked),
        1,
        "the run continues without it",
    );
    let fifo_cache = d(&s, "fifo-cache");
    std::fs::create_dir_all(&fifo_cache).unwrap();
    mkfifo(&Path::new(&fifo_cache).join(name));
    s.expect_success(
        "entry is a FIFO",
        &run_args(&fifo_cache),
        1,
        "the run continues without it",
    );
    // Stale temporary files of dead writers are removed; a live writer's stays.
    let dead = Path::new(&cache).join(format!("x.ptaps.{}.tmp", 0x7fff_fff0u32));
    let live = Path::new(&cache).join(format!("y.ptaps.{}.tmp", std::process::id()));
    std::fs::write(&dead, b"partial").unwrap();
    std::fs::write(&live, b"partial").unwrap();
    s.expect_success("stale temps", &run_args(&cache), 0, "");
    assert!(!dead.exists() && live.exists());
    // A key the cache cannot get (its path is a directory): warned, run goes on.
    let saved = s.key.clone();
    s.key = s.dir.clone();
    let fresh = d(&s, "fresh-cache");
    s.expect_success("no key", &run_args(&fresh), 1, "a directory");
    s.key = saved;

    s.finish();
}
