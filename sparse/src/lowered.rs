//! A block matrix's values rounded to `f32` over its pattern: the operator of
//! the mixed-precision smoother (`SmootherPrecision::F32`), with half the value
//! bytes of the `f64` one.
//!
//! Its SpMV and residual run the `f64` kernels' own loops ([`crate::spmv`]),
//! widening each value to `f64` where it is used: per block row, each block's
//! row sums, each from its first product, added in pattern order into a zeroed
//! accumulator. So they give the bits of the `f64` kernels on the rounded
//! values, the reference the conformance suite checks.
use crate::csr::BlockCsr;
use crate::error::SparseError;
use crate::pattern::BlockPattern;
use crate::spmv::for_each_block_row;
use rayon::prelude::*;
use std::sync::Arc;

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

/// `y = A x` with `A`'s `f32` values: [`crate::spmv::spmv`]'s bits on the rounded values.
pub fn spmv_f32(a: &LoweredCsr, x: &[f64], y: &mut [f64]) {
    for_each_block_row(&a.pattern, (a.br, a.bc), &a.values, x, y, |_, acc, yi| {
        yi.copy_from_slice(acc)
    });
}

/// `r = b - A x` with `A`'s `f32` values: [`crate::spmv::residual`]'s bits on the rounded values.
pub fn residual_f32(a: &LoweredCsr, x: &[f64], b: &[f64], r: &mut [f64]) {
    assert_eq!(b.len(), a.scalar_rows(), "b has the wrong length");
    let br = a.br;
    for_each_block_row(&a.pattern, (a.br, a.bc), &a.values, x, r, |i, acc, ri| {
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
