//! The distributed mesh setup on one rank, in process (no MPI), against the
//! single-process one: with the default (natural) aggregation the ranks run
//! the serial greedy MIS, so the aggregates, `P`'s blocks and the solve's
//! iterations are the single-process ones. Several ranks: tests/mpirun.rs
//! of the cli. The ignored test prints the setup's phases at `PTAP_K` (a
//! profile, not a measurement: run it where timings mean something).
use ptap_dist::{build_hierarchy, DistOptions, DistProblem, LocalMatrix, Partition, SingleRank};
use ptap_fem::BeamProblem;
use ptap_runtime::{CgOptions, Hierarchy, HierarchyOptions, MeshSetup};

fn one_rank(beam: &BeamProblem) -> DistProblem {
    let part = Partition::uniform(beam.a.nrows(), 1).unwrap();
    DistProblem {
        a: LocalMatrix::from_global(&beam.a, &part, &part, 0).unwrap(),
        part,
        near_null: beam.near_null.clone(),
        modes: beam.modes,
    }
}

#[test]
fn one_rank_builds_the_single_process_hierarchy_and_iterates_as_often() {
    for k in [2, 4] {
        let beam = BeamProblem::build(k).unwrap();
        let mut options = HierarchyOptions::default();
        // Coarse levels distributed too (k = 4: three levels).
        options.amg.coarse_eq_limit = 100;
        let comm = SingleRank;
        let (mut h, report) =
            build_hierarchy(&comm, one_rank(&beam), &options, &DistOptions::default(), &mut |_| {}).unwrap();
        let serial = MeshSetup::build(beam.a.clone(), &beam.near_null, beam.modes, &options, &mut |_| {}).unwrap();
        let summary = serial.summary();
        assert_eq!(report.levels.len(), summary.len(), "k {k}: levels");
        for (mine, theirs) in report.levels.iter().zip(&summary) {
            assert_eq!(mine.block_rows, theirs.block_rows, "k {k} level {}", mine.level);
            assert_eq!(mine.aggregates, theirs.aggregates, "k {k} level {}", mine.level);
            if let Some(t) = serial.levels[mine.level].transfer.as_ref() {
                assert_eq!(mine.p_blocks, Some(t.p.pattern().nnzb()), "k {k} level {}", mine.level);
            }
            let times = mine.setup_s.as_ref();
            assert_eq!(times.is_some(), !mine.replicated, "k {k} level {}", mine.level);
        }
        let n = beam.a.scalar_rows();
        let opts = CgOptions::default();
        let mut ws = h.workspace(500).unwrap();
        let mut x = vec![0.0; n];
        let r = h.solve(&beam.rhs, &mut x, &opts, &mut ws).unwrap();
        let mut s = Hierarchy::new(ptap_runtime::Cpu::new(options.kernels.clone()), serial, &mut |_| {}).unwrap();
        let mut sws = s.workspace(500).unwrap();
        let mut xs = vec![0.0; n];
        let rs = s.solve(&beam.rhs, &mut xs, &opts, &mut sws).unwrap();
        let tip = |x: &[f64]| x.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        eprintln!(
            "k {k}: one rank {} iterations, tip {:.12e}; single process {} iterations, tip {:.12e}; aggregates {:?}",
            r.iterations,
            tip(&x),
            rs.iterations,
            tip(&xs),
            report.levels.iter().map(|l| l.aggregates).collect::<Vec<_>>()
        );
        assert!(r.converged && rs.converged);
        assert_eq!(r.iterations, rs.iterations, "k {k}");
        assert!((tip(&x) - tip(&xs)).abs() <= 1e-8 * tip(&xs), "k {k}");
    }
}

#[test]
#[ignore = "a profile of the setup's phases at PTAP_K (default 8); run it where timings mean something"]
fn profile_the_distributed_mesh_setup() {
    let k: usize = std::env::var("PTAP_K").ok().and_then(|v| v.parse().ok()).unwrap_or(8);
    let beam = BeamProblem::build(k).unwrap();
    let options = HierarchyOptions::default();
    let comm = SingleRank;
    let t = std::time::Instant::now();
    let (_h, report) = build_hierarchy(&comm, one_rank(&beam), &options, &DistOptions::default(), &mut |_| {}).unwrap();
    eprintln!(
        "k {k}: mesh setup {:.3} s, with the matrix setup {:.3} s",
        report.mesh_setup_s,
        t.elapsed().as_secs_f64()
    );
    for l in &report.levels {
        eprintln!(
            "level {}: {} aggregates, {:?}",
            l.level,
            l.aggregates.unwrap_or(0),
            l.setup_s
        );
    }
    let t = std::time::Instant::now();
    let serial = MeshSetup::build(beam.a.clone(), &beam.near_null, beam.modes, &options, &mut |_| {}).unwrap();
    eprintln!(
        "single process: mesh setup {:.3} s ({:.3} s measured), aggregates {:?}",
        serial.timings.mesh_setup_s,
        t.elapsed().as_secs_f64(),
        serial.summary().iter().map(|l| l.aggregates).collect::<Vec<_>>()
    );
    for l in &serial.timings.mesh_levels {
        eprintln!("  {l:?}");
    }
}
