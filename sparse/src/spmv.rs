//! Block sparse matrix-vector products (row-parallel CPU kernels).
//!
//! [`spmv_beta`] and [`residual`] run a size-generic loop for any block shape;
//! `*_with::<K>` run the unrolled `gemv` of a kernel type `K` (what
//! `ptap_runtime::KernelRegistry` instantiates for generated kernels). Both
//! accumulate in the same order (per block row, each block's row sums added
//! into a zeroed accumulator in pattern order, then `beta y + acc`), so they
//! give the same bits.
use crate::csr::BlockCsr;
use crate::kernels::{Block, BlockKernels};
use crate::pattern::BlockPattern;
use rayon::prelude::*;

const MIN_ROWS_PER_TASK: usize = 256;
/// Block rows of the size-generic loop's stack accumulator.
const MAX_BLOCK_ROWS: usize = 64;

#[inline(always)]
fn row_product<K: BlockKernels>(a: &BlockCsr, i: usize, x: &[f64], y: &mut [f64]) {
    let p = a.pattern();
    let cols = p.col_idx();
    for k in p.row_range(i) {
        let j = cols[k] as usize;
        K::gemv_acc(a.block(k), &x[j * K::C..j * K::C + K::C], y);
    }
}

fn check<K: BlockKernels>(a: &BlockCsr) {
    assert_eq!(
        a.block_shape(),
        (K::R, K::C),
        "kernels for {}x{} blocks handed a matrix of {:?} blocks",
        K::R,
        K::C,
        a.block_shape()
    );
}

/// `y = A x + beta y` with the kernels `K` of `A`'s block shape.
pub fn spmv_beta_with<K: BlockKernels>(a: &BlockCsr, x: &[f64], beta: f64, y: &mut [f64]) {
    check::<K>(a);
    assert_eq!(x.len(), a.scalar_cols(), "x has the wrong length");
    assert_eq!(y.len(), a.scalar_rows(), "y has the wrong length");
    y.par_chunks_mut(K::R)
        .with_min_len(MIN_ROWS_PER_TASK)
        .enumerate()
        .for_each(|(i, yi)| {
            let mut acc = K::Rows::ZERO;
            let acc = acc.as_mut();
            row_product::<K>(a, i, x, acc);
            for r in 0..K::R {
                yi[r] = if beta == 0.0 { acc[r] } else { beta * yi[r] + acc[r] };
            }
        });
}

/// `r = b - A x` in one pass over `A`, with the kernels `K` of `A`'s block shape.
pub fn residual_with<K: BlockKernels>(a: &BlockCsr, x: &[f64], b: &[f64], r: &mut [f64]) {
    check::<K>(a);
    assert_eq!(b.len(), a.scalar_rows());
    r.par_chunks_mut(K::R)
        .with_min_len(MIN_ROWS_PER_TASK)
        .enumerate()
        .for_each(|(i, ri)| {
            let mut acc = K::Rows::ZERO;
            let acc = acc.as_mut();
            row_product::<K>(a, i, x, acc);
            for q in 0..K::R {
                ri[q] = b[i * K::R + q] - acc[q];
            }
        });
}

/// A stored value, widened to `f64` where a kernel uses it: `f64` itself,
/// or the `f32` of a mixed-precision copy ([`crate::lowered`]).
pub(crate) trait Widen: Copy + Send + Sync {
    fn widen(self) -> f64;
}

impl Widen for f64 {
    #[inline(always)]
    fn widen(self) -> f64 {
        self
    }
}

impl Widen for f32 {
    #[inline(always)]
    fn widen(self) -> f64 {
        self as f64
    }
}

/// Block row `i` of `A x` into `acc` (zeroed, `br` long), the size-generic twin
/// of `row_product`: each block's row sums, each from its first product (the
/// expression tree of [`crate::dense::gemv_acc_dyn`] and of the generated
/// `gemv_acc`), added in pattern order.
#[inline(always)]
fn row_product_dyn<T: Widen>(
    p: &BlockPattern,
    (br, bc): (usize, usize),
    vals: &[T],
    i: usize,
    x: &[f64],
    acc: &mut [f64],
) {
    if bc == 0 {
        return;
    }
    let cols = p.col_idx();
    for k in p.row_range(i) {
        let j = cols[k] as usize;
        let (blk, xj) = (&vals[k * br * bc..(k + 1) * br * bc], &x[j * bc..(j + 1) * bc]);
        for r in 0..br {
            let row = &blk[r * bc..(r + 1) * bc];
            let mut s = row[0].widen() * xj[0];
            for c in 1..bc {
                s += row[c].widen() * xj[c];
            }
            acc[r] += s;
        }
    }
}

/// [`row_product_dyn`] for `B x B` blocks known at compile time: the same
/// operations in the same order (so the same bits), unrolled.
#[inline(always)]
fn row_product_square<const B: usize, T: Widen>(p: &BlockPattern, vals: &[T], i: usize, x: &[f64], acc: &mut [f64; B]) {
    let cols = p.col_idx();
    for k in p.row_range(i) {
        let j = cols[k] as usize;
        let (blk, xj) = (&vals[k * B * B..(k + 1) * B * B], &x[j * B..j * B + B]);
        for r in 0..B {
            let row = &blk[r * B..(r + 1) * B];
            let mut s = row[0].widen() * xj[0];
            for c in 1..B {
                s += row[c].widen() * xj[c];
            }
            acc[r] += s;
        }
    }
}

fn rows_square<const B: usize, T: Widen>(
    p: &BlockPattern,
    vals: &[T],
    x: &[f64],
    out: &mut [f64],
    f: impl Fn(usize, &[f64], &mut [f64]) + Sync,
) {
    out.par_chunks_mut(B)
        .with_min_len(MIN_ROWS_PER_TASK)
        .enumerate()
        .for_each(|(i, oi)| {
            let mut acc = [0.0f64; B];
            row_product_square::<B, T>(p, vals, i, x, &mut acc);
            f(i, &acc, oi);
        });
}

/// Runs `f(i, row i of A x, out's row i)` for every block row of the matrix
/// with pattern `p`, `shape` blocks and values `vals`, in parallel: unrolled
/// for the shipped square shapes, the size-generic loop otherwise (the same
/// bits either way).
pub(crate) fn for_each_block_row<T: Widen>(
    p: &BlockPattern,
    shape: (usize, usize),
    vals: &[T],
    x: &[f64],
    out: &mut [f64],
    f: impl Fn(usize, &[f64], &mut [f64]) + Sync,
) {
    let (br, bc) = shape;
    assert!(
        br <= MAX_BLOCK_ROWS,
        "block rows above {MAX_BLOCK_ROWS} are not supported by the SpMV accumulator"
    );
    assert_eq!(x.len(), p.ncols() * bc, "x has the wrong length");
    assert_eq!(out.len(), p.nrows() * br, "the output has the wrong length");
    match shape {
        (1, 1) => return rows_square::<1, T>(p, vals, x, out, f),
        (2, 2) => return rows_square::<2, T>(p, vals, x, out, f),
        (3, 3) => return rows_square::<3, T>(p, vals, x, out, f),
        (6, 6) => return rows_square::<6, T>(p, vals, x, out, f),
        _ => {}
    }
    out.par_chunks_mut(br)
        .with_min_len(MIN_ROWS_PER_TASK)
        .enumerate()
        .for_each(|(i, oi)| {
            let mut acc = [0.0f64; MAX_BLOCK_ROWS];
            let acc = &mut acc[..br];
            row_product_dyn(p, shape, vals, i, x, acc);
            f(i, acc, oi);
        });
}

/// `y = A x + beta y` (`beta = 0` overwrites, ignoring what `y` held), any block shape.
pub fn spmv_beta(a: &BlockCsr, x: &[f64], beta: f64, y: &mut [f64]) {
    for_each_block_row(a.pattern(), a.block_shape(), a.values(), x, y, |_, acc, yi| {
        for (yr, &s) in yi.iter_mut().zip(acc) {
            *yr = if beta == 0.0 { s } else { beta * *yr + s };
        }
    });
}

/// `y = A x`.
pub fn spmv(a: &BlockCsr, x: &[f64], y: &mut [f64]) {
    spmv_beta(a, x, 0.0, y)
}

/// `y += A x`.
pub fn spmv_add(a: &BlockCsr, x: &[f64], y: &mut [f64]) {
    spmv_beta(a, x, 1.0, y)
}

/// `r = b - A x` in one pass over `A`, any block shape.
pub fn residual(a: &BlockCsr, x: &[f64], b: &[f64], r: &mut [f64]) {
    assert_eq!(b.len(), a.scalar_rows(), "b has the wrong length");
    let br = a.block_shape().0;
    for_each_block_row(a.pattern(), a.block_shape(), a.values(), x, r, |i, acc, ri| {
        for q in 0..ri.len() {
            ri[q] = b[i * br + q] - acc[q];
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dense::Dense;

    fn sample(br: usize, bc: usize) -> BlockCsr {
        let (nr, nc) = (7, 5);
        let mut d = Dense::zeros(nr * br, nc * bc);
        for i in 0..nr {
            for j in 0..nc {
                if (i * 3 + j) % 4 != 1 {
                    for r in 0..br {
                        for c in 0..bc {
                            *d.at_mut(i * br + r, j * bc + c) = ((i * 31 + j * 7 + r * 3 + c) % 13) as f64 - 6.0;
                        }
                    }
                }
            }
        }
        BlockCsr::from_dense(&d, br, bc, false).unwrap()
    }

    #[test]
    fn spmv_matches_dense_for_shipped_and_generic_shapes() {
        for (br, bc) in [(3, 3), (3, 6), (6, 6), (1, 1), (4, 10), (5, 2)] {
            let a = sample(br, bc);
            let x: Vec<f64> = (0..a.scalar_cols()).map(|i| (i as f64 * 0.3).sin()).collect();
            let want = a.to_dense().matvec(&x);
            let mut y = vec![7.0; a.scalar_rows()];
            spmv(&a, &x, &mut y);
            for (g, w) in y.iter().zip(&want) {
                assert!((g - w).abs() <= 1e-13 * w.abs().max(1.0), "{br}x{bc}: {g} vs {w}");
            }
            let b: Vec<f64> = (0..a.scalar_rows()).map(|i| i as f64).collect();
            let mut r = vec![0.0; a.scalar_rows()];
            residual(&a, &x, &b, &mut r);
            for i in 0..r.len() {
                assert!((r[i] - (b[i] - want[i])).abs() <= 1e-12 * want[i].abs().max(1.0));
            }
        }
    }
}
