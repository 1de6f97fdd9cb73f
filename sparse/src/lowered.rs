//! A block matrix's values rounded to `f32` over its pattern: the operator of
//! the mixed-precision smoother (`SmootherPrecision::F32`), with half the value
//! bytes of the `f64` one.
//!
//! Its SpMV and residual widen each value to `f64` where it is used and sum
//! exactly as the `f64` kernels do ([`crate::spmv`]: per block row, each
//! block's row sums, each from its first product, added in pattern order into
//! a zeroed accumulator). So they give the bits of the `f64` kernels on the
//! rounded values, the reference the conformance suite checks.
use crate::csr::BlockCsr;
use crate::error::SparseError;
use crate::pattern::BlockPattern;
use rayon::prelude::*;
use std::sync::Arc;

/// Block rows a parallel task takes at least.
const MIN_ROWS_PER_TASK: usize = 256;
/// Block rows of the size-generic loop's stack accumulator.
const MAX_BLOCK_ROWS: usize = 64;

/// `f32` values over a block pattern (row-major blocks, pattern order).
#[derive(Clone, Debug)]
pub struct LoweredCsr {
    pattern: Arc<BlockPattern>,
    br: usize,
    bc: usize,
    values: Vec<f32>,
}

impl LoweredCsr {
    /// Zero storage over `a`'s pattern and block shape ([`LoweredCsr::round_from`] fills it).
    pub fn zeros_like(a: &BlockCsr) -> Self {
        let (br, bc) = a.block_shape();
        Self {
            pattern: a.pattern_arc().clone(),
            br,
            bc,
            values: vec![0.0; a.values().len()],
        }
    }

    /// Overwrites the values with `a`'s rounded to the nearest `f32` (ties to
    /// even), in parallel, allocating nothing. `a` must have this storage's
    /// pattern and block shape. Returns whether some finite value was beyond
    /// `f32`'s range (it is stored as an infinity).
    pub fn round_from(&mut self, a: &BlockCsr) -> Result<bool, SparseError> {
        if a.values().len() != self.values.len() || a.block_shape() != (self.br, self.bc) {
            return Err(SparseError::Dimension {
                what: format!(
                    "an f32 copy of {} values in {}x{} blocks cannot take {} values in {}x{} blocks",
                    self.values.len(),
                    self.br,
                    self.bc,
                    a.values().len(),
                    a.block_shape().0,
                    a.block_shape().1
                ),
            });
        }
        Ok(self
            .values
            .par_iter_mut()
            .zip(a.values().par_iter())
            .with_min_len(4096)
            .map(|(l, &v)| {
                *l = v as f32;
                l.is_infinite() && v.is_finite()
            })
            .reduce(|| false, |x, y| x || y))
    }

    pub fn pattern(&self) -> &BlockPattern {
        &self.pattern
    }
    pub fn block_shape(&self) -> (usize, usize) {
        (self.br, self.bc)
    }
    pub fn values(&self) -> &[f32] {
        &self.values
    }
    pub fn scalar_rows(&self) -> usize {
        self.pattern.nrows() * self.br
    }
    pub fn scalar_cols(&self) -> usize {
        self.pattern.ncols() * self.bc
    }
    /// Bytes of the values and index arrays.
    pub fn bytes(&self) -> usize {
        self.values.len() * 4 + self.pattern.index_bytes()
    }
}

/// Block row `i` of `A x` into `acc` (zeroed, `br` long), any block shape.
#[inline(always)]
fn row_product_dyn(a: &LoweredCsr, i: usize, x: &[f64], acc: &mut [f64]) {
    let (br, bc) = (a.br, a.bc);
    let cols = a.pattern.col_idx();
    for k in a.pattern.row_range(i) {
        let j = cols[k] as usize;
        let (blk, xj) = (&a.values[k * br * bc..(k + 1) * br * bc], &x[j * bc..(j + 1) * bc]);
        if bc == 0 {
            continue;
        }
        for r in 0..br {
            let row = &blk[r * bc..(r + 1) * bc];
            let mut s = row[0] as f64 * xj[0];
            for c in 1..bc {
                s += row[c] as f64 * xj[c];
            }
            acc[r] += s;
        }
    }
}

/// [`row_product_dyn`] for `B x B` blocks known at compile time: the same
/// operations in the same order, unrolled.
#[inline(always)]
fn row_product_square<const B: usize>(a: &LoweredCsr, i: usize, x: &[f64], acc: &mut [f64; B]) {
    let cols = a.pattern.col_idx();
    for k in a.pattern.row_range(i) {
        let j = cols[k] as usize;
        let (blk, xj) = (&a.values[k * B * B..(k + 1) * B * B], &x[j * B..j * B + B]);
        for r in 0..B {
            let row = &blk[r * B..(r + 1) * B];
            let mut s = row[0] as f64 * xj[0];
            for c in 1..B {
                s += row[c] as f64 * xj[c];
            }
            acc[r] += s;
        }
    }
}

/// `out` per block row from that row's `A x` (`f(i, acc, out_row)`), in parallel.
fn for_each_row<const B: usize>(
    a: &LoweredCsr,
    x: &[f64],
    out: &mut [f64],
    f: impl Fn(usize, &[f64], &mut [f64]) + Sync,
) {
    out.par_chunks_mut(B)
        .with_min_len(MIN_ROWS_PER_TASK)
        .enumerate()
        .for_each(|(i, oi)| {
            let mut acc = [0.0f64; B];
            row_product_square::<B>(a, i, x, &mut acc);
            f(i, &acc, oi);
        });
}

fn for_each_row_dyn(a: &LoweredCsr, x: &[f64], out: &mut [f64], f: impl Fn(usize, &[f64], &mut [f64]) + Sync) {
    assert!(
        a.br <= MAX_BLOCK_ROWS,
        "block rows above {MAX_BLOCK_ROWS} are not supported by the SpMV accumulator"
    );
    let br = a.br;
    out.par_chunks_mut(br)
        .with_min_len(MIN_ROWS_PER_TASK)
        .enumerate()
        .for_each(|(i, oi)| {
            let mut acc = [0.0f64; MAX_BLOCK_ROWS];
            let acc = &mut acc[..br];
            row_product_dyn(a, i, x, acc);
            f(i, acc, oi);
        });
}

/// Runs `f(i, row i of A x, out's row i)` for every block row, unrolled for
/// the shipped square shapes.
fn rows(a: &LoweredCsr, x: &[f64], out: &mut [f64], f: impl Fn(usize, &[f64], &mut [f64]) + Sync) {
    assert_eq!(x.len(), a.scalar_cols(), "x has the wrong length");
    assert_eq!(out.len(), a.scalar_rows(), "the output has the wrong length");
    match a.block_shape() {
        (1, 1) => for_each_row::<1>(a, x, out, f),
        (2, 2) => for_each_row::<2>(a, x, out, f),
        (3, 3) => for_each_row::<3>(a, x, out, f),
        (6, 6) => for_each_row::<6>(a, x, out, f),
        _ => for_each_row_dyn(a, x, out, f),
    }
}

/// `y = A x` with `A`'s `f32` values: [`crate::spmv::spmv`]'s bits on the rounded values.
pub fn spmv_f32(a: &LoweredCsr, x: &[f64], y: &mut [f64]) {
    rows(a, x, y, |_, acc, yi| yi.copy_from_slice(acc));
}

/// `r = b - A x` with `A`'s `f32` values: [`crate::spmv::residual`]'s bits on the rounded values.
pub fn residual_f32(a: &LoweredCsr, x: &[f64], b: &[f64], r: &mut [f64]) {
    assert_eq!(b.len(), a.scalar_rows(), "b has the wrong length");
    let br = a.br;
    rows(a, x, r, |i, acc, ri| {
        for q in 0..br {
            ri[q] = b[i * br + q] - acc[q];
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spmv::{residual, spmv};

    /// A matrix with values over many orders of magnitude, some rows empty.
    fn sample(n: usize, br: usize, bc: usize, seed: u64) -> BlockCsr {
        let mut s = seed;
        let mut next = move || {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            s >> 11
        };
        let rows: Vec<Vec<u32>> = (0..n)
            .map(|i| {
                if i % 7 == 3 {
                    return Vec::new();
                }
                (0..n as u32).filter(|_| next() % 5 == 0).collect()
            })
            .collect();
        let p = Arc::new(BlockPattern::from_rows(n, &rows).unwrap());
        let vals = (0..p.nnzb() * br * bc)
            .map(|q| ((next() % 2001) as f64 - 1000.0) * 10f64.powi((q % 9) as i32 - 4) / 7.0)
            .collect();
        BlockCsr::new(p, br, bc, vals).unwrap()
    }

    fn rounded(a: &BlockCsr) -> BlockCsr {
        let mut r = a.clone();
        r.values_mut().iter_mut().for_each(|v| *v = *v as f32 as f64);
        r
    }

    fn bits(x: &[f64]) -> Vec<u64> {
        x.iter().map(|v| v.to_bits()).collect()
    }

    #[test]
    fn the_f32_spmv_and_residual_give_the_f64_bits_on_rounded_values() {
        for (b, c) in [(1, 1), (2, 2), (3, 3), (6, 6), (4, 4), (3, 6), (5, 2)] {
            let a = sample(90, b, c, (b * 10 + c) as u64);
            let mut lo = LoweredCsr::zeros_like(&a);
            assert!(!lo.round_from(&a).unwrap());
            let x: Vec<f64> = (0..a.scalar_cols())
                .map(|i| ((i * 13 % 17) as f64 - 8.0) * 0.37)
                .collect();
            let bvec: Vec<f64> = (0..a.scalar_rows()).map(|i| (i as f64).sin()).collect();
            let want = rounded(&a);
            let (mut got, mut reference) = (vec![f64::NAN; a.scalar_rows()], vec![0.0; a.scalar_rows()]);
            spmv_f32(&lo, &x, &mut got);
            spmv(&want, &x, &mut reference);
            assert_eq!(bits(&got), bits(&reference), "{b}x{c} spmv");
            residual_f32(&lo, &x, &bvec, &mut got);
            residual(&want, &x, &bvec, &mut reference);
            assert_eq!(bits(&got), bits(&reference), "{b}x{c} residual");
        }
    }

    #[test]
    fn rounding_reports_overflow_and_refuses_another_shape() {
        let mut a = sample(20, 3, 3, 5);
        let mut lo = LoweredCsr::zeros_like(&a);
        assert!(!lo.round_from(&a).unwrap());
        a.values_mut()[7] = 1e39;
        assert!(lo.round_from(&a).unwrap());
        assert!(lo.values()[7].is_infinite());
        let other = sample(20, 2, 2, 5);
        assert!(lo.round_from(&other).is_err());
    }
}
