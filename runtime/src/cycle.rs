//! Chebyshev smoothing and its eigen-estimate, written once over a
//! [`Backend`] (amg.md, solve phase); the V-cycle that calls them is in
//! [`crate::solver`].
use crate::backend::Backend;
use ptap_amg::eig::cg_lanczos_from_history;

/// Seed of the eigen-estimate's start vector (`ptap_amg::eig::pseudo_random_vector`).
pub const EIG_SEED: u64 = 0x5eed_ca11_ab1e;

/// Slots of the Chebyshev coefficients [`chebyshev_coefficients`] returns:
/// `s` (step 1's `alpha`), `w s` and `w - 1` (step 2's `alpha` and `beta`).
pub mod cheb_slot {
    pub const S: usize = 0;
    pub const WS: usize = 1;
    pub const W_MINUS_1: usize = 2;
    pub const LEN: usize = 3;
}

/// The scalars of two Chebyshev steps over `[lo, hi] * lambda_max` (`bounds
/// = (lo, hi)`), in the order of [`cheb_slot`].
pub fn chebyshev_coefficients(bounds: (f64, f64), lambda_max: f64) -> [f64; cheb_slot::LEN] {
    let (emin, emax) = (bounds.0 * lambda_max, bounds.1 * lambda_max);
    let s = 2.0 / (emax + emin);
    let a = 1.0 - s * emin;
    let mu = 1.0 / a;
    let c2 = 2.0 * mu * mu - 1.0;
    let w = 2.0 * mu / (a * c2);
    [s, w * s, w - 1.0]
}

/// Two Chebyshev (first kind) steps preconditioned by point-block Jacobi on
/// `a x = rhs` over `[lo, hi] * lambda_max` (`bounds = (lo, hi)`); `x` is
/// taken as zero when `zero_guess`. `r` and `t` are scratch of `x`'s length.
/// (The V-cycle keeps the coefficients on the backend and calls
/// [`chebyshev_smooth_at`]; this puts them there first.)
#[allow(clippy::too_many_arguments)]
pub fn chebyshev_smooth<B: Backend>(
    be: &B,
    a: &B::Matrix,
    jacobi: &B::Jacobi,
    bounds: (f64, f64),
    lambda_max: f64,
    rhs: &B::Vector,
    x: &mut B::Vector,
    zero_guess: bool,
    r: &mut B::Vector,
    t: &mut B::Vector,
) -> Result<(), B::Error> {
    let coef = be.vector_from(&chebyshev_coefficients(bounds, lambda_max))?;
    chebyshev_smooth_at(be, a, jacobi, &coef, rhs, x, zero_guess, r, t)
}

/// The operator a smoother applies: a matrix's own `f64` values, or its
/// `f32` copy ([`crate::SmootherPrecision`]).
pub enum Smoothed<'a, B: Backend> {
    F64(&'a B::Matrix),
    F32(&'a B::Matrix, &'a B::Lowered),
}

impl<B: Backend> Clone for Smoothed<'_, B> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<B: Backend> Copy for Smoothed<'_, B> {}

impl<'a, B: Backend> Smoothed<'a, B> {
    /// `a`, through its `f32` copy where `lowered` is one.
    pub fn of(a: &'a B::Matrix, lowered: Option<&'a B::Lowered>) -> Self {
        match lowered {
            Some(lo) => Smoothed::F32(a, lo),
            None => Smoothed::F64(a),
        }
    }
    /// `r = b - A x`.
    pub fn residual(self, be: &B, x: &B::Vector, b: &B::Vector, r: &mut B::Vector) -> Result<(), B::Error> {
        match self {
            Smoothed::F64(a) => be.residual(a, x, b, r),
            Smoothed::F32(a, lo) => be.residual_lowered(a, lo, x, b, r),
        }
    }
    /// `y = A x`.
    pub fn spmv(self, be: &B, x: &B::Vector, y: &mut B::Vector) -> Result<(), B::Error> {
        match self {
            Smoothed::F64(a) => be.spmv(a, x, y),
            Smoothed::F32(a, lo) => be.spmv_lowered(a, lo, x, y),
        }
    }
}

/// [`chebyshev_smooth`] with its coefficients ([`chebyshev_coefficients`])
/// already on the backend in `coef`: nothing is read from the host, so a
/// recording of it stays valid when the coefficients change.
#[allow(clippy::too_many_arguments)]
pub fn chebyshev_smooth_at<B: Backend>(
    be: &B,
    a: &B::Matrix,
    jacobi: &B::Jacobi,
    coef: &B::Vector,
    rhs: &B::Vector,
    x: &mut B::Vector,
    zero_guess: bool,
    r: &mut B::Vector,
    t: &mut B::Vector,
) -> Result<(), B::Error> {
    chebyshev_smooth_of(be, Smoothed::F64(a), jacobi, coef, rhs, x, zero_guess, r, t)
}

/// [`chebyshev_smooth_at`] applying the operator `a` (its `f64` values or
/// its `f32` copy) in both residuals.
#[allow(clippy::too_many_arguments)]
pub fn chebyshev_smooth_of<B: Backend>(
    be: &B,
    a: Smoothed<'_, B>,
    jacobi: &B::Jacobi,
    coef: &B::Vector,
    rhs: &B::Vector,
    x: &mut B::Vector,
    zero_guess: bool,
    r: &mut B::Vector,
    t: &mut B::Vector,
) -> Result<(), B::Error> {
    use cheb_slot::{S, WS, W_MINUS_1};
    // Step 1: t = x1 - x0 = s D^-1 (rhs - A x0); x = x1.
    if zero_guess {
        be.jacobi_first_step(jacobi, coef, S, rhs, t, x, true)?;
    } else {
        a.residual(be, x, rhs, r)?;
        be.jacobi_first_step(jacobi, coef, S, r, t, x, false)?;
    }
    // Step 2: x2 = (1-w) x0 + w x1 + w s D^-1 (rhs - A x1) = x1 + (w-1) t + w s D^-1 r1.
    a.residual(be, x, rhs, r)?;
    be.jacobi_update_at(jacobi, coef, WS, Some(W_MINUS_1), r, t, x)
}

/// Why an eigen-estimate stopped short (a backend error, or a CG-Lanczos breakdown).
pub use ptap_amg::eig::LanczosError as EigenError;

/// Length of the scalar vector of an estimate of `iterations` steps
/// ([`queue_lambda_max`]): `r.z` of step `k` in slot `2k`, `p.Ap` in `2k + 1`.
pub fn lanczos_scalars(iterations: usize) -> usize {
    2 * iterations.clamp(1, MAX_LANCZOS) + 1
}

/// Most CG-Lanczos steps an estimate takes ([`ptap_amg::eig::cg_lanczos`]'s bound).
pub const MAX_LANCZOS: usize = 64;

/// `y = M^-1 x`, point-block Jacobi.
fn precondition<B: Backend>(be: &B, jacobi: &B::Jacobi, x: &B::Vector, y: &mut B::Vector) -> Result<(), B::Error> {
    be.fill(y, 0.0)?;
    be.jacobi_update(jacobi, 1.0, x, 0.0, x, y)
}

/// `lambda_max(D^-1 A)` by `iterations` (at most 64) steps of Jacobi-
/// preconditioned CG from the fixed start vector `start`, the top Ritz value
/// of the CG-Lanczos tridiagonal (amg.md; [`ptap_amg::eig::cg_lanczos`], the
/// steps mesh setup takes on the host). `r`, `z`, `p`, `ap` are scratch of
/// the operator's size. Allocates the scalar vector; a hierarchy keeps one
/// and calls [`queue_lambda_max`] and [`finish_lambda_max`].
#[allow(clippy::too_many_arguments)]
pub fn estimate_lambda_max<B: Backend>(
    be: &B,
    a: &B::Matrix,
    jacobi: &B::Jacobi,
    start: &B::Vector,
    iterations: usize,
    r: &mut B::Vector,
    z: &mut B::Vector,
    p: &mut B::Vector,
    ap: &mut B::Vector,
) -> Result<f64, EigenError<B::Error>> {
    let mut s = be.vector(lanczos_scalars(iterations))?;
    queue_lambda_max(be, a, jacobi, start, iterations, &mut s, r, z, p, ap)?;
    finish_lambda_max(be, &s, iterations)
}

/// Queues every step of the estimate without reading anything back: the CG
/// scalars stay on the backend in `s` ([`lanczos_scalars`] long; `r.z` by
/// [`Backend::dot_into`] and [`Backend::lanczos_update`], the step `alpha =
/// r.z / p.Ap` and `beta` read there by [`Backend::lanczos_update`] and
/// [`Backend::xpby_ratio`]). The operations and their order are
/// [`ptap_amg::eig::cg_lanczos`]'s (on the host, the same bits; a device
/// sums `r.z` in its own order), except that every step runs: whether one
/// broke down or converged is decided afterwards from the recorded scalars
/// ([`finish_lambda_max`]).
#[allow(clippy::too_many_arguments)]
pub fn queue_lambda_max<B: Backend>(
    be: &B,
    a: &B::Matrix,
    jacobi: &B::Jacobi,
    start: &B::Vector,
    iterations: usize,
    s: &mut B::Vector,
    r: &mut B::Vector,
    z: &mut B::Vector,
    p: &mut B::Vector,
    ap: &mut B::Vector,
) -> Result<(), B::Error> {
    let iterations = iterations.clamp(1, MAX_LANCZOS);
    be.copy(start, r)?;
    precondition(be, jacobi, r, z)?;
    be.copy(z, p)?;
    be.dot_into(r, z, s, 0, None)?;
    for k in 0..iterations {
        let (rz, pap, rz_new) = (2 * k, 2 * k + 1, 2 * k + 2);
        be.spmv(a, p, ap)?;
        be.dot_into(p, ap, s, pap, None)?;
        be.lanczos_update(jacobi, s, rz, pap, ap, r, z, rz_new)?;
        if k + 1 < iterations {
            be.xpby_ratio(s, rz_new, rz, z, p)?;
        }
    }
    Ok(())
}

/// Reads the scalars [`queue_lambda_max`] recorded (once; `s` is
/// [`lanczos_scalars`] long) and decides, as
/// [`ptap_amg::eig::cg_lanczos`] does step by step, the breakdown or the top
/// Ritz value ([`ptap_amg::eig::cg_lanczos_from_history`]).
pub fn finish_lambda_max<B: Backend>(be: &B, s: &B::Vector, iterations: usize) -> Result<f64, EigenError<B::Error>> {
    let iterations = iterations.clamp(1, MAX_LANCZOS);
    let len = lanczos_scalars(iterations);
    let mut h = [0.0f64; 2 * MAX_LANCZOS + 1];
    be.read(s, &mut h[..len])?;
    let rz: [f64; MAX_LANCZOS + 1] = std::array::from_fn(|k| h[2 * k]);
    let pap: [f64; MAX_LANCZOS] = std::array::from_fn(|k| h[2 * k + 1]);
    cg_lanczos_from_history(&rz[..iterations + 1], &pap[..iterations]).map_err(EigenError::Breakdown)
}
