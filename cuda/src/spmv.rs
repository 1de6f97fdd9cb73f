//! The merge-path block SpMV (paper, `sec:perf-spmv`) on device matrices.
use crate::{Arg, CudaError, Device, DeviceBlockCsr, Kernel};
use cudarc::driver::{CudaSlice, LaunchConfig};
use ptap_codegen_core::gpu;
use ptap_runtime::KernelRegistry;
use std::sync::Arc;

/// `y = A x` for one device matrix: the kernel for its block shape and the
/// per-warp range of the block stream.
pub struct DeviceSpmv {
    kernel: Arc<Kernel>,
    per_warp: u32,
    warps: u64,
    /// Warps per thread block (fewer for large blocks: shared-memory staging).
    block_warps: u32,
}

/// Smallest per-warp range (amortizes the scan and the boundary atomics).
const MIN_PER_WARP: usize = 256;

impl DeviceSpmv {
    /// The plan for `a`, with the SpMV of the registered set that serves `a`'s blocks.
    pub fn new(dev: &Device, kernels: &KernelRegistry, a: &DeviceBlockCsr) -> Result<Self, CudaError> {
        let kernel = crate::kernels::block(dev, kernels, a.br, a.bc)?[&gpu::spmv_name(a.br, a.bc)].clone();
        // About two resident waves of warps on the whole device.
        let target_warps = dev.sm_count() as usize * 64 * 2;
        // A range at least as long as the longest row: no row has more than two
        // partial sums, and `0 + a + b == 0 + b + a`, so the result is deterministic.
        let min = MIN_PER_WARP.max(a.max_row_blocks);
        let per_warp = a.nnzb.div_ceil(target_warps).max(min).div_ceil(32) * 32;
        let warps = a.nnzb.div_ceil(per_warp) as u64;
        Ok(Self {
            kernel,
            per_warp: per_warp as u32,
            warps,
            block_warps: gpu::spmv_warps(a.br, a.bc) as u32,
        })
    }

    /// Blocks each warp owns.
    pub fn per_warp(&self) -> usize {
        self.per_warp as usize
    }

    /// `y = A x` (`y` is zeroed first: rows crossing a warp range are added atomically).
    pub fn apply(
        &self,
        dev: &Device,
        a: &DeviceBlockCsr,
        x: &CudaSlice<f64>,
        y: &mut CudaSlice<f64>,
    ) -> Result<(), CudaError> {
        dev.memset_zero(y)?;
        self.launch_zeroed(dev, a, x, y)
    }

    /// `y = A x` into a `y` the caller has zeroed (rows crossing a warp range
    /// are added atomically). Takes `y` by shared reference, as every launch does.
    pub fn launch_zeroed(
        &self,
        dev: &Device,
        a: &DeviceBlockCsr,
        x: &CudaSlice<f64>,
        y: &CudaSlice<f64>,
    ) -> Result<(), CudaError> {
        debug_assert!(x.len() >= a.scalar_cols() && y.len() >= a.scalar_rows());
        let cfg = LaunchConfig {
            grid_dim: (self.warps.div_ceil(self.block_warps as u64) as u32, 1, 1),
            block_dim: (32 * self.block_warps, 1, 1),
            shared_mem_bytes: 0,
        };
        dev.launch(
            &self.kernel,
            cfg,
            &[
                Arg::F64(&a.values),
                Arg::U32s(&a.col_idx),
                Arg::U32s(&a.block_row),
                Arg::U32s(&a.row_ptr),
                Arg::F64(x),
                Arg::F64Mut(y),
                Arg::U32(a.nnzb as u32),
                Arg::U32(self.per_warp),
            ],
        )
    }

    /// Bytes one apply moves at least: values, block columns and block rows
    /// once, `x` once, `y` written once.
    pub fn stream_bytes(a: &DeviceBlockCsr) -> f64 {
        (a.nnzb * (a.br * a.bc * 8 + 8) + a.scalar_cols() * 8 + a.scalar_rows() * 8) as f64
    }
}
