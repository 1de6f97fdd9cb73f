//! A device product's numeric refresh allocates nothing on the host: every
//! kernel it launches was looked up when the product was built, and every
//! launch marshals its arguments on the stack. Counted with a global
//! allocator on the test's own thread, for every device executor on the
//! beam's 3x3 / 3x6 and 6x6 levels.
//!
//! A device hierarchy's whole refresh (values uploaded, products, smoothers,
//! eigen-estimates, coarse factor) and its solve allocate nothing either.
//!
//! Without a CUDA driver the tests print `skipping: ...` and pass.
use ptap_cuda::Cuda;
use ptap_cuda::{DeviceOptions, DEVICE_EXECUTORS};
use ptap_runtime::{Backend, CgOptions, Hierarchy, HierarchyOptions};
use ptap_schedules::{TwoPassSchedule, Variant, VariantSchedule};
use ptap_sparse::BlockCsr;
use ptap_tests::alloc_count::{allocations_in, Counting, CountingPool};
use std::sync::Arc;

#[global_allocator]
static GLOBAL: Counting = Counting;

#[test]
fn a_device_products_refresh_allocates_nothing_on_the_host() {
    let Some(be) = ptap_tests::conformance::cuda_or_skip(DeviceOptions::default()) else {
        return;
    };
    // The beam at k = 3 with a low coarsening limit: a 3x3 / 3x6 level and 6x6 ones.
    let problem = ptap_fem::BeamProblem::build(3).unwrap();
    let mut opts = HierarchyOptions::default();
    opts.amg.coarse_eq_limit = 100;
    let h = Hierarchy::build(problem.a, &problem.near_null, 6, &opts, &mut |_| {}).unwrap();
    let mut shapes = Vec::new();
    for lev in h.levels() {
        let Some(t) = &lev.transfer else { continue };
        let (bf, bc) = t.p.block_shape();
        shapes.push((bf, bc));
        let base = Arc::new(TwoPassSchedule::inspect(lev.a.pattern_arc().clone(), t.p.pattern_arc().clone()).unwrap());
        let (da, dp) = (be.matrix_ref(&lev.a).unwrap(), be.matrix_ref(&t.p).unwrap());
        for v in DEVICE_EXECUTORS {
            let schedule = VariantSchedule::inspect(v, base.clone(), bf * bc);
            let mut product = be.product(&schedule, bf, bc).unwrap();
            let mut dc = be.matrix(BlockCsr::zeros(base.c.clone(), bc, bc), false).unwrap();
            // The first refresh may load the set's module; later ones only launch.
            be.galerkin(&mut product, &da, &dp, &mut dc).unwrap();
            be.synchronize().unwrap();
            let n = allocations_in(|| {
                for _ in 0..3 {
                    be.galerkin(&mut product, &da, &dp, &mut dc).unwrap();
                }
            });
            be.synchronize().unwrap();
            assert_eq!(
                n,
                0,
                "{}x{} {}: {n} host allocations in three refreshes",
                bf,
                bc,
                v.name()
            );
        }
    }
    assert!(shapes.contains(&(3, 6)) && shapes.contains(&(6, 6)), "{shapes:?}");
}

#[test]
fn a_device_hierarchys_refresh_and_solve_allocate_nothing_on_the_host() {
    let Some(dev) = ptap_tests::cuda_device_or_skip(DeviceOptions::default()) else {
        return;
    };
    let problem = ptap_fem::BeamProblem::build(3).unwrap();
    let mut opts = HierarchyOptions::default();
    opts.amg.coarse_eq_limit = 100;
    let h = Hierarchy::build(problem.a.clone(), &problem.near_null, 6, &opts, &mut |_| {}).unwrap();
    let scaled: Vec<f64> = problem.a.values().iter().map(|v| 4.0 * v).collect();
    let n = problem.rhs.len();
    let pool = CountingPool::new(2);
    for variant in [Variant::ColumnSplit, Variant::TensorPairSym] {
        for mirror in [false, true] {
            let mut setup = h.mesh_setup().with_variant(variant).unwrap();
            setup.options.mirror_spmv = mirror;
            let mut dh = Hierarchy::new(Cuda::new(&dev).unwrap(), setup, &mut |_| {}).unwrap();
            dh.matrix_setup().unwrap();
            let mut ws = dh.workspace(500).unwrap();
            let mut x = vec![0.0; n];
            let cg = CgOptions::default();
            let (count, r) = pool.install(|| {
                // A first round records whatever the solve replays.
                dh.refresh(&scaled).unwrap();
                dh.solve(&problem.rhs, &mut x, &cg, &mut ws).unwrap();
                dh.refresh(problem.a.values()).unwrap();
                x.fill(0.0);
                // `install` runs this on a marked worker: the calling thread counts too.
                let before = pool.allocations();
                dh.refresh(&scaled).unwrap();
                let r = dh.solve(&problem.rhs, &mut x, &cg, &mut ws).unwrap();
                (pool.allocations() - before, r)
            });
            assert_eq!(
                count,
                0,
                "{} (mirrored SpMV {mirror}): a refresh and a solve allocated {count} times on the host",
                variant.name()
            );
            assert!(r.converged, "{}: did not converge", variant.name());
        }
    }
}
