//! The distributed operator and point-block-Jacobi CG resident on the GPUs
//! (feature `nccl`): one rank per GPU, the halo and the reductions through
//! NCCL, nothing operator-sized on the host after setup.
//!
//! **Inspector (setup, once).** [`DeviceDistMatrix::new`] takes a rank's
//! [`DistMatrix`] (its rows, local columns, halo plan) and uploads its rows
//! as two device block-CSR matrices over the same local columns: the
//! interior rows (no ghost column) and the boundary rows, each with the
//! other's rows left empty, so both write disjoint rows of one output. The
//! plan's packed send columns go up once, with the send buffer.
//!
//! **Executor (every SpMV).** On the compute stream: a gather kernel packs
//! the send lists into the send buffer; an event hands over to the
//! communication stream, which posts, inside one NCCL group, a receive per
//! owner straight into its range of the ghost tail of `x` (ghosts are
//! grouped by owner: values land in place) and a send per neighbour. While
//! those are in flight the compute stream computes the interior rows; it
//! then waits for the halo's event and computes the boundary rows. No host
//! staging, no allocation.
//!
//! **Reductions.** Each dot is computed on the device in a fixed order (the
//! `ptap-cuda` two-pass dot) into a slot of a small device buffer; one
//! `ncclAllGather` collects every rank's slots; a one-thread-per-slot kernel
//! adds them in rank order, as [`crate::comm::sum_in_rank_order`] does on
//! the CPU; the sums (8 bytes each) come to the host, which needs them for
//! CG's step lengths and stopping test. Every rank adds the same numbers in
//! the same order on the same kind of GPU, so every rank gets the same bits.
//!
//! **CG.** [`jacobi_pcg`] is [`crate::cg::jacobi_pcg`]'s algorithm step for
//! step (the same reductions at the same points, the same stopping rule), on
//! device vectors. The only host-device traffic in a solve is the reduced
//! scalars: 3 at the start, then 1 + 2 per iteration.
use crate::cg::{BlockJacobi, CgOptions, CgReport};
use crate::comm::{Link, MAX_REDUCE};
use crate::local::DistMatrix;
use crate::nccl::{DeviceError, NcclComm};
use crate::DistError;
use cudarc::driver::{sys, CudaEvent, CudaSlice, CudaStream, DevicePtr, LaunchConfig};
use ptap_codegen_core::gpu::{vector, DOT_THREADS};
use ptap_codegen_core::{CudaModule, KernelEntry, Param, ParamTy};
use ptap_cuda::{grid_for, to_u32, Arg, Device, DeviceBlockCsr, DeviceSpmv, Kernel, Kernels};
use ptap_runtime::KernelRegistry;
use std::sync::Arc;

/// Largest dot-product partial count (blocks of the first pass).
const MAX_PARTIALS: usize = 1024;

const PACK: &str = "ptap_dist_pack";
const BLOCK_JACOBI: &str = "ptap_dist_block_jacobi";
pub(crate) const SUM_RANKS: &str = "ptap_dist_sum_ranks";
pub(crate) const GATHER_BLOCKS: &str = "ptap_dist_gather_blocks";
pub(crate) const SCATTER_ADD: &str = "ptap_dist_scatter_add";
pub(crate) const UNPACK_ADD: &str = "ptap_dist_unpack_add";
pub(crate) const SUM_RANKS_INTO: &str = "ptap_dist_sum_ranks_into";

/// The kernels of this module: the halo pack, `z = D^-1 r` for any block
/// size, and the rank-order sum of gathered partial dots; for the AMG on the
/// ranks (`device_amg`), a block gather by map, the scatter-add of a
/// product's blocks and of a reverse halo, and a rank-order sum into a slot.
pub(crate) fn dist_module() -> CudaModule {
    use ParamTy::*;
    let entry = |name: &str, doc: &str, params: &[(&str, ParamTy)]| KernelEntry {
        name: name.into(),
        params: params.iter().map(|&(n, t)| Param::new(n, t)).collect(),
        doc: doc.into(),
    };
    let entries =
        vec![
        entry(
            PACK,
            "buf[t] = x[cols[t / bc] * bc + t % bc], t < n",
            &[
                ("x", PtrF64),
                ("cols", PtrU32),
                ("buf", PtrMutF64),
                ("n", U32),
                ("bc", U32),
            ],
        ),
        entry(
            BLOCK_JACOBI,
            "z = D^-1 r, b x b blocks, one thread per scalar, columns added left to right",
            &[
                ("dinv", PtrF64),
                ("r", PtrF64),
                ("z", PtrMutF64),
                ("nrows", U32),
                ("b", U32),
            ],
        ),
        entry(
            SUM_RANKS,
            "out[j] = ((parts[j] + parts[m + j]) + parts[2m + j]) + ..., j < m",
            &[("parts", PtrF64), ("out", PtrMutF64), ("m", U32), ("ranks", U32)],
        ),
        entry(
            GATHER_BLOCKS,
            "dst[k l + t] = src[map[k] l + t], k l + t < n l (blocks of l scalars)",
            &[("src", PtrF64), ("map", PtrU32), ("dst", PtrMutF64), ("n", U32), ("l", U32)],
        ),
        entry(
            SCATTER_ADD,
            "acc[map[e] l + t] += src[off + e l + t], e l + t < n l (map without repeats)",
            &[
                ("src", PtrF64),
                ("off", U64),
                ("map", PtrU32),
                ("acc", PtrMutF64),
                ("n", U32),
                ("l", U32),
            ],
        ),
        entry(
            UNPACK_ADD,
            "x[cols[k] bc + t % bc] += buf[s], s = off + t, k = s / bc, t < n (columns without repeats)",
            &[
                ("buf", PtrF64),
                ("cols", PtrU32),
                ("x", PtrMutF64),
                ("off", U32),
                ("n", U32),
                ("bc", U32),
            ],
        ),
        entry(
            SUM_RANKS_INTO,
            "one thread: s[keep] = s[slot] (keep < 2^32 - 1), then s[slot] = parts[0] + parts[1] + ... (rank order)",
            &[
                ("parts", PtrF64),
                ("s", PtrMutF64),
                ("slot", U32),
                ("keep", U32),
                ("ranks", U32),
            ],
        ),
    ];
    let mut source = String::from("typedef unsigned int u32;\ntypedef unsigned long long u64;\n");
    let bodies = [
        "  u64 t = (u64)blockIdx.x * blockDim.x + threadIdx.x;\n  if (t >= n) return;\n  \
         buf[t] = x[(u64)cols[t / bc] * bc + t % bc];\n}\n",
        "  u64 s = (u64)blockIdx.x * blockDim.x + threadIdx.x;\n  if (s >= (u64)nrows * b) return;\n  \
         u64 i = s / b; u32 q = (u32)(s % b);\n  const double* d = dinv + i * b * b + (u64)q * b;\n  \
         const double* ri = r + i * b;\n  double y = 0.0;\n  for (u32 c = 0; c < b; ++c) y = y + d[c] * ri[c];\n  \
         z[s] = y;\n}\n",
        "  u32 j = blockIdx.x * blockDim.x + threadIdx.x;\n  if (j >= m) return;\n  double s = parts[j];\n  \
         for (u32 r = 1; r < ranks; ++r) s = s + parts[(u64)r * m + j];\n  out[j] = s;\n}\n",
        "  u64 s = (u64)blockIdx.x * blockDim.x + threadIdx.x;\n  if (s >= (u64)n * l) return;\n  \
         dst[s] = src[(u64)map[s / l] * l + s % l];\n}\n",
        "  u64 s = (u64)blockIdx.x * blockDim.x + threadIdx.x;\n  if (s >= (u64)n * l) return;\n  \
         acc[(u64)map[s / l] * l + s % l] += src[off + s];\n}\n",
        "  u64 t = (u64)blockIdx.x * blockDim.x + threadIdx.x;\n  if (t >= n) return;\n  u64 s = off + t;\n  \
         x[(u64)cols[s / bc] * bc + s % bc] += buf[s];\n}\n",
        "  if (blockIdx.x != 0 || threadIdx.x != 0) return;\n  if (keep != 0xffffffffu) s[keep] = s[slot];\n  \
         double v = parts[0];\n  for (u32 r = 1; r < ranks; ++r) v = v + parts[r];\n  s[slot] = v;\n}\n",
    ];
    for (e, body) in entries.iter().zip(bodies) {
        e.write_signature(&mut source, " {");
        source.push_str(body);
    }
    CudaModule {
        name: "ptap_dist".into(),
        source,
        entries,
    }
}

/// The raw device address of `s`, `offset` elements in.
pub(crate) fn addr(s: &CudaSlice<f64>, offset: usize, stream: &Arc<CudaStream>) -> sys::CUdeviceptr {
    let (p, _sync) = s.device_ptr(stream);
    p + (offset * std::mem::size_of::<f64>()) as u64
}

/// One rank's rows on its GPU, split into interior and boundary rows, with
/// the device side of its halo plan (module docs).
pub struct DeviceDistMatrix {
    br: usize,
    bc: usize,
    n_owned_cols: usize,
    n_rows: usize,
    input_len: usize,
    /// Every row has a block in one of the halves: the two launches write
    /// every output row, so nothing is zeroed (or copied) before them.
    all_rows_stored: bool,
    interior: DeviceBlockCsr,
    interior_spmv: DeviceSpmv,
    boundary: DeviceBlockCsr,
    boundary_spmv: DeviceSpmv,
    sends: Vec<Link>,
    recvs: Vec<Link>,
    /// Owned block columns packed for the sends, in send-buffer order.
    send_cols: CudaSlice<u32>,
    send_buf: CudaSlice<f64>,
    send_len: usize,
    /// Per block of the interior and of the boundary half, its block in the
    /// local matrix's order (a refresh gathers the halves from those values).
    interior_src: CudaSlice<u32>,
    boundary_src: CudaSlice<u32>,
    comm_stream: Arc<CudaStream>,
    packed: CudaEvent,
    arrived: CudaEvent,
    pack: Arc<Kernel>,
}

/// A [`DeviceDistMatrix`]'s interior and boundary values rounded to `f32`.
pub struct LoweredHalves {
    interior: CudaSlice<f32>,
    boundary: CudaSlice<f32>,
}

/// Rows `keep(i)` of `a`'s local rows as a device matrix over all local
/// columns (other rows empty), entries in the local matrix's order, with
/// each stored block's index among the local matrix's blocks. Without
/// `with_values` the values are left zero on the device (no host copy of
/// them): the caller gathers them there.
fn upload_rows(
    dev: &Device,
    a: &crate::LocalMatrix,
    keep: impl Fn(usize) -> bool,
    with_values: bool,
) -> Result<(DeviceBlockCsr, Vec<u32>), ptap_cuda::CudaError> {
    let (br, bc) = a.block_shape();
    let l = br * bc;
    let (rp, ci, vals) = (a.row_ptr(), a.col_idx(), a.values());
    let mut row_ptr = Vec::with_capacity(a.n_rows() + 1);
    let (mut col_idx, mut block_row, mut values) = (Vec::new(), Vec::new(), Vec::new());
    let mut src = Vec::new();
    row_ptr.push(0usize);
    let mut max_row_blocks = 0;
    for i in 0..a.n_rows() {
        if keep(i) {
            let r = rp[i]..rp[i + 1];
            max_row_blocks = max_row_blocks.max(r.len());
            col_idx.extend_from_slice(&ci[r.clone()]);
            block_row.extend(std::iter::repeat_n(i as u32, r.len()));
            src.extend(r.clone().map(|k| k as u32));
            if with_values {
                values.extend_from_slice(&vals[r.start * l..r.end * l]);
            }
        }
        row_ptr.push(col_idx.len());
    }
    let nnzb = col_idx.len();
    if nnzb.saturating_mul(l) > u32::MAX as usize / 2 {
        return Err(ptap_cuda::CudaError::TooLarge {
            what: "a rank's matrix values".into(),
            n: nnzb * l,
        });
    }
    let m = DeviceBlockCsr {
        nrows: a.n_rows(),
        ncols: a.n_local_cols(),
        br,
        bc,
        nnzb,
        max_row_blocks,
        // The interior and boundary halves each store only their own rows and
        // the SpMV writes only rows with blocks: neither launch may zero the
        // other's rows. Rows empty in both halves are zeroed by the caller
        // before the two launches.
        has_empty_rows: false,
        row_ptr: dev.upload(&to_u32("row pointers", &row_ptr)?)?,
        col_idx: dev.upload(&col_idx)?,
        block_row: dev.upload(&block_row)?,
        values: if with_values {
            dev.upload(&values)?
        } else {
            dev.zeros(nnzb * l)?
        },
    };
    Ok((m, src))
}

impl DeviceDistMatrix {
    /// Uploads `a` (the inspector's side; counted under the device's
    /// current phase) with the SpMV plans of `registry`'s kernels; the halo
    /// goes on a stream of the device's highest priority, so that its NCCL
    /// kernel is scheduled ahead of the interior rows' blocks.
    pub fn new(dev: &Device, registry: &KernelRegistry, a: &DistMatrix) -> Result<Self, DeviceError> {
        Self::with_comm_priority(dev, registry, a, true)
    }

    /// As [`Self::new`], the halo's stream of the highest priority or (with
    /// `high == false`) of the default one, to measure what priority buys.
    pub fn with_comm_priority(
        dev: &Device,
        registry: &KernelRegistry,
        a: &DistMatrix,
        high: bool,
    ) -> Result<Self, DeviceError> {
        Self::build(dev, registry, a, high, None)
    }

    /// As [`Self::new`], the halves' values gathered on the device from
    /// `full`, the rank's values already there in the local matrix's order
    /// (what a refresh does): the host neither copies the values into the
    /// halves nor uploads them a second time.
    pub fn from_device_values(
        dev: &Device,
        registry: &KernelRegistry,
        a: &DistMatrix,
        full: &CudaSlice<f64>,
    ) -> Result<Self, DeviceError> {
        Self::build(dev, registry, a, true, Some(full))
    }

    fn build(
        dev: &Device,
        registry: &KernelRegistry,
        a: &DistMatrix,
        high: bool,
        full: Option<&CudaSlice<f64>>,
    ) -> Result<Self, DeviceError> {
        let local = &a.local;
        let (br, bc) = local.block_shape();
        let host = full.is_none();
        let (interior, interior_src) = upload_rows(dev, local, |i| !local.is_boundary(i), host)?;
        let (boundary, boundary_src) = upload_rows(dev, local, |i| local.is_boundary(i), host)?;
        let plan = &a.plan;
        let mut cols = Vec::new();
        for s in 0..plan.sends().len() {
            cols.extend_from_slice(plan.send_columns(s));
        }
        let send_len = cols.len() * bc;
        let ctx = dev.context();
        let event = || ctx.new_event(Some(sys::CUevent_flags::CU_EVENT_DISABLE_TIMING));
        let module = dev.module(&dist_module())?;
        let mut m = Self {
            br,
            bc,
            n_owned_cols: local.n_owned_cols(),
            n_rows: local.n_rows(),
            input_len: a.input_len(),
            all_rows_stored: local.row_ptr().windows(2).all(|w| w[1] > w[0]),
            interior_spmv: DeviceSpmv::new(dev, registry, &interior)?,
            interior,
            boundary_spmv: DeviceSpmv::new(dev, registry, &boundary)?,
            boundary,
            sends: plan.sends().to_vec(),
            recvs: plan.recvs().to_vec(),
            send_cols: dev.upload(&cols)?,
            send_buf: dev.zeros(send_len)?,
            send_len,
            interior_src: dev.upload(&interior_src)?,
            boundary_src: dev.upload(&boundary_src)?,
            comm_stream: if high {
                ctx.bind_to_thread()?;
                let (_least, greatest) = cudarc::driver::result::stream::get_priority_range()?;
                ctx.new_stream_with_priority(greatest)?
            } else {
                ctx.new_stream()?
            },
            packed: event()?,
            arrived: event()?,
            pack: module[PACK].clone(),
        };
        if let Some(full) = full {
            m.refresh_from(dev, &module[GATHER_BLOCKS], full)?;
        }
        Ok(m)
    }

    /// Scalars of an input vector: owned then ghost columns.
    pub fn input_len(&self) -> usize {
        self.input_len
    }
    /// Scalars of an output vector: owned rows.
    pub fn output_len(&self) -> usize {
        self.n_rows * self.br
    }
    /// Scalars this rank sends per SpMV.
    pub fn halo_send_len(&self) -> usize {
        self.send_len
    }
    /// Scalars this rank receives per SpMV.
    pub fn halo_recv_len(&self) -> usize {
        self.recvs.iter().map(|l| l.len).sum()
    }
    /// Stored blocks of the interior and of the boundary rows.
    pub fn nnzb(&self) -> (usize, usize) {
        (self.interior.nnzb, self.boundary.nnzb)
    }
    /// The ranks this matrix's halo sends to or receives from.
    pub fn peers(&self) -> impl Iterator<Item = usize> + '_ {
        self.sends.iter().chain(&self.recvs).map(|l| l.rank)
    }
    /// Block rows and columns' scalars: `(br, bc)`.
    pub fn block_shape(&self) -> (usize, usize) {
        (self.br, self.bc)
    }

    /// New values from `full`, the rank's values in the local matrix's
    /// order (device, `nnzb * br * bc`): the interior and boundary halves
    /// gathered on the device (a numeric refresh; nothing crosses the bus).
    /// `gather` is [`dist_module`]'s block gather.
    pub(crate) fn refresh_from(
        &mut self,
        dev: &Device,
        gather: &Kernel,
        full: &CudaSlice<f64>,
    ) -> Result<(), DeviceError> {
        let l = self.br * self.bc;
        for (half, src) in [
            (&self.interior, &self.interior_src),
            (&self.boundary, &self.boundary_src),
        ] {
            if half.nnzb == 0 {
                continue;
            }
            dev.launch(
                gather,
                grid_for((half.nnzb * l) as u64, 256),
                &[
                    Arg::F64(full),
                    Arg::U32s(src),
                    Arg::F64Mut(&half.values),
                    Arg::U32(half.nnzb as u32),
                    Arg::U32(l as u32),
                ],
            )?;
        }
        Ok(())
    }

    /// `y = A x` on this rank's rows; the ghost tail of `x` (device, length
    /// [`Self::input_len`]) is overwritten by the halo, exchanged through
    /// `nccl` while the interior rows are computed. Collective over the
    /// neighbours; enqueued on the device's stream (returns before it ends);
    /// allocates nothing and copies nothing to or from the host.
    pub fn spmv(
        &self,
        dev: &Device,
        nccl: &NcclComm,
        x: &CudaSlice<f64>,
        y: &mut CudaSlice<f64>,
    ) -> Result<(), DeviceError> {
        assert!(x.len() >= self.input_len && y.len() >= self.output_len());
        let halo = self.start_exchange(dev, nccl, x)?;
        if !self.all_rows_stored {
            dev.memset_zero(y)?;
        }
        self.halves(dev, x, None, y, halo, None)
    }

    /// [`Self::spmv`] with the values of `lo` (the halves rounded to `f32`:
    /// the smoothers' operator under smoother precision f32).
    pub fn spmv_f32(
        &self,
        dev: &Device,
        nccl: &NcclComm,
        lo: &LoweredHalves,
        x: &CudaSlice<f64>,
        y: &mut CudaSlice<f64>,
    ) -> Result<(), DeviceError> {
        assert!(x.len() >= self.input_len && y.len() >= self.output_len());
        let halo = self.start_exchange(dev, nccl, x)?;
        if !self.all_rows_stored {
            dev.memset_zero(y)?;
        }
        self.halves(dev, x, None, y, halo, Some(lo))
    }

    /// [`Self::residual`] with the values of `lo`.
    #[allow(clippy::too_many_arguments)]
    pub fn residual_f32(
        &self,
        dev: &Device,
        nccl: &NcclComm,
        lo: &LoweredHalves,
        x: &CudaSlice<f64>,
        b: &CudaSlice<f64>,
        r: &mut CudaSlice<f64>,
        vec: &Kernels,
    ) -> Result<(), DeviceError> {
        assert!(x.len() >= self.input_len && r.len() >= self.output_len() && b.len() >= self.output_len());
        if !self.all_rows_stored {
            self.spmv_f32(dev, nccl, lo, x, r)?;
            return axpby(dev, vec, 1.0, b, -1.0, r, self.output_len());
        }
        let halo = self.start_exchange(dev, nccl, x)?;
        self.halves(dev, x, Some(b), r, halo, Some(lo))
    }

    /// Storage for the halves' values rounded to `f32` (square blocks).
    pub fn lowered(&self, dev: &Device) -> Result<LoweredHalves, DeviceError> {
        if self.br != self.bc {
            return Err(DistError::Matrix {
                why: format!("f32 smoother operators need square blocks, got {}x{}", self.br, self.bc),
            }
            .into());
        }
        let l = self.br * self.bc;
        Ok(LoweredHalves {
            interior: dev.zeros(self.interior.nnzb * l)?,
            boundary: dev.zeros(self.boundary.nnzb * l)?,
        })
    }

    /// `lo` = the halves' current values rounded to `f32` (`to_f32`: the
    /// common module's conversion), `overflow` set where one is beyond
    /// `f32`'s range. Queued; the caller reads `overflow`.
    pub fn lower(
        &self,
        dev: &Device,
        to_f32: &Kernel,
        lo: &mut LoweredHalves,
        overflow: &CudaSlice<u32>,
    ) -> Result<(), DeviceError> {
        for (half, out) in [(&self.interior, &lo.interior), (&self.boundary, &lo.boundary)] {
            // An empty half's arrays are one-element placeholders: nothing to convert.
            let n = half.nnzb * self.br * self.bc;
            if n == 0 {
                continue;
            }
            let cfg = LaunchConfig {
                grid_dim: ((n as u64).div_ceil(256).min(dev.sm_count() as u64 * 16) as u32, 1, 1),
                block_dim: (256, 1, 1),
                shared_mem_bytes: 0,
            };
            dev.launch(
                to_f32,
                cfg,
                &[
                    Arg::F64(&half.values),
                    Arg::F32Mut(out),
                    Arg::U32sMut(overflow),
                    Arg::U64(n as u64),
                ],
            )?;
        }
        Ok(())
    }

    /// `r = b - A x` on this rank's rows, the halo exchanged as in
    /// [`Self::spmv`]: one fused pass per half where every row has a block
    /// and the blocks are square (the single-process residual's kernel),
    /// else the SpMV and `r = b - r`.
    pub fn residual(
        &self,
        dev: &Device,
        nccl: &NcclComm,
        x: &CudaSlice<f64>,
        b: &CudaSlice<f64>,
        r: &mut CudaSlice<f64>,
        vec: &Kernels,
    ) -> Result<(), DeviceError> {
        assert!(x.len() >= self.input_len && r.len() >= self.output_len() && b.len() >= self.output_len());
        if !(self.all_rows_stored && self.br == self.bc) {
            self.spmv(dev, nccl, x, r)?;
            return axpby(dev, vec, 1.0, b, -1.0, r, self.output_len());
        }
        let halo = self.start_exchange(dev, nccl, x)?;
        self.halves(dev, x, Some(b), r, halo, None)
    }

    /// The interior rows, then (after the halo, where there is one) the
    /// boundary rows: `y = A x`, or `y = b - A x` with `b`, from the `f32`
    /// values of `lo` where given; a half without blocks launches nothing.
    fn halves(
        &self,
        dev: &Device,
        x: &CudaSlice<f64>,
        b: Option<&CudaSlice<f64>>,
        y: &CudaSlice<f64>,
        halo: bool,
        lo: Option<&LoweredHalves>,
    ) -> Result<(), DeviceError> {
        let half = |spmv: &DeviceSpmv, m: &DeviceBlockCsr, v: Option<&CudaSlice<f32>>| -> Result<(), DeviceError> {
            if m.nnzb == 0 {
                return Ok(());
            }
            match (b, v) {
                (Some(b), None) => spmv.residual(dev, m, x, b, y)?,
                (None, None) => spmv.apply(dev, m, x, y)?,
                (Some(b), Some(v)) => spmv.residual_f32(dev, m, v, x, b, y)?,
                (None, Some(v)) => spmv.apply_f32(dev, m, v, x, y)?,
            }
            Ok(())
        };
        half(&self.interior_spmv, &self.interior, lo.map(|l| &l.interior))?;
        if halo {
            dev.stream().wait(&self.arrived)?;
        }
        half(&self.boundary_spmv, &self.boundary, lo.map(|l| &l.boundary))
    }

    /// Fills the ghost tail of `x` from the neighbours, nothing overlapped:
    /// later work on the device's stream sees the halo. (With
    /// [`Self::local_rows`], what [`Self::spmv`] overlaps, one part at a time.)
    pub fn exchange(&self, dev: &Device, nccl: &NcclComm, x: &CudaSlice<f64>) -> Result<(), DeviceError> {
        assert!(x.len() >= self.input_len);
        if self.start_exchange(dev, nccl, x)? {
            dev.stream().wait(&self.arrived)?;
        }
        Ok(())
    }

    /// `y = A x` from the ghost values `x` holds now (no exchange): the
    /// interior and boundary rows back to back.
    pub fn local_rows(&self, dev: &Device, x: &CudaSlice<f64>, y: &mut CudaSlice<f64>) -> Result<(), DeviceError> {
        assert!(x.len() >= self.input_len && y.len() >= self.output_len());
        if !self.all_rows_stored {
            dev.memset_zero(y)?;
        }
        self.halves(dev, x, None, y, false, None)
    }

    /// Packs the send lists on the compute stream and posts the halo's NCCL
    /// group on the communication stream after it; `arrived` is recorded
    /// when it completes. Whether this rank has a halo at all.
    fn start_exchange(&self, dev: &Device, nccl: &NcclComm, x: &CudaSlice<f64>) -> Result<bool, DeviceError> {
        if self.sends.is_empty() && self.recvs.is_empty() {
            return Ok(false);
        }
        dev.launch(
            &self.pack,
            grid_for(self.send_len as u64, 256),
            &[
                Arg::F64(x),
                Arg::U32s(&self.send_cols),
                Arg::F64Mut(&self.send_buf),
                Arg::U32(self.send_len as u32),
                Arg::U32(self.bc as u32),
            ],
        )?;
        self.packed.record(dev.stream())?;
        let c = &self.comm_stream;
        c.wait(&self.packed)?;
        let ghosts = self.n_owned_cols * self.bc;
        nccl.group_start()?;
        let posted = (|| {
            for l in &self.recvs {
                // SAFETY: the range is this rank's ghost tail for owner
                // `l.rank`, which the compute stream touches only after
                // waiting for `arrived`.
                unsafe { nccl.recv(addr(x, ghosts + l.start, c), l.len, l.rank, c) }?;
            }
            for l in &self.sends {
                // SAFETY: the send buffer is rewritten only by the next pack,
                // which the compute stream orders after `arrived`.
                unsafe { nccl.send(addr(&self.send_buf, l.start, c), l.len, l.rank, c) }?;
            }
            Ok::<(), DeviceError>(())
        })();
        nccl.group_end()?;
        posted?;
        self.arrived.record(c)?;
        Ok(true)
    }
}

/// Point-block Jacobi on the device: the inverted diagonal blocks of a
/// rank's rows (inverted on the host at setup, as the CPU solver's).
pub struct DeviceBlockJacobi {
    b: usize,
    nrows: usize,
    dinv: CudaSlice<f64>,
}

impl DeviceBlockJacobi {
    /// Uploads `j`, the inverted diagonal blocks of `a`'s rows.
    pub fn new(dev: &Device, a: &DeviceDistMatrix, j: &BlockJacobi) -> Result<Self, DeviceError> {
        let (b, nrows) = (a.br, a.n_rows);
        if a.br != a.bc || j.inverses().len() != nrows * b * b {
            return Err(DistError::Matrix {
                why: format!(
                    "{} inverse entries for {nrows} diagonal blocks of {}x{}",
                    j.inverses().len(),
                    a.br,
                    a.bc
                ),
            }
            .into());
        }
        Ok(Self {
            b,
            nrows,
            dinv: dev.upload(j.inverses())?,
        })
    }
}

/// A rank's CG vectors and reduction scratch on the device, allocated once
/// (a solve allocates nothing).
pub struct DeviceCgWorkspace {
    b: CudaSlice<f64>,
    x: CudaSlice<f64>,
    r: CudaSlice<f64>,
    z: CudaSlice<f64>,
    /// Owned then ghost scalars (the SpMV input).
    p: CudaSlice<f64>,
    ap: CudaSlice<f64>,
    part: CudaSlice<f64>,
    /// This rank's partial dots, one slot each.
    dots: CudaSlice<f64>,
    /// Every rank's slots, rank after rank.
    gathered: CudaSlice<f64>,
    /// The rank-order sums of `m` slots, one buffer per `m`.
    sums: Vec<CudaSlice<f64>>,
    vec: Kernels,
    dist: Kernels,
}

impl DeviceCgWorkspace {
    /// Vectors for `a`, `b` uploaded (counted under the current phase), `x = 0`.
    pub fn new(dev: &Device, nccl: &NcclComm, a: &DeviceDistMatrix, b: &[f64]) -> Result<Self, DeviceError> {
        let n = a.output_len();
        if b.len() != n || a.n_owned_cols * a.bc != n {
            return Err(DistError::Matrix {
                why: format!(
                    "CG needs a square partition and an owned right-hand side of {n} scalars, not {}",
                    b.len()
                ),
            }
            .into());
        }
        Ok(Self {
            b: dev.upload(b)?,
            x: dev.zeros(n)?,
            r: dev.zeros(n)?,
            z: dev.zeros(n)?,
            p: dev.zeros(a.input_len())?,
            ap: dev.zeros(n)?,
            part: dev.zeros(MAX_PARTIALS)?,
            dots: dev.zeros(MAX_REDUCE)?,
            gathered: dev.zeros(MAX_REDUCE * nccl.size())?,
            sums: (1..=MAX_REDUCE).map(|m| dev.zeros(m)).collect::<Result<_, _>>()?,
            vec: ptap_cuda::kernels::common(dev)?,
            dist: dev.module(&dist_module())?,
        })
    }

    /// The solution, on the device.
    pub fn x(&self) -> &CudaSlice<f64> {
        &self.x
    }
    /// Sets `x = 0` (a fresh solve from zero).
    pub fn zero_x(&mut self, dev: &Device) -> Result<(), DeviceError> {
        dev.memset_zero(&mut self.x)?;
        Ok(())
    }
}

impl DeviceBlockJacobi {
    /// `z = D^-1 r`.
    fn apply(&self, dev: &Device, k: &Kernels, r: &CudaSlice<f64>, z: &CudaSlice<f64>) -> Result<(), DeviceError> {
        dev.launch(
            &k[BLOCK_JACOBI],
            grid_for((self.nrows * self.b) as u64, 256),
            &[
                Arg::F64(&self.dinv),
                Arg::F64(r),
                Arg::F64Mut(z),
                Arg::U32(self.nrows as u32),
                Arg::U32(self.b as u32),
            ],
        )?;
        Ok(())
    }
}

/// `y[..n] = a x[..n] + b y[..n]` (`b = 0` overwrites).
pub(crate) fn axpby(
    dev: &Device,
    k: &Kernels,
    a: f64,
    x: &CudaSlice<f64>,
    b: f64,
    y: &CudaSlice<f64>,
    n: usize,
) -> Result<(), DeviceError> {
    dev.launch(
        &k[vector::AXPBY],
        grid_for(n as u64, 256),
        &[
            Arg::Scalar(a),
            Arg::F64(x),
            Arg::Scalar(b),
            Arg::F64Mut(y),
            Arg::U64(n as u64),
        ],
    )?;
    Ok(())
}

/// The dots `x_j[..n] . y_j[..n]` summed over the ranks in rank order, the
/// same bits on every rank; `M` scalars come to the host (module docs).
/// Collective over the ranks of `nccl`; uses `ws`'s scratch.
pub fn all_reduce_dots<const M: usize>(
    dev: &Device,
    nccl: &NcclComm,
    ws: &DeviceCgWorkspace,
    pairs: [(&CudaSlice<f64>, &CudaSlice<f64>); M],
    n: usize,
) -> Result<[f64; M], DeviceError> {
    const { assert!(M >= 1 && M <= MAX_REDUCE) };
    let g = n.div_ceil(DOT_THREADS).clamp(1, MAX_PARTIALS);
    let block = |grid: usize| LaunchConfig {
        grid_dim: (grid as u32, 1, 1),
        block_dim: (DOT_THREADS as u32, 1, 1),
        shared_mem_bytes: 0,
    };
    for (slot, (x, y)) in pairs.into_iter().enumerate() {
        dev.launch(
            &ws.vec[vector::DOT_PARTIAL],
            block(g),
            &[Arg::F64(x), Arg::F64(y), Arg::F64Mut(&ws.part), Arg::U64(n as u64)],
        )?;
        dev.launch(
            &ws.vec[vector::SUM_PARTIAL],
            block(1),
            &[
                Arg::F64(&ws.part),
                Arg::F64Mut(&ws.dots),
                Arg::U32(slot as u32),
                Arg::U32(g as u32),
            ],
        )?;
    }
    let s = dev.stream();
    // SAFETY: `dots` holds MAX_REDUCE >= M slots and `gathered` MAX_REDUCE
    // per rank; both live as long as the workspace, and the stream orders
    // every later use after the gather.
    unsafe { nccl.all_gather(addr(&ws.dots, 0, s), addr(&ws.gathered, 0, s), M, s) }?;
    let out = &ws.sums[M - 1];
    dev.launch(
        &ws.dist[SUM_RANKS],
        grid_for(M as u64, 32),
        &[
            Arg::F64(&ws.gathered),
            Arg::F64Mut(out),
            Arg::U32(M as u32),
            Arg::U32(nccl.size() as u32),
        ],
    )?;
    let mut host = [0.0; M];
    dev.download_into(out, &mut host)?;
    Ok(host)
}

/// Solves `A x = b` from `ws`'s `x` on every rank's GPU: the algorithm of
/// [`crate::cg::jacobi_pcg`] on device vectors (module docs). Collective
/// over the ranks of `nccl`; every rank returns the same report.
pub fn jacobi_pcg(
    dev: &Device,
    nccl: &NcclComm,
    a: &DeviceDistMatrix,
    jacobi: &DeviceBlockJacobi,
    opts: &CgOptions,
    ws: &mut DeviceCgWorkspace,
) -> Result<CgReport, DeviceError> {
    opts.validate()?;
    let n = a.output_len();
    if ws.x.len() < n || ws.p.len() < a.input_len() || jacobi.nrows * jacobi.b != n {
        return Err(DistError::Matrix {
            why: "the CG workspace or the preconditioner belongs to another operator".into(),
        }
        .into());
    }
    let (vk, dk) = (&ws.vec, &ws.dist);
    // r = b - A x (x through p, which has the ghost room).
    axpby(dev, vk, 1.0, &ws.x, 0.0, &ws.p, n)?;
    a.spmv(dev, nccl, &ws.p, &mut ws.ap)?;
    axpby(dev, vk, 1.0, &ws.b, 0.0, &ws.r, n)?;
    axpby(dev, vk, -1.0, &ws.ap, 1.0, &ws.r, n)?;
    jacobi.apply(dev, dk, &ws.r, &ws.z)?;
    let [bb, rr, mut rz] = all_reduce_dots(dev, nccl, ws, [(&ws.b, &ws.b), (&ws.r, &ws.r), (&ws.r, &ws.z)], n)?;
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
    axpby(dev, vk, 1.0, &ws.z, 0.0, &ws.p, n)?;
    for it in 1..=opts.max_iterations {
        if !(rz > 0.0) {
            return Err(DistError::NotSpd {
                iteration: it,
                why: format!("r^T D^-1 r = {rz:e}"),
            }
            .into());
        }
        a.spmv(dev, nccl, &ws.p, &mut ws.ap)?;
        let [pap] = all_reduce_dots(dev, nccl, ws, [(&ws.p, &ws.ap)], n)?;
        if !pap.is_finite() {
            return Err(DistError::NotFinite { iteration: it }.into());
        }
        if pap <= 0.0 {
            return Err(DistError::NotSpd {
                iteration: it,
                why: format!("p^T A p = {pap:e}"),
            }
            .into());
        }
        let alpha = rz / pap;
        axpby(dev, vk, alpha, &ws.p, 1.0, &ws.x, n)?;
        axpby(dev, vk, -alpha, &ws.ap, 1.0, &ws.r, n)?;
        jacobi.apply(dev, dk, &ws.r, &ws.z)?;
        let [rr, rz_new] = all_reduce_dots(dev, nccl, ws, [(&ws.r, &ws.r), (&ws.r, &ws.z)], n)?;
        rnorm = rr.sqrt();
        if rnorm <= target {
            return Ok(report(it, true, rnorm));
        }
        let beta = rz_new / rz;
        rz = rz_new;
        axpby(dev, vk, 1.0, &ws.z, beta, &ws.p, n)?;
    }
    Ok(report(opts.max_iterations, false, rnorm))
}
