//! Distributed memory for ptap: a block matrix split by rows over ranks,
//! ghost columns and the halo plan that fills them, and the AMG over them
//! (issue #14, "Past one GPU"); what is here, what is not yet:
//!
//! **Distributed now.** The operator and the vectors. [`Partition`] gives
//! each rank a contiguous range of block rows (and the same block columns:
//! the vector is split like the rows). [`LocalMatrix`] is a rank's rows with
//! local column numbers, owned columns first, then ghost columns sorted by
//! global index (hence grouped by owner rank), entries kept in the global
//! order so every local product is bitwise equal to the global one's rows.
//! [`HaloPlan`] is the inspector's communication plan, built once: one
//! receive range of the ghost tail per owner (values land in place), one
//! packed send list per neighbour, the send buffer allocated with it; an
//! exchange allocates nothing. [`DistMatrix::spmv`] computes the interior
//! rows (no ghost column) while the halo is in flight and the boundary rows
//! after. [`cg::jacobi_pcg`] is point-block-Jacobi CG over the ranks, its
//! dots reduced by one all-reduce per synchronisation point.
//!
//! **Communication.** Executors call a [`Comm`]: the neighbour exchange, a
//! small all-reduce, broadcast, gather, and a setup-time all-to-all of index
//! lists. [`SingleRank`] implements it for one process (tests, builds
//! without MPI); `mpi_comm::MpiComm` (feature `mpi`, rsmpi over the system
//! MPI) with nonblocking point-to-point messages for the halo. Reductions
//! gather every rank's partial sums (`MPI_Allgather`) and add them in rank
//! order on every rank, rather than `MPI_Allreduce`, whose association order
//! the standard leaves to the implementation (and which need not give every
//! rank the same bits): runs are reproducible bit for bit at a given rank
//! count; results at different rank counts differ in the last bits.
//!
//! **The AMG over ranks.** [`setup::build_hierarchy`] builds the
//! smoothed-aggregation hierarchy over the ranks (strength graph, a parallel
//! MIS whose result does not depend on the rank count, the rank-deficiency
//! merge of small aggregates across rank boundaries, tentative and smoothed
//! and filtered `P`, consolidation of small levels onto fewer ranks, the
//! coarsest level whole on every rank), with each level's Galerkin product
//! an inspector/executor pair whose communication is in its plan
//! ([`product::DistGalerkin`]); then `ptap_runtime::Hierarchy::from_levels`
//! runs the matrix setup, and the runtime's V-cycle and CG, on
//! [`DistBackend`]. See those modules for what each step exchanges.
//!
//! **On the GPUs (feature `nccl`).** One rank per GPU (picked by the
//! node-local rank), an NCCL communicator whose id rank 0 makes and MPI
//! broadcasts (`nccl`). `device::DeviceDistMatrix` holds a rank's rows on its
//! GPU as interior and boundary device matrices; its SpMV packs the send
//! lists on the device and sends/receives them by NCCL straight into the
//! ghost tail while the interior rows run. `device::jacobi_pcg` is
//! [`cg::jacobi_pcg`] on device vectors, its dots all-gathered by NCCL and
//! summed in rank order on the device (every rank the same bits): a solve
//! moves only the reduced scalars between host and device. The program
//! `ptap-mpi-cuda` runs it under `mpirun`.
//!
//! **The AMG on the GPU ranks (feature `nccl`).** `device_amg` puts the
//! hierarchy of [`setup::build_levels`] (the CPU ranks' mesh setup) on
//! `device_amg::DeviceDistBackend`: every level's operator, `P`, `R`,
//! Jacobi inverses and work vectors on each rank's GPU, the halo, the
//! reverse halo of `R` and the distributed Galerkin product's exchanges by
//! NCCL from device buffers, the local products by `ptap-cuda`'s executors,
//! the coarsest level whole and factored on every GPU; the runtime's matrix
//! setup, V-cycle and CG run on it unchanged (`ptap-mpi-cuda --solver amg`).
//!
//! **The programs.** `driver` (feature `mpi`) is the loop `ptap solve` and
//! `ptap run` run under `mpirun` (ptap-cli's feature `mpi`): each rank loads
//! its rows (the beam from the elements touching its slab only,
//! `ptap_fem::BeamSlab`; a user's PETSc operator read in parallel, each rank
//! its rows), step 1 builds the hierarchy, later steps refresh it (or
//! inspect a new pattern), and rank 0 gets each step's phases as max and
//! mean over ranks. `ptap-mpi-cuda` (feature `nccl`) is the device program.
//!
//! [`cache`] keeps the mesh setup's per-rank decisions (each level's `P`,
//! coarse partition and keys) and its plans (the halo plans, the distributed
//! product's plan and its local schedule) in the schedule cache, loaded by a
//! later run at the same rank count and split of the rows, with no exchange
//! and no inspection ([`build_hierarchy_cached`]).
//!
//! **Not yet.** Rebalancing middle levels by measured time (uneven coarse
//! levels are rebalanced by rows, `setup`'s module docs), and the mesh setup on the GPUs (the GPU ranks' AMG takes
//! the CPU ranks' aggregates, `P` and plans, uploaded once).
//! `ptap-mpi-cuda` still assembles the whole beam on every rank.
//!
//! [`reference::jacobi_pcg`] is the single-process reference the
//! distributed solver is tested against.

pub mod backend;
pub mod cache;
pub mod cg;
pub mod comm;
#[cfg(feature = "nccl")]
pub mod device;
#[cfg(feature = "nccl")]
pub mod device_amg;
#[cfg(feature = "mpi")]
pub mod driver;
mod error;
pub mod local;
#[cfg(feature = "mpi")]
pub mod mpi_comm;
#[cfg(feature = "nccl")]
pub mod nccl;
pub mod partition;
pub mod product;
pub mod reference;
pub mod setup;

pub use backend::{DistBackend, DistMat};
pub use cg::{jacobi_pcg, BlockJacobi, CgOptions, CgReport, CgWorkspace};
pub use comm::{agree, Comm, Link, SingleRank};
pub use error::DistError;
pub use local::{DistMatrix, HaloPlan, LocalMatrix};
pub use partition::Partition;
pub use setup::{
    build_hierarchy, build_hierarchy_cached, build_levels, build_levels_cached, DistCacheReport, DistLevels,
    DistOptions, DistProblem, DistSetupReport,
};
