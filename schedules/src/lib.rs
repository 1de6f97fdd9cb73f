//! The inspector: everything about a Galerkin product `A_c = P^T A P` that can
//! be decided from the sparsity patterns of `A` and `P` alone.
//!
//! An inspector runs once per hierarchy (the paper's "mesh setup"); the
//! executors in `ptap-runtime` replay its output on every numeric refresh
//! ("matrix setup") and never discover structure themselves. [`inspect()`] is
//! the one entry point: the two-pass schedule (the paper's V0, section
//! `sec:variants`, the reference every variant is checked against), the
//! variant (given, or picked by the traffic model of [`model`] on a machine
//! measured by [`machine`]) and that variant's schedule.

pub mod array;
pub mod file;
pub mod inspect;
pub mod key;
pub mod laps;
pub mod machine;
pub mod model;
pub mod record;
pub mod two_pass;
pub mod variant;
pub mod variants;

pub use array::SharedArray;
pub use file::ScheduleFileError;
pub use inspect::{inspect, inspect_with_base, BlockShape, Inspected, ModelCounts, ProductPolicy};
pub use machine::{measure_copy_bandwidth, v0_floor, MachineFileError};
pub use model::{fused_crossover_np, predict, select, MachineParams, ModelInput, Prediction};
pub use two_pass::{ProductStats, TwoPassSchedule};
pub use variant::Variant;
pub use variants::VariantSchedule;

use thiserror::Error;

#[derive(Debug, Error)]
pub enum ScheduleError {
    #[error("A is {a_rows}x{a_cols} blocks but P has {p_rows} block rows: P^T A P needs a square A with as many block rows as P")]
    Shapes {
        a_rows: usize,
        a_cols: usize,
        p_rows: usize,
    },
    #[error(transparent)]
    Sparse(#[from] ptap_sparse::SparseError),
    #[error(transparent)]
    Model(#[from] model::ModelError),
    #[error(transparent)]
    Symmetry(#[from] variants::SymmetryError),
}
