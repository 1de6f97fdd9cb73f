//! Point-block Jacobi and the degree-2 Chebyshev smoother (amg.md, solve phase).
use crate::registry::{JacobiEntry, KernelRegistry, ResidualFn};
use crate::RuntimeError;
use ptap_amg::{estimate_lambda_max, EigWorkspace};
use ptap_sparse::dense::{gemv_acc_dyn, invert_in_place};
use ptap_sparse::kernels::SquareBlockKernels;
use ptap_sparse::BlockCsr;
use rayon::prelude::*;

/// Inverted diagonal blocks, refreshed in place with every matrix setup.
#[derive(Clone, Debug)]
pub struct PointBlockJacobi {
    b: usize,
    diag_pos: Vec<usize>,
    dinv: Vec<f64>,
    /// Generated kernels of `b x b` blocks, if registered.
    kernels: Option<JacobiEntry>,
    residual: Option<ResidualFn>,
}

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

fn update_dyn(b: usize, dinv: &[f64], alpha: f64, r: &[f64], beta: f64, t: &[f64], x: &mut [f64]) {
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

impl PointBlockJacobi {
    /// Storage for the diagonal-block inverses of `a` (values come from
    /// [`Self::refresh`]), with the shipped kernels of its block size.
    pub fn new(a: &BlockCsr) -> Self {
        Self::with_registry(a, KernelRegistry::shipped())
    }

    /// As [`Self::new`], with the kernels `registry` holds for `a`'s block size
    /// (size-generic loops when it holds none).
    pub fn with_registry(a: &BlockCsr, registry: &KernelRegistry) -> Self {
        let (b, _) = a.block_shape();
        Self {
            b,
            diag_pos: a.pattern().diagonal_positions(),
            dinv: vec![0.0; a.nrows() * b * b],
            kernels: registry.jacobi(b).copied(),
            residual: registry.block(b, b).map(|e| e.residual),
        }
    }

    /// Inverts every diagonal block of `a`.
    pub fn refresh(&mut self, a: &BlockCsr, level: usize) -> Result<(), RuntimeError> {
        let b = self.b;
        let kernels = self.kernels;
        let bad = self
            .dinv
            .par_chunks_mut(b * b)
            .enumerate()
            .with_min_len(256)
            .map(|(i, d)| {
                let k = self.diag_pos[i];
                if k == usize::MAX {
                    return Some((i, "no stored diagonal block".to_string()));
                }
                d.copy_from_slice(a.block(k));
                match kernels {
                    Some(kern) => (kern.invert)(d).err().map(|e| (i, e.to_string())),
                    None => invert_in_place(b, d).err().map(|e| (i, e.to_string())),
                }
            })
            .find_first(|e| e.is_some())
            .flatten();
        match bad {
            Some((row, why)) => Err(RuntimeError::SingularDiagonalBlock { level, row, why }),
            None => Ok(()),
        }
    }

    /// `x += alpha D^-1 r + beta t` in one pass.
    pub fn update(&self, alpha: f64, r: &[f64], beta: f64, t: &[f64], x: &mut [f64]) {
        match self.kernels {
            Some(k) => (k.update)(&self.dinv, alpha, r, beta, t, x),
            None => update_dyn(self.b, &self.dinv, alpha, r, beta, t, x),
        }
    }

    /// `y = D^-1 x`.
    pub fn apply(&self, x: &[f64], y: &mut [f64]) {
        y.fill(0.0);
        self.update(1.0, x, 0.0, x, y);
    }

    /// `r = rhs - A x` with the block kernels this smoother was built with.
    pub fn residual(&self, a: &BlockCsr, x: &[f64], rhs: &[f64], r: &mut [f64]) {
        match self.residual {
            Some(f) => f(a, x, rhs, r),
            None => ptap_sparse::spmv::residual(a, x, rhs, r),
        }
    }
}

/// Chebyshev (first kind), degree 2, preconditioned by point-block Jacobi, on
/// `[lo, hi] * lambda_max(D^-1 A)`.
#[derive(Clone, Debug)]
pub struct ChebyshevSmoother {
    pub jacobi: PointBlockJacobi,
    pub lambda_max: f64,
    bounds: (f64, f64),
    iterations: usize,
    eig: EigWorkspace,
}

impl ChebyshevSmoother {
    pub fn new(a: &BlockCsr, bounds: (f64, f64), eig_iterations: usize) -> Self {
        Self::with_registry(a, bounds, eig_iterations, KernelRegistry::shipped())
    }

    /// As [`Self::new`], with the block kernels `registry` holds for `a`'s blocks.
    pub fn with_registry(a: &BlockCsr, bounds: (f64, f64), eig_iterations: usize, registry: &KernelRegistry) -> Self {
        Self {
            jacobi: PointBlockJacobi::with_registry(a, registry),
            lambda_max: 0.0,
            bounds,
            iterations: eig_iterations,
            eig: EigWorkspace::new(a.scalar_rows()),
        }
    }

    /// Diagonal-block inverses and the eigenvalue estimate for `a`'s current values.
    pub fn refresh(&mut self, a: &BlockCsr, level: usize) -> Result<(), RuntimeError> {
        self.jacobi.refresh(a, level)?;
        let jac = &self.jacobi;
        let prec = |x: &[f64], y: &mut [f64]| jac.apply(x, y);
        self.lambda_max = estimate_lambda_max(a, &prec, self.iterations, &mut self.eig)
            .map_err(|why| ptap_amg::AmgError::EigenBreakdown { level, why })?;
        Ok(())
    }

    /// `(emin, emax)` the polynomial is built on.
    pub fn interval(&self) -> (f64, f64) {
        (self.bounds.0 * self.lambda_max, self.bounds.1 * self.lambda_max)
    }

    /// Two Chebyshev steps on `a x = rhs`; `x` is taken as zero when `zero_guess`.
    /// `r` and `t` are scratch of `x`'s length.
    pub fn smooth(&self, a: &BlockCsr, rhs: &[f64], x: &mut [f64], zero_guess: bool, r: &mut [f64], t: &mut [f64]) {
        let (emin, emax) = self.interval();
        let s = 2.0 / (emax + emin);
        let a_ = 1.0 - s * emin;
        let mu = 1.0 / a_;
        let c2 = 2.0 * mu * mu - 1.0;
        let w = 2.0 * mu / (a_ * c2);
        // Step 1: t = x1 - x0 = s D^-1 (rhs - A x0); x = x1.
        t.fill(0.0);
        if zero_guess {
            self.jacobi.update(s, rhs, 0.0, rhs, t);
            x.copy_from_slice(t);
        } else {
            self.jacobi.residual(a, x, rhs, r);
            self.jacobi.update(s, r, 0.0, r, t);
            ptap_sparse::par::axpy(1.0, t, x);
        }
        // Step 2: x2 = (1-w) x0 + w x1 + w s D^-1 (rhs - A x1) = x1 + (w-1) t + w s D^-1 r1.
        self.jacobi.residual(a, x, rhs, r);
        self.jacobi.update(w * s, r, w - 1.0, t, x);
    }
}
