//! The single-process reference: point-block-Jacobi CG on a whole
//! [`BlockCsr`] with `ptap_sparse`'s SpMV and dot, written out plainly (no
//! partition, no halo, no communicator). The distributed solver is checked
//! against it: bitwise on one rank, to rounding on several.
use crate::cg::{BlockJacobi, CgOptions, CgReport};
use crate::DistError;
use ptap_sparse::par::{axpy, dot, xpby};
use ptap_sparse::spmv::spmv;
use ptap_sparse::BlockCsr;

/// Solves `a x = b` from the `x` given; same stopping rule and the same
/// sequence of operations as [`crate::cg::jacobi_pcg`].
pub fn jacobi_pcg(a: &BlockCsr, b: &[f64], x: &mut [f64], opts: &CgOptions) -> Result<CgReport, DistError> {
    opts.validate()?;
    let n = a.scalar_rows();
    if a.scalar_cols() != n || b.len() != n || x.len() != n {
        return Err(DistError::Matrix {
            why: format!(
                "a {}x{} operator with b {} and x {}",
                n,
                a.scalar_cols(),
                b.len(),
                x.len()
            ),
        });
    }
    let jacobi = BlockJacobi::global(a)?;
    let (mut r, mut z, mut ap) = (vec![0.0; n], vec![0.0; n], vec![0.0; n]);
    spmv(a, x, &mut ap);
    for i in 0..n {
        r[i] = b[i] - ap[i];
    }
    jacobi.apply(&r, &mut z);
    let bnorm = dot(b, b).sqrt();
    let target = opts.rtol * bnorm;
    let mut rnorm = dot(&r, &r).sqrt();
    let mut rz = dot(&r, &z);
    let report = |iterations, converged, residual_norm| CgReport {
        iterations,
        converged,
        residual_norm,
        rhs_norm: bnorm,
    };
    if rnorm <= target {
        return Ok(report(0, true, rnorm));
    }
    let mut p = z.clone();
    for it in 1..=opts.max_iterations {
        if !(rz > 0.0) {
            return Err(DistError::NotSpd {
                iteration: it,
                why: format!("r^T D^-1 r = {rz:e}"),
            });
        }
        spmv(a, &p, &mut ap);
        let pap = dot(&p, &ap);
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
        axpy(alpha, &p, x);
        axpy(-alpha, &ap, &mut r);
        jacobi.apply(&r, &mut z);
        rnorm = dot(&r, &r).sqrt();
        if rnorm <= target {
            return Ok(report(it, true, rnorm));
        }
        let rz_new = dot(&r, &z);
        let beta = rz_new / rz;
        rz = rz_new;
        xpby(&z, beta, &mut p);
    }
    Ok(report(opts.max_iterations, false, rnorm))
}
