//! The block kernels' interface: the traits generated code implements.
//!
//! Executors are written once, generic over a kernel type, and monomorphize to
//! fully unrolled block contractions when instantiated with a type that
//! `ptap_kernels::kernels!` generates (the generated code names these traits as
//! `::ptap_kernels::..`, which re-exports them). Only the interface lives here,
//! so the ground floor depends on no generated code and no GPU binding:
//!
//! * [`BlockKernels`]: one `R x C` block shape (SpMV row, transpose);
//! * [`SquareBlockKernels`]: point-block Jacobi (inverse, Chebyshev update);
//! * [`ProductKernels`]: the contractions of `P^T A P` for one `(bf, bc)`;
//! * [`KernelSet`]: a declared set `bf x bf / bf x bc / bc x bc`, what a
//!   registry (`ptap_runtime::KernelRegistry`) takes.
use std::fmt;

/// Fixed-size block storage (`[f64; N]`), so generic code can keep an
/// accumulator of the right size on the stack.
pub trait Block: Copy + Send + Sync + 'static + AsRef<[f64]> + AsMut<[f64]> {
    const ZERO: Self;
}

impl<const N: usize> Block for [f64; N] {
    const ZERO: Self = [0.0; N];
}

/// Kernels of one `R x C` block shape (row-major blocks).
pub trait BlockKernels: Copy + Send + Sync + 'static {
    const R: usize;
    const C: usize;
    /// `[f64; R * C]`.
    type Block: Block;
    /// `[f64; R]`: one block row's accumulators.
    type Rows: Block;
    /// `y (R) += a x`, each row summed over the block's columns before the add.
    fn gemv_acc(a: &[f64], x: &[f64], y: &mut [f64]);
    /// `out (C x R) = a^T`.
    fn transpose(a: &[f64], out: &mut [f64]);
}

/// Point-block Jacobi on square blocks.
pub trait SquareBlockKernels: BlockKernels {
    /// `x += alpha D^-1 r + beta t` for one block row; `t` unread when `beta == 0`.
    fn chebyshev_update(dinv: &[f64], alpha: f64, r: &[f64], beta: f64, t: &[f64], x: &mut [f64]);
    /// In-place inverse (Gauss-Jordan, partial pivoting).
    fn invert(a: &mut [f64]) -> Result<(), SingularBlock>;
}

/// The block contractions of `A_c = P^T A P` with `BF x BF` fine, `BF x BC`
/// prolongator and `BC x BC` coarse blocks. Every `*_acc` adds onto its output
/// with the inner index in increasing order, one term at a time (the order of
/// the two-pass product, V0).
pub trait ProductKernels: Copy + Send + Sync + 'static {
    const BF: usize;
    const BC: usize;
    /// `[f64; BF * BC]`: a block of `P`, `W` or `R` (and `P^T A`).
    type FineCoarse: Block;
    /// `[f64; BC * BC]`: a block of `A_c`.
    type CoarseCoarse: Block;
    /// `w += a p`: `W = A P`.
    fn ap_acc(a: &[f64], p: &[f64], w: &mut [f64]);
    /// `c += r w` with `r` a `BC x BF` block of `R = P^T`.
    fn rw_acc(r: &[f64], w: &[f64], c: &mut [f64]);
    /// `c += p^T w` reading `p` (`BF x BC`) transposed.
    fn ptw_acc(p: &[f64], w: &[f64], c: &mut [f64]);
    /// `t (BC x BF) += p^T a`.
    fn pta_acc(p: &[f64], a: &[f64], t: &mut [f64]);
    /// `r (BC x BF) = p^T`.
    fn p_transpose(p: &[f64], r: &mut [f64]);
    /// `col (BF) += (a p)(:, j)`.
    fn ap_col_acc(a: &[f64], p: &[f64], j: usize, col: &mut [f64]);
    /// `col (BC) += (p^T w)(:, j)`.
    fn ptw_col_acc(p: &[f64], w: &[f64], j: usize, col: &mut [f64]);
}

/// A declared block-shape set `BF x BF / BF x BC / BC x BC`: the products it
/// serves (the fine level's and `BC x BC` below it), its blocks and its CUDA.
pub trait KernelSet: 'static {
    const BF: usize;
    const BC: usize;
    /// `"3x3 / 3x6 / 6x6"`.
    const DECLARATION: &'static str;
    type FineProduct: ProductKernels;
    type CoarseProduct: ProductKernels;
    type Fine: SquareBlockKernels;
    type Prolongator: BlockKernels;
    type Restriction: BlockKernels;
    type Coarse: SquareBlockKernels;
    /// File stem of the CUDA source, `"ptap_3x3_3x6_6x6"`. The CUDA items are
    /// plain text; compiling and launching them is the device backend's work.
    const CUDA_MODULE: &'static str;
    const CUDA_SOURCE: &'static str;
    const CUDA_ENTRIES: &'static [&'static str];
}

/// Why a diagonal block has no inverse.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SingularBlock {
    NotFinite { n: usize },
    Zero { n: usize },
    Pivot { n: usize, pivot: f64, column: usize },
}

impl fmt::Display for SingularBlock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            SingularBlock::NotFinite { n } => write!(f, "{n}x{n} block with NaN or infinity"),
            SingularBlock::Zero { n } => write!(f, "{n}x{n} zero block"),
            SingularBlock::Pivot { n, pivot, column } => {
                write!(f, "{n}x{n} block with pivot {pivot:e} at column {column}")
            }
        }
    }
}

impl std::error::Error for SingularBlock {}
