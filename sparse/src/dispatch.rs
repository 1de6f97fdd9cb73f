//! Run-time block shapes to compile-time kernels.
//!
//! Matrices carry their block shapes as data; kernels want them as constants so
//! the block contractions unroll. [`dispatch_block!`] maps the block shapes of
//! the sets `ptap-kernels` ships (scalar `1x1`; 2D elasticity `2x2 / 2x3 / 3x3`;
//! 3D elasticity `3x3 / 3x6 / 6x6`, with the restriction's transposed shapes)
//! to their generated kernel types and every other shape to a size-generic
//! fallback, so any shape works and the shipped ones are unrolled. Other
//! declared sets reach the kernels through `ptap_runtime::KernelRegistry` or the
//! `*_with::<K>` entry points.

/// The generated kernels (`ptap-kernels`), re-exported for the dispatch macros.
pub use ptap_kernels as kernels;

/// Calls `$f::<K>(args)` with `K` the shipped `BlockKernels` type of an `r x c`
/// block, else evaluates `$fallback`.
#[macro_export]
macro_rules! dispatch_block {
    ($r:expr, $c:expr; $f:ident($($arg:expr),* $(,)?); $fallback:expr) => {{
        use $crate::dispatch::kernels::{elasticity_2d as e2, elasticity_3d as e3, scalar as s1};
        match ($r, $c) {
            (1, 1) => $f::<s1::Block1x1>($($arg),*),
            (2, 2) => $f::<e2::Block2x2>($($arg),*),
            (2, 3) => $f::<e2::Block2x3>($($arg),*),
            (3, 2) => $f::<e2::Block3x2>($($arg),*),
            (3, 3) => $f::<e3::Block3x3>($($arg),*),
            (3, 6) => $f::<e3::Block3x6>($($arg),*),
            (6, 3) => $f::<e3::Block6x3>($($arg),*),
            (6, 6) => $f::<e3::Block6x6>($($arg),*),
            _ => $fallback,
        }
    }};
}

/// Calls `$f::<M, K, N>(args)` for a shipped product shape `(m x k) * (k x n)`,
/// else evaluates `$fallback` (the generic SpGEMM of setup code).
#[macro_export]
macro_rules! dispatch_mkn {
    ($m:expr, $k:expr, $n:expr; $f:ident($($arg:expr),* $(,)?); $fallback:expr) => {
        match ($m, $k, $n) {
            (1, 1, 1) => $f::<1, 1, 1>($($arg),*),
            (2, 2, 2) => $f::<2, 2, 2>($($arg),*),
            (2, 2, 3) => $f::<2, 2, 3>($($arg),*),
            (3, 2, 3) => $f::<3, 2, 3>($($arg),*),
            (3, 3, 3) => $f::<3, 3, 3>($($arg),*),
            (3, 3, 6) => $f::<3, 3, 6>($($arg),*),
            (6, 3, 6) => $f::<6, 3, 6>($($arg),*),
            (6, 6, 6) => $f::<6, 6, 6>($($arg),*),
            _ => $fallback,
        }
    };
}

#[cfg(test)]
mod tests {
    use super::kernels::{elasticity_2d, elasticity_3d, scalar, BlockKernels, KernelSet};

    fn shape<K: BlockKernels>() -> (usize, usize) {
        (K::R, K::C)
    }

    fn blocks<S: KernelSet>() -> Vec<(usize, usize)> {
        let (f, c) = (S::BF, S::BC);
        vec![(f, f), (f, c), (c, f), (c, c)]
    }

    #[test]
    fn every_block_of_every_shipped_set_dispatches_to_its_generated_type() {
        let all = [
            blocks::<scalar::Set>(),
            blocks::<elasticity_2d::Set>(),
            blocks::<elasticity_3d::Set>(),
        ];
        for (r, c) in all.into_iter().flatten() {
            assert_eq!(dispatch_block!(r, c; shape(); (0, 0)), (r, c));
        }
        assert_eq!(dispatch_block!(4, 10; shape(); (0, 0)), (0, 0));
    }
}
