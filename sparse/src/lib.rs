//! Block-sparse matrices with rectangular blocks.
//!
//! This crate is the room for the data types every other ptap crate shares:
//! a block-CSR [`BlockPattern`] (row pointers and column indices, hashable and
//! shareable) kept apart from the values of a [`BlockCsr`], so an inspector can
//! analyse a pattern once while executors refresh values many times. It also
//! holds the small dense block kernels (GEMM-accumulate, transposed forms,
//! inverse, QR, Cholesky), the block SpMV and the generic block SpGEMM with its
//! symbolic and numeric phases separated (faer's `*_symbolic` / `*_numeric`
//! split).
//!
//! [`scalar`] is the door for matrices assembled elsewhere: scalar CSR or COO
//! arrays, validated, grouped into blocks of a given or inferred shape
//! ([`BlockCsr::from_scalar_csr`], [`BlockCsr::from_scalar_coo`]).
//!
//! Block shapes are run-time data in matrices and compile-time constants in
//! kernels. This crate defines the kernels' interface ([`kernels`]) and the
//! `*_with::<K>` entry points generic over it, and runs size-generic loops
//! otherwise; it depends on no generated code. Mapping a run-time shape to a
//! generated kernel type is `ptap_runtime::KernelRegistry`'s work.

pub mod cholesky;
pub mod csr;
pub mod dense;
pub mod error;
pub mod kernels;
pub mod lowered;
pub mod par;
pub mod pattern;
pub mod scalar;
pub mod spgemm;
pub mod spmv;

pub use csr::BlockCsr;
pub use error::SparseError;
pub use pattern::BlockPattern;
pub use scalar::{infer_block_shape, ScalarCsr};
