//! The V-cycle preconditioner and conjugate gradients.
use crate::hierarchy::Hierarchy;
use crate::registry::KernelRegistry;
use crate::RuntimeError;
use ptap_sparse::par::{axpy, dot, norm2, xpby};
use serde::Serialize;

/// CG stopping rule: `||b - A x||_2 <= rtol ||b||_2` (unpreconditioned norm).
#[derive(Clone, Copy, Debug)]
pub struct CgOptions {
    pub rtol: f64,
    pub max_iterations: usize,
}

impl Default for CgOptions {
    fn default() -> Self {
        Self {
            rtol: 1e-8,
            max_iterations: 500,
        }
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct CgReport {
    pub iterations: usize,
    pub converged: bool,
    pub residual_norm: f64,
    pub rhs_norm: f64,
}

/// CG vectors and the residual history, allocated once and reused by every
/// solve (a solve allocates nothing).
pub struct CgWorkspace {
    r: Vec<f64>,
    z: Vec<f64>,
    p: Vec<f64>,
    ap: Vec<f64>,
    history: Vec<f64>,
}

impl CgWorkspace {
    /// Vectors for `n` unknowns; the history keeps up to `max_iterations + 1` entries.
    pub fn new(n: usize, max_iterations: usize) -> Self {
        Self {
            r: vec![0.0; n],
            z: vec![0.0; n],
            p: vec![0.0; n],
            ap: vec![0.0; n],
            history: Vec::with_capacity(max_iterations + 1),
        }
    }

    /// `||r_k|| / ||b||` of the last solve, index 0 the start.
    pub fn history(&self) -> &[f64] {
        &self.history
    }
}

impl Hierarchy {
    /// One V-cycle: `z = M^-1 r` (Chebyshev(2) pre/post smoothing, `R = P^T`
    /// restriction, `P` prolongation, dense Cholesky on the coarsest level).
    pub fn vcycle(&mut self, r: &[f64], z: &mut [f64]) {
        let nl = self.levels.len();
        self.work[0].rhs.copy_from_slice(r);
        for l in 0..nl - 1 {
            let lev = &self.levels[l];
            let (fine, coarse) = self.work.split_at_mut(l + 1);
            let w = &mut fine[l];
            let sm = lev.smoother.as_ref().expect("smoother on every level but the coarsest");
            sm.smooth(&lev.a, &w.rhs, &mut w.x, true, &mut w.r, &mut w.t);
            KernelRegistry::shipped().residual(&lev.a, &w.x, &w.rhs, &mut w.r);
            let tr = lev.transfer.as_ref().expect("transfer on every level but the coarsest");
            KernelRegistry::shipped().spmv(&tr.r, &w.r, &mut coarse[0].rhs);
        }
        {
            let w = &mut self.work[nl - 1];
            w.x.copy_from_slice(&w.rhs);
            self.coarse.solve_in_place(&mut w.x);
        }
        for l in (0..nl - 1).rev() {
            let lev = &self.levels[l];
            let (fine, coarse) = self.work.split_at_mut(l + 1);
            let w = &mut fine[l];
            let tr = lev.transfer.as_ref().unwrap();
            KernelRegistry::shipped().spmv_beta(&tr.p, &coarse[0].x, 1.0, &mut w.x);
            let sm = lev.smoother.as_ref().unwrap();
            sm.smooth(&lev.a, &w.rhs, &mut w.x, false, &mut w.r, &mut w.t);
        }
        z.copy_from_slice(&self.work[0].x);
    }

    /// Solves `A x = b` by V-cycle-preconditioned CG from the `x` given (the
    /// beam driver passes zero). `ws` comes from [`CgWorkspace::new`].
    pub fn solve(
        &mut self,
        b: &[f64],
        x: &mut [f64],
        opts: &CgOptions,
        ws: &mut CgWorkspace,
    ) -> Result<CgReport, RuntimeError> {
        let n = self.levels[0].a.scalar_rows();
        assert_eq!(b.len(), n, "right-hand side has the wrong length");
        assert_eq!(x.len(), n, "solution has the wrong length");
        if b.iter().any(|v| !v.is_finite()) {
            return Err(RuntimeError::NotFinite {
                what: "right-hand side".into(),
            });
        }
        let CgWorkspace { r, z, p, ap, history } = ws;
        history.clear();
        KernelRegistry::shipped().residual(&self.levels[0].a, x, b, r);
        let bnorm = norm2(b);
        let target = opts.rtol * bnorm;
        let mut rnorm = norm2(r);
        history.push(if bnorm > 0.0 { rnorm / bnorm } else { 0.0 });
        if rnorm <= target {
            return Ok(CgReport {
                iterations: 0,
                converged: true,
                residual_norm: rnorm,
                rhs_norm: bnorm,
            });
        }
        self.vcycle(r, z);
        p.copy_from_slice(z);
        let mut rz = dot(r, z);
        for it in 1..=opts.max_iterations {
            if !(rz > 0.0) {
                return Err(RuntimeError::NotSpd {
                    iteration: it,
                    why: format!("r^T M^-1 r = {rz:e}, the preconditioner is not positive definite"),
                });
            }
            KernelRegistry::shipped().spmv(&self.levels[0].a, p, ap);
            let pap = dot(p, ap);
            if !pap.is_finite() {
                return Err(RuntimeError::NotFinite {
                    what: format!("CG iteration {it}"),
                });
            }
            if pap <= 0.0 {
                return Err(RuntimeError::NotSpd {
                    iteration: it,
                    why: format!("p^T A p = {pap:e}"),
                });
            }
            let alpha = rz / pap;
            axpy(alpha, p, x);
            axpy(-alpha, ap, r);
            rnorm = norm2(r);
            if history.len() < history.capacity() {
                history.push(rnorm / bnorm);
            }
            if rnorm <= target {
                return Ok(CgReport {
                    iterations: it,
                    converged: true,
                    residual_norm: rnorm,
                    rhs_norm: bnorm,
                });
            }
            self.vcycle(r, z);
            let rz_new = dot(r, z);
            let beta = rz_new / rz;
            rz = rz_new;
            xpby(z, beta, p);
        }
        Ok(CgReport {
            iterations: opts.max_iterations,
            converged: false,
            residual_norm: rnorm,
            rhs_norm: bnorm,
        })
    }
}
