//! The two-pass Galerkin product (V0) against the dense triple product.
use proptest::prelude::*;
use ptap_runtime::TwoPassExecutor;
use ptap_schedules::TwoPassSchedule;
use ptap_sparse::BlockCsr;
use ptap_tests::{asymmetry, random_block_csr, Rng};
use std::sync::Arc;

/// Relative Frobenius tolerance for a reordered sum of O(100) products.
const TOL: f64 = 1e-13;

fn two_pass(a: &BlockCsr, p: &BlockCsr) -> BlockCsr {
    let s = Arc::new(TwoPassSchedule::inspect(a.pattern_arc().clone(), p.pattern_arc().clone()).unwrap());
    let mut exec = TwoPassExecutor::new(s.clone(), a.block_shape().0, p.block_shape().1);
    let mut c = BlockCsr::zeros(s.c.clone(), p.block_shape().1, p.block_shape().1);
    exec.numeric(a, p, &mut c).unwrap();
    c
}

fn dense_ptap(a: &BlockCsr, p: &BlockCsr) -> ptap_sparse::dense::Dense {
    let pd = p.to_dense();
    pd.transpose().matmul(&a.to_dense()).matmul(&pd)
}

fn check_random(seed: u64, nf: usize, nc: usize, bf: usize, bc: usize, density: f64) {
    // Arrange
    let mut rng = Rng::new(seed);
    let a = random_block_csr(&mut rng, nf, nf, bf, bf, density, true);
    let p = random_block_csr(&mut rng, nf, nc, bf, bc, 0.3, false);
    // Act
    let c = two_pass(&a, &p);
    // Assert
    let err = c.to_dense().rel_diff(&dense_ptap(&a, &p));
    assert!(
        err <= TOL,
        "seed {seed}, {nf}x{nc} blocks {bf}x{bf}/{bf}x{bc}: relative error {err:e}"
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn elasticity_fine_shapes_match_dense(seed in any::<u64>(), nf in 1usize..40, nc in 1usize..12, density in 0.05f64..0.6) {
        check_random(seed, nf, nc, 3, 6, density);
    }

    #[test]
    fn elasticity_coarse_shapes_match_dense(seed in any::<u64>(), nf in 1usize..30, nc in 1usize..10, density in 0.05f64..0.6) {
        check_random(seed, nf, nc, 6, 6, density);
    }

    #[test]
    fn scalar_and_unshipped_shapes_match_dense(seed in any::<u64>(), nf in 1usize..30, nc in 1usize..10) {
        check_random(seed, nf, nc, 1, 1, 0.3);
        check_random(seed, nf, nc, 4, 10, 0.3); // a shape the dispatcher does not ship
    }
}

#[test]
fn symmetric_a_gives_symmetric_coarse_operator() {
    // Arrange: A = M + M^T with a random pattern.
    let mut rng = Rng::new(7);
    let m = random_block_csr(&mut rng, 25, 25, 3, 3, 0.2, true);
    let mut sym = m.to_dense();
    let t = sym.transpose();
    for (x, y) in sym.data.iter_mut().zip(&t.data) {
        *x += y;
    }
    let a = BlockCsr::from_dense(&sym, 3, 3, true).unwrap();
    let p = random_block_csr(&mut rng, 25, 6, 3, 6, 0.3, false);
    // Act
    let c = two_pass(&a, &p);
    // Assert
    assert!(asymmetry(&c) < 1e-14, "asymmetry {}", asymmetry(&c));
}

#[test]
fn numeric_refresh_is_bitwise_repeatable_and_tracks_new_values() {
    let mut rng = Rng::new(11);
    let mut a = random_block_csr(&mut rng, 30, 30, 3, 3, 0.3, true);
    let p = random_block_csr(&mut rng, 30, 8, 3, 6, 0.3, false);
    let s = Arc::new(TwoPassSchedule::inspect(a.pattern_arc().clone(), p.pattern_arc().clone()).unwrap());
    let mut exec = TwoPassExecutor::new(s.clone(), 3, 6);
    let mut c1 = BlockCsr::zeros(s.c.clone(), 6, 6);
    let mut c2 = BlockCsr::zeros(s.c.clone(), 6, 6);
    exec.numeric(&a, &p, &mut c1).unwrap();
    exec.numeric(&a, &p, &mut c2).unwrap();
    assert_eq!(c1.values(), c2.values(), "same input, same bytes");
    for v in a.values_mut() {
        *v *= 2.0;
    }
    exec.numeric(&a, &p, &mut c2).unwrap();
    for (x, y) in c1.values().iter().zip(c2.values()) {
        assert_eq!(2.0 * x, *y, "scaling A by 2 scales A_c by exactly 2");
    }
}

#[test]
fn executor_refuses_a_matrix_of_another_pattern() {
    let mut rng = Rng::new(3);
    let a = random_block_csr(&mut rng, 10, 10, 3, 3, 0.3, true);
    let other = random_block_csr(&mut rng, 10, 10, 3, 3, 0.6, true);
    let p = random_block_csr(&mut rng, 10, 4, 3, 6, 0.4, false);
    let s = Arc::new(TwoPassSchedule::inspect(a.pattern_arc().clone(), p.pattern_arc().clone()).unwrap());
    let mut exec = TwoPassExecutor::new(s.clone(), 3, 6);
    let mut c = BlockCsr::zeros(s.c.clone(), 6, 6);
    let err = exec.numeric(&other, &p, &mut c).unwrap_err().to_string();
    assert!(err.contains("different A pattern"), "{err}");
}

#[test]
fn inspector_rejects_incompatible_shapes() {
    let mut rng = Rng::new(5);
    let a = random_block_csr(&mut rng, 10, 10, 3, 3, 0.3, true);
    let p = random_block_csr(&mut rng, 9, 4, 3, 6, 0.4, false);
    let err = TwoPassSchedule::inspect(a.pattern_arc().clone(), p.pattern_arc().clone()).unwrap_err();
    assert!(err.to_string().contains("needs a square A"), "{err}");
}
