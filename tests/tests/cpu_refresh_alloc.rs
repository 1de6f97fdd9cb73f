//! On the CPU, a numeric refresh and a solve allocate nothing: every product
//! executor's `numeric` over its schedule, and a whole hierarchy's refresh
//! (products, smoothers, eigen-estimates, coarse factor) followed by a CG
//! solve. Counted on the workers of a marked rayon pool (the measured code
//! runs inside it), on the beam's 3x3 / 3x6 and 6x6 levels.
use ptap_fem::BeamProblem;
use ptap_runtime::solver::CgWorkspace;
use ptap_runtime::{executor_for, CgOptions, Cpu, Hierarchy, HierarchyOptions, SmootherPrecision};
use ptap_schedules::{TwoPassSchedule, Variant, VariantSchedule};
use ptap_sparse::BlockCsr;
use ptap_tests::alloc_count::{Counting, CountingPool};
use std::sync::Arc;

#[global_allocator]
static GLOBAL: Counting = Counting;

/// The beam at `k` with a low coarsening limit: a 3x3 / 3x6 level and 6x6 ones.
fn beam_hierarchy(k: usize) -> (BeamProblem, Hierarchy) {
    let problem = BeamProblem::build(k).unwrap();
    let mut opts = HierarchyOptions::default();
    opts.amg.coarse_eq_limit = 100;
    let h = Hierarchy::build(problem.a.clone(), &problem.near_null, 6, &opts, &mut |_| {}).unwrap();
    (problem, h)
}

#[test]
fn every_cpu_products_refresh_allocates_nothing() {
    let (_, h) = beam_hierarchy(3);
    let pool = CountingPool::new(2);
    let mut shapes = Vec::new();
    for lev in h.levels() {
        let Some(t) = &lev.transfer else { continue };
        let (bf, bc) = t.p.block_shape();
        shapes.push((bf, bc));
        let (a, p) = (&lev.a, &t.p);
        let base = Arc::new(TwoPassSchedule::inspect(a.pattern_arc().clone(), p.pattern_arc().clone()).unwrap());
        for v in Variant::ALL {
            let schedule = VariantSchedule::inspect(v, base.clone(), bf * bc);
            let mut product = executor_for(&schedule, bf, bc).unwrap();
            let mut c = BlockCsr::zeros(product.coarse_pattern().clone(), bc, bc);
            let (n, first) = pool.install(|| {
                // The first call may size what it keeps; later ones only stream.
                product.numeric(a, p, &mut c).unwrap();
                let first = c.values().to_vec();
                let before = pool.allocations();
                for _ in 0..3 {
                    product.numeric(a, p, &mut c).unwrap();
                }
                (pool.allocations() - before, first)
            });
            assert_eq!(n, 0, "{bf}x{bc} {}: {n} allocations in three refreshes", v.name());
            // V4 scatters with atomics (not deterministic): the same values to rounding.
            let scale = first.iter().fold(0.0f64, |m, x| m.max(x.abs()));
            let same = |x: f64, y: f64| match v {
                Variant::OuterProductScatter => (x - y).abs() <= 1e-13 * scale,
                _ => x.to_bits() == y.to_bits(),
            };
            assert!(
                c.values().iter().zip(&first).all(|(&x, &y)| same(x, y)),
                "{bf}x{bc} {}: a repeated refresh changed the values",
                v.name()
            );
            assert!(
                c.values().iter().any(|&x| x != 0.0),
                "{bf}x{bc} {}: no product",
                v.name()
            );
        }
    }
    assert!(shapes.contains(&(3, 6)) && shapes.contains(&(6, 6)), "{shapes:?}");
}

/// With `f64` and with `f32` smoother operators (the `f32` copies refreshed
/// into their own storage).
#[test]
fn a_cpu_hierarchys_refresh_and_solve_allocate_nothing() {
    for precision in [SmootherPrecision::F64, SmootherPrecision::F32] {
        refresh_and_solve_allocate_nothing(precision);
    }
}

fn refresh_and_solve_allocate_nothing(precision: SmootherPrecision) {
    let (problem, h) = beam_hierarchy(3);
    let mut setup = h.mesh_setup();
    setup.options.smoother_precision = precision;
    let mut h = Hierarchy::new(Cpu::default(), setup, &mut |_| {}).unwrap();
    assert!(h.num_levels() >= 3, "{} levels", h.num_levels());
    let n = problem.rhs.len();
    let opts = CgOptions::default();
    let mut ws = CgWorkspace::new(n, 500);
    let mut x = vec![0.0; n];
    let reference = h.solve(&problem.rhs, &mut x, &opts, &mut ws).unwrap();
    // Values times 4 (exact in binary): the same steps on scaled numbers.
    let scaled: Vec<f64> = problem.a.values().iter().map(|v| 4.0 * v).collect();
    let pool = CountingPool::new(2);
    let mut x4 = vec![0.0; n];
    let (r4, count) = pool.install(|| {
        // A first round sizes whatever the solve keeps between calls.
        h.refresh(&scaled).unwrap();
        h.solve(&problem.rhs, &mut x4, &opts, &mut ws).unwrap();
        h.refresh(problem.a.values()).unwrap();
        let before = pool.allocations();
        h.refresh(&scaled).unwrap();
        x4.fill(0.0);
        let r4 = h.solve(&problem.rhs, &mut x4, &opts, &mut ws).unwrap();
        (r4, pool.allocations() - before)
    });
    assert_eq!(
        count, 0,
        "{precision:?} smoothers: a refresh and a solve allocated {count} times"
    );
    assert_eq!(r4.iterations, reference.iterations);
    assert!(
        x4.iter().zip(&x).all(|(a, b)| a.to_bits() == (b / 4.0).to_bits()),
        "the scaled operator's solution is not x / 4 bit for bit"
    );
}

#[test]
fn the_counters_see_allocations_on_their_own_threads_only() {
    let here = ptap_tests::alloc_count::allocations_in(|| {
        std::hint::black_box(vec![1u8; 16]);
    });
    assert_eq!(here, 1);
    let pool = CountingPool::new(2);
    let before = pool.allocations();
    pool.install(|| {
        use rayon::prelude::*;
        (0..64).into_par_iter().for_each(|i| {
            std::hint::black_box(vec![i as u8; 16]);
        });
    });
    assert!(pool.allocations() - before >= 64, "{}", pool.allocations() - before);
    // A thread the measuring one starts is not marked: what it allocates is
    // not counted, only the start itself (the same allocations whatever the
    // thread then does; the first start is left out, it may set things up).
    let started = |n: usize| {
        ptap_tests::alloc_count::allocations_in(|| {
            std::thread::spawn(move || {
                for i in 0..n {
                    std::hint::black_box(vec![i as u8; 16]);
                }
            })
            .join()
            .unwrap();
        })
    };
    started(0);
    assert_eq!(started(100), started(0));
}
