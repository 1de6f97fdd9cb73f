//! The V-cycle and conjugate gradients preconditioned by it, written once
//! over a [`Backend`].
use crate::backend::Backend;
use crate::cpu::Cpu;
use crate::cycle::{chebyshev_smooth_of, Smoothed};
use crate::hierarchy::{Hierarchy, LevelWork, RecordingKey, RECORDING_KEY};
use crate::RuntimeError;
use serde::Serialize;
use std::time::Instant;

/// CG stopping rule: `||b - A x||_2 <= rtol ||b||_2` (unpreconditioned norm).
#[derive(Clone, Copy, Debug)]
pub struct CgOptions {
    pub rtol: f64,
    pub max_iterations: usize,
}

/// The smallest `rtol` CG accepts: below a few machine epsilons the
/// unpreconditioned residual stagnates at rounding level and "converged" would
/// be a claim double precision cannot back.
pub const MIN_RTOL: f64 = 1e-15;
/// The most CG iterations one solve may be asked for.
pub const MAX_ITERATIONS: usize = 1_000_000;
/// Residual-history entries a workspace keeps at most (later ones are dropped).
const MAX_HISTORY: usize = 100_000;

impl CgOptions {
    /// Checks `rtol` in `[MIN_RTOL, 1)` and `max_iterations` in `1..=MAX_ITERATIONS`.
    pub fn validate(&self) -> Result<(), RuntimeError> {
        if !(self.rtol >= MIN_RTOL && self.rtol < 1.0) {
            return Err(RuntimeError::InvalidOption {
                what: format!(
                    "rtol {:e} is outside [{MIN_RTOL:e}, 1): below {MIN_RTOL:e} double precision cannot certify the residual",
                    self.rtol
                ),
            });
        }
        if !(1..=MAX_ITERATIONS).contains(&self.max_iterations) {
            return Err(RuntimeError::InvalidOption {
                what: format!("max_iterations {} is outside 1..={MAX_ITERATIONS}", self.max_iterations),
            });
        }
        Ok(())
    }
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
    /// Wall time of the CG loop with the vectors on the backend.
    pub solve_s: f64,
}

/// CG vectors on the backend and the residual history, allocated once and
/// reused by every solve (a solve allocates nothing).
pub struct CgWorkspace<B: Backend = Cpu> {
    b: B::Vector,
    x: B::Vector,
    r: B::Vector,
    z: B::Vector,
    p: B::Vector,
    ap: B::Vector,
    /// CG's scalars on the backend ([`crate::backend::cg_slot`]).
    s: B::Vector,
    history: Vec<f64>,
}

impl CgWorkspace<Cpu> {
    /// CPU vectors for `n` unknowns; the history keeps up to `max_iterations + 1` entries.
    pub fn new(n: usize, max_iterations: usize) -> Self {
        Self::on(&Cpu::default(), n, max_iterations).expect("host vectors")
    }
}

impl<B: Backend> CgWorkspace<B> {
    /// Vectors for `n` unknowns on `backend`; the history keeps up to
    /// `max_iterations + 1` entries (at most 100,001).
    pub fn on(backend: &B, n: usize, max_iterations: usize) -> Result<Self, B::Error> {
        Ok(Self {
            b: backend.vector(n)?,
            x: backend.vector(n)?,
            r: backend.vector(n)?,
            z: backend.vector(n)?,
            p: backend.vector(n)?,
            ap: backend.vector(n)?,
            s: backend.vector(crate::backend::cg_slot::LEN)?,
            history: Vec::with_capacity(max_iterations.min(MAX_HISTORY) + 1),
        })
    }

    /// `||r_k|| / ||b||` of the last solve, index 0 the start.
    pub fn history(&self) -> &[f64] {
        &self.history
    }
}

impl<B: Backend> Hierarchy<B> {
    /// A CG workspace for this hierarchy's fine level.
    pub fn workspace(&self, max_iterations: usize) -> Result<CgWorkspace<B>, B::Error> {
        CgWorkspace::on(self.backend(), self.scalar_rows(), max_iterations)
    }

    /// Solves `A x = b` by V-cycle-preconditioned CG from the `x` given (the
    /// beam driver passes zero): `b` and `x` go to the backend (phase `rhs
    /// upload`), CG runs there (phase `solve`: only the reductions' scalars
    /// cross a bus), `x` comes back (phase `solution download`).
    pub fn solve(
        &mut self,
        b: &[f64],
        x: &mut [f64],
        opts: &CgOptions,
        ws: &mut CgWorkspace<B>,
    ) -> Result<CgReport, B::Error> {
        opts.validate()?;
        let n = self.scalar_rows();
        for (what, len) in [("right-hand side", b.len()), ("solution", x.len())] {
            if len != n {
                return Err(RuntimeError::VectorLength {
                    what,
                    got: len,
                    expected: n,
                }
                .into());
            }
        }
        if b.iter().any(|v| !v.is_finite()) {
            return Err(RuntimeError::NotFinite {
                what: "right-hand side".into(),
            }
            .into());
        }
        let be = &self.backend;
        be.set_phase("rhs upload");
        be.write(b, &mut ws.b)?;
        be.write(x, &mut ws.x)?;
        let report = self.solve_resident(ws, opts)?;
        self.backend.set_phase("solution download");
        self.backend.read(&ws.x, x)?;
        Ok(report)
    }

    /// CG on the workspace's resident `b` and `x` (`x` updated in place).
    pub fn solve_resident(&mut self, ws: &mut CgWorkspace<B>, opts: &CgOptions) -> Result<CgReport, B::Error> {
        opts.validate()?;
        self.backend.synchronize()?;
        self.backend.set_phase("solve");
        let t = Instant::now();
        let mut report = self.cg(ws, opts)?;
        self.backend.synchronize()?;
        report.solve_s = t.elapsed().as_secs_f64();
        Ok(report)
    }

    fn cg(&mut self, ws: &mut CgWorkspace<B>, opts: &CgOptions) -> Result<CgReport, B::Error> {
        use crate::backend::cg_slot::{PAP, RR, RZ};
        ws.history.clear();
        let be = &self.backend;
        be.residual(&self.levels[0].a, &ws.x, &ws.b, &mut ws.r)?;
        let bnorm = be.norm2(&ws.b)?;
        let target = opts.rtol * bnorm;
        let rnorm0 = be.norm2(&ws.r)?;
        ws.history.push(if bnorm > 0.0 { rnorm0 / bnorm } else { 0.0 });
        let report = |iterations, converged, residual_norm| CgReport {
            iterations,
            converged,
            residual_norm,
            rhs_norm: bnorm,
            solve_s: 0.0,
        };
        if rnorm0 <= target {
            return Ok(report(0, true, rnorm0));
        }
        {
            let CgWorkspace { r, z, p, s, .. } = &mut *ws;
            self.vcycle(r, z)?;
            let be = &self.backend;
            be.copy(z, p)?;
            be.dot_into(r, z, s, RZ, None)?;
        }
        let mut rnorm = rnorm0;
        // Every iteration runs on the backend; the host reads `s` once to
        // check the scalars and decide convergence.
        let mut host = [0.0; crate::backend::cg_slot::LEN];
        for it in 1..=opts.max_iterations {
            if it > 1 {
                self.cg_next_direction(ws)?;
            }
            self.cg_step(ws)?;
            self.backend.read(&ws.s, &mut host)?;
            let (rz, pap) = (host[RZ], host[PAP]);
            if !(rz > 0.0) {
                return Err(RuntimeError::NotSpd {
                    iteration: it,
                    why: format!("r^T M^-1 r = {rz:e}, the preconditioner is not positive definite"),
                }
                .into());
            }
            if !pap.is_finite() {
                return Err(RuntimeError::NotFinite {
                    what: format!("CG iteration {it}"),
                }
                .into());
            }
            if pap <= 0.0 {
                return Err(RuntimeError::NotSpd {
                    iteration: it,
                    why: format!("p^T A p = {pap:e}"),
                }
                .into());
            }
            rnorm = host[RR].sqrt();
            if ws.history.len() < ws.history.capacity() {
                ws.history.push(rnorm / bnorm);
            }
            if rnorm <= target {
                return Ok(report(it, true, rnorm));
            }
        }
        Ok(report(opts.max_iterations, false, rnorm))
    }

    /// `ap = A p`, `s[PAP] = p . ap`, then `x += alpha p`, `r -= alpha ap`,
    /// `s[RR] = r . r` (one recording where the backend records).
    fn cg_step(&mut self, ws: &mut CgWorkspace<B>) -> Result<(), B::Error> {
        use crate::backend::cg_slot::PAP;
        let key = self.key(1, &[&ws.x, &ws.r, &ws.p, &ws.ap, &ws.s]);
        self.recorded(key, |h| {
            let CgWorkspace { x, r, p, ap, s, .. } = &mut *ws;
            let be = &h.backend;
            be.spmv(&h.levels[0].a, p, ap)?;
            be.dot_into(p, ap, s, PAP, None)?;
            be.cg_update(s, p, ap, x, r)
        })
    }

    /// `z = M^-1 r` (the V-cycle), `s[RZ] = r . z` keeping the old one, and
    /// `p = z + beta p` (one recording where the backend records).
    fn cg_next_direction(&mut self, ws: &mut CgWorkspace<B>) -> Result<(), B::Error> {
        use crate::backend::cg_slot::{RZ, RZ_OLD};
        let key = self.key(2, &[&ws.r, &ws.z, &ws.p, &ws.s]);
        self.recorded(key, |h| {
            let CgWorkspace { r, z, p, s, .. } = &mut *ws;
            h.vcycle_now(r, z)?;
            let be = &h.backend;
            be.dot_into(r, z, s, RZ, Some(RZ_OLD))?;
            be.cg_direction(s, z, p)
        })
    }

    /// What a recording of operation `kind` on `vectors` (at most
    /// `RECORDING_KEY - 1`) is keyed on; an array, so that looking a
    /// recording up allocates nothing.
    pub(crate) fn key(&self, kind: usize, vectors: &[&B::Vector]) -> RecordingKey {
        assert!(
            vectors.len() < RECORDING_KEY,
            "a recording is keyed on at most 5 vectors"
        );
        let mut key = [usize::MAX; RECORDING_KEY];
        key[0] = kind;
        for (k, v) in key[1..].iter_mut().zip(vectors) {
            *k = self.backend.storage_id(v);
        }
        key
    }

    /// Runs `f` through a recording keyed on `key`: replays the one recorded
    /// before, or records `f` now and replays it; runs `f` directly where the
    /// backend does not record or [`Self::set_recording`] turned it off. The
    /// hierarchy's own storage never moves, and what `f` reads from the host
    /// is fixed, so a recording stays valid across refreshes.
    pub(crate) fn recorded(
        &mut self,
        key: RecordingKey,
        f: impl FnOnce(&mut Self) -> Result<(), B::Error>,
    ) -> Result<(), B::Error> {
        self.recorded_on(key, None, f)
    }

    /// [`Self::recorded`], the recording replayed beside later work on `lane`
    /// ([`Backend::replay_beside`]) where one is given.
    pub(crate) fn recorded_on(
        &mut self,
        key: RecordingKey,
        lane: Option<usize>,
        f: impl FnOnce(&mut Self) -> Result<(), B::Error>,
    ) -> Result<(), B::Error> {
        if !self.recording {
            return f(self);
        }
        let replay = |be: &B, g: &B::Graph| match lane {
            Some(lane) => be.replay_beside(g, lane),
            None => be.replay(g),
        };
        if let Some((_, g)) = self.graphs.iter().find(|(k, _)| *k == key) {
            return replay(&self.backend, g);
        }
        if !self.backend.begin_capture()? {
            return f(self);
        }
        if let Err(e) = f(self) {
            self.backend.end_capture(true)?;
            return Err(e);
        }
        let Some(g) = self.backend.end_capture(false)? else {
            return Ok(());
        };
        replay(&self.backend, &g)?;
        // A few keys at most (the V-cycle, the two CG halves, per workspace;
        // each smoothed level's eigen-estimate).
        if self.graphs.len() >= 32 {
            self.graphs.remove(0);
        }
        self.graphs.push((key, g));
        Ok(())
    }

    /// Whether solves record their operations once and replay them (on by
    /// default; a backend that records nothing ignores it). Turning it off
    /// drops the recordings.
    pub fn set_recording(&mut self, on: bool) {
        self.recording = on;
        self.graphs.clear();
    }
}

impl<B: Backend> Hierarchy<B> {
    /// Two Chebyshev steps on level `l`'s work vectors (`x` from `rhs`), or
    /// on `io = (rhs, x)` given in their place (the fine level's, which are
    /// the V-cycle's own `r` and `z`).
    fn smooth_level(
        &mut self,
        l: usize,
        zero_guess: bool,
        io: Option<(&B::Vector, &mut B::Vector)>,
    ) -> Result<(), B::Error> {
        let (be, levels) = (&self.backend, &mut self.levels);
        let lev = &mut levels[l];
        let sm = lev.smoother.as_ref().expect("smoother on every level but the coarsest");
        let LevelWork { x, rhs, r, t } = &mut lev.work;
        let (rhs, x) = match io {
            Some((b, z)) => (b, z),
            None => (&*rhs, x),
        };
        let a = Smoothed::of(&lev.a, sm.lowered.as_ref());
        chebyshev_smooth_of(be, a, &sm.jacobi, &sm.coef, rhs, x, zero_guess, r, t)
    }

    /// One V-cycle `z = M^-1 r`: Chebyshev(2) pre/post smoothing, `R = P^T`
    /// restriction, `P` prolongation, the dense coarse solve (one recording
    /// where the backend records).
    pub fn vcycle(&mut self, r: &B::Vector, z: &mut B::Vector) -> Result<(), B::Error> {
        let key = self.key(0, &[r, z]);
        self.recorded(key, |h| h.vcycle_now(r, z))
    }

    fn vcycle_now(&mut self, r: &B::Vector, z: &mut B::Vector) -> Result<(), B::Error> {
        self.vcycle_marked(r, z, &mut |_, _| Ok(()))
    }

    /// [`Self::vcycle`] run directly (never recorded), calling `mark(backend,
    /// at)` where each part begins: `VcyclePart::Down(l)` (pre-smoothing and
    /// restriction of level `l`), `Coarse`, `Up(l)` (prolongation and
    /// post-smoothing of level `l`), and `End`; a bench records timing events there.
    pub fn vcycle_marked(
        &mut self,
        r: &B::Vector,
        z: &mut B::Vector,
        mark: &mut VcycleMark<'_, B>,
    ) -> Result<(), B::Error> {
        // The fine level smooths `z` against `r` in place of its own `x` and
        // `rhs`: the same operations without the copies in and out.
        let nl = self.levels.len();
        mark(&self.backend, VcyclePart::Down(0))?;
        if nl == 1 {
            mark(&self.backend, VcyclePart::Coarse)?;
            self.backend.copy(r, z)?;
            self.backend.coarse_solve(&self.coarse, z)?;
            return mark(&self.backend, VcyclePart::End);
        }
        for l in 0..nl - 1 {
            if l > 0 {
                mark(&self.backend, VcyclePart::Down(l))?;
            }
            self.smooth_level(l, true, (l == 0).then_some((r, &mut *z)))?;
            let (fine, coarse) = self.levels.split_at_mut(l + 1);
            let lev = &mut fine[l];
            let w = &mut lev.work;
            let (x, rhs) = if l == 0 { (&*z, r) } else { (&w.x, &w.rhs) };
            // The residual the restriction takes, in the smoother's precision.
            let lowered = lev.smoother.as_ref().and_then(|sm| sm.lowered.as_ref());
            Smoothed::of(&lev.a, lowered).residual(&self.backend, x, rhs, &mut w.r)?;
            let tr = lev.transfer.as_ref().expect("transfer on every level but the coarsest");
            self.backend.spmv(&tr.r, &w.r, &mut coarse[0].work.rhs)?;
        }
        mark(&self.backend, VcyclePart::Coarse)?;
        {
            let w = &mut self.levels[nl - 1].work;
            self.backend.copy(&w.rhs, &mut w.x)?;
            self.backend.coarse_solve(&self.coarse, &mut w.x)?;
        }
        for l in (0..nl - 1).rev() {
            mark(&self.backend, VcyclePart::Up(l))?;
            let (fine, coarse) = self.levels.split_at_mut(l + 1);
            let lev = &mut fine[l];
            let tr = lev.transfer.as_ref().unwrap();
            // x += P x_c through the scratch t (smoothing overwrites t next).
            self.backend.spmv(&tr.p, &coarse[0].work.x, &mut lev.work.t)?;
            let x = if l == 0 { &mut *z } else { &mut lev.work.x };
            self.backend.axpy(1.0, &lev.work.t, x)?;
            self.smooth_level(l, false, (l == 0).then_some((r, &mut *z)))?;
        }
        mark(&self.backend, VcyclePart::End)
    }
}

/// What [`Hierarchy::vcycle_marked`] calls where each part begins.
pub type VcycleMark<'a, B> = dyn FnMut(&B, VcyclePart) -> Result<(), <B as Backend>::Error> + 'a;

/// Where a part of the V-cycle begins ([`Hierarchy::vcycle_marked`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VcyclePart {
    Down(usize),
    Coarse,
    Up(usize),
    End,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cg_options_outside_what_double_precision_backs_are_refused() {
        let ok = CgOptions::default();
        assert!(ok.validate().is_ok());
        for rtol in [1e-300, 0.0, -1e-8, 1.0, f64::NAN, f64::INFINITY] {
            let e = CgOptions { rtol, ..ok }.validate().unwrap_err().to_string();
            assert!(e.contains("rtol") && e.contains("1e-15"), "{e}");
        }
        assert!(CgOptions { rtol: MIN_RTOL, ..ok }.validate().is_ok());
        for max_iterations in [0, MAX_ITERATIONS + 1, usize::MAX] {
            let e = CgOptions { max_iterations, ..ok }.validate().unwrap_err().to_string();
            assert!(e.contains("max_iterations"), "{e}");
        }
    }

    #[test]
    fn a_huge_iteration_cap_does_not_size_the_history() {
        let ws = CgWorkspace::new(4, MAX_ITERATIONS);
        assert_eq!(ws.history.capacity(), MAX_HISTORY + 1);
    }
}
