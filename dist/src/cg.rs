//! Point-block-Jacobi-preconditioned CG over the ranks: the first
//! distributed solver (the AMG V-cycle preconditioner is the next slice's).
//!
//! Vectors are a rank's owned scalars, except the search direction, which
//! carries the ghost tail the SpMV fills. Per iteration: one SpMV with its
//! halo exchange overlapped with the interior rows, and two all-reduces,
//! each carrying every dot due at that point (`p.Ap`; then `r.r` and `r.z`
//! together). The reductions sum per-rank partial dots in rank order, so a
//! run is bitwise reproducible for a given rank count; a different rank count
//! splits the dots differently and changes the last bits (not the iteration
//! count, in practice, nor the solution beyond rounding). On one rank the
//! solver is bitwise equal to [`crate::reference::jacobi_pcg`].
use crate::comm::Comm;
use crate::local::{DistMatrix, LocalMatrix};
use crate::DistError;
use ptap_sparse::dense::{gemv_acc_dyn, invert_in_place};
use ptap_sparse::par::{axpy, dot, xpby};
use ptap_sparse::BlockCsr;
use rayon::prelude::*;

/// CG stopping rule: `||b - A x||_2 <= rtol ||b||_2` (unpreconditioned norm,
/// as `ptap_runtime`'s CG).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CgOptions {
    pub rtol: f64,
    pub max_iterations: usize,
}

impl Default for CgOptions {
    fn default() -> Self {
        Self {
            rtol: 1e-8,
            max_iterations: 10_000,
        }
    }
}

impl CgOptions {
    /// `rtol` in `[1e-15, 1)`, at least one iteration.
    pub fn validate(&self) -> Result<(), DistError> {
        if !(self.rtol >= 1e-15 && self.rtol < 1.0) || self.max_iterations == 0 {
            return Err(DistError::Options {
                why: format!(
                    "rtol {:e} must be in [1e-15, 1) and max_iterations {} at least 1",
                    self.rtol, self.max_iterations
                ),
            });
        }
        Ok(())
    }
}

/// What a CG solve did; identical on every rank.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CgReport {
    pub iterations: usize,
    pub converged: bool,
    /// `||r||_2` of CG's recurrence at the end.
    pub residual_norm: f64,
    pub rhs_norm: f64,
}

/// Point-block Jacobi: the inverted diagonal blocks of the owned rows.
#[derive(Clone, Debug, PartialEq)]
pub struct BlockJacobi {
    b: usize,
    dinv: Vec<f64>,
}

impl BlockJacobi {
    /// Inverts `n` diagonal blocks of `b x b`; `block(i)` is row `i`'s, and
    /// `first_row` its global number (for the error message).
    fn invert<'a>(
        b: usize,
        n: usize,
        first_row: usize,
        block: impl Fn(usize) -> Option<&'a [f64]> + Sync,
    ) -> Result<Self, DistError> {
        let mut dinv = vec![0.0; n * b * b];
        let bad = dinv
            .par_chunks_mut(b * b)
            .enumerate()
            .with_min_len(256)
            .map(|(i, d)| match block(i) {
                None => Some((i, "no stored diagonal block".to_string())),
                Some(blk) => {
                    d.copy_from_slice(blk);
                    invert_in_place(b, d).err().map(|e| (i, e.to_string()))
                }
            })
            .find_first(|e| e.is_some())
            .flatten();
        match bad {
            Some((i, why)) => Err(DistError::SingularDiagonalBlock {
                row: first_row + i,
                why,
            }),
            None => Ok(Self { b, dinv }),
        }
    }

    /// The inverses of a rank's diagonal blocks (square blocks and partition).
    pub fn local(a: &LocalMatrix) -> Result<Self, DistError> {
        let (br, bc) = a.block_shape();
        if br != bc {
            return Err(DistError::Matrix {
                why: format!("point-block Jacobi needs square blocks, not {br}x{bc}"),
            });
        }
        Self::invert(br, a.n_rows(), a.rows().start, |i| a.diagonal_block(i))
    }

    /// The inverses of a whole matrix's diagonal blocks (the reference).
    pub fn global(a: &BlockCsr) -> Result<Self, DistError> {
        let (br, bc) = a.block_shape();
        if br != bc {
            return Err(DistError::Matrix {
                why: format!("point-block Jacobi needs square blocks, not {br}x{bc}"),
            });
        }
        let diag = a.pattern().diagonal_positions();
        Self::invert(br, a.nrows(), 0, |i| (diag[i] != usize::MAX).then(|| a.block(diag[i])))
    }

    /// `z = D^-1 r`.
    pub fn apply(&self, r: &[f64], z: &mut [f64]) {
        let b = self.b;
        assert_eq!(r.len(), self.dinv.len() / b);
        assert_eq!(z.len(), r.len());
        z.par_chunks_mut(b)
            .zip(r.par_chunks(b))
            .zip(self.dinv.par_chunks(b * b))
            .with_min_len(256)
            .for_each(|((zi, ri), d)| {
                zi.fill(0.0);
                gemv_acc_dyn(b, b, d, ri, zi);
            });
    }

    /// The inverses, row-major blocks in row order.
    pub fn inverses(&self) -> &[f64] {
        &self.dinv
    }
}

/// A rank's CG vectors, allocated once (a solve allocates nothing).
pub struct CgWorkspace {
    r: Vec<f64>,
    z: Vec<f64>,
    /// Owned then ghost scalars (the SpMV input).
    p: Vec<f64>,
    ap: Vec<f64>,
}

impl CgWorkspace {
    pub fn new(a: &DistMatrix) -> Self {
        let n = a.output_len();
        Self {
            r: vec![0.0; n],
            z: vec![0.0; n],
            p: vec![0.0; a.input_len()],
            ap: vec![0.0; n],
        }
    }
}

/// Solves `A x = b` from the `x` given; `b` and `x` are this rank's owned
/// scalars. Collective: every rank calls it, and every rank returns the same
/// report (or the same error).
pub fn jacobi_pcg<C: Comm + ?Sized>(
    comm: &C,
    a: &mut DistMatrix,
    jacobi: &BlockJacobi,
    b: &[f64],
    x: &mut [f64],
    opts: &CgOptions,
    ws: &mut CgWorkspace,
) -> Result<CgReport, DistError> {
    opts.validate()?;
    let n = a.output_len();
    if a.local.n_owned_cols() != a.local.n_rows() || b.len() != n || x.len() != n || ws.r.len() != n {
        return Err(DistError::Matrix {
            why: format!(
                "CG needs a square partition and owned vectors of {n} scalars (b {}, x {})",
                b.len(),
                x.len()
            ),
        });
    }
    let CgWorkspace { r, z, p, ap } = ws;
    // r = b - A x (x through p, which has the ghost room).
    p[..n].copy_from_slice(x);
    a.spmv(comm, p, ap);
    for ((ri, bi), ai) in r.iter_mut().zip(b).zip(ap.iter()) {
        *ri = bi - ai;
    }
    jacobi.apply(r, z);
    let mut s = [dot(b, b), dot(r, r), dot(r, z)];
    comm.all_reduce_sum(&mut s);
    let [bb, rr, mut rz] = s;
    let bnorm = bb.sqrt();
    let target = opts.rtol * bnorm;
    let mut rnorm = rr.sqrt();
    let report = |iterations, converged, residual_norm| CgReport {
        iterations,
        converged,
        residual_norm,
        rhs_norm: bnorm,
    };
    if rnorm <= target {
        return Ok(report(0, true, rnorm));
    }
    p[..n].copy_from_slice(z);
    for it in 1..=opts.max_iterations {
        if !(rz > 0.0) {
            return Err(DistError::NotSpd {
                iteration: it,
                why: format!("r^T D^-1 r = {rz:e}"),
            });
        }
        a.spmv(comm, p, ap);
        let mut s = [dot(&p[..n], ap)];
        comm.all_reduce_sum(&mut s);
        let pap = s[0];
        if !pap.is_finite() {
            return Err(DistError::NotFinite { iteration: it });
        }
        if pap <= 0.0 {
            return Err(DistError::NotSpd {
                iteration: it,
                why: format!("p^T A p = {pap:e}"),
            });
        }
        let alpha = rz / pap;
        axpy(alpha, &p[..n], x);
        axpy(-alpha, ap, r);
        jacobi.apply(r, z);
        let mut s = [dot(r, r), dot(r, z)];
        comm.all_reduce_sum(&mut s);
        rnorm = s[0].sqrt();
        if rnorm <= target {
            return Ok(report(it, true, rnorm));
        }
        let beta = s[1] / rz;
        rz = s[1];
        xpby(z, beta, &mut p[..n]);
    }
    Ok(report(opts.max_iterations, false, rnorm))
}
