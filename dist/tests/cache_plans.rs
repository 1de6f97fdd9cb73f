//! Schedule-cache hits on 1, 2 and 3 ranks in process (one thread a rank,
//! messages through shared mailboxes): a hierarchy loaded from the per-rank
//! entries gives the cold run's coarse operators and solution bit for bit,
//! and its levels report no inspection and no plan building (they are read
//! from the entry). Entries for another split of the rows, truncated, or
//! renamed for another rank are refused in one sentence and rebuilt.
//! The same under mpirun: the cli's tests/mpirun.rs.
use ptap_dist::{
    build_hierarchy_cached, Comm, DistOptions, DistProblem, DistSetupReport, Link, LocalMatrix, Partition,
};
use ptap_fem::BeamProblem;
use ptap_runtime::{CgOptions, HierarchyOptions};
use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex};

/// Messages in flight, per (sender, receiver).
type Queues = HashMap<(usize, usize), VecDeque<Vec<u64>>>;

/// Mailboxes between `size` threads: one FIFO per (sender, receiver). Every
/// rank calls the collectives in the same order and an exchange's links
/// pair up, so FIFO order matches each message with its receive.
struct Mailboxes {
    size: usize,
    queues: Mutex<Queues>,
    ready: Condvar,
}

struct ThreadComm {
    rank: usize,
    boxes: Arc<Mailboxes>,
}

impl ThreadComm {
    fn post(&self, to: usize, msg: Vec<u64>) {
        let mut q = self.boxes.queues.lock().unwrap();
        q.entry((self.rank, to)).or_default().push_back(msg);
        self.boxes.ready.notify_all();
    }
    fn take(&self, from: usize) -> Vec<u64> {
        let mut q = self.boxes.queues.lock().unwrap();
        loop {
            if let Some(m) = q.get_mut(&(from, self.rank)).and_then(VecDeque::pop_front) {
                return m;
            }
            q = self.boxes.ready.wait(q).unwrap();
        }
    }
    fn bits(v: &[f64]) -> Vec<u64> {
        v.iter().map(|x| x.to_bits()).collect()
    }
    /// Every rank's `v`, in rank order.
    fn all_gather(&self, v: &[f64]) -> Vec<Vec<f64>> {
        for q in (0..self.boxes.size).filter(|&q| q != self.rank) {
            self.post(q, Self::bits(v));
        }
        (0..self.boxes.size)
            .map(|q| {
                if q == self.rank {
                    v.to_vec()
                } else {
                    self.take(q).into_iter().map(f64::from_bits).collect()
                }
            })
            .collect()
    }
}

impl Comm for ThreadComm {
    fn rank(&self) -> usize {
        self.rank
    }
    fn size(&self) -> usize {
        self.boxes.size
    }
    fn exchange(&self, sends: &[Link], send: &[f64], recvs: &[Link], recv: &mut [f64], overlap: &mut dyn FnMut()) {
        for l in sends {
            self.post(l.rank, Self::bits(&send[l.start..l.start + l.len]));
        }
        overlap();
        for l in recvs {
            let m = self.take(l.rank);
            assert_eq!(m.len(), l.len, "message from rank {} to rank {}", l.rank, self.rank);
            for (o, b) in recv[l.start..l.start + l.len].iter_mut().zip(m) {
                *o = f64::from_bits(b);
            }
        }
    }
    fn all_reduce_sum(&self, values: &mut [f64]) {
        let all = self.all_gather(values);
        values.copy_from_slice(&all[0]);
        for row in &all[1..] {
            for (o, v) in values.iter_mut().zip(row) {
                *o += v;
            }
        }
    }
    fn broadcast(&self, root: usize, values: &mut [f64]) {
        if self.rank == root {
            for q in (0..self.boxes.size).filter(|&q| q != root) {
                self.post(q, Self::bits(values));
            }
        } else {
            for (o, b) in values.iter_mut().zip(self.take(root)) {
                *o = f64::from_bits(b);
            }
        }
    }
    fn gather(&self, root: usize, local: &[f64]) -> Option<Vec<f64>> {
        if self.rank != root {
            self.post(root, Self::bits(local));
            return None;
        }
        Some(
            (0..self.boxes.size)
                .flat_map(|q| {
                    if q == root {
                        local.to_vec()
                    } else {
                        self.take(q).into_iter().map(f64::from_bits).collect()
                    }
                })
                .collect(),
        )
    }
    fn all_to_all_u64(&self, send: &[Vec<u64>]) -> Vec<Vec<u64>> {
        assert_eq!(send.len(), self.boxes.size);
        for (q, m) in send.iter().enumerate().filter(|&(q, _)| q != self.rank) {
            self.post(q, m.clone());
        }
        (0..self.boxes.size)
            .map(|q| if q == self.rank { send[q].clone() } else { self.take(q) })
            .collect()
    }
}

/// What one rank's run gives: its setup report, every level's operator
/// values on this rank after the matrix setup, the solve's iterations and
/// this rank's part of the solution.
struct RankRun {
    report: DistSetupReport,
    operators: Vec<Vec<f64>>,
    iterations: usize,
    x: Vec<f64>,
}

/// Builds (with the cache in `dir`) and solves on `starts`' ranks, one
/// thread each.
fn run(beam: &Arc<BeamProblem>, starts: &[usize], dir: &Path) -> Vec<RankRun> {
    try_run(beam, starts, dir)
        .into_iter()
        .map(|r| r.unwrap_or_else(|e| panic!("{e}")))
        .collect()
}

/// [`run`], each rank's setup error as its sentence.
fn try_run(beam: &Arc<BeamProblem>, starts: &[usize], dir: &Path) -> Vec<Result<RankRun, String>> {
    let part = Partition::new(starts.to_vec()).unwrap();
    let boxes = Arc::new(Mailboxes {
        size: part.ranks(),
        queues: Mutex::new(HashMap::new()),
        ready: Condvar::new(),
    });
    let handles: Vec<_> = (0..part.ranks())
        .map(|rank| {
            let (beam, part, boxes, dir) = (beam.clone(), part.clone(), boxes.clone(), dir.to_path_buf());
            std::thread::spawn(move || {
                let comm = ThreadComm { rank, boxes };
                let rows = part.range(rank);
                let (b, m) = (3, beam.modes);
                let problem = DistProblem {
                    a: LocalMatrix::from_global(&beam.a, &part, &part, rank).unwrap(),
                    part: part.clone(),
                    near_null: beam.near_null[rows.start * b * m..rows.end * b * m].to_vec(),
                    modes: m,
                };
                let mut options = HierarchyOptions::default();
                // Distributed coarse levels too (k = 4: three levels).
                options.amg.coarse_eq_limit = 100;
                let (mut h, report) = build_hierarchy_cached(
                    &comm,
                    problem,
                    &options,
                    &DistOptions::default(),
                    Some(&dir),
                    &mut |_| {},
                )
                .map_err(|e| e.to_string())?;
                let operators = (0..h.num_levels()).map(|l| h.operator_values(l).unwrap()).collect();
                let rhs = beam.rhs[rows.start * b..rows.end * b].to_vec();
                let mut ws = h.workspace(500).unwrap();
                let mut x = vec![0.0; rhs.len()];
                let r = h.solve(&rhs, &mut x, &CgOptions::default(), &mut ws).unwrap();
                assert!(r.converged);
                Ok(RankRun {
                    report,
                    operators,
                    iterations: r.iterations,
                    x,
                })
            })
        })
        .collect();
    handles.into_iter().map(|h| h.join().unwrap()).collect()
}

fn status(runs: &[RankRun]) -> &'static str {
    runs[0].report.schedule_cache.as_ref().unwrap().status
}

/// One key file for every test of this binary (tests run in parallel),
/// created once.
fn use_test_key() {
    static KEY: std::sync::Once = std::sync::Once::new();
    KEY.call_once(|| {
        let path = std::env::temp_dir().join(format!("ptap-dist-cache-plans-key-{}", std::process::id()));
        std::env::set_var("PTAP_KEY_FILE", &path);
        ptap_schedules::file::user_key(&path).unwrap();
    });
}

fn scratch(tag: &str) -> PathBuf {
    use_test_key();
    let d = std::env::temp_dir().join(format!("ptap-dist-cache-plans-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn same_bits(x: &[f64], y: &[f64]) -> bool {
    x.len() == y.len() && x.iter().zip(y).all(|(a, b)| a.to_bits() == b.to_bits())
}

/// The loaded runs' coarse operators, iterations and solution are the cold
/// run's bits, rank by rank.
fn assert_same_run(cold: &[RankRun], hit: &[RankRun], what: &str) {
    for (r, (c, h)) in cold.iter().zip(hit).enumerate() {
        assert_eq!(c.operators.len(), h.operators.len(), "{what}, rank {r}: levels");
        for (l, (x, y)) in c.operators.iter().zip(&h.operators).enumerate() {
            assert!(same_bits(x, y), "{what}, rank {r}: level {l}'s operator differs");
        }
        assert_eq!(c.iterations, h.iterations, "{what}, rank {r}");
        assert!(same_bits(&c.x, &h.x), "{what}, rank {r}: the solution differs");
    }
}

#[test]
fn a_cache_hit_loads_every_plan_and_gives_the_cold_run_s_bits_on_one_two_and_three_ranks() {
    let dir = scratch("hit");
    let beam = Arc::new(BeamProblem::build(4).unwrap());
    let n = beam.a.nrows();
    for np in 1..=3 {
        let starts: Vec<usize> = Partition::uniform(n, np).unwrap().starts().to_vec();
        let cache = dir.join(format!("np{np}"));
        let cold = run(&beam, &starts, &cache);
        assert_eq!(status(&cold), "written", "np {np}");
        let hit = run(&beam, &starts, &cache);
        assert_eq!(status(&hit), "loaded", "np {np}");
        assert_same_run(&cold, &hit, &format!("np {np}"));
        // Rank 0's report: the cold levels inspected and built their plans;
        // the loaded ones read them (no inspection, no plan building).
        let levels = |r: &[RankRun]| -> Vec<ptap_dist::setup::DistSetupTimes> {
            r[0].report.levels.iter().filter_map(|l| l.setup_s).collect()
        };
        let (c, h) = (levels(&cold), levels(&hit));
        assert!(c.len() >= 2, "np {np}: {} distributed levels", c.len());
        assert_eq!(h.len(), c.len(), "np {np}");
        for (l, (c, h)) in c.iter().zip(&h).enumerate() {
            assert!(
                c.inspection_s > 0.0 && c.cache_load_s == 0.0,
                "np {np}, level {l}: {c:?}"
            );
            assert_eq!(
                (h.inspection_s, h.plans_s, h.coarse_product_s, h.aggregation_s),
                (0.0, 0.0, 0.0, 0.0),
                "np {np}, level {l} loaded: {h:?}"
            );
            assert!(h.cache_load_s > 0.0, "np {np}, level {l}");
        }
        eprintln!(
            "np {np}: {} iterations, cold level 0 inspection {:.4} s + plans {:.4} s, loaded {:.4} s",
            hit[0].iterations, c[0].inspection_s, c[0].plans_s, h[0].cache_load_s
        );
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn entries_for_another_split_truncated_or_of_another_rank_are_refused_and_rebuilt() {
    let dir = scratch("refused");
    let beam = Arc::new(BeamProblem::build(4).unwrap());
    let n = beam.a.nrows();
    let even = Partition::uniform(n, 2).unwrap().starts().to_vec();
    let cache = dir.join("cache");
    let cold = run(&beam, &even, &cache);
    assert_eq!(status(&cold), "written");
    let entry = |rank: usize| -> PathBuf {
        let found: Vec<PathBuf> = std::fs::read_dir(&cache)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.to_string_lossy().ends_with(&format!("-np2-r{rank}.ptapsched")))
            .collect();
        assert_eq!(found.len(), 1);
        found[0].clone()
    };
    // Each case: a rebuild, with the sentence of the rank that refused its entry.
    let rebuilt = |starts: &[usize], rank: usize, sentence: &str| {
        let r = run(&beam, starts, &cache);
        assert_eq!(status(&r), "rebuilt", "{sentence}");
        let why = r[rank].report.schedule_cache.as_ref().unwrap().refused.clone();
        let why = why.unwrap_or_else(|| panic!("rank {rank} refused nothing ({sentence})"));
        eprintln!("rank {rank}: {why}");
        assert!(why.contains(sentence), "{why}");
        assert_eq!(r[0].iterations, cold[0].iterations, "{sentence}");
        r
    };
    // Another split of the rows at the same rank count (the same key and names).
    let mut shifted = even.clone();
    shifted[1] += 7;
    rebuilt(
        &shifted,
        0,
        &format!("was written for the split {even:?} of level 0's rows, not this run's {shifted:?}"),
    );
    assert_eq!(status(&run(&beam, &shifted, &cache)), "loaded");
    // Back to the even split: refused again (the entries are the shifted run's).
    let back = rebuilt(&even, 1, "of level 0's rows, not this run's");
    assert_same_run(&cold, &back, "rebuilt for the even split");
    // A truncated entry, and rank 0's entry as rank 1's.
    let bytes = std::fs::read(entry(0)).unwrap();
    std::fs::write(entry(0), &bytes[..bytes.len() / 2]).unwrap();
    assert_same_run(&cold, &rebuilt(&even, 0, "is truncated"), "truncated");
    std::fs::copy(entry(0), entry(1)).unwrap();
    assert_same_run(
        &cold,
        &rebuilt(&even, 1, "was written for rank 0 of 2 ranks, not rank 1 of 2"),
        "renamed",
    );
    assert_same_run(&cold, &run(&beam, &even, &cache), "loaded after the rebuilds");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_forged_product_plan_stops_every_rank_with_one_sentence() {
    use ptap_schedules::file::{write_bundle, ArrayData, MappedBundle};
    let dir = scratch("forged");
    let beam = Arc::new(BeamProblem::build(4).unwrap());
    let even = Partition::uniform(beam.a.nrows(), 2).unwrap().starts().to_vec();
    let cache = dir.join("cache");
    assert_eq!(status(&run(&beam, &even, &cache)), "written");
    let entry: PathBuf = std::fs::read_dir(&cache)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with("-np2-r1.ptapsched"))
        .unwrap();
    // Rewritten with this user's key (what a buggy writer could do): the
    // file layer accepts it, the plan's own checks must not.
    let mut bundle = MappedBundle::open(&entry).unwrap().to_bundle().unwrap();
    let maps = bundle.records[0]
        .arrays
        .iter_mut()
        .find(|a| a.name == "dist.out.maps")
        .expect("level 0 sends its product to the owners");
    match &mut maps.data {
        ArrayData::U32(v) => v[0] = u32::MAX,
        _ => panic!("maps are u32"),
    }
    write_bundle(&entry, &bundle).unwrap();
    let runs = try_run(&beam, &even, &cache);
    let errors: Vec<String> = runs.into_iter().map(|r| r.err().expect("the run must stop")).collect();
    eprintln!("{errors:?}");
    assert!(
        errors[1].contains("the schedule cache entry's product plan maps a block from rank 0 beyond")
            && !errors[1].contains('\n'),
        "{}",
        errors[1]
    );
    assert!(errors[0].contains("rank"), "{}", errors[0]);
    std::fs::remove_dir_all(&dir).ok();
}
