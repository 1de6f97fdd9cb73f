//! The CPU backend: host vectors and [`BlockCsr`] matrices, rayon kernels,
//! the reference every other backend is tested against.
//!
//! Block kernels come from a [`KernelRegistry`] (the generated, unrolled
//! kernels of the registered shape sets; size-generic loops for any other
//! shape), so the SpMV, the smoother and the products of a declared set run
//! its own kernels. Every kernel is deterministic whatever the thread count.
use crate::backend::{cg_slot, Backend};
use crate::block_ops::update_dyn;
use crate::registry::{JacobiEntry, KernelRegistry};
use crate::variants::GalerkinProduct;
use crate::RuntimeError;
use ptap_schedules::VariantSchedule;
use ptap_sparse::dense::{invert_in_place, Cholesky};
use ptap_sparse::lowered::{residual_f32, spmv_f32, LoweredCsr};
use ptap_sparse::par::{axpy, dot, norm2, xpby};
use ptap_sparse::BlockCsr;
use rayon::prelude::*;
use std::sync::Arc;

/// The error of an operator value beyond `f32`'s range on level `level`.
pub fn f32_overflow(level: usize) -> RuntimeError {
    RuntimeError::InvalidOption {
        what: format!(
            "level {level}'s operator has a value beyond f32's range (3.4e38), so its f32 smoother copy would be infinite; use smoother precision f64"
        ),
    }
}

/// The CPU backend over a kernel registry.
#[derive(Clone, Debug)]
pub struct Cpu {
    kernels: KernelRegistry,
}

impl Default for Cpu {
    /// The shipped kernel sets.
    fn default() -> Self {
        Self::new(KernelRegistry::shipped().clone())
    }
}

impl Cpu {
    pub fn new(kernels: KernelRegistry) -> Self {
        Self { kernels }
    }
    pub fn kernels(&self) -> &KernelRegistry {
        &self.kernels
    }
}

/// Point-block Jacobi on the CPU: the inverted diagonal blocks of one operator,
/// refreshed in place with every matrix setup.
#[derive(Clone, Debug)]
pub struct PointBlockJacobi {
    b: usize,
    diag_pos: Vec<usize>,
    dinv: Vec<f64>,
    /// Generated kernels of `b x b` blocks, if registered.
    kernels: Option<JacobiEntry>,
}

impl PointBlockJacobi {
    /// Storage for the diagonal-block inverses of `a` with the kernels
    /// `registry` holds for its block size (size-generic loops otherwise).
    pub fn with_registry(a: &BlockCsr, registry: &KernelRegistry) -> Self {
        let (b, _) = a.block_shape();
        Self {
            b,
            diag_pos: a.pattern().diagonal_positions(),
            dinv: vec![0.0; a.nrows() * b * b],
            kernels: registry.jacobi(b).copied(),
        }
    }

    /// Inverts every diagonal block of `a`.
    pub fn refresh(&mut self, a: &BlockCsr, level: usize) -> Result<(), RuntimeError> {
        let b = self.b;
        let kernels = self.kernels;
        let diag_pos = &self.diag_pos;
        let bad = self
            .dinv
            .par_chunks_mut(b * b)
            .enumerate()
            .with_min_len(256)
            .map(|(i, d)| {
                let k = diag_pos[i];
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

    /// The inverses, row-major blocks in row order.
    pub fn inverses(&self) -> &[f64] {
        &self.dinv
    }
}

/// The dense Cholesky factor of the coarsest operator and its dense staging.
#[derive(Clone, Debug)]
pub struct DenseCoarse {
    chol: Cholesky,
    dense: Vec<f64>,
}

impl DenseCoarse {
    /// The factor `L` (row-major `n x n`, lower triangle).
    pub fn factor(&self) -> &Cholesky {
        &self.chol
    }
}

impl Backend for Cpu {
    type Vector = Vec<f64>;
    type Matrix = BlockCsr;
    type Graph = ();
    type Product = Box<dyn GalerkinProduct>;
    type Jacobi = PointBlockJacobi;
    type Coarse = DenseCoarse;
    /// The values rounded to `f32`, stored as `f32` beside the pattern (half
    /// the value bytes of the V-cycle's applications); its SpMV gives the bits
    /// of the `f64` kernels on the rounded values, the mixed-precision
    /// smoother's reference.
    type Lowered = LoweredCsr;
    type Error = RuntimeError;

    fn name(&self) -> &'static str {
        "cpu"
    }
    fn host_resident(&self) -> bool {
        true
    }

    fn vector(&self, n: usize) -> Result<Vec<f64>, RuntimeError> {
        Ok(vec![0.0; n])
    }
    fn vector_from(&self, host: &[f64]) -> Result<Vec<f64>, RuntimeError> {
        Ok(host.to_vec())
    }
    fn write(&self, host: &[f64], v: &mut Vec<f64>) -> Result<(), RuntimeError> {
        v.copy_from_slice(host);
        Ok(())
    }
    fn read(&self, v: &Vec<f64>, host: &mut [f64]) -> Result<(), RuntimeError> {
        host.copy_from_slice(v);
        Ok(())
    }
    fn matrix(&self, m: BlockCsr, _with_values: bool) -> Result<BlockCsr, RuntimeError> {
        Ok(m)
    }
    fn host_matrix<'a>(&self, m: &'a BlockCsr) -> Option<&'a BlockCsr> {
        Some(m)
    }
    fn set_values(&self, m: &mut BlockCsr, values: &[f64]) -> Result<(), RuntimeError> {
        if values.len() != m.values().len() {
            return Err(RuntimeError::ValuesLength {
                got: values.len(),
                expected: m.values().len(),
            });
        }
        m.values_mut().copy_from_slice(values);
        Ok(())
    }
    fn values(&self, m: &BlockCsr) -> Result<Vec<f64>, RuntimeError> {
        Ok(m.values().to_vec())
    }

    fn spmv(&self, a: &BlockCsr, x: &Vec<f64>, y: &mut Vec<f64>) -> Result<(), RuntimeError> {
        self.kernels.spmv(a, x, y);
        Ok(())
    }
    fn residual(&self, a: &BlockCsr, x: &Vec<f64>, b: &Vec<f64>, r: &mut Vec<f64>) -> Result<(), RuntimeError> {
        self.kernels.residual(a, x, b, r);
        Ok(())
    }
    fn lowered(&self, a: &BlockCsr) -> Result<LoweredCsr, RuntimeError> {
        Ok(LoweredCsr::zeros_like(a))
    }
    fn lower(&self, a: &BlockCsr, lo: &mut LoweredCsr, level: usize) -> Result<(), RuntimeError> {
        if lo.values().len() != a.values().len() {
            return Err(RuntimeError::ValuesLength {
                got: a.values().len(),
                expected: lo.values().len(),
            });
        }
        if lo.round_from(a)? {
            return Err(f32_overflow(level));
        }
        Ok(())
    }
    fn spmv_lowered(&self, _a: &BlockCsr, lo: &LoweredCsr, x: &Vec<f64>, y: &mut Vec<f64>) -> Result<(), RuntimeError> {
        spmv_f32(lo, x, y);
        Ok(())
    }
    fn residual_lowered(
        &self,
        _a: &BlockCsr,
        lo: &LoweredCsr,
        x: &Vec<f64>,
        b: &Vec<f64>,
        r: &mut Vec<f64>,
    ) -> Result<(), RuntimeError> {
        residual_f32(lo, x, b, r);
        Ok(())
    }
    fn axpy(&self, alpha: f64, x: &Vec<f64>, y: &mut Vec<f64>) -> Result<(), RuntimeError> {
        axpy(alpha, x, y);
        Ok(())
    }
    fn xpby(&self, x: &Vec<f64>, beta: f64, y: &mut Vec<f64>) -> Result<(), RuntimeError> {
        xpby(x, beta, y);
        Ok(())
    }
    fn copy(&self, x: &Vec<f64>, y: &mut Vec<f64>) -> Result<(), RuntimeError> {
        y.copy_from_slice(x);
        Ok(())
    }
    fn fill(&self, y: &mut Vec<f64>, value: f64) -> Result<(), RuntimeError> {
        y.fill(value);
        Ok(())
    }
    fn dot(&self, x: &Vec<f64>, y: &Vec<f64>) -> Result<f64, RuntimeError> {
        Ok(dot(x, y))
    }
    fn norm2(&self, x: &Vec<f64>) -> Result<f64, RuntimeError> {
        Ok(norm2(x))
    }
    fn dot_into(
        &self,
        x: &Vec<f64>,
        y: &Vec<f64>,
        s: &mut Vec<f64>,
        slot: usize,
        keep: Option<usize>,
    ) -> Result<(), RuntimeError> {
        if let Some(k) = keep {
            s[k] = s[slot];
        }
        s[slot] = dot(x, y);
        Ok(())
    }
    fn cg_update(
        &self,
        s: &mut Vec<f64>,
        p: &Vec<f64>,
        ap: &Vec<f64>,
        x: &mut Vec<f64>,
        r: &mut Vec<f64>,
    ) -> Result<(), RuntimeError> {
        let alpha = s[cg_slot::RZ] / s[cg_slot::PAP];
        axpy(alpha, p, x);
        axpy(-alpha, ap, r);
        s[cg_slot::RR] = dot(r, r);
        Ok(())
    }
    fn cg_direction(&self, s: &Vec<f64>, z: &Vec<f64>, p: &mut Vec<f64>) -> Result<(), RuntimeError> {
        xpby(z, s[cg_slot::RZ] / s[cg_slot::RZ_OLD], p);
        Ok(())
    }
    fn axpy_ratio(
        &self,
        s: &Vec<f64>,
        num: usize,
        den: usize,
        negate: bool,
        x: &Vec<f64>,
        y: &mut Vec<f64>,
    ) -> Result<(), RuntimeError> {
        let c = s[num] / s[den];
        axpy(if negate { -c } else { c }, x, y);
        Ok(())
    }
    fn xpby_ratio(
        &self,
        s: &Vec<f64>,
        num: usize,
        den: usize,
        x: &Vec<f64>,
        y: &mut Vec<f64>,
    ) -> Result<(), RuntimeError> {
        xpby(x, s[num] / s[den], y);
        Ok(())
    }
    fn end_capture(&self, _discard: bool) -> Result<Option<()>, RuntimeError> {
        Ok(None)
    }
    fn replay(&self, _graph: &()) -> Result<(), RuntimeError> {
        Ok(())
    }
    fn storage_id(&self, v: &Vec<f64>) -> usize {
        v.as_ptr() as usize
    }

    fn jacobi(&self, a: &BlockCsr) -> Result<PointBlockJacobi, RuntimeError> {
        Ok(PointBlockJacobi::with_registry(a, &self.kernels))
    }
    fn jacobi_invert(&self, a: &BlockCsr, j: &mut PointBlockJacobi, level: usize) -> Result<(), RuntimeError> {
        j.refresh(a, level)
    }
    fn jacobi_update(
        &self,
        j: &PointBlockJacobi,
        alpha: f64,
        r: &Vec<f64>,
        beta: f64,
        t: &Vec<f64>,
        x: &mut Vec<f64>,
    ) -> Result<(), RuntimeError> {
        j.update(alpha, r, beta, t, x);
        Ok(())
    }
    fn jacobi_update_at(
        &self,
        j: &PointBlockJacobi,
        coef: &Vec<f64>,
        alpha_at: usize,
        beta_at: Option<usize>,
        r: &Vec<f64>,
        t: &Vec<f64>,
        x: &mut Vec<f64>,
    ) -> Result<(), RuntimeError> {
        j.update(coef[alpha_at], r, beta_at.map_or(0.0, |b| coef[b]), t, x);
        Ok(())
    }
    fn jacobi_values(&self, j: &PointBlockJacobi) -> Result<Vec<f64>, RuntimeError> {
        Ok(j.inverses().to_vec())
    }

    fn product(&self, schedule: &VariantSchedule, bf: usize, bc: usize) -> Result<Self::Product, RuntimeError> {
        self.kernels.executor_for(schedule, bf, bc)
    }
    /// Takes `warm` where it is `schedule`'s variant over the same coarse
    /// pattern (every executor of a variant gives its bits, generated kernels
    /// or not).
    fn adopt_product(&self, warm: Box<dyn GalerkinProduct>, schedule: &VariantSchedule) -> Option<Self::Product> {
        let same = warm.variant() == schedule.variant() && Arc::ptr_eq(warm.coarse_pattern(), &schedule.base().c);
        same.then_some(warm)
    }
    fn galerkin(
        &self,
        product: &mut Self::Product,
        a: &BlockCsr,
        p: &BlockCsr,
        c: &mut BlockCsr,
    ) -> Result<(), RuntimeError> {
        product.numeric(a, p, c)
    }

    fn coarse(&self, a: &BlockCsr) -> Result<DenseCoarse, RuntimeError> {
        let n = a.scalar_rows();
        Ok(DenseCoarse {
            chol: Cholesky::with_order(n),
            dense: vec![0.0; n * n],
        })
    }
    fn coarse_factor(&self, a: &BlockCsr, c: &mut DenseCoarse, level: usize) -> Result<(), RuntimeError> {
        let n = a.scalar_rows();
        let b = a.block_shape().0;
        let d = &mut c.dense;
        d.fill(0.0);
        let p = a.pattern();
        for i in 0..a.nrows() {
            for k in p.row_range(i) {
                let j = p.col_idx()[k] as usize;
                let blk = a.block(k);
                for r in 0..b {
                    for q in 0..b {
                        d[(i * b + r) * n + j * b + q] = blk[r * b + q];
                    }
                }
            }
        }
        c.chol.refactor(d).map_err(|e| RuntimeError::CoarseFactorization {
            level,
            n,
            why: e.to_string(),
        })
    }
    fn coarse_solve(&self, c: &DenseCoarse, x: &mut Vec<f64>) -> Result<(), RuntimeError> {
        c.chol.solve_in_place(x);
        Ok(())
    }
}
