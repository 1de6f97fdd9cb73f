//! The distributed AMG on one rank, in process (no MPI): its Galerkin
//! product against the serial two-pass executor bit for bit, its solve
//! against the serial solver's, a refresh (scaled values give scaled
//! solutions, bit for bit) that allocates nothing, and the refusals (a
//! global mesh setup on the ranks' backend among them).
//! Several ranks are tested under mpirun (tests/mpirun.rs).
use ptap_dist::{build_hierarchy, DistBackend, DistMat, DistOptions, DistProblem, LocalMatrix, Partition, SingleRank};
use ptap_fem::BeamProblem;
use ptap_runtime::{CgOptions, Hierarchy, HierarchyOptions, MeshSetup};
use ptap_schedules::{inspect, BlockShape, ProductPolicy, Variant};
use ptap_sparse::BlockCsr;
use ptap_tests::alloc_count::{Counting, CountingPool};

/// Counts allocations on the threads of the pool that runs the measured
/// refresh and solve, to check that these allocate nothing.
#[global_allocator]
static GLOBAL: Counting = Counting;

fn one_rank(beam: &BeamProblem) -> DistProblem {
    let part = Partition::uniform(beam.a.nrows(), 1).unwrap();
    DistProblem {
        a: LocalMatrix::from_global(&beam.a, &part, &part, 0).unwrap(),
        part,
        near_null: beam.near_null.clone(),
        modes: beam.modes,
    }
}

fn rel(x: f64, y: f64) -> f64 {
    (x - y).abs() / y.abs()
}

#[test]
fn one_rank_products_solve_and_refresh_match_the_serial_code() {
    let beam = BeamProblem::build(2).unwrap();
    let options = HierarchyOptions::default();
    let comm = SingleRank;
    let (mut h, report) =
        build_hierarchy(&comm, one_rank(&beam), &options, &DistOptions::default(), &mut |_| {}).unwrap();
    assert_eq!(h.num_levels(), 2);
    // The single-process (natural-order) aggregates.
    assert_eq!(report.levels[0].aggregates, Some(40));
    assert!(report.levels[1].replicated);

    // The coarse operator is the serial two-pass P^T A P of the same P, bit for bit.
    let p: BlockCsr = match &h.levels()[0].transfer.as_ref().unwrap().p {
        DistMat::RowsToWhole(p) => p.clone(),
        _ => panic!("the level above the whole level prolongates into it"),
    };
    assert_eq!(p.block_shape(), (3, 6));
    let inspected = inspect(
        beam.a.pattern_arc().clone(),
        p.pattern_arc().clone(),
        BlockShape::new(3, 6),
        &ProductPolicy::Fixed(Variant::TwoPass),
    )
    .unwrap();
    let mut c = BlockCsr::zeros(inspected.base.c.clone(), 6, 6);
    ptap_runtime::executor_for(&inspected.schedule, 3, 6)
        .unwrap()
        .numeric(&beam.a, &p, &mut c)
        .unwrap();
    let mine = h.operator_values(1).unwrap();
    assert_eq!(mine.len(), c.values().len());
    assert!(mine.iter().zip(c.values()).all(|(x, y)| x.to_bits() == y.to_bits()));

    // The solve: the iterations mpirun -np 1, 2 and 3 report (tests/mpirun.rs),
    // the serial solver's tip to its tolerance.
    let n = beam.a.scalar_rows();
    let opts = CgOptions::default();
    let mut ws = h.workspace(500).unwrap();
    let mut x = vec![0.0; n];
    let r = h.solve(&beam.rhs, &mut x, &opts, &mut ws).unwrap();
    assert!(r.converged);
    assert_eq!(r.iterations, 13);
    let tip = x.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let mut serial = Hierarchy::build(beam.a.clone(), &beam.near_null, beam.modes, &options, &mut |_| {}).unwrap();
    let mut sws = serial.workspace(500).unwrap();
    let mut xs = vec![0.0; n];
    let rs = serial.solve(&beam.rhs, &mut xs, &opts, &mut sws).unwrap();
    let tip_serial = xs.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    eprintln!(
        "one rank: {} iterations, tip {tip:.12e}; serial (natural aggregation): {} iterations, tip {tip_serial:.12e}",
        r.iterations, rs.iterations
    );
    assert!(rel(tip, tip_serial) < 1e-7, "tip {tip} against the serial {tip_serial}");
    assert_eq!(
        r.iterations, rs.iterations,
        "the single-process aggregates iterate as often"
    );

    // A refresh with the values times 4 (exact in binary): the same steps on
    // scaled numbers, so the same iterations and x / 4 bit for bit; neither
    // the refresh nor the solve allocates. (Measured inside a rayon worker:
    // parallel loops started from outside the pool queue their jobs in
    // rayon's injector, which allocates a block every 63 jobs, the serial
    // solver's too.)
    let scaled: Vec<f64> = beam.a.values().iter().map(|v| 4.0 * v).collect();
    let pool = CountingPool::new(2);
    let (r4, x4, allocations) = pool.install(|| {
        let mut x4 = vec![0.0; n];
        h.refresh(&scaled).unwrap();
        h.solve(&beam.rhs, &mut x4, &opts, &mut ws).unwrap();
        h.refresh(beam.a.values()).unwrap();
        let before = pool.allocations();
        h.refresh(&scaled).unwrap();
        x4.fill(0.0);
        let r4 = h.solve(&beam.rhs, &mut x4, &opts, &mut ws).unwrap();
        (r4, x4, pool.allocations() - before)
    });
    assert_eq!(r4.iterations, r.iterations);
    assert!(x4.iter().zip(&x).all(|(a, b)| a.to_bits() == (b / 4.0).to_bits()));
    assert_eq!(allocations, 0, "a refresh and a solve allocated {allocations} times");
}

#[test]
fn what_the_distributed_setup_cannot_do_is_refused_in_one_sentence() {
    let beam = BeamProblem::build(2).unwrap();
    let comm = SingleRank;
    let mut problem = one_rank(&beam);
    problem.near_null.pop();
    let e = build_hierarchy(
        &comm,
        problem,
        &HierarchyOptions::default(),
        &DistOptions::default(),
        &mut |_| {},
    )
    .err()
    .unwrap()
    .to_string();
    assert!(e.contains("near-null values"), "{e}");
    // A global mesh setup has no place on the ranks' backend.
    let options = HierarchyOptions::default();
    let setup = MeshSetup::build(beam.a.clone(), &beam.near_null, beam.modes, &options, &mut |_| {}).unwrap();
    let backend = DistBackend::new(&comm, options.kernels.clone());
    let e = Hierarchy::new(backend, setup, &mut |_| {}).err().unwrap().to_string();
    assert!(e.contains("ptap_dist::build_hierarchy"), "{e}");
}

/// One rank whose reductions can report that another rank failed (the
/// "failed" flag [`ptap_dist::comm::agree`] reduces), armed for one call.
struct OtherRankFails {
    armed: std::cell::Cell<bool>,
}

impl ptap_dist::Comm for OtherRankFails {
    fn rank(&self) -> usize {
        0
    }
    fn size(&self) -> usize {
        1
    }
    fn exchange(
        &self,
        sends: &[ptap_dist::Link],
        send: &[f64],
        recvs: &[ptap_dist::Link],
        recv: &mut [f64],
        overlap: &mut dyn FnMut(),
    ) {
        SingleRank.exchange(sends, send, recvs, recv, overlap)
    }
    fn all_reduce_sum(&self, values: &mut [f64]) {
        if self.armed.replace(false) {
            values[0] += 1.0;
        }
    }
    fn broadcast(&self, root: usize, values: &mut [f64]) {
        SingleRank.broadcast(root, values)
    }
    fn gather(&self, root: usize, local: &[f64]) -> Option<Vec<f64>> {
        SingleRank.gather(root, local)
    }
    fn all_to_all_u64(&self, send: &[Vec<u64>]) -> Vec<Vec<u64>> {
        SingleRank.all_to_all_u64(send)
    }
}

/// A refresh checks each rank's own values, and every rank takes the same
/// branch: a NaN here is this rank's sentence; a failure on another rank
/// (the agreement's all-reduce says so) stops this one too, before any
/// collective of the matrix setup could wait for the rank that left.
#[test]
fn a_refresh_fails_on_every_rank_when_one_rank_s_values_are_bad() {
    use ptap_dist::Comm;
    let beam = BeamProblem::build(2).unwrap();
    let comm = OtherRankFails {
        armed: std::cell::Cell::new(false),
    };
    let (mut h, _) = build_hierarchy(
        &comm,
        one_rank(&beam),
        &HierarchyOptions::default(),
        &DistOptions::default(),
        &mut |_| {},
    )
    .unwrap();
    assert_eq!(comm.size(), 1);
    let mut bad = beam.a.values().to_vec();
    bad[7] = f64::NAN;
    let e = h.refresh(&bad).unwrap_err().to_string();
    assert!(e.contains("NaN") && e.contains("value 7"), "{e}");
    comm.armed.set(true);
    let e = h.refresh(beam.a.values()).unwrap_err().to_string();
    assert!(e.contains("1 other rank(s) failed"), "{e}");
    assert!(!comm.armed.get(), "the agreement reduced once");
    // And with every rank well, the refresh goes through.
    h.refresh(beam.a.values()).unwrap();
}
