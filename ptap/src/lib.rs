//! ptap: block smoothed-aggregation AMG whose setup recurs cheaply.
//!
//! This crate is the front door. Its two jobs:
//!
//! * [`Solver`]: an AMG-preconditioned CG solver for a user's symmetric
//!   positive definite block operator. Build it once from the matrix and a
//!   near-null space ([`NearNull`]: given modes, rigid-body modes from nodal
//!   coordinates, or translations), then, every time step or Newton step,
//!   [`Solver::refresh`] the operator's values (same pattern: no inspection,
//!   no allocation) and [`Solver::solve`]. On the CPU or, fully resident, on
//!   an NVIDIA GPU ([`DeviceChoice`]).
//! * [`galerkin`]: the Galerkin product `P^T A P` of two block matrices by any
//!   product variant.
//!
//! Matrices come from files ([`io`]: Matrix Market, PETSc binary) or from
//! memory ([`BlockCsr::from_scalar_csr`], [`BlockCsr::from_scalar_coo`],
//! [`BlockCsr::new`]). Every error is a typed [`Error`] whose message is one
//! sentence saying what was wrong and what to do; nothing here panics on bad
//! input.
//!
//! ```
//! use ptap::{BlockCsr, NearNull, Solver};
//!
//! // A 1D Laplacian (scalar CSR, 200 rows), as another code would hand it over.
//! let n = 200;
//! let (mut row_ptr, mut cols, mut vals) = (vec![0], vec![], vec![]);
//! for i in 0..n {
//!     for (j, v) in [(i as i64 - 1, -1.0), (i as i64, 2.0), (i as i64 + 1, -1.0)] {
//!         if (0..n as i64).contains(&j) {
//!             cols.push(j as u32);
//!             vals.push(v);
//!         }
//!     }
//!     row_ptr.push(cols.len());
//! }
//! let a = BlockCsr::from_scalar_csr(n, n, &row_ptr, &cols, &vals, None)?;
//! let mut solver = Solver::builder(a).near_null(NearNull::Translations).build()?;
//! let b = vec![1.0; n];
//! let mut x = vec![0.0; n];
//! let report = solver.solve(&b, &mut x)?;
//! assert!(report.converged && report.relative_residual <= 1e-8);
//!
//! // The next step: same pattern, new values; no inspection, no allocation.
//! let doubled: Vec<f64> = vals.iter().map(|v| 2.0 * v).collect();
//! let a2 = BlockCsr::from_scalar_csr(n, n, &row_ptr, &cols, &doubled, Some((1, 1)))?;
//! solver.refresh(a2.values())?;
//! let mut x2 = vec![0.0; n];
//! solver.solve(&b, &mut x2)?;
//! assert!((x2[n / 2] - x[n / 2] / 2.0).abs() < 1e-6 * x[n / 2].abs());
//! # Ok::<(), ptap::Error>(())
//! ```
//!
//! From files, with rigid-body modes from nodal coordinates:
//!
//! ```no_run
//! use ptap::{io, NearNull, Solver};
//! let a = io::read_matrix("A.petsc", io::BlockSpec::Infer)?;
//! let b = io::read_vector("b.petsc")?;
//! let (nodes, dim, coords) = io::read_coordinates("coords.mtx")?;
//! let mut solver = Solver::builder(a).near_null(NearNull::Coordinates { coords, dim }).build()?;
//! let mut x = vec![0.0; b.len()];
//! let report = solver.solve(&b, &mut x)?;
//! println!("{} iterations for {nodes} nodes", report.iterations);
//! # Ok::<(), ptap::Error>(())
//! ```

mod error;
mod galerkin;
mod solver;
mod target;

pub use error::Error;
pub use galerkin::galerkin;
pub use solver::{HierarchyInfo, NearNull, SolveInfo, Solver, SolverBuilder, SolverOptions};
pub use target::{product_options, DeviceChoice, Target};

pub use ptap_amg::nullspace::{near_null_from_coordinates, rigid_body_modes, translations};
pub use ptap_amg::AmgOptions;
pub use ptap_io as io;
pub use ptap_runtime::{CgOptions, HierarchyOptions, KernelRegistry, LevelSummary};
pub use ptap_schedules::Variant;
pub use ptap_sparse::{BlockCsr, BlockPattern, ScalarCsr};
