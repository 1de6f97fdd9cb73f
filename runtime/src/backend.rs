//! The operations an AMG hierarchy needs from the memory its data lives in.
//!
//! The V-cycle, Chebyshev smoothing, the eigen-estimate and CG are written
//! once ([`crate::cycle`], [`crate::solver`]) over this trait; each backend owns
//! its vectors and block matrices and implements the operations on them: the
//! CPU reference ([`crate::cpu::Cpu`], rayon) here, the CUDA backend in the
//! `ptap-cuda` crate. A new backend (another GPU, MPI ranks) implements this
//! trait and plugs into [`crate::Hierarchy`] without touching the solver
//! (Ginkgo's executors, AMGCL's backends).
//!
//! Every operation is stream-ordered: it may return before the work is done
//! (a device queues it), but a later operation sees its result, and a scalar
//! result ([`Backend::dot`]) waits for everything before it. Operations
//! allocate nothing; the `*new*`/[`Backend::matrix`]/[`Backend::product`]
//! constructors are setup-time calls.
use crate::variants::GalerkinProduct;
use crate::RuntimeError;
use ptap_schedules::VariantSchedule;
use ptap_sparse::{BlockCsr, BlockPattern};
use std::sync::Arc;

/// A place where vectors, block matrices and the numeric work on them live.
pub trait Backend: Sized {
    /// A dense vector of `f64`.
    type Vector;
    /// A block-CSR matrix (pattern and values).
    type Matrix;
    /// A recorded sequence of operations replayed as one unit
    /// ([`Backend::begin_capture`]; `()` where nothing is recorded).
    type Graph;
    /// A numeric Galerkin product bound to one schedule (the executor).
    type Product;
    /// Point-block Jacobi: the inverted diagonal blocks of one operator.
    type Jacobi;
    /// The factored coarsest operator.
    type Coarse;
    /// A matrix's values stored as `f32`, beside its own `f64` values: what
    /// the mixed-precision smoother applies
    /// ([`crate::SmootherPrecision::F32`]). `()` where a backend has none.
    type Lowered;
    /// One sentence a user can act on; runtime errors (non-SPD, singular
    /// blocks, ...) convert into it.
    type Error: std::error::Error + From<RuntimeError> + Send + Sync + 'static;

    /// `cpu`, `cuda`, ... for reports.
    fn name(&self) -> &'static str;
    /// Whether this backend's matrices are host [`BlockCsr`]s
    /// ([`Backend::host_matrix`] answers for them), so a hierarchy keeps no
    /// second host copy of `P`.
    fn host_resident(&self) -> bool {
        false
    }
    /// Names the phase later host/device transfers are counted under (a no-op
    /// where nothing crosses a bus).
    fn set_phase(&self, _phase: &str) {}
    /// Waits until every queued operation has finished (for timing).
    fn synchronize(&self) -> Result<(), Self::Error> {
        Ok(())
    }
    /// A check of this process's own input (`r`), made where every process
    /// of a collective backend must take the same branch: such a backend
    /// fails everywhere when it failed anywhere, so that no process waits in
    /// a collective the others left. One process: `r` itself.
    fn agree(&self, r: Result<(), Self::Error>) -> Result<(), Self::Error> {
        r
    }

    // Data (setup time).

    /// `n` zeros.
    fn vector(&self, n: usize) -> Result<Self::Vector, Self::Error>;
    /// A copy of `host`.
    fn vector_from(&self, host: &[f64]) -> Result<Self::Vector, Self::Error>;
    /// `v = host` (lengths equal).
    fn write(&self, host: &[f64], v: &mut Self::Vector) -> Result<(), Self::Error>;
    /// `host = v` (lengths equal; waits for `v`).
    fn read(&self, v: &Self::Vector, host: &mut [f64]) -> Result<(), Self::Error>;
    /// The backend's copy of `m`; its values only when `with_values` (the
    /// others are computed on the backend by a Galerkin product). Consumes
    /// `m`, so a host backend adopts it without a copy.
    fn matrix(&self, m: BlockCsr, with_values: bool) -> Result<Self::Matrix, Self::Error>;
    /// The backend's copy of `m`, values included, keeping `m` with the caller.
    fn matrix_ref(&self, m: &BlockCsr) -> Result<Self::Matrix, Self::Error> {
        self.matrix(m.clone(), true)
    }
    /// `R = P^T` on the backend, from the backend's `p` and the host's
    /// `host_p` (the same matrix): `pattern` is the inspector's transpose of
    /// `P`'s pattern and `source[k]` the block of `P` that block `k` of `R`
    /// transposes. The default gathers on the host and copies the result; a
    /// device gathers from its own `p`, so only the map crosses the bus.
    fn transpose(
        &self,
        p: &Self::Matrix,
        host_p: &BlockCsr,
        pattern: &Arc<BlockPattern>,
        source: &[u32],
    ) -> Result<Self::Matrix, Self::Error> {
        let _ = p;
        let r = host_p
            .transpose_onto(pattern.clone(), source)
            .map_err(RuntimeError::from)?;
        self.matrix(r, true)
    }
    /// `m` itself where the backend keeps host matrices.
    fn host_matrix<'a>(&self, _m: &'a Self::Matrix) -> Option<&'a BlockCsr> {
        None
    }
    /// Tells the backend that `m` is a symmetric operator, so that its
    /// [`Backend::spmv`] and [`Backend::residual`] may read only the blocks
    /// on and above the diagonal, taking each block below it as its mirror's
    /// transpose (a mesh-setup step: it may search the pattern). The default
    /// reads every block.
    fn symmetric_operator(&self, m: &mut Self::Matrix) -> Result<(), Self::Error> {
        let _ = m;
        Ok(())
    }
    /// Replaces `m`'s values (same pattern).
    fn set_values(&self, m: &mut Self::Matrix, values: &[f64]) -> Result<(), Self::Error>;
    /// `m`'s values, on the host (verification and reports).
    fn values(&self, m: &Self::Matrix) -> Result<Vec<f64>, Self::Error>;

    // Vector and matrix operations.

    /// `y = A x`.
    fn spmv(&self, a: &Self::Matrix, x: &Self::Vector, y: &mut Self::Vector) -> Result<(), Self::Error>;
    /// `r = b - A x`.
    fn residual(
        &self,
        a: &Self::Matrix,
        x: &Self::Vector,
        b: &Self::Vector,
        r: &mut Self::Vector,
    ) -> Result<(), Self::Error>;
    /// `y += alpha x`.
    fn axpy(&self, alpha: f64, x: &Self::Vector, y: &mut Self::Vector) -> Result<(), Self::Error>;
    /// `y = x + beta y`.
    fn xpby(&self, x: &Self::Vector, beta: f64, y: &mut Self::Vector) -> Result<(), Self::Error>;
    /// `y = x`.
    fn copy(&self, x: &Self::Vector, y: &mut Self::Vector) -> Result<(), Self::Error>;
    /// `y = value` everywhere.
    fn fill(&self, y: &mut Self::Vector, value: f64) -> Result<(), Self::Error>;
    /// `x . y`, reduced in a fixed order (bitwise reproducible run to run).
    fn dot(&self, x: &Self::Vector, y: &Self::Vector) -> Result<f64, Self::Error>;
    /// `||x||_2`.
    fn norm2(&self, x: &Self::Vector) -> Result<f64, Self::Error> {
        Ok(self.dot(x, x)?.sqrt())
    }

    // Scalars kept on the backend: CG's reductions and coefficients live in a
    // short vector `s` (slots [`cg_slot`]) so that no operation waits for the
    // host; the host reads `s` only where it decides something.

    /// `s[slot] = x . y` (the reduction of [`Backend::dot`], bit for bit); when
    /// `keep` is given, the old `s[slot]` moves to `s[keep]` first.
    fn dot_into(
        &self,
        x: &Self::Vector,
        y: &Self::Vector,
        s: &mut Self::Vector,
        slot: usize,
        keep: Option<usize>,
    ) -> Result<(), Self::Error>;
    /// CG's update after `ap = A p` and `s[PAP] = p . ap`: with
    /// `alpha = s[RZ] / s[PAP]`, `x += alpha p`, `r -= alpha ap`, then
    /// `s[RR] = r . r` (as [`Backend::axpy`] twice and [`Backend::dot_into`]).
    fn cg_update(
        &self,
        s: &mut Self::Vector,
        p: &Self::Vector,
        ap: &Self::Vector,
        x: &mut Self::Vector,
        r: &mut Self::Vector,
    ) -> Result<(), Self::Error>;
    /// CG's new direction `p = z + beta p` with `beta = s[RZ] / s[RZ_OLD]` (as
    /// [`Backend::xpby`]).
    fn cg_direction(&self, s: &Self::Vector, z: &Self::Vector, p: &mut Self::Vector) -> Result<(), Self::Error>;

    /// `y += c x` with `c = s[num] / s[den]`, negated when `negate` (what
    /// [`Backend::axpy`] does with that `alpha`, bit for bit): a step length
    /// read from the backend's scalars, not from the host.
    #[allow(clippy::too_many_arguments)]
    fn axpy_ratio(
        &self,
        s: &Self::Vector,
        num: usize,
        den: usize,
        negate: bool,
        x: &Self::Vector,
        y: &mut Self::Vector,
    ) -> Result<(), Self::Error>;
    /// `y = x + (s[num] / s[den]) y` (what [`Backend::xpby`] does with that `beta`).
    fn xpby_ratio(
        &self,
        s: &Self::Vector,
        num: usize,
        den: usize,
        x: &Self::Vector,
        y: &mut Self::Vector,
    ) -> Result<(), Self::Error>;

    // The mixed-precision smoother's operators: values stored as `f32`,
    // widened to `f64` where used; vectors and sums stay `f64`. The defaults
    // refuse, for a backend that has no `f32` storage.

    /// Storage for `a`'s values as `f32` (setup time; [`Backend::lower`] fills it).
    fn lowered(&self, a: &Self::Matrix) -> Result<Self::Lowered, Self::Error> {
        let _ = a;
        Err(RuntimeError::InvalidOption {
            what: format!(
                "the {} backend has no f32 smoother operators; use smoother precision f64",
                self.name()
            ),
        }
        .into())
    }
    /// `lo` = `a`'s current values rounded to the nearest `f32` (ties to
    /// even): one pass, no allocation. Fails, naming `level`, where a finite
    /// value is beyond `f32`'s range.
    fn lower(&self, a: &Self::Matrix, lo: &mut Self::Lowered, level: usize) -> Result<(), Self::Error> {
        let _ = (a, lo, level);
        Err(RuntimeError::InvalidOption {
            what: format!("the {} backend has no f32 smoother operators", self.name()),
        }
        .into())
    }
    /// [`Backend::lower`], its range check left to [`Backend::check_lowered`]
    /// where the backend queues work; the default checks at once.
    fn lower_queued(&self, a: &Self::Matrix, lo: &mut Self::Lowered, level: usize) -> Result<(), Self::Error> {
        self.lower(a, lo, level)
    }
    /// The check [`Backend::lower_queued`] left (after it has run).
    fn check_lowered(&self, lo: &Self::Lowered, level: usize) -> Result<(), Self::Error> {
        let _ = (lo, level);
        Ok(())
    }
    /// `y = A x` with `A`'s values read from `lo`: the sums of
    /// [`Backend::spmv`] on the values rounded to `f32`.
    fn spmv_lowered(
        &self,
        a: &Self::Matrix,
        lo: &Self::Lowered,
        x: &Self::Vector,
        y: &mut Self::Vector,
    ) -> Result<(), Self::Error> {
        let _ = (a, lo, x, y);
        Err(RuntimeError::InvalidOption {
            what: format!("the {} backend has no f32 smoother operators", self.name()),
        }
        .into())
    }
    /// `r = b - A x` with `A`'s values read from `lo` (as [`Backend::residual`]).
    fn residual_lowered(
        &self,
        a: &Self::Matrix,
        lo: &Self::Lowered,
        x: &Self::Vector,
        b: &Self::Vector,
        r: &mut Self::Vector,
    ) -> Result<(), Self::Error> {
        let _ = (a, lo, x, b, r);
        Err(RuntimeError::InvalidOption {
            what: format!("the {} backend has no f32 smoother operators", self.name()),
        }
        .into())
    }

    // Recording (setup of a replayable sequence).

    /// Starts recording the operations that follow instead of running them,
    /// until [`Backend::end_capture`]; `false` (the default) where this
    /// backend runs every operation at once and records nothing. Recorded
    /// operations read scalars and vectors when replayed, so only their
    /// storage (not their values) must stay the same.
    fn begin_capture(&self) -> Result<bool, Self::Error> {
        Ok(false)
    }
    /// Ends the recording [`Backend::begin_capture`] started; `discard` drops
    /// it (after a failed operation) and returns `None`.
    fn end_capture(&self, discard: bool) -> Result<Option<Self::Graph>, Self::Error>;
    /// Runs a recorded sequence once more.
    fn replay(&self, graph: &Self::Graph) -> Result<(), Self::Error>;
    /// Lanes this backend replays recordings on beside its main order
    /// ([`Backend::replay_beside`]); 0 (the default) where everything runs
    /// in one order.
    fn lanes(&self) -> usize {
        0
    }
    /// The lane whose scratch (reduction partials) the operations that follow
    /// use, until `None` (the main order's): a recording meant for
    /// [`Backend::replay_beside`] on `lane` is made with it, so that two lanes
    /// never share scratch.
    fn use_lane(&self, lane: Option<usize>) {
        let _ = lane;
    }
    /// Replays `graph` after everything queued so far but beside what is
    /// queued after it, on lane `lane` (after that lane's earlier replays),
    /// until [`Backend::join_lanes`]. The default replays it in order.
    fn replay_beside(&self, graph: &Self::Graph, lane: usize) -> Result<(), Self::Error> {
        let _ = lane;
        self.replay(graph)
    }
    /// Operations queued from now on wait for every lane's replays.
    fn join_lanes(&self) -> Result<(), Self::Error> {
        Ok(())
    }
    /// A number that tells `v`'s storage apart from every other live vector's
    /// (what a recording is keyed on).
    fn storage_id(&self, v: &Self::Vector) -> usize;

    // Point-block Jacobi.

    /// Storage for the diagonal-block inverses of `a` (`nrows` blocks of `b x b`).
    fn jacobi(&self, a: &BlockCsr) -> Result<Self::Jacobi, Self::Error>;
    /// Inverts every diagonal block of `a`'s current values.
    fn jacobi_invert(&self, a: &Self::Matrix, j: &mut Self::Jacobi, level: usize) -> Result<(), Self::Error>;
    /// [`Backend::jacobi_invert`], its check left to [`Backend::check_jacobi`]
    /// where the backend queues work (so it can be recorded); the default
    /// checks at once.
    fn jacobi_invert_queued(&self, a: &Self::Matrix, j: &mut Self::Jacobi, level: usize) -> Result<(), Self::Error> {
        self.jacobi_invert(a, j, level)
    }
    /// The check [`Backend::jacobi_invert_queued`] left (after it has run).
    fn check_jacobi(&self, j: &Self::Jacobi, level: usize) -> Result<(), Self::Error> {
        let _ = (j, level);
        Ok(())
    }
    /// `x += alpha D^-1 r + beta t` (`t` unread when `beta == 0`).
    fn jacobi_update(
        &self,
        j: &Self::Jacobi,
        alpha: f64,
        r: &Self::Vector,
        beta: f64,
        t: &Self::Vector,
        x: &mut Self::Vector,
    ) -> Result<(), Self::Error>;
    /// [`Backend::jacobi_update`] with `alpha = coef[alpha_at]` and `beta =
    /// coef[beta_at]` (0 when `None`) read from the backend's scalars `coef`.
    #[allow(clippy::too_many_arguments)]
    fn jacobi_update_at(
        &self,
        j: &Self::Jacobi,
        coef: &Self::Vector,
        alpha_at: usize,
        beta_at: Option<usize>,
        r: &Self::Vector,
        t: &Self::Vector,
        x: &mut Self::Vector,
    ) -> Result<(), Self::Error>;
    /// Chebyshev's first step after its residual `r`: `t = coef[alpha_at]
    /// D^-1 r`, then `x = t` when `zero_guess` (`x` unread) or `x += t`: what
    /// [`Backend::fill`] of `t`, [`Backend::jacobi_update_at`] into it and
    /// [`Backend::copy`] or [`Backend::axpy`] do, bit for bit (the default);
    /// a device does it in one pass.
    #[allow(clippy::too_many_arguments)]
    fn jacobi_first_step(
        &self,
        j: &Self::Jacobi,
        coef: &Self::Vector,
        alpha_at: usize,
        r: &Self::Vector,
        t: &mut Self::Vector,
        x: &mut Self::Vector,
        zero_guess: bool,
    ) -> Result<(), Self::Error> {
        self.fill(t, 0.0)?;
        self.jacobi_update_at(j, coef, alpha_at, None, r, r, t)?;
        if zero_guess {
            self.copy(t, x)
        } else {
            self.axpy(1.0, t, x)
        }
    }
    /// The eigen-estimate's step after `s[den] = p . ap`: `r -= (s[num] /
    /// s[den]) ap`, `z = D^-1 r`, `s[slot] = r . z` (the default:
    /// [`Backend::axpy_ratio`], [`Backend::fill`], [`Backend::jacobi_update`],
    /// [`Backend::dot_into`]; a device fuses them, its sum within rounding).
    #[allow(clippy::too_many_arguments)]
    fn lanczos_update(
        &self,
        j: &Self::Jacobi,
        s: &mut Self::Vector,
        num: usize,
        den: usize,
        ap: &Self::Vector,
        r: &mut Self::Vector,
        z: &mut Self::Vector,
        slot: usize,
    ) -> Result<(), Self::Error> {
        self.axpy_ratio(s, num, den, true, ap, r)?;
        self.fill(z, 0.0)?;
        self.jacobi_update(j, 1.0, r, 0.0, r, z)?;
        self.dot_into(r, z, s, slot, None)
    }
    /// The inverses, on the host (verification).
    fn jacobi_values(&self, j: &Self::Jacobi) -> Result<Vec<f64>, Self::Error>;

    // Galerkin product.

    /// The executor of `schedule` for `bf x bf` fine and `bf x bc` prolongator blocks.
    fn product(&self, schedule: &VariantSchedule, bf: usize, bc: usize) -> Result<Self::Product, Self::Error>;
    /// `warm`, a host executor that already ran (mesh setup's two-pass product
    /// for a coarse operator the aggregation needed), as this backend's product
    /// for `schedule`, where it can serve: then its buffers are reused instead
    /// of allocated again. The default declines.
    fn adopt_product(&self, warm: Box<dyn GalerkinProduct>, schedule: &VariantSchedule) -> Option<Self::Product> {
        let _ = (warm, schedule);
        None
    }
    /// `c = P^T A P` (values only; `c` has the schedule's coarse pattern).
    fn galerkin(
        &self,
        product: &mut Self::Product,
        a: &Self::Matrix,
        p: &Self::Matrix,
        c: &mut Self::Matrix,
    ) -> Result<(), Self::Error>;

    // Coarse direct solve.

    /// Storage for the factor of the coarsest operator `a` (dense, `n x n` scalars).
    fn coarse(&self, a: &BlockCsr) -> Result<Self::Coarse, Self::Error>;
    /// Factors `a`'s current values (dense Cholesky).
    fn coarse_factor(&self, a: &Self::Matrix, c: &mut Self::Coarse, level: usize) -> Result<(), Self::Error>;
    /// [`Backend::coarse_factor`], its pivot check left to
    /// [`Backend::check_coarse`] where the backend queues work (so it can be
    /// recorded); the default checks at once.
    fn coarse_factor_queued(&self, a: &Self::Matrix, c: &mut Self::Coarse, level: usize) -> Result<(), Self::Error> {
        self.coarse_factor(a, c, level)
    }
    /// The check [`Backend::coarse_factor_queued`] left (after it has run).
    fn check_coarse(&self, c: &Self::Coarse, level: usize) -> Result<(), Self::Error> {
        let _ = (c, level);
        Ok(())
    }
    /// `x = A_coarse^-1 x`.
    fn coarse_solve(&self, c: &Self::Coarse, x: &mut Self::Vector) -> Result<(), Self::Error>;
}

/// The slots of CG's scalar vector on the backend ([`Backend::cg_update`]).
pub mod cg_slot {
    /// `r . z` of the current iteration.
    pub const RZ: usize = 0;
    /// `r . z` of the previous iteration.
    pub const RZ_OLD: usize = 1;
    /// `p . A p`.
    pub const PAP: usize = 2;
    /// `r . r` after the update.
    pub const RR: usize = 3;
    /// Length of the vector.
    pub const LEN: usize = 4;
}
