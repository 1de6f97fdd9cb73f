//! The kernel generator behind `ptap`'s proc-macros.
//!
//! A plain library (no proc-macro API) so it can be unit-tested and called from
//! a build step, an `xtask` or a test that checks the shipped sources are not
//! stale. From a declared [`ShapeSet`] (fine `bf x bf`, prolongator `bf x bc`,
//! coarse `bc x bc`) it emits:
//!
//! * [`rust`]: unrolled CPU kernels (the items of a declared set's module);
//! * [`gpu`]: the CUDA C the device backend launches: per set
//!   ([`gpu::set_module`]) the product stages of every device variant, the
//!   merge-path SpMV and the point-block Jacobi, and one module of the
//!   shape-free kernels ([`gpu::common_module`]: vectors, coarse Cholesky);
//! * [`gpu_solve`]: the device solve's part of those (Jacobi, coarse Cholesky);
//! * [`gpu_lane`]: the product stages that replay column split's schedule with
//!   another split of a slot over lanes (lane tiled, k-split);
//! * [`gpu_mma`]: the product stage that replays it with FP64 tensor-core MMA;
//! * [`launcher`]: a typed Rust launcher per CUDA entry point ([`KernelEntry`]).

pub mod entry;
pub mod gpu;
pub mod gpu_base;
pub mod gpu_cg;
pub mod gpu_lane;
pub mod gpu_mma;
pub mod gpu_solve;
pub mod gpu_spmv;
pub mod launcher;
pub mod rust;
pub mod shape;

pub use entry::{param, CudaModule, KernelEntry, Param, ParamTy, GRID_DEPENDENCY};
pub use shape::{ShapeError, ShapeSet, MAX_BLOCK_DIM};
