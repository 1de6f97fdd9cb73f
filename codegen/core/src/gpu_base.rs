//! What every GPU kernel family shares: a product stage's shape
//! ([`Stage`]), the shared-memory limit, the merge-path SpMV's shape rules
//! and names, and the dot-product block size. The families (`gpu`,
//! `gpu_spmv`, `gpu_lane`, `gpu_cg`, `gpu_solve`) take these from here, and
//! `gpu` assembles them into modules, so no family imports another's module.
use crate::shape::ShapeSet;

/// One stage of a product: `M x K` times `K x N`, `X` transposed when `xt`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Stage {
    pub m: usize,
    pub k: usize,
    pub n: usize,
    pub xt: bool,
}

impl Stage {
    /// `W = A P`: `bf x bf` times `bf x bc`.
    pub fn ap(s: ShapeSet) -> Self {
        Stage {
            m: s.bf,
            k: s.bf,
            n: s.bc,
            xt: false,
        }
    }
    /// `A_c = P^T W` reading `P`'s blocks transposed.
    pub fn ptw(s: ShapeSet) -> Self {
        Stage {
            m: s.bc,
            k: s.bf,
            n: s.bc,
            xt: true,
        }
    }
    /// `A_c = R W` with an explicit `R = P^T` (`bc x bf` blocks).
    pub fn rw(s: ShapeSet) -> Self {
        Stage {
            m: s.bc,
            k: s.bf,
            n: s.bc,
            xt: false,
        }
    }
    pub(crate) fn tag(&self) -> String {
        format!("{}x{}x{}{}", self.m, self.k, self.n, if self.xt { "t" } else { "" })
    }
    /// C expression of `x(i,k)` for block pointer `xb`.
    pub(crate) fn x_at(&self, xb: &str, i: &str, k: &str) -> String {
        if self.xt {
            format!("{xb}[({k})*{m}+({i})]", m = self.m)
        } else {
            format!("{xb}[({i})*{kk}+({k})]", kk = self.k)
        }
    }
}

/// Warps per block of the merge-path SpMV where their staging fits the static
/// shared memory; see [`spmv_warps`].
pub const SPMV_WARPS: usize = 4;
/// Shared memory a block may use without the sm_70+ opt-in: the static limit,
/// and the dynamic size a launch gets without raising the function's attribute.
pub const SMEM_LIMIT: usize = 48 * 1024;

/// Doubles one warp of the merge-path SpMV stages: 32 blocks, whole `double2`s.
pub(crate) fn spmv_stage_doubles(br: usize, bc: usize) -> usize {
    (32 * br * bc).div_ceil(2) * 2
}

/// Warps per block of the merge-path SpMV of `br x bc` blocks: [`SPMV_WARPS`],
/// fewer where their staging would pass [`SMEM_LIMIT`], and one (reading blocks
/// straight from global memory, see [`spmv_staged`]) where one warp's would.
pub fn spmv_warps(br: usize, bc: usize) -> usize {
    let per_warp = spmv_stage_doubles(br, bc) * 8;
    (SMEM_LIMIT / per_warp).clamp(1, SPMV_WARPS)
}

/// Whether the SpMV of `br x bc` blocks stages them through shared memory
/// (32 blocks per warp fit [`SMEM_LIMIT`]: blocks of up to 192 scalars).
pub fn spmv_staged(br: usize, bc: usize) -> bool {
    spmv_stage_doubles(br, bc) * 8 <= SMEM_LIMIT
}

pub fn spmv_name(br: usize, bc: usize) -> String {
    format!("ptap_spmv_merge_{br}x{bc}")
}

/// Doubles of one staged `x` block: even, so each starts on 16 bytes.
pub(crate) fn x_stride(mk: usize) -> usize {
    mk + (mk & 1)
}

/// Threads per block of the dot-product partial sums (and how many partials
/// one reduction block folds).
pub const DOT_THREADS: usize = 256;
