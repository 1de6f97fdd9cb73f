//! NCCL for the device-resident executors (feature `nccl`): one communicator
//! over the MPI ranks, one rank per GPU.
//!
//! The communicator is made once: rank 0 asks NCCL for a unique id, MPI
//! broadcasts it, and every rank joins with `ncclCommInitRank` on the GPU it
//! picked by its node-local rank ([`node_local_rank`]). The executors then
//! post `ncclSend`/`ncclRecv` (inside `ncclGroupStart`/`ncclGroupEnd`) and
//! `ncclAllGather` on streams of their choosing ([`NcclComm::send`] and the
//! others take the stream), on device buffers only: nothing is staged on the
//! host.
//!
//! NCCL is loaded at run time (cudarc's `dynamic-loading`), so a build
//! without it links; [`nccl_present`] answers one sentence where it is
//! missing, before anything calls into it. cudarc looks the library up as
//! `libnccl.so` (and CUDA-versioned names), not as NCCL's own soname
//! `libnccl.so.2`: where only the latter is installed, a `libnccl.so` link to
//! it on `LD_LIBRARY_PATH` lets it load.
//!
//! NVLink multicast (NVLS) must stay off on shared hosts: every rank's
//! environment carries `NCCL_NVLS_ENABLE=0`, which [`NcclComm::init`] sets
//! when it is absent (before NCCL reads it) and refuses to override.
use crate::comm::Comm;
use crate::mpi_comm::MpiComm;
use cudarc::driver::{sys::CUdeviceptr, CudaStream};
use cudarc::nccl::{result, sys};
use mpi::traits::*;
use std::ffi::{c_char, CStr};

/// Errors of the device executors, one sentence each.
#[derive(Debug, thiserror::Error)]
pub enum DeviceError {
    #[error("NCCL (libnccl.so) could not be loaded; install NCCL, or put a `libnccl.so` link to its `libnccl.so.2` on LD_LIBRARY_PATH")]
    NoNccl,
    #[error("NCCL's {call} failed: {why}")]
    Nccl { call: &'static str, why: String },
    #[error("NCCL_NVLS_ENABLE={0} would turn on NVLink multicast, which must stay off on shared GPU hosts; set NCCL_NVLS_ENABLE=0")]
    Multicast(String),
    #[error("rank {rank} could not start its device part ({why}); every rank stops")]
    OtherRank { rank: usize, why: String },
    #[error(transparent)]
    Cuda(#[from] ptap_cuda::CudaError),
    #[error("CUDA driver call failed: {0}")]
    Driver(#[from] cudarc::driver::DriverError),
    #[error(transparent)]
    Dist(#[from] crate::DistError),
}

impl From<ptap_runtime::RuntimeError> for DeviceError {
    fn from(e: ptap_runtime::RuntimeError) -> Self {
        DeviceError::Dist(e.into())
    }
}

/// Whether NCCL can be loaded here (never panics).
pub fn nccl_present() -> Result<(), DeviceError> {
    // SAFETY: only tries to dlopen the library; nothing is called in it.
    if unsafe { sys::is_culib_present() } {
        Ok(())
    } else {
        Err(DeviceError::NoNccl)
    }
}

/// This process's rank among the ranks on its node, from the launcher's
/// environment (Open MPI, MPICH/Hydra, Slurm), else `world_rank`: the GPU a
/// rank takes is this modulo the node's GPU count.
pub fn node_local_rank(world_rank: usize) -> usize {
    ["OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID"]
        .iter()
        .find_map(|v| std::env::var(v).ok()?.parse().ok())
        .unwrap_or(world_rank)
}

fn nccl_err(call: &'static str) -> impl Fn(result::NcclError) -> DeviceError {
    move |e| {
        // SAFETY: ncclGetErrorString returns a static, NUL-terminated string.
        let why = unsafe { CStr::from_ptr(sys::ncclGetErrorString(e.0)) }
            .to_string_lossy()
            .into_owned();
        DeviceError::Nccl { call, why }
    }
}

/// Whether every rank got `Ok`; the first failing rank's sentence otherwise
/// (collective: every rank calls it with its own result and gets the same
/// verdict, so no rank waits alone in a later collective).
pub fn agree<T>(mpi: &MpiComm, mine: Result<T, DeviceError>) -> Result<T, DeviceError> {
    let mut failed = vec![0.0; mpi.size()];
    failed[mpi.rank()] = f64::from(u8::from(mine.is_err()));
    mpi.all_reduce_sum(&mut failed);
    match (mine, failed.iter().position(|&f| f != 0.0)) {
        (Err(e), _) => Err(e),
        (Ok(v), None) => Ok(v),
        (Ok(_), Some(rank)) => Err(DeviceError::OtherRank {
            rank,
            why: "see its own message".into(),
        }),
    }
}

/// An NCCL communicator over the MPI world's ranks.
pub struct NcclComm {
    raw: sys::ncclComm_t,
    rank: usize,
    size: usize,
}

impl NcclComm {
    /// Joins every rank of `mpi` on the GPU whose context is current on this
    /// thread (bind the device's context first). Collective over `mpi`.
    pub fn init(mpi: &MpiComm, ctx: &cudarc::driver::CudaContext) -> Result<Self, DeviceError> {
        let checked = (|| {
            match std::env::var("NCCL_NVLS_ENABLE") {
                Ok(v) if v.trim() != "0" => return Err(DeviceError::Multicast(v)),
                Ok(_) => {}
                // NCCL reads its environment at its first call, after this.
                Err(_) => std::env::set_var("NCCL_NVLS_ENABLE", "0"),
            }
            nccl_present()?;
            ctx.bind_to_thread()?;
            Ok(())
        })();
        agree(mpi, checked)?;
        // Rank 0's id, or a failure flag, in byte 0..128; byte 128 = ok.
        let mut id = [0u8; 129];
        let made = if mpi.rank() == 0 {
            result::get_uniqueid().map_err(nccl_err("ncclGetUniqueId")).map(|u| {
                for (b, c) in id.iter_mut().zip(u.internal) {
                    *b = c as u8;
                }
                id[128] = 1;
            })
        } else {
            Ok(())
        };
        mpi.communicator().process_at_rank(0).broadcast_into(&mut id[..]);
        if id[128] != 1 {
            return Err(made.err().unwrap_or(DeviceError::OtherRank {
                rank: 0,
                why: "ncclGetUniqueId failed".into(),
            }));
        }
        let uid = sys::ncclUniqueId {
            internal: std::array::from_fn(|i| id[i] as c_char),
        };
        let (rank, size) = (mpi.rank(), mpi.size());
        let mut raw = std::mem::MaybeUninit::uninit();
        // SAFETY: `raw` is written by NCCL before it is read; the id is the
        // one every rank received.
        let joined = unsafe { result::comm_init_rank(raw.as_mut_ptr(), size as i32, uid, rank as i32) }
            .map_err(nccl_err("ncclCommInitRank"))
            // SAFETY: initialized by the successful call.
            .map(|_| unsafe { raw.assume_init() });
        let raw = agree(mpi, joined)?;
        Ok(Self { raw, rank, size })
    }

    /// A communicator of this process alone (one rank, no MPI): the device
    /// backend's collectives on one GPU, in process (tests). Binds `ctx`.
    pub fn solo(ctx: &cudarc::driver::CudaContext) -> Result<Self, DeviceError> {
        match std::env::var("NCCL_NVLS_ENABLE") {
            Ok(v) if v.trim() != "0" => return Err(DeviceError::Multicast(v)),
            Ok(_) => {}
            Err(_) => std::env::set_var("NCCL_NVLS_ENABLE", "0"),
        }
        nccl_present()?;
        ctx.bind_to_thread()?;
        let uid = result::get_uniqueid().map_err(nccl_err("ncclGetUniqueId"))?;
        let mut raw = std::mem::MaybeUninit::uninit();
        // SAFETY: `raw` is written by NCCL before it is read.
        unsafe { result::comm_init_rank(raw.as_mut_ptr(), 1, uid, 0) }.map_err(nccl_err("ncclCommInitRank"))?;
        Ok(Self {
            // SAFETY: initialized by the successful call.
            raw: unsafe { raw.assume_init() },
            rank: 0,
            size: 1,
        })
    }

    pub fn rank(&self) -> usize {
        self.rank
    }
    pub fn size(&self) -> usize {
        self.size
    }

    /// `ncclGroupStart`: the sends and receives until [`Self::group_end`]
    /// progress together.
    pub fn group_start(&self) -> Result<(), DeviceError> {
        result::group_start().map_err(nccl_err("ncclGroupStart"))?;
        Ok(())
    }
    pub fn group_end(&self) -> Result<(), DeviceError> {
        result::group_end().map_err(nccl_err("ncclGroupEnd"))?;
        Ok(())
    }

    /// Sends `count` doubles at device address `ptr` to `peer`, on `stream`.
    ///
    /// # Safety
    /// `ptr..ptr + 8 count` is device memory of this GPU that stays valid and
    /// unwritten until the operation completes on `stream`.
    pub unsafe fn send(
        &self,
        ptr: CUdeviceptr,
        count: usize,
        peer: usize,
        stream: &CudaStream,
    ) -> Result<(), DeviceError> {
        result::send(
            ptr as *const _,
            count,
            sys::ncclDataType_t::ncclFloat64,
            peer as i32,
            self.raw,
            stream.cu_stream() as _,
        )
        .map_err(nccl_err("ncclSend"))?;
        Ok(())
    }

    /// Receives `count` doubles from `peer` into device address `ptr`, on `stream`.
    ///
    /// # Safety
    /// As [`Self::send`], and nothing else reads or writes the range until
    /// the operation completes on `stream`.
    pub unsafe fn recv(
        &self,
        ptr: CUdeviceptr,
        count: usize,
        peer: usize,
        stream: &CudaStream,
    ) -> Result<(), DeviceError> {
        result::recv(
            ptr as *mut _,
            count,
            sys::ncclDataType_t::ncclFloat64,
            peer as i32,
            self.raw,
            stream.cu_stream() as _,
        )
        .map_err(nccl_err("ncclRecv"))?;
        Ok(())
    }

    /// `recv[r * count..(r + 1) * count]` = rank `r`'s `send[..count]`, on `stream`.
    ///
    /// # Safety
    /// `send` holds `count` doubles and `recv` `size() * count`, device
    /// memory of this GPU, valid until the operation completes on `stream`.
    pub unsafe fn all_gather(
        &self,
        send: CUdeviceptr,
        recv: CUdeviceptr,
        count: usize,
        stream: &CudaStream,
    ) -> Result<(), DeviceError> {
        result::all_gather(
            send as *const _,
            recv as *mut _,
            count,
            sys::ncclDataType_t::ncclFloat64,
            self.raw,
            stream.cu_stream() as _,
        )
        .map_err(nccl_err("ncclAllGather"))?;
        Ok(())
    }
}

impl Drop for NcclComm {
    fn drop(&mut self) {
        // Local (no other rank takes part, so a rank leaving on an error
        // cannot hang here); an error has no one to go to.
        // SAFETY: `raw` came from ncclCommInitRank and is dropped once.
        unsafe {
            let _ = result::comm_destroy(self.raw);
        }
    }
}
