//! The merge-path block SpMV (paper, `sec:perf-spmv`) on device matrices:
//! `y = A x` and the fused residual `r = b - A x` (square blocks).
use crate::{grid_for, Arg, CudaError, Device, DeviceBlockCsr, Kernel};
use cudarc::driver::{CudaSlice, LaunchConfig};
use ptap_codegen_core::gpu::{self, vector};
use ptap_codegen_core::gpu_solve as gs;
use ptap_codegen_core::gpu_spmv;
use ptap_runtime::KernelRegistry;
use std::sync::Arc;

/// `y = A x` for one device matrix: the kernels for its block shape, the
/// per-warp range of the block stream, and the slots where the two partial
/// sums of a row crossing a range boundary meet.
pub struct DeviceSpmv {
    kernel: Arc<Kernel>,
    /// `r = b - A x` (square blocks only).
    residual: Option<Arc<Kernel>>,
    /// `y = A x` and `r = b - A x` reading `f32` values (square blocks only).
    f32: Option<(Arc<Kernel>, Arc<Kernel>)>,
    /// Fill and copy, for rows that store no block.
    fill: Arc<Kernel>,
    copy: Arc<Kernel>,
    per_warp: u32,
    warps: u64,
    /// Warps per thread block (fewer for large blocks: shared-memory staging).
    block_warps: u32,
    /// Per range boundary, the tail and head partial sums of the row crossing it.
    carry: CudaSlice<f64>,
    /// Per range boundary, the ticket the two warps take (back to 0 after each launch).
    ticket: CudaSlice<u32>,
    /// Set by [`Self::mirror`]: `apply` and `residual` read a symmetric
    /// operator's upper triangle only.
    mirror: Option<MirrorPlan>,
}

/// The SpMV of a symmetric operator through its upper triangle: stream entry
/// `k` (block `(i, j)`, in pattern order) multiplies block `pos[k]`, which is
/// `k` itself on and above the diagonal and `(j, i)`'s slot, transposed (bit
/// 31), below it. The stream, its rows and columns are the plain SpMV's, so
/// the sums are too; only the values read differ. Its ranges are short, so
/// that the warps resident at one time cover a narrow band of rows: a block
/// read for row `j` is read again for row `i > j` while it is still in the L2.
struct MirrorPlan {
    pos: CudaSlice<u32>,
    spmv: Arc<Kernel>,
    residual: Arc<Kernel>,
    per_warp: u32,
    warps: u64,
    carry: CudaSlice<f64>,
    ticket: CudaSlice<u32>,
}

/// Blocks per warp of a mirrored plan (at least the longest row, whole
/// chunks of 32).
pub const MIRROR_PER_WARP: usize = 256;

/// Smallest per-warp range of a large operator (amortizes the range-end
/// lookups and the boundary slots over several chunks).
const MIN_PER_WARP: usize = 256;
/// Smallest per-warp range of a small one, one chunk: an operator that would
/// not fill `SMALL_WARPS_PER_SM` warps per SM at [`MIN_PER_WARP`] (the
/// coarse levels, their `P` and `R`) spreads over as many warps as it has
/// chunks instead of leaving most of the device idle.
const MIN_PER_WARP_SMALL: usize = 32;
/// Warps per SM below which an operator counts as small (measured on the
/// H200 at k = 16: operators under ~135k blocks gain from one-chunk ranges,
/// a 374k-block 6x6 `P` loses).
const SMALL_WARPS_PER_SM: usize = 4;

/// Longest per-warp range of [`Ranges::Resident`] before an operator is cut
/// into more than one wave (measured on the H200 at k = 16: the 21M-block
/// fine `A` runs best in 4 waves of 1280-block ranges, every other large
/// operator in one wave).
const MAX_WAVE_RANGE: usize = 1536;

/// How [`DeviceSpmv`] cuts the block stream into per-warp ranges (operators
/// under `SMALL_WARPS_PER_SM` warps per SM take one-chunk ranges in every
/// case). The sums of a row that spans more than two 32-block chunks depend
/// on where the ranges end (tail + head instead of a carry), so a plan gives
/// the same bits run to run, but two rules may differ in the last bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ranges {
    /// The default: whole waves of the warps the kernel keeps resident (its
    /// registers decide how many), as few as keep every range within
    /// `MAX_WAVE_RANGE` blocks, so no wave runs partly full. The 6x3 `R`
    /// of 1.9M blocks at k = 16 keeps 4 blocks of 4 warps per SM (124
    /// registers): under [`Ranges::Fixed`] it ran 3.2 waves of 288-block
    /// ranges, the last a fifth full; here one wave of 928-block ranges.
    Resident,
    /// About two waves of 64 warps per SM whatever the kernel's residency,
    /// ranges of at least 256 blocks (the rule before [`Ranges::Resident`]).
    Fixed,
    /// Exactly `n` waves of the warps the kernel keeps resident.
    Waves(usize),
}

impl DeviceSpmv {
    /// The plan for `a`, with the SpMV of the registered set that serves
    /// `a`'s blocks, its ranges cut by [`Ranges::Resident`].
    pub fn new(dev: &Device, kernels: &KernelRegistry, a: &DeviceBlockCsr) -> Result<Self, CudaError> {
        Self::with_ranges(dev, kernels, a, Ranges::Resident)
    }

    /// [`Self::new`] with the per-warp ranges cut as `ranges` says.
    pub fn with_ranges(
        dev: &Device,
        kernels: &KernelRegistry,
        a: &DeviceBlockCsr,
        ranges: Ranges,
    ) -> Result<Self, CudaError> {
        let set = crate::kernels::block(dev, kernels, a.br, a.bc)?;
        let kernel = set[&gpu::spmv_name(a.br, a.bc)].clone();
        let residual = (a.br == a.bc).then(|| set[&gpu_spmv::residual_name(a.br)].clone());
        let f32 = (a.br == a.bc).then(|| {
            (
                set[&gpu_spmv::spmv_f32_name(a.br)].clone(),
                set[&gpu_spmv::residual_f32_name(a.br)].clone(),
            )
        });
        let common = crate::kernels::common(dev)?;
        // About two resident waves of warps on the whole device.
        let target_warps = dev.sm_count() as usize * 64 * 2;
        // A range at least as long as the longest row: a row crosses at most
        // one boundary, so it has at most two partial sums.
        let small = a.nnzb < MIN_PER_WARP * SMALL_WARPS_PER_SM * dev.sm_count() as usize;
        let min = if small { MIN_PER_WARP_SMALL } else { MIN_PER_WARP }.max(a.max_row_blocks);
        let block_warps = gpu::spmv_warps(a.br, a.bc);
        let resident = || -> Result<usize, CudaError> {
            Ok(kernel.blocks_per_sm(32 * block_warps as u32)?.max(1) as usize * block_warps * dev.sm_count() as usize)
        };
        let waves = match ranges {
            Ranges::Fixed => None,
            Ranges::Waves(n) => Some(n.max(1)),
            Ranges::Resident => Some(a.nnzb.div_ceil(resident()? * MAX_WAVE_RANGE).max(1)),
        };
        let per_warp = match waves {
            Some(n) if !small => {
                // Rounded up to whole chunks: at most `n` waves.
                a.nnzb
                    .div_ceil(resident()? * n)
                    .max(a.max_row_blocks)
                    .max(64)
                    .div_ceil(32)
                    * 32
            }
            _ => a.nnzb.div_ceil(target_warps).max(min).div_ceil(32) * 32,
        };
        let warps = a.nnzb.div_ceil(per_warp) as u64;
        let boundaries = warps as usize + 1;
        Ok(Self {
            kernel,
            residual,
            f32,
            fill: common[gs::FILL].clone(),
            copy: common[vector::COPY].clone(),
            per_warp: per_warp as u32,
            warps,
            block_warps: block_warps as u32,
            carry: dev.zeros(boundaries * 2 * a.br)?,
            ticket: dev.zeros(boundaries)?,
            mirror: None,
        })
    }

    /// Makes [`Self::apply`] and [`Self::residual`] read only the upper
    /// triangle of `a`, each warp owning `per_warp` blocks
    /// ([`MIRROR_PER_WARP`] when `None`). The positions are found on the
    /// device from `a`'s pattern (a search per block below the diagonal;
    /// only a 4-byte status crosses the bus). Only for an operator the caller
    /// knows to be symmetric: a block below the diagonal is taken to be its
    /// mirror's transpose, whatever its own values. Returns `false`, leaving
    /// the plan as it was, where `a`'s blocks are not square or its pattern is
    /// not structurally symmetric.
    pub fn mirror(
        &mut self,
        dev: &Device,
        kernels: &KernelRegistry,
        a: &DeviceBlockCsr,
        per_warp: Option<usize>,
    ) -> Result<bool, CudaError> {
        if a.br != a.bc {
            return Ok(false);
        }
        let Some(pos) = crate::product::device_mirror_positions(dev, a)? else {
            return Ok(false);
        };
        let set = crate::kernels::block(dev, kernels, a.br, a.bc)?;
        let min = MIN_PER_WARP_SMALL.max(a.max_row_blocks);
        let per_warp = per_warp.unwrap_or(MIRROR_PER_WARP).max(min).div_ceil(32) * 32;
        let warps = a.nnzb.div_ceil(per_warp) as u64;
        let boundaries = warps as usize + 1;
        self.mirror = Some(MirrorPlan {
            pos,
            spmv: set[&gpu_spmv::spmv_mirror_name(a.br)].clone(),
            residual: set[&gpu_spmv::residual_mirror_name(a.br)].clone(),
            per_warp: per_warp as u32,
            warps,
            carry: dev.zeros(boundaries * 2 * a.br)?,
            ticket: dev.zeros(boundaries)?,
        });
        Ok(true)
    }

    /// Blocks each warp of the mirrored plan owns; `None` without one.
    pub fn mirror_per_warp(&self) -> Option<usize> {
        self.mirror.as_ref().map(|m| m.per_warp as usize)
    }

    /// Drops the mirrored plan: `apply` and `residual` read every block again.
    pub fn unmirror(&mut self) {
        self.mirror = None;
    }

    /// Blocks each warp owns.
    pub fn per_warp(&self) -> usize {
        self.per_warp as usize
    }

    fn config_of(&self, warps: u64) -> LaunchConfig {
        LaunchConfig {
            grid_dim: (warps.div_ceil(self.block_warps as u64) as u32, 1, 1),
            block_dim: (32 * self.block_warps, 1, 1),
            shared_mem_bytes: 0,
        }
    }

    /// `y = A x` (every row written; nothing to zero first). Takes `y` by
    /// shared reference, as every launch does.
    pub fn apply(
        &self,
        dev: &Device,
        a: &DeviceBlockCsr,
        x: &CudaSlice<f64>,
        y: &CudaSlice<f64>,
    ) -> Result<(), CudaError> {
        self.fill_empty(dev, a, y)?;
        let values = Arg::F64(&a.values);
        match &self.mirror {
            Some(m) => self.launch_stream(dev, a, &m.spmv, values, Some(m), x, None, y),
            None => self.launch_stream(dev, a, &self.kernel, values, None, x, None, y),
        }
    }

    /// Rows that store no block are written by no SpMV kernel: zero them first.
    fn fill_empty(&self, dev: &Device, a: &DeviceBlockCsr, y: &CudaSlice<f64>) -> Result<(), CudaError> {
        let n = a.scalar_rows() as u64;
        if a.has_empty_rows {
            dev.launch(
                &self.fill,
                grid_for(n, 256),
                &[Arg::F64Mut(y), Arg::Scalar(0.0), Arg::U64(n)],
            )?;
        }
        Ok(())
    }

    /// `y = A x` with `A`'s values read from `values32` (`a`'s values
    /// rounded to `f32`, square blocks): the sums of [`Self::apply`] on the
    /// rounded values (never mirrored).
    pub fn apply_f32(
        &self,
        dev: &Device,
        a: &DeviceBlockCsr,
        values32: &CudaSlice<f32>,
        x: &CudaSlice<f64>,
        y: &CudaSlice<f64>,
    ) -> Result<(), CudaError> {
        let (k, _) = self.f32_kernels(a)?;
        self.fill_empty(dev, a, y)?;
        self.launch_stream(dev, a, k, Arg::F32(values32), None, x, None, y)
    }

    fn f32_kernels(&self, a: &DeviceBlockCsr) -> Result<&(Arc<Kernel>, Arc<Kernel>), CudaError> {
        self.f32.as_ref().ok_or_else(|| CudaError::UnsupportedShape {
            what: format!("an f32 SpMV of {}x{} blocks", a.br, a.bc),
            limit: "the f32 smoother operators need square blocks".into(),
            fix: "use smoother precision f64".into(),
        })
    }

    /// One launch of a merge-path kernel over `a`'s block stream: the plain
    /// plan's ranges, or `mirror`'s (its positions after the values); `b`
    /// for a residual (`out = b - A x`, else `out = A x`). The arguments
    /// are gathered on the stack.
    #[allow(clippy::too_many_arguments)]
    fn launch_stream(
        &self,
        dev: &Device,
        a: &DeviceBlockCsr,
        kernel: &Kernel,
        values: Arg<'_>,
        mirror: Option<&MirrorPlan>,
        x: &CudaSlice<f64>,
        b: Option<&CudaSlice<f64>>,
        out: &CudaSlice<f64>,
    ) -> Result<(), CudaError> {
        debug_assert!(x.len() >= a.scalar_cols() && out.len() >= a.scalar_rows());
        let (warps, per_warp, carry, ticket) = match mirror {
            Some(m) => (m.warps, m.per_warp, &m.carry, &m.ticket),
            None => (self.warps, self.per_warp, &self.carry, &self.ticket),
        };
        let mut args = [Arg::U32(0); 11];
        let mut n = 0;
        for arg in [
            Some(values),
            mirror.map(|m| Arg::U32s(&m.pos)),
            Some(Arg::U32s(&a.col_idx)),
            Some(Arg::U32s(&a.block_row)),
            Some(Arg::F64(x)),
            b.map(Arg::F64),
            Some(Arg::F64Mut(out)),
            Some(Arg::F64Mut(carry)),
            Some(Arg::U32sMut(ticket)),
            Some(Arg::U32(a.nnzb as u32)),
            Some(Arg::U32(per_warp)),
        ]
        .into_iter()
        .flatten()
        {
            args[n] = arg;
            n += 1;
        }
        dev.launch(kernel, self.config_of(warps), &args[..n])
    }

    /// `r = b - A x` in one pass (square blocks; `b` read once per row).
    pub fn residual(
        &self,
        dev: &Device,
        a: &DeviceBlockCsr,
        x: &CudaSlice<f64>,
        b: &CudaSlice<f64>,
        r: &CudaSlice<f64>,
    ) -> Result<(), CudaError> {
        let Some(k) = &self.residual else {
            return Err(CudaError::UnsupportedShape {
                what: format!("a residual of {}x{} blocks", a.br, a.bc),
                limit: "the residual needs square blocks".into(),
                fix: "use the SpMV and a vector update".into(),
            });
        };
        self.copy_empty(dev, a, b, r)?;
        let values = Arg::F64(&a.values);
        match &self.mirror {
            Some(m) => self.launch_stream(dev, a, &m.residual, values, Some(m), x, Some(b), r),
            None => self.launch_stream(dev, a, k, values, None, x, Some(b), r),
        }
    }

    /// Rows that store no block keep `r = b`: copied first.
    fn copy_empty(
        &self,
        dev: &Device,
        a: &DeviceBlockCsr,
        b: &CudaSlice<f64>,
        r: &CudaSlice<f64>,
    ) -> Result<(), CudaError> {
        let n = a.scalar_rows() as u64;
        if a.has_empty_rows {
            let cfg = LaunchConfig {
                grid_dim: (dev.sm_count() * 4, 1, 1),
                block_dim: (256, 1, 1),
                shared_mem_bytes: 0,
            };
            dev.launch(&self.copy, cfg, &[Arg::F64(b), Arg::F64Mut(r), Arg::U64(n)])?;
        }
        Ok(())
    }

    /// [`Self::residual`] with `A`'s values read from `values32` (`a`'s
    /// values rounded to `f32`; never mirrored).
    pub fn residual_f32(
        &self,
        dev: &Device,
        a: &DeviceBlockCsr,
        values32: &CudaSlice<f32>,
        x: &CudaSlice<f64>,
        b: &CudaSlice<f64>,
        r: &CudaSlice<f64>,
    ) -> Result<(), CudaError> {
        let (_, k) = self.f32_kernels(a)?;
        self.copy_empty(dev, a, b, r)?;
        self.launch_stream(dev, a, k, Arg::F32(values32), None, x, Some(b), r)
    }

    /// Bytes one apply moves at least: values, block columns and block rows
    /// once, `x` once, `y` written once.
    pub fn stream_bytes(a: &DeviceBlockCsr) -> f64 {
        Self::stream_bytes_of(a, 8)
    }

    /// [`Self::stream_bytes`] with values of `value_bytes` bytes (4: the
    /// `f32` smoother operators).
    pub fn stream_bytes_of(a: &DeviceBlockCsr, value_bytes: usize) -> f64 {
        (a.nnzb * (a.br * a.bc * value_bytes + 8) + a.scalar_cols() * 8 + a.scalar_rows() * 8) as f64
    }
}
