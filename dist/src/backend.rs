//! [`DistBackend`]: `ptap_runtime::Backend` over ranks, so the runtime's one
//! V-cycle, Chebyshev smoother, eigen-estimate and CG run unchanged on a
//! distributed hierarchy ([`crate::setup::build_hierarchy`]).
//!
//! A vector is a rank's owned scalars of its level. Matrices are
//! [`DistMat`]s: a distributed level's operator and the prolongator into a
//! distributed level are a [`DistMatrix`] (owned rows, ghost columns, halo
//! plan; the product exchanges the halo while the interior rows run), the
//! restriction from one is the local transpose followed by a reverse halo
//! exchange that adds the ghost rows' sums into their owners'; the coarsest
//! level is *whole* on every rank (gathered once by its Galerkin product,
//! factorized redundantly), so the prolongation into it needs no message and
//! the restriction is one deterministic all-reduce. `dot` is a local dot and
//! one all-reduce (partial sums added in rank order: the same bits on every
//! rank). Every operation allocates nothing: staging buffers live in the
//! matrices.
use crate::comm::Comm;
use crate::local::{DistMatrix, HaloPlan};
use crate::product::DistGalerkin;
use crate::DistError;
use ptap_runtime::backend::cg_slot;
use ptap_runtime::cpu::DenseCoarse;
use ptap_runtime::{Backend, Cpu, KernelRegistry};
use ptap_schedules::VariantSchedule;
use ptap_sparse::dense::{gemv_acc_dyn, invert_in_place};
use ptap_sparse::BlockCsr;
use rayon::prelude::*;
use std::cell::RefCell;

/// Block rows per rayon task in the Jacobi update.
const MIN_ROWS_PER_TASK: usize = 256;

/// The runtime's operations over the ranks of `comm`.
pub struct DistBackend<'c, C: Comm + ?Sized> {
    comm: &'c C,
    cpu: Cpu,
}

impl<'c, C: Comm + ?Sized> DistBackend<'c, C> {
    /// The backend over `comm`, its replicated (coarsest) products and dense
    /// solves on the CPU with `kernels`.
    pub fn new(comm: &'c C, kernels: KernelRegistry) -> Self {
        Self {
            comm,
            cpu: Cpu::new(kernels),
        }
    }
    pub fn comm(&self) -> &'c C {
        self.comm
    }
    pub fn kernels(&self) -> &KernelRegistry {
        self.cpu.kernels()
    }
}

/// Rows of a distributed matrix with the staging of its input (owned
/// columns, then the ghosts the halo fills).
pub struct HaloRows {
    m: RefCell<DistMatrix>,
    x: RefCell<Vec<f64>>,
}

impl HaloRows {
    pub fn new(m: DistMatrix) -> Self {
        let n = m.input_len();
        Self {
            m: RefCell::new(m),
            x: RefCell::new(vec![0.0; n]),
        }
    }
    /// The local matrix and plan (values read for reports and the products).
    pub fn matrix(&self) -> std::cell::Ref<'_, DistMatrix> {
        self.m.borrow()
    }
    pub(crate) fn matrix_mut(&self) -> std::cell::RefMut<'_, DistMatrix> {
        self.m.borrow_mut()
    }

    pub(crate) fn spmv<C: Comm + ?Sized>(&self, comm: &C, x: &[f64], y: &mut [f64]) -> Result<(), DistError> {
        let mut m = self.m.borrow_mut();
        let mut xs = self.x.borrow_mut();
        let n = m.local.n_owned_cols() * m.local.block_shape().1;
        if x.len() != n || y.len() != m.output_len() {
            return Err(DistError::Matrix {
                why: format!(
                    "a product with {} input and {} output scalars on rows expecting {n} and {}",
                    x.len(),
                    y.len(),
                    m.output_len()
                ),
            });
        }
        xs[..n].copy_from_slice(x);
        m.spmv(comm, &mut xs, y);
        Ok(())
    }
}

/// `R = P^T` into a distributed level: the local transpose (`R_loc`, rows
/// over the coarse columns this rank's `P` rows touch, owned then ghost),
/// then the reverse halo exchange of `P`'s plan.
pub struct Restriction {
    pub(crate) r: BlockCsr,
    pub(crate) plan: HaloPlan,
    z: RefCell<Vec<f64>>,
    recv: RefCell<Vec<f64>>,
}

impl Restriction {
    pub fn new(r: BlockCsr, plan: HaloPlan) -> Self {
        let (n, s) = (r.scalar_rows(), plan.send_len());
        Self {
            r,
            plan,
            z: RefCell::new(vec![0.0; n]),
            recv: RefCell::new(vec![0.0; s]),
        }
    }
}

/// A matrix of the distributed backend.
pub enum DistMat {
    /// A distributed level's operator, or the prolongator into a distributed level.
    Rows(Box<HaloRows>),
    /// The restriction onto a distributed level.
    Restriction(Box<Restriction>),
    /// The prolongator into the whole (coarsest) level: owned fine rows,
    /// every coarse column.
    RowsToWhole(BlockCsr),
    /// The restriction onto the whole level: every coarse row, owned fine
    /// columns; the rank's partial product is summed over the ranks.
    WholeFromRows(BlockCsr),
    /// A matrix every rank holds whole (the coarsest operator).
    Whole(BlockCsr),
}

impl DistMat {
    pub(crate) fn kind(&self) -> &'static str {
        match self {
            DistMat::Rows(_) => "distributed rows",
            DistMat::Restriction(_) => "a restriction",
            DistMat::RowsToWhole(_) => "a prolongator into the replicated level",
            DistMat::WholeFromRows(_) => "a restriction onto the replicated level",
            DistMat::Whole(_) => "a replicated matrix",
        }
    }
}

/// Point-block Jacobi of a rank's rows: the inverted diagonal blocks.
#[derive(Clone, Debug)]
pub struct DistJacobi {
    b: usize,
    dinv: Vec<f64>,
}

impl DistJacobi {
    /// Storage for `nrows` blocks of `b x b`.
    pub fn new(nrows: usize, b: usize) -> Self {
        Self {
            b,
            dinv: vec![0.0; nrows * b * b],
        }
    }
}

/// The Galerkin product of one transfer (between distributed levels, or
/// from one into the whole level), with its communication plan.
pub struct DistProduct(pub Box<DistGalerkin>);

/// Why the runtime's setup-time constructors are refused here.
const BUILT_OVER_RANKS: &str = "DistBackend runs hierarchies built over the ranks by ptap_dist::build_hierarchy \
     (Hierarchy::from_levels), not a global mesh setup: its dot sums over ranks, which would count a matrix \
     every rank holds once per rank";

/// Inverts the diagonal blocks `block(i)` into `dinv` (`b x b` each).
fn invert_blocks<'a>(
    dinv: &mut [f64],
    b: usize,
    first_row: usize,
    level: usize,
    block: impl Fn(usize) -> Option<&'a [f64]> + Sync,
) -> Result<(), DistError> {
    let bad = dinv
        .par_chunks_mut(b * b)
        .enumerate()
        .with_min_len(MIN_ROWS_PER_TASK)
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
            why: format!("level {level}: {why}"),
        }),
        None => Ok(()),
    }
}

fn mismatch(op: &str, m: &DistMat) -> DistError {
    DistError::Matrix {
        why: format!("{op} is not defined on {}", m.kind()),
    }
}

impl<C: Comm + ?Sized> Backend for DistBackend<'_, C> {
    type Vector = Vec<f64>;
    type Matrix = DistMat;
    /// Nothing is recorded: every operation runs at once.
    type Graph = ();
    type Product = DistProduct;
    type Jacobi = DistJacobi;
    type Coarse = DenseCoarse;
    /// No f32 smoother operators over ranks: the defaults refuse.
    type Lowered = ();
    type Error = DistError;

    fn name(&self) -> &'static str {
        "mpi-cpu"
    }
    /// One all-reduce ([`crate::comm::agree`]): a rank whose own check
    /// failed keeps its error, the others get "other rank(s) failed".
    fn agree(&self, r: Result<(), DistError>) -> Result<(), DistError> {
        crate::comm::agree(self.comm, r)
    }

    fn vector(&self, n: usize) -> Result<Vec<f64>, DistError> {
        Ok(vec![0.0; n])
    }
    fn vector_from(&self, host: &[f64]) -> Result<Vec<f64>, DistError> {
        Ok(host.to_vec())
    }
    fn write(&self, host: &[f64], v: &mut Vec<f64>) -> Result<(), DistError> {
        v.copy_from_slice(host);
        Ok(())
    }
    fn read(&self, v: &Vec<f64>, host: &mut [f64]) -> Result<(), DistError> {
        host.copy_from_slice(v);
        Ok(())
    }
    /// Refused: a distributed level's matrices are built by
    /// [`crate::setup::build_hierarchy`].
    fn matrix(&self, _m: BlockCsr, _with_values: bool) -> Result<DistMat, DistError> {
        Err(DistError::Options {
            why: BUILT_OVER_RANKS.into(),
        })
    }
    fn set_values(&self, m: &mut DistMat, values: &[f64]) -> Result<(), DistError> {
        match m {
            DistMat::Rows(r) => r.matrix_mut().local.set_values(values),
            DistMat::Whole(a) if a.values().len() == values.len() => {
                a.values_mut().copy_from_slice(values);
                Ok(())
            }
            DistMat::Whole(a) => Err(DistError::Matrix {
                why: format!("{} values for a matrix of {}", values.len(), a.values().len()),
            }),
            other => Err(mismatch("setting values", other)),
        }
    }
    fn values(&self, m: &DistMat) -> Result<Vec<f64>, DistError> {
        match m {
            DistMat::Rows(r) => Ok(r.matrix().local.values().to_vec()),
            DistMat::Whole(a) | DistMat::RowsToWhole(a) | DistMat::WholeFromRows(a) => Ok(a.values().to_vec()),
            DistMat::Restriction(r) => Ok(r.r.values().to_vec()),
        }
    }

    fn spmv(&self, a: &DistMat, x: &Vec<f64>, y: &mut Vec<f64>) -> Result<(), DistError> {
        match a {
            DistMat::Rows(r) => r.spmv(self.comm, x, y),
            DistMat::Restriction(r) => {
                let mut z = r.z.borrow_mut();
                let mut recv = r.recv.borrow_mut();
                self.cpu.kernels().spmv(&r.r, x, &mut z);
                r.plan.reverse_add(self.comm, &mut z, &mut recv);
                let n = y.len();
                y.copy_from_slice(&z[..n]);
                Ok(())
            }
            DistMat::RowsToWhole(p) | DistMat::Whole(p) => {
                self.cpu.kernels().spmv(p, x, y);
                Ok(())
            }
            DistMat::WholeFromRows(r) => {
                self.cpu.kernels().spmv(r, x, y);
                self.comm.all_reduce_sum(y);
                Ok(())
            }
        }
    }
    fn residual(&self, a: &DistMat, x: &Vec<f64>, b: &Vec<f64>, r: &mut Vec<f64>) -> Result<(), DistError> {
        self.spmv(a, x, r)?;
        r.par_iter_mut().zip(b.par_iter()).for_each(|(ri, bi)| *ri = bi - *ri);
        Ok(())
    }
    // Elementwise operations on the rank's part: the CPU backend's.
    fn axpy(&self, alpha: f64, x: &Vec<f64>, y: &mut Vec<f64>) -> Result<(), DistError> {
        Ok(self.cpu.axpy(alpha, x, y)?)
    }
    fn xpby(&self, x: &Vec<f64>, beta: f64, y: &mut Vec<f64>) -> Result<(), DistError> {
        Ok(self.cpu.xpby(x, beta, y)?)
    }
    fn copy(&self, x: &Vec<f64>, y: &mut Vec<f64>) -> Result<(), DistError> {
        Ok(self.cpu.copy(x, y)?)
    }
    fn fill(&self, y: &mut Vec<f64>, value: f64) -> Result<(), DistError> {
        Ok(self.cpu.fill(y, value)?)
    }
    /// The dot of two distributed vectors: the CPU backend's local dot, the
    /// partial sums added over the ranks in rank order.
    fn dot(&self, x: &Vec<f64>, y: &Vec<f64>) -> Result<f64, DistError> {
        let mut v = [self.cpu.dot(x, y)?];
        self.comm.all_reduce_sum(&mut v);
        Ok(v[0])
    }

    /// The CPU's `s[slot] = x . y` on this rank's part, then the partial
    /// dots summed over the ranks in rank order ([`Backend::dot`]'s bits);
    /// `s` is a short vector of scalars every rank holds alike.
    fn dot_into(
        &self,
        x: &Vec<f64>,
        y: &Vec<f64>,
        s: &mut Vec<f64>,
        slot: usize,
        keep: Option<usize>,
    ) -> Result<(), DistError> {
        self.cpu.dot_into(x, y, s, slot, keep)?;
        self.comm.all_reduce_sum(&mut s[slot..=slot]);
        Ok(())
    }
    /// The CPU's update on this rank's part, its `r . r` reduced over the ranks.
    fn cg_update(
        &self,
        s: &mut Vec<f64>,
        p: &Vec<f64>,
        ap: &Vec<f64>,
        x: &mut Vec<f64>,
        r: &mut Vec<f64>,
    ) -> Result<(), DistError> {
        self.cpu.cg_update(s, p, ap, x, r)?;
        self.comm.all_reduce_sum(&mut s[cg_slot::RR..=cg_slot::RR]);
        Ok(())
    }
    fn cg_direction(&self, s: &Vec<f64>, z: &Vec<f64>, p: &mut Vec<f64>) -> Result<(), DistError> {
        Ok(self.cpu.cg_direction(s, z, p)?)
    }
    /// The CPU's on this rank's part (`s` is alike on every rank).
    fn axpy_ratio(
        &self,
        s: &Vec<f64>,
        num: usize,
        den: usize,
        negate: bool,
        x: &Vec<f64>,
        y: &mut Vec<f64>,
    ) -> Result<(), DistError> {
        Ok(self.cpu.axpy_ratio(s, num, den, negate, x, y)?)
    }
    fn xpby_ratio(
        &self,
        s: &Vec<f64>,
        num: usize,
        den: usize,
        x: &Vec<f64>,
        y: &mut Vec<f64>,
    ) -> Result<(), DistError> {
        Ok(self.cpu.xpby_ratio(s, num, den, x, y)?)
    }
    fn end_capture(&self, _discard: bool) -> Result<Option<()>, DistError> {
        Ok(None)
    }
    fn replay(&self, _graph: &()) -> Result<(), DistError> {
        Ok(())
    }
    fn storage_id(&self, v: &Vec<f64>) -> usize {
        v.as_ptr() as usize
    }

    fn jacobi(&self, a: &BlockCsr) -> Result<DistJacobi, DistError> {
        Ok(DistJacobi::new(a.nrows(), a.block_shape().0))
    }
    fn jacobi_invert(&self, a: &DistMat, j: &mut DistJacobi, level: usize) -> Result<(), DistError> {
        let b = j.b;
        match a {
            DistMat::Rows(r) => {
                let m = r.matrix();
                let local = &m.local;
                let done = invert_blocks(&mut j.dinv, b, local.rows().start, level, |i| local.diagonal_block(i));
                crate::comm::agree(self.comm, done)
            }
            DistMat::Whole(m) => {
                invert_blocks(&mut j.dinv, b, 0, level, |i| m.pattern().find(i, i).map(|k| m.block(k)))
            }
            other => Err(mismatch("point-block Jacobi", other)),
        }
    }
    fn jacobi_update(
        &self,
        j: &DistJacobi,
        alpha: f64,
        r: &Vec<f64>,
        beta: f64,
        t: &Vec<f64>,
        x: &mut Vec<f64>,
    ) -> Result<(), DistError> {
        let b = j.b;
        x.par_chunks_mut(b)
            .enumerate()
            .with_min_len(MIN_ROWS_PER_TASK)
            .for_each(|(i, xi)| {
                let mut acc = [0.0f64; 64];
                let acc = &mut acc[..b];
                gemv_acc_dyn(b, b, &j.dinv[i * b * b..(i + 1) * b * b], &r[i * b..(i + 1) * b], acc);
                if beta == 0.0 {
                    for (xv, a) in xi.iter_mut().zip(acc.iter()) {
                        *xv += alpha * a;
                    }
                } else {
                    for ((xv, a), tv) in xi.iter_mut().zip(acc.iter()).zip(&t[i * b..(i + 1) * b]) {
                        *xv += alpha * a + beta * tv;
                    }
                }
            });
        Ok(())
    }
    #[allow(clippy::too_many_arguments)]
    fn jacobi_update_at(
        &self,
        j: &DistJacobi,
        coef: &Vec<f64>,
        alpha_at: usize,
        beta_at: Option<usize>,
        r: &Vec<f64>,
        t: &Vec<f64>,
        x: &mut Vec<f64>,
    ) -> Result<(), DistError> {
        self.jacobi_update(j, coef[alpha_at], r, beta_at.map_or(0.0, |b| coef[b]), t, x)
    }
    fn jacobi_values(&self, j: &DistJacobi) -> Result<Vec<f64>, DistError> {
        Ok(j.dinv.clone())
    }

    /// Refused: a distributed product is built by the distributed mesh
    /// setup ([`DistGalerkin::build`]), which owns its communication plan.
    fn product(&self, _schedule: &VariantSchedule, _bf: usize, _bc: usize) -> Result<DistProduct, DistError> {
        Err(DistError::Options {
            why: BUILT_OVER_RANKS.into(),
        })
    }
    /// `c = P^T A P` by the product's plan (`P` is frozen inside it).
    fn galerkin(&self, product: &mut DistProduct, a: &DistMat, _p: &DistMat, c: &mut DistMat) -> Result<(), DistError> {
        match a {
            DistMat::Rows(a) => product.0.numeric(self.comm, a, c),
            other => Err(mismatch("a distributed Galerkin product", other)),
        }
    }

    fn coarse(&self, a: &BlockCsr) -> Result<DenseCoarse, DistError> {
        Ok(self.cpu.coarse(a)?)
    }
    fn coarse_factor(&self, a: &DistMat, c: &mut DenseCoarse, level: usize) -> Result<(), DistError> {
        match a {
            DistMat::Whole(m) => Ok(self.cpu.coarse_factor(m, c, level)?),
            other => Err(mismatch("the dense coarse factorization", other)),
        }
    }
    fn coarse_solve(&self, c: &DenseCoarse, x: &mut Vec<f64>) -> Result<(), DistError> {
        Ok(self.cpu.coarse_solve(c, x)?)
    }
}
