//! Loops over block rows that the registry instantiates per shape (and their
//! size-generic fallbacks), kept apart so the registry and the CPU backend
//! both use them without importing each other.
use ptap_sparse::dense::gemv_acc_dyn;
use ptap_sparse::kernels::SquareBlockKernels;
use rayon::prelude::*;

/// `x += alpha D^-1 r + beta t` over every block row, with the generated kernels `K`.
pub(crate) fn update_with<K: SquareBlockKernels>(
    dinv: &[f64],
    alpha: f64,
    r: &[f64],
    beta: f64,
    t: &[f64],
    x: &mut [f64],
) {
    let (b, bb) = (K::R, K::R * K::R);
    x.par_chunks_mut(b).with_min_len(512).enumerate().for_each(|(i, xi)| {
        K::chebyshev_update(&dinv[i * bb..], alpha, &r[i * b..], beta, &t[i * b..], xi);
    });
}

pub(crate) fn update_dyn(b: usize, dinv: &[f64], alpha: f64, r: &[f64], beta: f64, t: &[f64], x: &mut [f64]) {
    x.par_chunks_mut(b).with_min_len(512).enumerate().for_each(|(i, xi)| {
        let mut y = [0.0; 64];
        gemv_acc_dyn(
            b,
            b,
            &dinv[i * b * b..(i + 1) * b * b],
            &r[i * b..(i + 1) * b],
            &mut y[..b],
        );
        for q in 0..b {
            xi[q] += alpha * y[q] + if beta != 0.0 { beta * t[i * b + q] } else { 0.0 };
        }
    });
}
