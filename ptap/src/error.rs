//! The front door's errors: one sentence each, what was wrong and what to do.
use thiserror::Error;

#[derive(Debug, Error)]
pub enum Error {
    /// A matrix, vector or near-null space handed over does not fit the rest.
    #[error("{what}")]
    Input { what: String },
    /// New values for a matrix whose block pattern differs from the one the solver was built for.
    #[error("the new operator's block pattern differs from the one the solver was built for ({detail}); build a new solver for it (refresh reuses the inspected pattern)")]
    PatternChanged { detail: String },
    /// A GPU run of a block shape no registered kernel set covers.
    #[error("the GPU has no kernels for {block}x{block} blocks with {modes} near-null modes; add `kernels!(pub mod blocks_{block}x{modes} {{ {block}x{block} / {block}x{modes} / {modes}x{modes} }});` to kernels-generated/src/lib.rs and rebuild (from Rust: register such a set on the solver's HierarchyOptions::kernels), or solve on the CPU (--device cpu)")]
    DeviceKernels { block: usize, modes: usize },
    #[error(transparent)]
    Runtime(#[from] ptap_runtime::RuntimeError),
    #[error(transparent)]
    Cuda(#[from] ptap_cuda::CudaError),
    #[error(transparent)]
    Amg(#[from] ptap_amg::AmgError),
    #[error(transparent)]
    Io(#[from] ptap_io::IoError),
    #[error(transparent)]
    Sparse(#[from] ptap_sparse::SparseError),
    #[error(transparent)]
    Schedule(#[from] ptap_schedules::ScheduleError),
}

impl Error {
    pub(crate) fn input(what: impl Into<String>) -> Self {
        Error::Input { what: what.into() }
    }
}
