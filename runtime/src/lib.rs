//! Executors and solvers.
//!
//! # In a time loop
//!
//! A time-stepping or Newton code builds the hierarchy once and then, every
//! step, hands over new operator values (same block pattern) and solves:
//!
//! ```no_run
//! use ptap_runtime::{CgOptions, Hierarchy, HierarchyOptions};
//! # fn assemble_into(_values: &mut [f64]) {}
//! # fn run(a: ptap_sparse::BlockCsr, near_null: Vec<f64>, modes: usize, b: Vec<f64>)
//! #     -> Result<(), ptap_runtime::RuntimeError> {
//! let mut h = Hierarchy::build(a, &near_null, modes, &HierarchyOptions::default(), &mut |_| {})?;
//! // or, skipping the mesh setup: Hierarchy::from_bundle(..) from a schedule file
//! let mut ws = h.workspace(500)?;
//! let mut values = h.operator().values().to_vec();
//! let mut x = vec![0.0; b.len()];
//! for _step in 0..10 {
//!     assemble_into(&mut values);            // the caller's assembly
//!     h.refresh(&values)?;                   // numeric P^T A P, smoothers, coarse factor
//!     h.solve(&b, &mut x, &CgOptions::default(), &mut ws)?;
//! }
//! # Ok(()) }
//! ```
//!
//! Most users want the front door instead, crate `ptap`: `ptap::Solver` takes
//! the operator from files or scalar CSR/COO, builds the near-null space from
//! nodal coordinates and picks the backend.
//!
//! `refresh` and `solve` allocate, search and aggregate nothing; aggregates
//! and `P` are frozen at build time. [`bundle::hierarchy_bundle`] writes the
//! hierarchy's schedules and prolongators to a file that
//! [`Hierarchy::from_bundle`] loads in a later process (refusing it for another
//! pattern or other options). `cli/examples/time_loop.rs` is a complete,
//! runnable loop to copy.
//!
//! # Modules
//!
//! * [`backend`]: the [`Backend`] trait: vectors, block matrices, SpMV,
//!   residual, axpy/dot, point-block Jacobi, the numeric Galerkin product by
//!   schedule, the coarse factor/solve. [`cpu`] is the reference backend;
//!   the CUDA backend is the `ptap-cuda` crate.
//! * [`hierarchy`]: mesh setup once on the host ([`MeshSetup`], backend-
//!   neutral), then a [`Hierarchy`] on a backend whose matrix setup
//!   ([`Hierarchy::refresh`]) runs only there (AMGCL's `rebuild`).
//! * [`cycle`], [`solver`]: Chebyshev smoothing, its eigen-estimate, the
//!   V-cycle and CG, written once over the backend.
//! * [`executor`], [`variants`], [`registry`]: the CPU executors of every
//!   Galerkin-product variant and the generated kernels by block shape.
//! * [`bundle`]: whole-hierarchy schedule files.
//!
//! Parallelism is rayon's global pool; every kernel is deterministic for a
//! given input whatever the number of threads.

pub mod backend;
mod block_ops;
pub mod bundle;
pub mod cpu;
pub mod cycle;
pub mod executor;
pub mod hierarchy;
pub mod registry;
pub mod solver;
pub mod variants;

pub use backend::Backend;
pub use cpu::Cpu;
pub use executor::TwoPassExecutor;
pub use hierarchy::{
    Hierarchy, HierarchyOptions, LevelParts, LevelSummary, MatrixSetupTimings, MeshLevelTimings, MeshSetup,
    SetupBeside, SetupTimings, SmootherPrecision, SmootherTimings, UploadTimings,
};
pub use registry::executor_for;
pub use registry::KernelRegistry;
pub use solver::CgWorkspace;
pub use solver::{CgOptions, CgReport};
pub use variants::GalerkinProduct;

use thiserror::Error;

/// Errors of the executors and solvers, each one sentence a user can act on.
#[derive(Debug, Error)]
pub enum RuntimeError {
    #[error(
        "the schedule was built for a different {what} pattern ({detail}); re-run the inspector for these matrices"
    )]
    PatternMismatch { what: &'static str, detail: String },
    #[error("point-block Jacobi: the diagonal block of block row {row} on level {level} is singular ({why}); the operator is not SPD or the aggregation is rank deficient")]
    SingularDiagonalBlock { level: usize, row: usize, why: String },
    #[error("the coarsest operator (level {level}, {n} scalar rows) cannot be factored: {why}")]
    CoarseFactorization { level: usize, n: usize, why: String },
    #[error("the coarsest level has {n} scalar rows, too many for a dense direct solve (limit {limit}); coarsening stalled, raise the strength threshold or the level cap")]
    CoarseTooLarge { n: usize, limit: usize },
    #[error("the {variant} executor has no kernels for {bf}x{bf} / {bf}x{bc} blocks; declare them with `ptap_kernels::kernels!({bf}x{bf} / {bf}x{bc} / {bc}x{bc});` and register the set, `KernelRegistry::shipped().clone().with::<kernels_{bf}x{bf}_{bf}x{bc}_{bc}x{bc}::Set>()`, or use the two-pass variant")]
    UnsupportedShape {
        variant: &'static str,
        bf: usize,
        bc: usize,
    },
    #[error("the {what} has length {got}, expected {expected} (the fine operator's scalar rows)")]
    VectorLength {
        what: &'static str,
        got: usize,
        expected: usize,
    },
    #[error("{what}")]
    InvalidOption { what: String },
    #[error("the new operator values have length {got}, expected {expected}")]
    ValuesLength { got: usize, expected: usize },
    #[error("the operator or right-hand side contains NaN or infinity ({what})")]
    NotFinite { what: String },
    #[error("CG broke down at iteration {iteration}: {why}; the operator must be symmetric positive definite")]
    NotSpd { iteration: usize, why: String },
    #[error("the schedule bundle {path} was written under other AMG options or near-null modes; delete it or re-run `ptap inspect`")]
    StaleBundle { path: String },
    #[error("the schedule bundle {path} holds {stored}x{stored} blocks on level {level} but the operator has {given}x{given}; re-run `ptap inspect` for this operator")]
    BundleShape {
        path: String,
        level: usize,
        stored: usize,
        given: usize,
    },
    #[error(transparent)]
    ScheduleFile(#[from] ptap_schedules::ScheduleFileError),
    #[error(transparent)]
    Amg(#[from] ptap_amg::AmgError),
    #[error(transparent)]
    Schedule(#[from] ptap_schedules::ScheduleError),
    #[error(transparent)]
    Sparse(#[from] ptap_sparse::SparseError),
}
