//! The beam through the whole CPU pipeline: hierarchy invariants and the solve.
//! Every variant's solve against the two-pass one is the conformance suite's
//! (`cg_takes_the_reference_iterations_and_solution`).
use ptap_amg::{aggregate_mis2, merge_rank_deficient, strength_graph, tentative_prolongator, AmgOptions};
use ptap_fem::BeamProblem;
use ptap_runtime::solver::CgWorkspace;
use ptap_runtime::{CgOptions, Cpu, Hierarchy, HierarchyOptions, KernelRegistry};
use ptap_sparse::dense::Dense;
use ptap_tests::asymmetry;

/// CG + V-cycle from `x = 0` with the default stopping rule.
fn solve_from_zero(h: &mut Hierarchy, rhs: &[f64]) -> (ptap_runtime::CgReport, Vec<f64>) {
    let n = rhs.len();
    let mut x = vec![0.0; n];
    let rep = h
        .solve(rhs, &mut x, &CgOptions::default(), &mut CgWorkspace::new(n, 500))
        .unwrap();
    (rep, x)
}

fn build(k: usize, coarse_eq_limit: usize) -> (BeamProblem, Hierarchy) {
    let problem = BeamProblem::build(k).unwrap();
    let mut opts = HierarchyOptions::default();
    opts.amg.coarse_eq_limit = coarse_eq_limit;
    let h = Hierarchy::build(problem.a.clone(), &problem.near_null, 6, &opts, &mut |_| {}).unwrap();
    (problem, h)
}

#[test]
fn tentative_prolongator_reproduces_rigid_body_modes_on_aggregated_rows() {
    // Arrange
    let problem = BeamProblem::build(2).unwrap();
    let opts = AmgOptions::default();
    let g = strength_graph(&problem.a, opts.threshold_at(0));
    let mut aggs = aggregate_mis2(&g);
    merge_rank_deficient(&mut aggs, &g, 3, 6, &problem.near_null, opts.rank_tolerance);
    // Act
    let t = tentative_prolongator(&aggs, &problem.near_null, 3, 6, opts.rank_tolerance);
    // Assert: P0 B_c = B row by row on aggregated nodes, exactly up to round-off.
    let bc = Dense {
        rows: aggs.count * 6,
        cols: 6,
        data: t.coarse_near_null.clone(),
    };
    let back = t.p0.to_dense().matmul(&bc);
    let mut worst = 0.0f64;
    for (node, &agg) in aggs.of_node.iter().enumerate() {
        assert_ne!(agg, u32::MAX, "every beam node has strong neighbours");
        for r in 0..3 {
            for m in 0..6 {
                let i = node * 3 + r;
                worst = worst.max((back.at(i, m) - problem.near_null[i * 6 + m]).abs());
            }
        }
    }
    assert!(worst < 1e-14, "max |P0 Bc - B| = {worst:e}");
    assert!(
        aggs.count >= 2,
        "k = 2 coarsens to several aggregates, got {}",
        aggs.count
    );
}

#[test]
fn beam_galerkin_product_matches_dense_triple_product_at_k1() {
    // Arrange: force one coarsening step on the 540-dof beam.
    let (_, h) = build(1, 100);
    assert!(h.num_levels() >= 2);
    for l in 0..h.num_levels() - 1 {
        let lev = &h.levels()[l];
        let p = &lev.transfer.as_ref().unwrap().p;
        // Act
        let want = p.to_dense().transpose().matmul(&lev.a.to_dense()).matmul(&p.to_dense());
        let got = h.levels()[l + 1].a.to_dense();
        // Assert
        let err = got.rel_diff(&want);
        assert!(err < 1e-13, "level {l}: relative error {err:e}");
        assert!(asymmetry(&h.levels()[l + 1].a) < 1e-13, "A_{} is symmetric", l + 1);
    }
}

#[test]
fn cg_with_amg_converges_on_the_beam_at_k2() {
    // Arrange
    let (problem, mut h) = build(2, 2000);
    assert_eq!(h.num_levels(), 2);
    let n = problem.rhs.len();
    // Act
    let (rep, x) = solve_from_zero(&mut h, &problem.rhs);
    // Assert: converged to rtol 1e-8 on the true residual, in few iterations.
    assert!(rep.converged);
    assert!(rep.iterations <= 20, "{} iterations", rep.iterations);
    let mut r = vec![0.0; n];
    ptap_sparse::spmv::residual(&problem.a, &x, &problem.rhs, &mut r);
    let rel = ptap_sparse::par::norm2(&r) / ptap_sparse::par::norm2(&problem.rhs);
    assert!(rel <= 1e-8, "true relative residual {rel:e}");
    // The tip moves about 15 (axial 10 plus the twist), per problem.md's estimate.
    let tip = x.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    assert!((14.0..16.0).contains(&tip), "tip displacement {tip}");
}

#[test]
fn refresh_with_the_same_values_reproduces_the_solve_bitwise() {
    let (problem, mut h) = build(2, 600);
    assert!(h.num_levels() >= 2);
    let solve = |h: &mut Hierarchy| {
        let (rep, x) = solve_from_zero(h, &problem.rhs);
        (rep.iterations, x)
    };
    let coarse_before = h.levels()[1].a.values().to_vec();
    let (it1, x1) = solve(&mut h);
    // Act
    h.refresh(problem.a.values()).unwrap();
    let (it2, x2) = solve(&mut h);
    // Assert
    assert_eq!(h.levels()[1].a.values(), &coarse_before[..]);
    assert_eq!(it1, it2);
    assert_eq!(x1, x2);
}

#[test]
fn refresh_rejects_wrong_length_and_nan() {
    let (problem, mut h) = build(1, 100);
    let err = h.refresh(&problem.a.values()[1..]).unwrap_err().to_string();
    assert!(err.contains("length"), "{err}");
    let mut bad = problem.a.values().to_vec();
    bad[17] = f64::NAN;
    let err = h.refresh(&bad).unwrap_err().to_string();
    assert!(err.contains("NaN"), "{err}");
}

#[test]
fn indefinite_operator_is_reported_not_solved() {
    // Flip the sign of the operator: every diagonal entry becomes negative.
    let problem = BeamProblem::build(1).unwrap();
    let mut a = problem.a.clone();
    for v in a.values_mut() {
        *v = -*v;
    }
    let mut opts = HierarchyOptions::default();
    opts.amg.coarse_eq_limit = 100;
    let err = Hierarchy::build(a, &problem.near_null, 6, &opts, &mut |_| {})
        .err()
        .expect("must fail")
        .to_string();
    assert!(
        err.contains("not symmetric positive definite") || err.contains("not SPD"),
        "{err}"
    );
}

#[test]
fn petsc_aggregation_builds_a_hierarchy_that_solves_the_beam_at_k3() {
    // Arrange: PETSc GAMG's aggressive coarsening (MIS on the square graph in
    // a fixed pseudo-random order), with and without the paper's filter.
    let problem = BeamProblem::build(3).unwrap();
    let mut iterations = Vec::new();
    for pf in [0.0, 0.03] {
        let mut opts = HierarchyOptions::default();
        opts.amg.aggregation = ptap_amg::Aggregation::Petsc;
        opts.amg.pf = pf;
        let mut h = Hierarchy::build(problem.a.clone(), &problem.near_null, 6, &opts, &mut |_| {}).unwrap();
        let natural = {
            let mut o = HierarchyOptions::default();
            o.amg.pf = pf;
            Hierarchy::build(problem.a.clone(), &problem.near_null, 6, &o, &mut |_| {}).unwrap()
        };
        // Fewer, larger level-0 aggregates than natural order, every node aggregated.
        let t = h.levels()[0].transfer.as_ref().unwrap();
        let tn = natural.levels()[0].transfer.as_ref().unwrap();
        assert_eq!(t.unaggregated_nodes, 0);
        assert!(t.aggregates < tn.aggregates, "{} >= {}", t.aggregates, tn.aggregates);
        // Act
        let (rep, x) = solve_from_zero(&mut h, &problem.rhs);
        // Assert: converged on the true residual, to the same tip.
        assert!(rep.converged, "pf {pf}: {} iterations", rep.iterations);
        let mut r = vec![0.0; x.len()];
        ptap_sparse::spmv::residual(&problem.a, &x, &problem.rhs, &mut r);
        let rel = ptap_sparse::par::norm2(&r) / ptap_sparse::par::norm2(&problem.rhs);
        assert!(rel <= 1e-8, "pf {pf}: true relative residual {rel:e}");
        let tip = x.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        assert!((14.0..16.0).contains(&tip), "tip displacement {tip}");
        iterations.push(rep.iterations);
    }
    // Pinned: 21 iterations with pf 0 and 0.03 (natural aggregation: 15; its
    // 92 level-0 aggregates against these 66 make a finer two-level hierarchy).
    assert_eq!(iterations, [21, 21]);
}

/// CG-Lanczos step by step through a backend's operations, each scalar read
/// on the host as it is made: the eigen-estimate before its scalars stayed on
/// the backend (`ptap_runtime::cycle::queue_lambda_max`).
struct Stepwise<'a, B: ptap_runtime::Backend> {
    be: &'a B,
    a: &'a B::Matrix,
    jacobi: &'a B::Jacobi,
}

impl<B: ptap_runtime::Backend> ptap_amg::eig::LanczosOps for Stepwise<'_, B> {
    type Vector = B::Vector;
    type Error = B::Error;
    fn apply(&self, x: &B::Vector, y: &mut B::Vector) -> Result<(), B::Error> {
        self.be.spmv(self.a, x, y)
    }
    fn precondition(&self, x: &B::Vector, y: &mut B::Vector) -> Result<(), B::Error> {
        self.be.fill(y, 0.0)?;
        self.be.jacobi_update(self.jacobi, 1.0, x, 0.0, x, y)
    }
    fn dot(&self, x: &B::Vector, y: &B::Vector) -> Result<f64, B::Error> {
        self.be.dot(x, y)
    }
    fn axpy(&self, alpha: f64, x: &B::Vector, y: &mut B::Vector) -> Result<(), B::Error> {
        self.be.axpy(alpha, x, y)
    }
    fn xpby(&self, x: &B::Vector, beta: f64, y: &mut B::Vector) -> Result<(), B::Error> {
        self.be.xpby(x, beta, y)
    }
    fn copy(&self, x: &B::Vector, y: &mut B::Vector) -> Result<(), B::Error> {
        self.be.copy(x, y)
    }
}

#[test]
fn eigen_estimates_keep_the_bits_of_the_stepwise_cg_lanczos() {
    // Arrange: a CPU hierarchy (its estimates queued, scalars read once).
    let (_, h) = build(4, 100);
    let be = h.backend();
    let iterations = h.options().amg.eig_iterations;
    let lambda = h.lambda_max();
    assert!(lambda.len() >= 2, "several smoothed levels");
    for (l, got) in lambda.iter().enumerate() {
        let lev = &h.levels()[l];
        let n = lev.scalar_rows();
        let start = ptap_amg::eig::pseudo_random_vector(n, ptap_runtime::cycle::EIG_SEED);
        let (mut r, mut z, mut p, mut ap) = (vec![0.0; n], vec![0.0; n], vec![0.0; n], vec![0.0; n]);
        let ops = Stepwise {
            be,
            a: &lev.a,
            jacobi: &lev.smoother.as_ref().unwrap().jacobi,
        };
        // Act
        let want = ptap_amg::eig::cg_lanczos(&ops, &start, iterations, &mut r, &mut z, &mut p, &mut ap).unwrap();
        // Assert
        assert_eq!(got.to_bits(), want.to_bits(), "level {l}: {got} against {want}");
    }
}

/// The two-pass executors mesh setup ran for the coarse operators the
/// aggregation needed are taken over by the CPU hierarchy (their buffers
/// already written, so the first refresh faults no pages in), and refresh to
/// the bits of executors built afresh; a copied mesh setup, or another
/// variant, builds its own.
#[test]
fn a_cpu_hierarchy_takes_over_the_products_mesh_setup_ran() {
    let (problem, mut h) = build(3, 100);
    let nl = h.num_levels();
    assert!(nl >= 3, "{nl} levels");
    // Every product but the last one (the coarsest operator's, which no aggregation reads).
    assert_eq!(h.timings.upload.products_adopted, nl - 2);
    let mut fresh = Hierarchy::new(Cpu::new(KernelRegistry::shipped().clone()), h.mesh_setup(), &mut |_| {}).unwrap();
    assert_eq!(fresh.timings.upload.products_adopted, 0);
    let doubled: Vec<f64> = problem.a.values().iter().map(|v| 2.0 * v).collect();
    h.refresh(&doubled).unwrap();
    fresh.refresh(&doubled).unwrap();
    for l in 1..nl {
        assert!(
            h.levels()[l]
                .a
                .values()
                .iter()
                .zip(fresh.levels()[l].a.values())
                .all(|(x, y)| x.to_bits() == y.to_bits()),
            "level {l}: the adopted product's refresh differs from a fresh one's"
        );
    }
    let mut opts = HierarchyOptions::default();
    opts.amg.coarse_eq_limit = 100;
    opts.variant = Some(ptap_schedules::Variant::ColumnSplit);
    let other = Hierarchy::build(problem.a.clone(), &problem.near_null, 6, &opts, &mut |_| {}).unwrap();
    assert_eq!(other.timings.upload.products_adopted, 0);
}
