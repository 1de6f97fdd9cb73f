//! The kernel generator behind `ptap`'s proc-macros.
//!
//! A plain library (no proc-macro API) so it can be unit-tested and called from
//! a build step, an `xtask` or a test that checks the shipped sources are not
//! stale. From a declared [`ShapeSet`] (fine `bf x bf`, prolongator `bf x bc`,
//! coarse `bc x bc`) it emits:
//!
//! * [`rust`]: unrolled CPU kernels (the items of a declared set's module);
//! * [`cuda`]: CUDA C for the basic block operations;
//! * [`gpu`]: CUDA C for the GPU executor's kernel families;
//! * [`gpu_solve`]: CUDA C for the device solve (Jacobi, coarse Cholesky);
//! * [`launcher`]: a typed Rust launcher per CUDA entry point ([`KernelEntry`]).

pub mod cuda;
pub mod entry;
pub mod gpu;
pub mod gpu_solve;
pub mod launcher;
pub mod rust;
pub mod shape;

pub use entry::{param, CudaModule, KernelEntry, Param, ParamTy};
pub use shape::{ShapeError, ShapeSet, MAX_BLOCK_DIM};
