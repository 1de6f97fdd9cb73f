//! The AMG on device-resident ranks (feature `nccl`): the runtime's CG and
//! V-cycle over [`DeviceDistBackend`], every level's operator, `P`, `R`,
//! Jacobi inverses, Chebyshev scalars and work vectors on each rank's GPU.
//!
//! **Setup.** The mesh setup is the CPU ranks' ([`crate::build_levels`]:
//! aggregation, `P`, each product's inspector and plan). [`build_device_hierarchy`]
//! then uploads every level once (phase `upload`), connects NCCL's peers
//! (one small exchange with every neighbour of any plan, one all-gather), and
//! runs the runtime's matrix setup on the devices
//! ([`ptap_runtime::Hierarchy::from_levels`]).
//!
//! **Matrices.** A distributed level's operator, or the prolongator into a
//! distributed level, is a [`DevRows`]: [`DeviceDistMatrix`] (interior and
//! boundary halves, halo packed on the device and sent by NCCL while the
//! interior rows run) plus the rank's values in the local matrix's order,
//! from which a refresh gathers the halves on the device. The restriction
//! onto a distributed level is the local transpose on the device followed by
//! the reverse halo by NCCL (ghost rows' sums sent to their owners, added
//! there link by link in the CPU's order). Into the whole (coarsest) level:
//! `P` a plain device matrix, `R`'s partial products summed over the ranks by
//! an NCCL all-gather added in rank order on the device; the coarsest
//! operator is whole on every rank and factored there (dense Cholesky of
//! `ptap-cuda`), redundantly.
//!
//! **Galerkin product** ([`DevProduct`]): the plan of [`DistGalerkin`] run on
//! the device. `A_ext`'s values are gathered from the operator's by the
//! inspector's map, the local `P_ext^T A_ext P_ext` is `ptap-cuda`'s device
//! executor of the level's schedule, the runs of coarse rows go to their
//! owners by NCCL send/receive straight from the product's values, and each
//! owner adds the contributions into its rows in rank order (one scatter
//! kernel per contributing rank; no two blocks of one contribution share a
//! target). Into the whole level: the scatter into the global pattern, then
//! the all-gather and rank-order sum.
//!
//! **Reductions.** A dot is `ptap-cuda`'s two-pass dot on the rank's part,
//! then an NCCL all-gather of the partial and a one-thread sum in rank order
//! into the backend's scalar slot: every rank gets the same bits, and CG's
//! scalars stay on the device (only [`Backend::dot`] and the stopping test
//! read 8 bytes back).
//!
//! Nothing here allocates device memory after the upload, and no
//! operator-sized array crosses the bus in matrix setup or solve: a refresh
//! uploads the new fine values (phase `fine values upload`), then every
//! level's values are computed on the devices.
use crate::backend::{DistMat, DistProduct};
use crate::comm::{Comm, Link};
use crate::device::{
    addr, axpby, dist_module, DeviceDistMatrix, LoweredHalves, GATHER_BLOCKS, SCATTER_ADD, SUM_RANKS, SUM_RANKS_INTO,
    UNPACK_ADD,
};
use crate::local::DistMatrix;
use crate::nccl::{DeviceError, NcclComm};
use crate::product::{DistGalerkin, Output};
use crate::setup::{build_levels, DistLevels, DistOptions, DistProblem, DistSetupReport};
use crate::DistError;
use cudarc::driver::{CudaEvent, CudaSlice, DevicePtr, LaunchConfig};
use ptap_codegen_core::gpu::{vector, DOT_THREADS};
use ptap_codegen_core::gpu_cg as gc;
use ptap_codegen_core::gpu_solve as gs;
use ptap_cuda::{
    grid_for, Arg, Cuda, CudaCoarse, CudaMatrix, Device, DeviceBlockCsr, DeviceGraph, DeviceProduct, Kernels,
};
use ptap_runtime::backend::cg_slot;
use ptap_runtime::hierarchy::Transfer;
use ptap_runtime::{Backend, Hierarchy, HierarchyOptions, KernelRegistry, LevelParts, RuntimeError};
use ptap_schedules::VariantSchedule;
use ptap_sparse::BlockCsr;
use std::cell::RefCell;
use std::sync::Arc;
use std::time::Instant;

/// Largest dot-product partial count (blocks of the first pass).
const MAX_PARTIALS: usize = 1024;

/// The runtime's operations over the GPU ranks of `comm` (one GPU each,
/// NCCL communicator `nccl` over the same ranks in the same order).
pub struct DeviceDistBackend<'c, C: Comm + ?Sized> {
    comm: &'c C,
    nccl: &'c NcclComm,
    dev: Arc<Device>,
    registry: KernelRegistry,
    cuda: Cuda,
    vec: Kernels,
    dist: Kernels,
    part: CudaSlice<f64>,
    /// This rank's partial dot.
    mine: CudaSlice<f64>,
    /// Every rank's partial, rank after rank.
    gathered: CudaSlice<f64>,
    /// The reduced dot [`Backend::dot`] reads back.
    scal: CudaSlice<f64>,
    /// Run every operation at once, recording nothing ([`record_off`]).
    no_record: bool,
}

/// Whether `PTAP_RANKS_RECORD=0` turns the GPU ranks' recording of the
/// solve into CUDA graphs off (for measuring what the graphs buy, or as a
/// way around an NCCL that cannot be captured).
pub fn record_off() -> bool {
    std::env::var("PTAP_RANKS_RECORD").is_ok_and(|v| v == "0")
}

impl<'c, C: Comm + ?Sized> DeviceDistBackend<'c, C> {
    /// The backend on `dev` with `registry`'s kernels. `comm` and `nccl` must
    /// be the same ranks (checked).
    pub fn new(
        comm: &'c C,
        nccl: &'c NcclComm,
        dev: &Arc<Device>,
        registry: KernelRegistry,
    ) -> Result<Self, DeviceError> {
        if comm.size() != nccl.size() || comm.rank() != nccl.rank() {
            return Err(DistError::Options {
                why: format!(
                    "the NCCL communicator (rank {} of {}) is not the host communicator's ranks (rank {} of {})",
                    nccl.rank(),
                    nccl.size(),
                    comm.rank(),
                    comm.size()
                ),
            }
            .into());
        }
        Ok(Self {
            comm,
            nccl,
            cuda: Cuda::with_kernels(dev, registry.clone())?,
            vec: ptap_cuda::kernels::common(dev)?,
            dist: dev.module(&dist_module())?,
            part: dev.zeros(MAX_PARTIALS)?,
            mine: dev.zeros(1)?,
            gathered: dev.zeros(nccl.size())?,
            scal: dev.zeros(1)?,
            no_record: record_off(),
            dev: dev.clone(),
            registry,
        })
    }
    pub fn device(&self) -> &Arc<Device> {
        &self.dev
    }
    pub fn comm(&self) -> &'c C {
        self.comm
    }
    pub fn nccl(&self) -> &'c NcclComm {
        self.nccl
    }

    /// `mine = x . y` over this rank's part (the CUDA backend's two passes).
    fn local_dot(&self, x: &CudaSlice<f64>, y: &CudaSlice<f64>) -> Result<(), DeviceError> {
        let n = x.len().min(y.len());
        let g = n.div_ceil(DOT_THREADS).clamp(1, MAX_PARTIALS);
        let cfg = |grid: usize| LaunchConfig {
            grid_dim: (grid as u32, 1, 1),
            block_dim: (DOT_THREADS as u32, 1, 1),
            shared_mem_bytes: 0,
        };
        self.dev.launch(
            &self.vec[vector::DOT_PARTIAL],
            cfg(g),
            &[Arg::F64(x), Arg::F64(y), Arg::F64Mut(&self.part), Arg::U64(n as u64)],
        )?;
        self.dev.launch(
            &self.vec[vector::SUM_PARTIAL],
            cfg(1),
            &[
                Arg::F64(&self.part),
                Arg::F64Mut(&self.mine),
                Arg::U32(0),
                Arg::U32(g as u32),
            ],
        )?;
        Ok(())
    }

    /// `s[slot] =` the sum over ranks, in rank order, of each rank's scalar
    /// at `src[at]` (after `s[keep] = s[slot]`). Collective.
    fn sum_over_ranks(
        &self,
        src: &CudaSlice<f64>,
        at: usize,
        s: &CudaSlice<f64>,
        slot: usize,
        keep: Option<usize>,
    ) -> Result<(), DeviceError> {
        let st = self.dev.stream();
        // SAFETY: one double at `src[at]`, `gathered` holds one per rank; the
        // stream orders every later use after the gather.
        unsafe {
            self.nccl
                .all_gather(addr(src, at, st), addr(&self.gathered, 0, st), 1, st)
        }?;
        self.dev.launch(
            &self.dist[SUM_RANKS_INTO],
            grid_for(1, 32),
            &[
                Arg::F64(&self.gathered),
                Arg::F64Mut(s),
                Arg::U32(slot as u32),
                Arg::U32(keep.map_or(u32::MAX, |k| k as u32)),
                Arg::U32(self.nccl.size() as u32),
            ],
        )?;
        Ok(())
    }

    /// `y = A x` of a plain device matrix (nothing launched for no blocks).
    fn plain_spmv(&self, a: &CudaMatrix, x: &CudaSlice<f64>, y: &mut CudaSlice<f64>) -> Result<(), DeviceError> {
        if a.m.nnzb == 0 {
            self.cuda.fill(y, 0.0)?;
            return Ok(());
        }
        self.cuda.spmv(a, x, y)?;
        Ok(())
    }

    /// The device copy of a matrix the CPU mesh setup built (setup: uploads).
    fn upload(&self, m: DistMat) -> Result<DevMat, DeviceError> {
        Ok(match m {
            DistMat::Rows(r) => DevMat::Rows(Box::new(DevRows::new(&self.dev, &self.registry, &r.matrix())?)),
            DistMat::Restriction(r) => {
                let plan = &r.plan;
                let mut cols = Vec::new();
                for s in 0..plan.sends().len() {
                    cols.extend_from_slice(plan.send_columns(s));
                }
                DevMat::Restriction(Box::new(DevRestriction {
                    z: RefCell::new(self.dev.zeros(r.r.scalar_rows())?),
                    recv: self.dev.zeros(plan.send_len())?,
                    send_cols: self.dev.upload(&cols)?,
                    sends: plan.sends().to_vec(),
                    recvs: plan.recvs().to_vec(),
                    n_owned: plan.n_owned_cols() * plan.width(),
                    bc: plan.width(),
                    r: self.cuda.matrix_ref(&r.r)?,
                }))
            }
            DistMat::RowsToWhole(p) => DevMat::RowsToWhole(self.cuda.matrix_ref(&p)?),
            DistMat::WholeFromRows(r) => DevMat::WholeFromRows(Box::new(DevWholeFromRows {
                gathered: self.dev.zeros(r.scalar_rows() * self.nccl.size())?,
                r: self.cuda.matrix_ref(&r)?,
            })),
            // Its values come from the product.
            DistMat::Whole(c) => DevMat::Whole(self.cuda.matrix(c, false)?),
        })
    }
}

/// A distributed level's rows on the device (module docs).
pub struct DevRows {
    m: DeviceDistMatrix,
    /// The values in the local matrix's order (what the products and the
    /// Jacobi inverses read; the halves are gathered from them).
    full: CudaSlice<f64>,
    nnzb: usize,
    /// The SpMV's input: owned, then ghost scalars.
    x: CudaSlice<f64>,
    n_in: usize,
    first_row: usize,
    /// Each row's diagonal block in `full` (`u32::MAX`: none); square blocks.
    diag: Vec<u32>,
}

impl DevRows {
    fn new(dev: &Device, registry: &KernelRegistry, d: &DistMatrix) -> Result<Self, DeviceError> {
        let local = &d.local;
        let (br, bc) = local.block_shape();
        let diag = if br == bc {
            (0..local.n_rows())
                .map(|i| {
                    let r = local.row_ptr()[i]..local.row_ptr()[i + 1];
                    r.into_iter()
                        .find(|&k| local.col_idx()[k] as usize == i)
                        .map_or(u32::MAX, |k| k as u32)
                })
                .collect()
        } else {
            Vec::new()
        };
        let full = dev.upload(local.values())?;
        Ok(Self {
            m: DeviceDistMatrix::from_device_values(dev, registry, d, &full)?,
            full,
            nnzb: local.nnzb(),
            x: dev.zeros(d.input_len())?,
            n_in: local.n_owned_cols() * bc,
            first_row: local.rows().start,
            diag,
        })
    }
    /// The rows' device matrix (halves, halo).
    pub fn matrix(&self) -> &DeviceDistMatrix {
        &self.m
    }
    /// The SpMV's input for the owned scalars `x`: `x` itself where the rows
    /// have no ghost column (one rank), else `x` copied ahead of the ghost
    /// tail the halo fills.
    fn input<'a>(
        &'a self,
        dev: &Device,
        vec: &Kernels,
        x: &'a CudaSlice<f64>,
    ) -> Result<&'a CudaSlice<f64>, DeviceError> {
        if self.x.len() == self.n_in {
            return Ok(x);
        }
        axpby(dev, vec, 1.0, x, 0.0, &self.x, self.n_in)?;
        Ok(&self.x)
    }
}

/// The restriction onto a distributed level on the device (module docs).
pub struct DevRestriction {
    r: CudaMatrix,
    /// `R_loc x`: owned, then ghost coarse rows.
    z: RefCell<CudaSlice<f64>>,
    recv: CudaSlice<f64>,
    send_cols: CudaSlice<u32>,
    sends: Vec<Link>,
    recvs: Vec<Link>,
    n_owned: usize,
    bc: usize,
}

/// The `f32` copy of a distributed level's operator (its halves) and the
/// flag its conversion sets on a value beyond `f32`'s range.
pub struct DevLowered {
    halves: LoweredHalves,
    overflow: CudaSlice<u32>,
}

/// The restriction onto the whole level: partial products summed over ranks.
pub struct DevWholeFromRows {
    r: CudaMatrix,
    gathered: CudaSlice<f64>,
}

/// A matrix of the device ranks' backend (the device twin of [`DistMat`]).
pub enum DevMat {
    Rows(Box<DevRows>),
    Restriction(Box<DevRestriction>),
    RowsToWhole(CudaMatrix),
    WholeFromRows(Box<DevWholeFromRows>),
    Whole(CudaMatrix),
}

impl DevMat {
    fn kind(&self) -> &'static str {
        match self {
            DevMat::Rows(_) => "distributed rows",
            DevMat::Restriction(_) => "a restriction",
            DevMat::RowsToWhole(_) => "a prolongator into the replicated level",
            DevMat::WholeFromRows(_) => "a restriction onto the replicated level",
            DevMat::Whole(_) => "a replicated matrix",
        }
    }
}

fn mismatch(op: &str, m: &DevMat) -> DeviceError {
    DistError::Matrix {
        why: format!("{op} is not defined on {}", m.kind()),
    }
    .into()
}

/// Point-block Jacobi of a rank's rows on the device.
pub struct DevJacobi {
    b: usize,
    nrows: usize,
    diag_pos: CudaSlice<u32>,
    dinv: CudaSlice<f64>,
    status: CudaSlice<u32>,
    kernels: Kernels,
}

/// Where one rank's contribution to this rank's coarse rows is read from.
enum Source {
    /// This rank's own product, from block `k0` on.
    Own,
    /// The receive buffer, from scalar `start` on.
    Recv(usize),
}

enum DevOutput {
    Owners {
        /// First block of this rank's own run in the local product.
        k0: usize,
        sends: Vec<Link>,
        recvs: Vec<Link>,
        recv: CudaSlice<f64>,
        /// In rank order: source, target blocks, count.
        sources: Vec<(Source, CudaSlice<u32>, usize)>,
    },
    Everyone {
        pos: CudaSlice<u32>,
        n: usize,
        acc: CudaSlice<f64>,
        gathered: CudaSlice<f64>,
    },
}

/// One level's distributed Galerkin product on the device (module docs).
pub struct DevProduct {
    a_ext: DeviceBlockCsr,
    a_map: CudaSlice<u32>,
    a_nnzb: usize,
    p_ext: DeviceBlockCsr,
    c_ext: DeviceBlockCsr,
    /// `None` where this rank's local product is empty.
    exec: Option<DeviceProduct>,
    out: DevOutput,
    dist: Kernels,
    start: CudaEvent,
    /// After the local product (before any exchange): this rank's own work.
    local_end: CudaEvent,
    end: CudaEvent,
}

impl DevProduct {
    /// Uploads the inspector's plan `g` (setup).
    fn new<C: Comm + ?Sized>(be: &DeviceDistBackend<'_, C>, g: DistGalerkin) -> Result<Self, DeviceError> {
        let dev = &be.dev;
        let (bf, bc) = (g.a_ext.block_shape().0, g.p_ext.block_shape().1);
        let a_ext = DeviceBlockCsr::upload_pattern(dev, g.a_ext.pattern(), bf, bf)?;
        let p_ext = DeviceBlockCsr::upload(dev, &g.p_ext)?;
        let c_ext = DeviceBlockCsr::upload_pattern(dev, g.c_ext.pattern(), bc, bc)?;
        let exec = if g.a_ext.pattern().nnzb() > 0 && g.c_ext.pattern().nnzb() > 0 {
            Some(DeviceProduct::new(dev, &be.registry, &g.schedule, bf, bc)?)
        } else {
            None
        };
        let me = be.comm.rank();
        let out = match g.out {
            Output::Everyone { pos, acc } => DevOutput::Everyone {
                n: pos.len(),
                pos: dev.upload(&pos)?,
                gathered: dev.zeros(acc.len() * be.nccl.size())?,
                acc: dev.zeros(acc.len())?,
            },
            Output::Owners {
                mine,
                sends,
                recvs,
                recv,
                maps,
                link_of,
                acc: _,
            } => {
                let mut sources = Vec::new();
                for (q, map) in maps.iter().enumerate() {
                    if map.is_empty() {
                        continue;
                    }
                    let src = if q == me {
                        Source::Own
                    } else if link_of[q] != usize::MAX {
                        Source::Recv(recvs[link_of[q]].start)
                    } else {
                        continue;
                    };
                    sources.push((src, dev.upload(map)?, map.len()));
                }
                DevOutput::Owners {
                    k0: g.c_ext.pattern().row_ptr()[mine.start],
                    sends,
                    recvs,
                    recv: dev.zeros(recv.len())?,
                    sources,
                }
            }
        };
        Ok(Self {
            a_map: dev.upload(&g.a_map)?,
            a_nnzb: g.a_map.len(),
            a_ext,
            p_ext,
            c_ext,
            exec,
            out,
            dist: dev.module(&dist_module())?,
            start: dev.event()?,
            local_end: dev.event()?,
            end: dev.event()?,
        })
    }

    /// Device seconds of the last [`Backend::galerkin`] of this product (from
    /// events around it; call after a synchronization).
    pub fn last_seconds(&self) -> Result<f64, DeviceError> {
        Ok(f64::from(self.start.elapsed_ms(&self.end)?) / 1e3)
    }

    /// Device seconds of the last product's local part on this rank (the
    /// gather of `A_ext` and the executor, no exchange; after a
    /// synchronization).
    pub fn last_local_seconds(&self) -> Result<f64, DeviceError> {
        Ok(f64::from(self.start.elapsed_ms(&self.local_end)?) / 1e3)
    }

    fn numeric<C: Comm + ?Sized>(
        &mut self,
        be: &DeviceDistBackend<'_, C>,
        a: &DevRows,
        c: &mut DevMat,
    ) -> Result<(), DeviceError> {
        let dev = &be.dev;
        let st = dev.stream();
        if a.nnzb != self.a_nnzb {
            return Err(DistError::Matrix {
                why: format!("{} blocks of A for a product inspected with {}", a.nnzb, self.a_nnzb),
            }
            .into());
        }
        self.start.record(st)?;
        let lf = self.a_ext.br * self.a_ext.bc;
        dev.launch(
            &self.dist[GATHER_BLOCKS],
            grid_for((self.a_nnzb * lf) as u64, 256),
            &[
                Arg::F64(&a.full),
                Arg::U32s(&self.a_map),
                Arg::F64Mut(&self.a_ext.values),
                Arg::U32(self.a_nnzb as u32),
                Arg::U32(lf as u32),
            ],
        )?;
        if let Some(exec) = self.exec.as_mut() {
            exec.numeric(&self.a_ext, &self.p_ext, &mut self.c_ext)?;
        }
        self.local_end.record(st)?;
        let lc = self.c_ext.br * self.c_ext.bc;
        let scatter = |src: &CudaSlice<f64>, off: usize, map: &CudaSlice<u32>, n: usize, acc: &CudaSlice<f64>| {
            dev.launch(
                &self.dist[SCATTER_ADD],
                grid_for((n * lc) as u64, 256),
                &[
                    Arg::F64(src),
                    Arg::U64(off as u64),
                    Arg::U32s(map),
                    Arg::F64Mut(acc),
                    Arg::U32(n as u32),
                    Arg::U32(lc as u32),
                ],
            )
        };
        match (&mut self.out, c) {
            (
                DevOutput::Owners {
                    k0,
                    sends,
                    recvs,
                    recv,
                    sources,
                },
                DevMat::Rows(c),
            ) => {
                if !sends.is_empty() || !recvs.is_empty() {
                    be.nccl.group_start()?;
                    let posted = (|| {
                        for l in recvs.iter() {
                            // SAFETY: the range lies in `recv`, read only by
                            // the scatters the stream orders after it.
                            unsafe { be.nccl.recv(addr(recv, l.start, st), l.len, l.rank, st) }?;
                        }
                        for l in sends.iter() {
                            // SAFETY: the run lies in the product's values,
                            // rewritten only by the next product on this stream.
                            unsafe { be.nccl.send(addr(&self.c_ext.values, l.start, st), l.len, l.rank, st) }?;
                        }
                        Ok::<(), DeviceError>(())
                    })();
                    be.nccl.group_end()?;
                    posted?;
                }
                dev.memset_zero(&mut c.full)?;
                for (src, map, n) in sources.iter() {
                    match src {
                        Source::Own => scatter(&self.c_ext.values, *k0 * lc, map, *n, &c.full)?,
                        Source::Recv(start) => scatter(recv, *start, map, *n, &c.full)?,
                    }
                }
                let gather = &self.dist[GATHER_BLOCKS];
                c.m.refresh_from(dev, gather, &c.full)?;
            }
            (DevOutput::Everyone { pos, n, acc, gathered }, DevMat::Whole(c)) => {
                dev.memset_zero(acc)?;
                scatter(&self.c_ext.values, 0, pos, *n, acc)?;
                let len = c.m.nnzb * lc;
                // SAFETY: `acc` holds `len` doubles and `gathered` one `len`
                // per rank; the stream orders the sum after the gather.
                unsafe { be.nccl.all_gather(addr(acc, 0, st), addr(gathered, 0, st), len, st) }?;
                dev.launch(
                    &self.dist[SUM_RANKS],
                    grid_for(len as u64, 256),
                    &[
                        Arg::F64(gathered),
                        Arg::F64Mut(&c.m.values),
                        Arg::U32(len as u32),
                        Arg::U32(be.nccl.size() as u32),
                    ],
                )?;
            }
            (out, c) => {
                return Err(DistError::Matrix {
                    why: format!(
                        "this product fills {}, not {}",
                        match out {
                            DevOutput::Owners { .. } => "distributed rows",
                            DevOutput::Everyone { .. } => "a replicated matrix",
                        },
                        c.kind()
                    ),
                }
                .into())
            }
        }
        self.end.record(st)?;
        Ok(())
    }
}

/// Why the runtime's setup-time constructors are refused here.
const BUILT_OVER_RANKS: &str =
    "the GPU ranks' backend runs hierarchies built by ptap_dist::device_amg::build_device_hierarchy \
     (Hierarchy::from_levels), not a global mesh setup";

impl<C: Comm + ?Sized> Backend for DeviceDistBackend<'_, C> {
    type Vector = CudaSlice<f64>;
    type Matrix = DevMat;
    type Graph = DeviceGraph;
    type Product = DevProduct;
    type Jacobi = DevJacobi;
    type Coarse = CudaCoarse;
    /// A distributed level's halves rounded to `f32` (smoother precision f32).
    type Lowered = DevLowered;
    type Error = DeviceError;

    fn name(&self) -> &'static str {
        "mpi-cuda"
    }
    fn set_phase(&self, phase: &str) {
        self.dev.set_phase(phase);
    }
    fn synchronize(&self) -> Result<(), DeviceError> {
        Ok(self.dev.synchronize()?)
    }
    /// One host all-reduce of the failure flags.
    fn agree(&self, r: Result<(), DeviceError>) -> Result<(), DeviceError> {
        let mut failed = [f64::from(u8::from(r.is_err()))];
        self.comm.all_reduce_sum(&mut failed);
        match r {
            Err(e) => Err(e),
            Ok(()) if failed[0] > 0.0 => Err(DistError::Elsewhere {
                ranks: failed[0] as usize,
            }
            .into()),
            ok => ok,
        }
    }

    fn vector(&self, n: usize) -> Result<CudaSlice<f64>, DeviceError> {
        Ok(self.cuda.vector(n)?)
    }
    fn vector_from(&self, host: &[f64]) -> Result<CudaSlice<f64>, DeviceError> {
        Ok(self.cuda.vector_from(host)?)
    }
    fn write(&self, host: &[f64], v: &mut CudaSlice<f64>) -> Result<(), DeviceError> {
        if !host.is_empty() {
            self.cuda.write(host, v)?;
        }
        Ok(())
    }
    fn read(&self, v: &CudaSlice<f64>, host: &mut [f64]) -> Result<(), DeviceError> {
        if !host.is_empty() {
            self.cuda.read(v, host)?;
        }
        Ok(())
    }
    fn matrix(&self, _m: BlockCsr, _with_values: bool) -> Result<DevMat, DeviceError> {
        Err(DistError::Options {
            why: BUILT_OVER_RANKS.into(),
        }
        .into())
    }
    fn set_values(&self, m: &mut DevMat, values: &[f64]) -> Result<(), DeviceError> {
        match m {
            DevMat::Rows(r) => {
                let (br, bc) = r.m.block_shape();
                if values.len() != r.nnzb * br * bc {
                    return Err(RuntimeError::ValuesLength {
                        got: values.len(),
                        expected: r.nnzb * br * bc,
                    }
                    .into());
                }
                if !values.is_empty() {
                    self.dev.upload_into(values, &mut r.full)?;
                }
                let gather = &self.dist[GATHER_BLOCKS];
                r.m.refresh_from(&self.dev, gather, &r.full)
            }
            DevMat::Whole(a) => Ok(self.cuda.set_values(a, values)?),
            other => Err(mismatch("setting values", other)),
        }
    }
    fn values(&self, m: &DevMat) -> Result<Vec<f64>, DeviceError> {
        Ok(match m {
            DevMat::Rows(r) => {
                let mut v = self.dev.download(&r.full)?;
                let (br, bc) = r.m.block_shape();
                v.truncate(r.nnzb * br * bc);
                v
            }
            DevMat::Whole(a) | DevMat::RowsToWhole(a) => a.m.download_values(&self.dev)?,
            DevMat::WholeFromRows(r) => r.r.m.download_values(&self.dev)?,
            DevMat::Restriction(r) => r.r.m.download_values(&self.dev)?,
        })
    }

    fn spmv(&self, a: &DevMat, x: &CudaSlice<f64>, y: &mut CudaSlice<f64>) -> Result<(), DeviceError> {
        match a {
            DevMat::Rows(r) => {
                // A rank without rows has no halo either (square partitions).
                if r.m.output_len() == 0 {
                    return Ok(());
                }
                r.m.spmv(&self.dev, self.nccl, r.input(&self.dev, &self.vec, x)?, y)
            }
            DevMat::Restriction(r) => {
                // No ghost coarse rows (one rank): straight into `y`.
                if r.sends.is_empty() && r.recvs.is_empty() && r.z.borrow().len() == r.n_owned {
                    return self.plain_spmv(&r.r, x, y);
                }
                let st = self.dev.stream();
                let mut zm = r.z.borrow_mut();
                self.plain_spmv(&r.r, x, &mut zm)?;
                let z = &*zm;
                if !r.sends.is_empty() || !r.recvs.is_empty() {
                    self.nccl.group_start()?;
                    let posted = (|| {
                        for l in &r.recvs {
                            // SAFETY: the ghost rows' sums, read by the owner;
                            // rewritten only by the next product on this stream.
                            unsafe { self.nccl.send(addr(z, r.n_owned + l.start, st), l.len, l.rank, st) }?;
                        }
                        for l in &r.sends {
                            // SAFETY: `recv` is read only by the adds below.
                            unsafe { self.nccl.recv(addr(&r.recv, l.start, st), l.len, l.rank, st) }?;
                        }
                        Ok::<(), DeviceError>(())
                    })();
                    self.nccl.group_end()?;
                    posted?;
                    // Link by link, as the CPU adds them (a column sent to
                    // two neighbours gets their sums in link order).
                    for l in &r.sends {
                        self.dev.launch(
                            &self.dist[UNPACK_ADD],
                            grid_for(l.len as u64, 256),
                            &[
                                Arg::F64(&r.recv),
                                Arg::U32s(&r.send_cols),
                                Arg::F64Mut(z),
                                Arg::U32(l.start as u32),
                                Arg::U32(l.len as u32),
                                Arg::U32(r.bc as u32),
                            ],
                        )?;
                    }
                }
                if r.n_owned > 0 {
                    axpby(&self.dev, &self.vec, 1.0, z, 0.0, y, r.n_owned)?;
                }
                Ok(())
            }
            DevMat::RowsToWhole(p) | DevMat::Whole(p) => self.plain_spmv(p, x, y),
            DevMat::WholeFromRows(r) => {
                self.plain_spmv(&r.r, x, y)?;
                let n = r.r.m.scalar_rows();
                let st = self.dev.stream();
                // SAFETY: `y` holds `n` doubles, `gathered` `n` per rank.
                unsafe { self.nccl.all_gather(addr(y, 0, st), addr(&r.gathered, 0, st), n, st) }?;
                self.dev.launch(
                    &self.dist[SUM_RANKS],
                    grid_for(n as u64, 256),
                    &[
                        Arg::F64(&r.gathered),
                        Arg::F64Mut(y),
                        Arg::U32(n as u32),
                        Arg::U32(self.nccl.size() as u32),
                    ],
                )?;
                Ok(())
            }
        }
    }
    fn residual(
        &self,
        a: &DevMat,
        x: &CudaSlice<f64>,
        b: &CudaSlice<f64>,
        r: &mut CudaSlice<f64>,
    ) -> Result<(), DeviceError> {
        if let DevMat::Rows(rows) = a {
            if rows.m.output_len() == 0 {
                return Ok(());
            }
            let xin = rows.input(&self.dev, &self.vec, x)?;
            return rows.m.residual(&self.dev, self.nccl, xin, b, r, &self.vec);
        }
        self.spmv(a, x, r)?;
        Ok(self.cuda.xpby(b, -1.0, r)?)
    }
    fn axpy(&self, alpha: f64, x: &CudaSlice<f64>, y: &mut CudaSlice<f64>) -> Result<(), DeviceError> {
        Ok(self.cuda.axpy(alpha, x, y)?)
    }
    fn lowered(&self, a: &DevMat) -> Result<DevLowered, DeviceError> {
        let DevMat::Rows(r) = a else {
            return Err(mismatch("an f32 smoother operator", a));
        };
        Ok(DevLowered {
            halves: r.m.lowered(&self.dev)?,
            overflow: self.dev.zeros(1)?,
        })
    }
    /// The halves' conversion on the device, then a 4-byte read of the
    /// overflow flag (agreed over the ranks).
    fn lower(&self, a: &DevMat, lo: &mut DevLowered, level: usize) -> Result<(), DeviceError> {
        let DevMat::Rows(r) = a else {
            return Err(mismatch("an f32 smoother operator", a));
        };
        let mine = (|| {
            self.dev.upload_into(&[0u32], &mut lo.overflow)?;
            r.m.lower(&self.dev, &self.vec[vector::TO_F32], &mut lo.halves, &lo.overflow)?;
            let mut flag = [0u32];
            self.dev.download_into(&lo.overflow, &mut flag)?;
            if flag[0] != 0 {
                return Err(DeviceError::from(ptap_runtime::cpu::f32_overflow(level)));
            }
            Ok(())
        })();
        self.agree(mine)
    }
    fn spmv_lowered(
        &self,
        a: &DevMat,
        lo: &DevLowered,
        x: &CudaSlice<f64>,
        y: &mut CudaSlice<f64>,
    ) -> Result<(), DeviceError> {
        let DevMat::Rows(r) = a else {
            return Err(mismatch("an f32 smoother operator", a));
        };
        if r.m.output_len() == 0 {
            return Ok(());
        }
        let xin = r.input(&self.dev, &self.vec, x)?;
        r.m.spmv_f32(&self.dev, self.nccl, &lo.halves, xin, y)
    }
    fn residual_lowered(
        &self,
        a: &DevMat,
        lo: &DevLowered,
        x: &CudaSlice<f64>,
        b: &CudaSlice<f64>,
        r: &mut CudaSlice<f64>,
    ) -> Result<(), DeviceError> {
        let DevMat::Rows(rows) = a else {
            return Err(mismatch("an f32 smoother operator", a));
        };
        if rows.m.output_len() == 0 {
            return Ok(());
        }
        let xin = rows.input(&self.dev, &self.vec, x)?;
        rows.m
            .residual_f32(&self.dev, self.nccl, &lo.halves, xin, b, r, &self.vec)
    }
    fn xpby(&self, x: &CudaSlice<f64>, beta: f64, y: &mut CudaSlice<f64>) -> Result<(), DeviceError> {
        Ok(self.cuda.xpby(x, beta, y)?)
    }
    fn copy(&self, x: &CudaSlice<f64>, y: &mut CudaSlice<f64>) -> Result<(), DeviceError> {
        Ok(self.cuda.copy(x, y)?)
    }
    fn fill(&self, y: &mut CudaSlice<f64>, value: f64) -> Result<(), DeviceError> {
        Ok(self.cuda.fill(y, value)?)
    }
    /// The local two-pass dot, all-gathered and summed in rank order; 8 bytes back.
    fn dot(&self, x: &CudaSlice<f64>, y: &CudaSlice<f64>) -> Result<f64, DeviceError> {
        self.local_dot(x, y)?;
        self.sum_over_ranks(&self.mine, 0, &self.scal, 0, None)?;
        let mut out = [0.0];
        self.dev.download_into(&self.scal, &mut out)?;
        Ok(out[0])
    }
    fn dot_into(
        &self,
        x: &CudaSlice<f64>,
        y: &CudaSlice<f64>,
        s: &mut CudaSlice<f64>,
        slot: usize,
        keep: Option<usize>,
    ) -> Result<(), DeviceError> {
        self.local_dot(x, y)?;
        self.sum_over_ranks(&self.mine, 0, s, slot, keep)
    }
    /// The CUDA backend's fused update on this rank's part, its `r . r`
    /// summed over the ranks in rank order.
    fn cg_update(
        &self,
        s: &mut CudaSlice<f64>,
        p: &CudaSlice<f64>,
        ap: &CudaSlice<f64>,
        x: &mut CudaSlice<f64>,
        r: &mut CudaSlice<f64>,
    ) -> Result<(), DeviceError> {
        self.cuda.cg_update(s, p, ap, x, r)?;
        self.sum_over_ranks(s, cg_slot::RR, s, cg_slot::RR, None)
    }
    fn cg_direction(&self, s: &CudaSlice<f64>, z: &CudaSlice<f64>, p: &mut CudaSlice<f64>) -> Result<(), DeviceError> {
        Ok(self.cuda.cg_direction(s, z, p)?)
    }
    /// Elementwise with a ratio of reduced scalars: the CUDA backend's on this rank's part.
    fn axpy_ratio(
        &self,
        s: &CudaSlice<f64>,
        num: usize,
        den: usize,
        negate: bool,
        x: &CudaSlice<f64>,
        y: &mut CudaSlice<f64>,
    ) -> Result<(), DeviceError> {
        Ok(self.cuda.axpy_ratio(s, num, den, negate, x, y)?)
    }
    fn xpby_ratio(
        &self,
        s: &CudaSlice<f64>,
        num: usize,
        den: usize,
        x: &CudaSlice<f64>,
        y: &mut CudaSlice<f64>,
    ) -> Result<(), DeviceError> {
        Ok(self.cuda.xpby_ratio(s, num, den, x, y)?)
    }
    /// The CUDA backend's stream capture: NCCL's calls (the halos on their
    /// stream, forked and joined by events, and the reductions) are captured
    /// with the kernels. Every rank records and replays the same sequence in
    /// the same order (the solver's keys are the same on every rank), which
    /// is what NCCL asks of captured calls. Off where [`record_off`] says.
    fn begin_capture(&self) -> Result<bool, DeviceError> {
        if self.no_record {
            return Ok(false);
        }
        Ok(self.cuda.begin_capture()?)
    }
    fn end_capture(&self, discard: bool) -> Result<Option<DeviceGraph>, DeviceError> {
        Ok(self.cuda.end_capture(discard)?)
    }
    fn replay(&self, graph: &DeviceGraph) -> Result<(), DeviceError> {
        Ok(self.cuda.replay(graph)?)
    }
    fn storage_id(&self, v: &CudaSlice<f64>) -> usize {
        let (ptr, _sync) = v.device_ptr(self.dev.stream());
        ptr as usize
    }

    fn jacobi(&self, _a: &BlockCsr) -> Result<DevJacobi, DeviceError> {
        Err(DistError::Options {
            why: BUILT_OVER_RANKS.into(),
        }
        .into())
    }
    fn jacobi_invert(&self, a: &DevMat, j: &mut DevJacobi, level: usize) -> Result<(), DeviceError> {
        let DevMat::Rows(a) = a else {
            return Err(mismatch("point-block Jacobi", a));
        };
        let mine = (|| {
            if j.nrows == 0 {
                return Ok(());
            }
            self.dev.stream().memset_zeros(&mut j.status)?;
            self.dev.launch(
                &j.kernels[&gs::jacobi_invert_name(j.b)],
                grid_for(j.nrows as u64, 128),
                &[
                    Arg::F64(&a.full),
                    Arg::U32s(&j.diag_pos),
                    Arg::F64Mut(&j.dinv),
                    Arg::U32sMut(&j.status),
                    Arg::U32(j.nrows as u32),
                ],
            )?;
            let mut v = [0u32];
            self.dev.download_into(&j.status, &mut v)?;
            match gs::failing_row(v[0]) {
                Some(row) => Err(DeviceError::from(DistError::SingularDiagonalBlock {
                    row: a.first_row + row,
                    why: format!(
                        "level {level}: the diagonal block is missing, zero, not finite or has a pivot below 1e-14 of its largest entry"
                    ),
                })),
                None => Ok(()),
            }
        })();
        self.agree(mine)
    }
    fn jacobi_update(
        &self,
        j: &DevJacobi,
        alpha: f64,
        r: &CudaSlice<f64>,
        beta: f64,
        t: &CudaSlice<f64>,
        x: &mut CudaSlice<f64>,
    ) -> Result<(), DeviceError> {
        if j.nrows == 0 {
            return Ok(());
        }
        Ok(self.dev.launch(
            &j.kernels[&gs::jacobi_update_name(j.b)],
            grid_for((j.nrows * j.b) as u64, 256),
            &[
                Arg::F64(&j.dinv),
                Arg::Scalar(alpha),
                Arg::F64(r),
                Arg::Scalar(beta),
                Arg::F64(t),
                Arg::F64Mut(x),
                Arg::U32(j.nrows as u32),
            ],
        )?)
    }
    fn jacobi_update_at(
        &self,
        j: &DevJacobi,
        coef: &CudaSlice<f64>,
        alpha_at: usize,
        beta_at: Option<usize>,
        r: &CudaSlice<f64>,
        t: &CudaSlice<f64>,
        x: &mut CudaSlice<f64>,
    ) -> Result<(), DeviceError> {
        if j.nrows == 0 {
            return Ok(());
        }
        Ok(self.dev.launch(
            &j.kernels[&gc::jacobi_update_at_name(j.b)],
            grid_for((j.nrows * j.b) as u64, 256),
            &[
                Arg::F64(&j.dinv),
                Arg::F64(coef),
                Arg::U32(alpha_at as u32),
                Arg::U32(beta_at.map_or(u32::MAX, |b| b as u32)),
                Arg::F64(r),
                Arg::F64(t),
                Arg::F64Mut(x),
                Arg::U32(j.nrows as u32),
            ],
        )?)
    }
    /// The CUDA backend's one pass ([`gc::jacobi_step_name`]) on this
    /// rank's rows: the default's four operations' bits.
    fn jacobi_first_step(
        &self,
        j: &DevJacobi,
        coef: &CudaSlice<f64>,
        alpha_at: usize,
        r: &CudaSlice<f64>,
        t: &mut CudaSlice<f64>,
        x: &mut CudaSlice<f64>,
        zero_guess: bool,
    ) -> Result<(), DeviceError> {
        if j.nrows == 0 {
            return Ok(());
        }
        Ok(self.dev.launch(
            &j.kernels[&gc::jacobi_step_name(j.b)],
            grid_for((j.nrows * j.b) as u64, 256),
            &[
                Arg::F64(&j.dinv),
                Arg::F64(coef),
                Arg::U32(alpha_at as u32),
                Arg::F64(r),
                Arg::F64Mut(t),
                Arg::F64Mut(x),
                Arg::U32(zero_guess as u32),
                Arg::U32(j.nrows as u32),
            ],
        )?)
    }
    fn jacobi_values(&self, j: &DevJacobi) -> Result<Vec<f64>, DeviceError> {
        let mut v = self.dev.download(&j.dinv)?;
        v.truncate(j.nrows * j.b * j.b);
        Ok(v)
    }

    fn product(&self, _schedule: &VariantSchedule, _bf: usize, _bc: usize) -> Result<DevProduct, DeviceError> {
        Err(DistError::Options {
            why: BUILT_OVER_RANKS.into(),
        }
        .into())
    }
    fn galerkin(&self, product: &mut DevProduct, a: &DevMat, _p: &DevMat, c: &mut DevMat) -> Result<(), DeviceError> {
        match a {
            DevMat::Rows(a) => product.numeric(self, a, c),
            other => Err(mismatch("a distributed Galerkin product", other)),
        }
    }

    fn coarse(&self, a: &BlockCsr) -> Result<CudaCoarse, DeviceError> {
        Ok(self.cuda.coarse(a)?)
    }
    fn coarse_factor(&self, a: &DevMat, c: &mut CudaCoarse, level: usize) -> Result<(), DeviceError> {
        match a {
            DevMat::Whole(m) => Ok(self.cuda.coarse_factor(m, c, level)?),
            other => Err(mismatch("the dense coarse factorization", other)),
        }
    }
    fn coarse_solve(&self, c: &CudaCoarse, x: &mut CudaSlice<f64>) -> Result<(), DeviceError> {
        Ok(self.cuda.coarse_solve(c, x)?)
    }
}

/// What [`build_device_hierarchy`] reports beyond the mesh setup's report.
#[derive(Clone, Debug)]
pub struct DeviceSetupReport {
    pub setup: DistSetupReport,
    /// Seconds of the one upload of every level (after the mesh setup).
    pub upload_s: f64,
    /// Where the upload's seconds go on this rank: `[backend, operators and
    /// smoothers, transfers and products, NCCL warm-up]` (the backend: its
    /// kernel modules, compiled where the kernel cache lacks them).
    pub upload_parts_s: [f64; 4],
}

/// The names of [`DeviceSetupReport::upload_parts_s`], as JSON keys.
pub const UPLOAD_PARTS: [&str; 4] = ["backend_s", "operators_s", "transfers_s", "nccl_warm_up_s"];

/// The AMG hierarchy on the GPU ranks (module docs): the CPU ranks' mesh
/// setup, one upload, then the matrix setup on the devices. Collective over
/// `comm` (and `nccl`, its ranks on their GPUs).
pub fn build_device_hierarchy<'c, C: Comm + ?Sized>(
    comm: &'c C,
    nccl: &'c NcclComm,
    dev: &Arc<Device>,
    problem: DistProblem,
    options: &HierarchyOptions,
    dist: &DistOptions,
    progress: &mut dyn FnMut(&str),
) -> Result<(Hierarchy<DeviceDistBackend<'c, C>>, DeviceSetupReport), DeviceError> {
    let (levels, setup) = build_levels(comm, problem, options, dist, progress)?;
    let DistLevels {
        parts,
        modes,
        mesh_setup_s,
        ..
    } = levels;
    progress("uploading every level to the GPU ranks");
    let t = Instant::now();
    dev.set_phase("upload");
    let mut parts_s = [0.0; 4];
    let be = DeviceDistBackend::new(comm, nccl, dev, options.kernels.clone());
    parts_s[0] = t.elapsed().as_secs_f64();
    let uploaded = be.and_then(|be| {
        let mut dparts = Vec::with_capacity(parts.len());
        let mut coarse = None;
        for part in parts {
            let LevelParts {
                a,
                pattern,
                block,
                transfer,
                smoother,
            } = part;
            let t1 = Instant::now();
            if let DistMat::Whole(c) = &a {
                coarse = Some(be.cuda.coarse(c)?);
            }
            let a = be.upload(a)?;
            let smoother = match (smoother, &a) {
                (Some((_, start)), DevMat::Rows(rows)) => {
                    let (b, nrows) = (block, rows.diag.len());
                    Some((
                        DevJacobi {
                            b,
                            nrows,
                            diag_pos: dev.upload(&rows.diag)?,
                            dinv: dev.zeros(nrows * b * b)?,
                            status: dev.zeros(1)?,
                            kernels: ptap_cuda::kernels::jacobi(dev, &be.registry, b)?,
                        },
                        dev.upload(&start)?,
                    ))
                }
                (None, _) => None,
                (Some(_), other) => return Err(mismatch("a smoother", other)),
            };
            dev.synchronize()?;
            parts_s[1] += t1.elapsed().as_secs_f64();
            let t2 = Instant::now();
            let transfer = match transfer {
                None => None,
                Some(t) => {
                    let Transfer {
                        p,
                        r,
                        product: DistProduct(g),
                        schedule,
                        variant_schedule,
                        host_p,
                        aggregates,
                        merged_aggregates,
                        unaggregated_nodes,
                        omega,
                    } = t;
                    Some(Transfer {
                        p: be.upload(p)?,
                        r: be.upload(r)?,
                        product: DevProduct::new(&be, *g)?,
                        schedule,
                        variant_schedule,
                        host_p,
                        aggregates,
                        merged_aggregates,
                        unaggregated_nodes,
                        omega,
                    })
                }
            };
            dev.synchronize()?;
            parts_s[2] += t2.elapsed().as_secs_f64();
            dparts.push(LevelParts {
                a,
                pattern,
                block,
                transfer,
                smoother,
            });
        }
        let coarse = coarse.ok_or_else(|| DistError::Matrix {
            why: "the mesh setup ended without a whole coarsest level".into(),
        })?;
        let t3 = Instant::now();
        warm_up(&be, &dparts)?;
        dev.synchronize()?;
        parts_s[3] = t3.elapsed().as_secs_f64();
        Ok((be, dparts, coarse))
    });
    let (be, dparts, coarse) = agree_on(comm, uploaded)?;
    let upload_s = t.elapsed().as_secs_f64();
    let h = Hierarchy::from_levels(be, dparts, coarse, options.clone(), modes, mesh_setup_s, progress)?;
    Ok((
        h,
        DeviceSetupReport {
            setup,
            upload_s,
            upload_parts_s: parts_s,
        },
    ))
}

/// Scalars per message of [`warm_up`] (1 MiB).
const WARM_UP_LEN: usize = 1 << 17;

/// Connects NCCL's peers before the first matrix setup (NCCL connects a
/// pair of ranks, and builds its all-gather ring, at their first use, which
/// would otherwise land in the first product and dot): one group of a 1 MiB
/// send and receive with every rank some plan of `parts` exchanges with (the
/// plans are symmetric: a rank sends where its peer receives), then one
/// all-gather. Setup only: allocates its buffer, copies nothing to the host.
fn warm_up<C: Comm + ?Sized>(
    be: &DeviceDistBackend<'_, C>,
    parts: &[LevelParts<DeviceDistBackend<'_, C>>],
) -> Result<(), DeviceError> {
    let mut peers = std::collections::BTreeSet::new();
    let links = |v: &[Link], peers: &mut std::collections::BTreeSet<usize>| peers.extend(v.iter().map(|l| l.rank));
    for part in parts {
        let mats = std::iter::once(&part.a).chain(part.transfer.iter().flat_map(|t| [&t.p, &t.r]));
        for m in mats {
            match m {
                DevMat::Rows(r) => peers.extend(r.m.peers()),
                DevMat::Restriction(r) => {
                    links(&r.sends, &mut peers);
                    links(&r.recvs, &mut peers);
                }
                _ => {}
            }
        }
        if let Some(DevOutput::Owners { sends, recvs, .. }) = part.transfer.as_ref().map(|t| &t.product.out) {
            links(sends, &mut peers);
            links(recvs, &mut peers);
        }
    }
    let st = be.dev.stream();
    if !peers.is_empty() {
        let buf = be.dev.zeros::<f64>(2 * peers.len() * WARM_UP_LEN)?;
        be.nccl.group_start()?;
        let posted = (|| {
            for (i, &q) in peers.iter().enumerate() {
                // SAFETY: disjoint ranges of `buf`, which outlives the
                // synchronization below.
                unsafe {
                    be.nccl
                        .recv(addr(&buf, (2 * i + 1) * WARM_UP_LEN, st), WARM_UP_LEN, q, st)?;
                    be.nccl.send(addr(&buf, 2 * i * WARM_UP_LEN, st), WARM_UP_LEN, q, st)?;
                }
            }
            Ok::<(), DeviceError>(())
        })();
        be.nccl.group_end()?;
        posted?;
        be.dev.synchronize()?;
    }
    be.sum_over_ranks(&be.mine, 0, &be.scal, 0, None)?;
    be.dev.synchronize()?;
    Ok(())
}

/// `r` on every rank when every rank got `Ok`; otherwise an error on every
/// rank (its own, or "other rank(s) failed"). One host all-reduce.
fn agree_on<T, C: Comm + ?Sized>(comm: &C, r: Result<T, DeviceError>) -> Result<T, DeviceError> {
    let mut failed = [f64::from(u8::from(r.is_err()))];
    comm.all_reduce_sum(&mut failed);
    match r {
        Err(e) => Err(e),
        Ok(_) if failed[0] > 0.0 => Err(DistError::Elsewhere {
            ranks: failed[0] as usize,
        }
        .into()),
        ok => ok,
    }
}

/// Device seconds of each level's last Galerkin product on this rank (after
/// a matrix setup; synchronizes).
pub fn product_seconds<C: Comm + ?Sized>(h: &Hierarchy<DeviceDistBackend<'_, C>>) -> Result<Vec<f64>, DeviceError> {
    h.backend().synchronize()?;
    h.levels()
        .iter()
        .filter_map(|l| l.transfer.as_ref())
        .map(|t| t.product.last_seconds())
        .collect()
}

/// SpMVs timed per level by [`measure_balance`].
const BALANCE_SPMVS: usize = 3;

/// Fills each distributed level's balance (`crate::setup::LevelBalance`) on
/// rank 0 from this rank's device time, as the CPU ranks do from theirs:
/// the local part of the level's last Galerkin product (events around the
/// executor, [`DevProduct::last_local_seconds`]) and the mean of a few local
/// SpMVs of its rows (no exchange; events around them all, one
/// synchronization for every level). Run it after a matrix setup, outside
/// the timed phases: it allocates one output vector per level. Collective.
pub fn measure_balance<C: Comm + ?Sized>(
    h: &Hierarchy<DeviceDistBackend<'_, C>>,
    levels: &mut [crate::setup::DistLevelSummary],
) -> Result<(), DeviceError> {
    let be = h.backend();
    let dev = &be.dev;
    let timed = (|| {
        let mut runs = Vec::new();
        for lev in h.levels() {
            let DevMat::Rows(r) = &lev.a else {
                runs.push(None);
                continue;
            };
            if r.m.output_len() == 0 {
                runs.push(None);
                continue;
            }
            let mut y = dev.zeros::<f64>(r.m.output_len())?;
            let (t0, t1) = (dev.event()?, dev.event()?);
            r.m.local_rows(dev, &r.x, &mut y)?;
            t0.record(dev.stream())?;
            for _ in 0..BALANCE_SPMVS {
                r.m.local_rows(dev, &r.x, &mut y)?;
            }
            t1.record(dev.stream())?;
            runs.push(Some((r.m.output_len() / r.m.block_shape().0, t0, t1, y)));
        }
        dev.synchronize()?;
        let mut mine = Vec::with_capacity(3 * runs.len());
        for (lev, run) in h.levels().iter().zip(&runs) {
            let product = match &lev.transfer {
                Some(t) => t.product.last_local_seconds()?,
                None => 0.0,
            };
            let (rows, spmv) = match run {
                Some((rows, t0, t1, _)) => (*rows as f64, f64::from(t0.elapsed_ms(t1)?) / 1e3 / BALANCE_SPMVS as f64),
                None => (0.0, 0.0),
            };
            mine.extend([rows, product, spmv]);
        }
        Ok(mine)
    })();
    let mine = agree_on(be.comm, timed)?;
    crate::setup::reduce_balance(be.comm, &mine, levels);
    Ok(())
}

/// New fine-operator values written on the device by `write` (a device
/// assembly into the rank's values, in the local matrix's order), then the
/// operator's interior and boundary halves regathered from them: the first
/// half of a refresh with nothing crossing the bus. Follow it with
/// [`Hierarchy::matrix_setup`].
pub fn write_fine_values<C: Comm + ?Sized>(
    h: &mut Hierarchy<DeviceDistBackend<'_, C>>,
    write: impl FnOnce(&mut CudaSlice<f64>) -> Result<(), DeviceError>,
) -> Result<(), DeviceError> {
    let (dev, gather) = {
        let be = h.backend();
        (be.dev.clone(), be.dist[GATHER_BLOCKS].clone())
    };
    let mine = match h.fine_operator_mut() {
        DevMat::Rows(r) => write(&mut r.full).and_then(|()| r.m.refresh_from(&dev, &gather, &r.full)),
        other => Err(mismatch("a device assembly of the fine rows", other)),
    };
    h.backend().agree(mine)
}
