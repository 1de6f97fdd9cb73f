//! Host-to-device copies of large arrays: through pinned staging, or read in
//! place by the DMA.
//!
//! A copy from pageable host memory makes the driver stage it through its
//! own small pinned buffers, one at a time (about 5 GB/s on the H200 host).
//! Two ways around that:
//!
//! - **Staged** (the default): two page-locked buffers of [`STAGE_BYTES`]
//!   alternate; the host fills one (a parallel copy, many cores) while the
//!   device reads the other by DMA. Each buffer has an event recorded after
//!   the DMA that reads it, and the host waits on that event before it writes
//!   the buffer again ([`fill`]). On the H200 host this moves 3.85 GB in
//!   0.10-0.12 s (non-temporal stores, which skip reading each destination
//!   line first, were tried and measured no faster: 35 GB/s either way).
//! - **In place** (`PTAP_UPLOAD=inplace`, copies of [`DIRECT_MIN_BYTES`] or
//!   more): the host range is page-locked where it lies (`cuMemHostRegister`,
//!   read-only, so a read-only mapping of a schedule file qualifies) in pieces
//!   of [`REGISTER_PIECE`] bytes, a batch of pieces at a time by many threads;
//!   a batch's DMAs are queued before the next batch is locked, so locking
//!   overlaps the bus. Nothing is copied on the host; the pieces are unlocked
//!   once the stream has drained. Measured slower there: locking and unlocking
//!   the same 3.75 GB took 0.20-0.35 s (the driver does not lock pieces in
//!   parallel), so it is not the default.
//!
//! A registration that fails leaves the rest of that copy to the staging
//! buffers, and (unless the range was merely registered already) every later
//! copy too; [`UploadPaths::fallback`] says why. Small copies take the plain
//! path.
use crate::CudaError;
use cudarc::driver::{result, sys, CudaContext, CudaEvent, CudaSlice, CudaStream, DevicePtrMut, DeviceRepr};
use rayon::prelude::*;
use std::ffi::c_void;
use std::sync::Arc;
use std::time::Instant;

/// Bytes of each of the two staging buffers.
pub const STAGE_BYTES: usize = 32 << 20;
/// Copies at least this long go through the staging buffers (or in place).
pub const STAGE_MIN_BYTES: usize = 4 << 20;
/// Copies at least this long are read in place when registration works.
pub const DIRECT_MIN_BYTES: usize = 16 << 20;
/// Bytes page-locked by one registration of an in-place copy.
pub const REGISTER_PIECE: usize = 16 << 20;
/// Pieces locked at once (by as many threads) before their DMAs are queued.
pub const REGISTER_BATCH: usize = 16;
/// Bytes one task of the parallel host copy moves (a multiple of 64, so every
/// task's destination starts on a cache line of the page-aligned buffer).
const COPY_PIECE: usize = 1 << 20;

/// How the large uploads went (what `--json` reports beside the counters).
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct UploadPaths {
    /// Bytes the DMA read in place from registered host memory.
    pub direct_bytes: u64,
    /// Bytes copied through the pinned staging buffers.
    pub staged_bytes: u64,
    /// Wall seconds of the in-place copies (locking, DMA, unlocking).
    pub direct_s: f64,
    /// Wall seconds of the staged copies (host copy and DMA, overlapped).
    pub staged_s: f64,
    /// Of `direct_s`, page-locking (`cuMemHostRegister`, many threads) and unlocking.
    pub register_s: f64,
    pub unregister_s: f64,
    /// Why a registration failed, the first time one did (the copy then went
    /// through the staging buffers).
    pub fallback: Option<String>,
}

/// One page-locked buffer and the event after the last DMA that read it.
struct Buffer {
    ptr: *mut u8,
    done: CudaEvent,
}

/// The staging buffers of a device (allocated on the first staged copy) and
/// the choice of path.
pub(crate) struct Staging {
    bufs: Vec<Buffer>,
    /// Try the in-place path first (`PTAP_UPLOAD=inplace`).
    direct: bool,
    pub(crate) paths: UploadPaths,
}

// SAFETY: the buffers are plain page-locked host memory owned by this value;
// every use goes through `&mut Staging` (the device keeps it in a mutex).
unsafe impl Send for Staging {}

/// The alignment registered ranges are widened to (x86-64's page; where pages
/// are larger, the driver widens further or refuses, and the copy is staged).
const PAGE: usize = 4096;

impl Staging {
    pub(crate) fn new() -> Self {
        let direct = std::env::var("PTAP_UPLOAD").is_ok_and(|v| v == "inplace");
        Self {
            bufs: Vec::new(),
            direct,
            paths: UploadPaths::default(),
        }
    }

    fn ensure(&mut self, ctx: &Arc<CudaContext>) -> Result<(), CudaError> {
        while self.bufs.len() < 2 {
            ctx.bind_to_thread()?;
            // SAFETY: a fresh allocation of STAGE_BYTES page-locked bytes; it is
            // freed in `Drop`, after the events say no DMA reads it.
            let ptr = unsafe { result::malloc_host(STAGE_BYTES, 0) }? as *mut u8;
            let done = ctx.new_event(Some(sys::CUevent_flags::CU_EVENT_DISABLE_TIMING))?;
            self.bufs.push(Buffer { ptr, done });
        }
        Ok(())
    }

    /// Copies `host` into `dev` (whose length is at least `host`'s) on
    /// `stream`, in place or staged. Returns when every byte of `host` is in
    /// a staging buffer or on the device: the caller may drop `host`.
    pub(crate) fn upload<T: DeviceRepr>(
        &mut self,
        ctx: &Arc<CudaContext>,
        stream: &Arc<CudaStream>,
        host: &[T],
        dev: &mut CudaSlice<T>,
    ) -> Result<(), CudaError> {
        assert!(host.len() <= dev.len(), "staged upload into a shorter device buffer");
        // SAFETY: `T: DeviceRepr` is plain data (integers and floats here), so
        // its bytes are initialized; `u8` has alignment 1; same extent.
        let bytes = unsafe { std::slice::from_raw_parts(host.as_ptr().cast::<u8>(), std::mem::size_of_val(host)) };
        let (dst, _record) = dev.device_ptr_mut(stream);
        let mut done = 0;
        if self.direct && bytes.len() >= DIRECT_MIN_BYTES {
            ctx.bind_to_thread()?;
            done = self.in_place(ctx, stream, bytes, dst)?;
        }
        if done < bytes.len() {
            self.staged(ctx, stream, &bytes[done..], dst + done as u64)?;
        }
        Ok(())
    }

    /// The in-place path: returns how many leading bytes of `bytes` reached
    /// `dst` (all of them unless a registration failed). Pieces are locked
    /// [`REGISTER_BATCH`] at a time by many threads; a batch's DMAs are queued
    /// before the next batch is locked, so locking overlaps the bus. Returns
    /// after the stream has drained and every piece is unlocked again.
    fn in_place(
        &mut self,
        ctx: &Arc<CudaContext>,
        stream: &Arc<CudaStream>,
        bytes: &[u8],
        dst: sys::CUdeviceptr,
    ) -> Result<usize, CudaError> {
        let t_all = Instant::now();
        let (start, end) = (bytes.as_ptr() as usize, bytes.as_ptr() as usize + bytes.len());
        // Whole pages: every page holding a byte of `bytes` is mapped.
        let (lo, hi) = (start & !(PAGE - 1), (end + PAGE - 1) & !(PAGE - 1));
        let pieces: Vec<(usize, usize)> = (lo..hi)
            .step_by(REGISTER_PIECE)
            .map(|a| (a, (a + REGISTER_PIECE).min(hi)))
            .collect();
        let mut locked: Vec<usize> = Vec::new();
        let mut copied = 0;
        let mut failure: Option<sys::CUresult> = None;
        let mut error: Option<CudaError> = None;
        'batches: for batch in pieces.chunks(REGISTER_BATCH) {
            let t = Instant::now();
            let results: Vec<sys::CUresult> = batch
                .par_iter()
                .with_max_len(1)
                .map(|&(a, b)| {
                    // Registration is per context: make the device's current here.
                    if let Err(e) = ctx.bind_to_thread() {
                        return e.0;
                    }
                    // SAFETY: `a..b` is whole pages, each holding bytes of
                    // `bytes` (so mapped and readable); read-only, as nothing
                    // is written to it.
                    unsafe { sys::cuMemHostRegister_v2(a as *mut c_void, b - a, sys::CU_MEMHOSTREGISTER_READ_ONLY) }
                })
                .collect();
            self.paths.register_s += t.elapsed().as_secs_f64();
            // Every piece that locked is unlocked below, even past a failure.
            locked.extend(
                batch
                    .iter()
                    .zip(&results)
                    .filter(|(_, r)| **r == sys::CUresult::CUDA_SUCCESS)
                    .map(|(&(a, _), _)| a),
            );
            for (&(a, b), &r) in batch.iter().zip(&results) {
                if r != sys::CUresult::CUDA_SUCCESS {
                    failure = Some(r);
                    break 'batches;
                }
                let (s, e) = (a.max(start) - start, b.min(end) - start);
                // SAFETY: `dst + s .. dst + e` lies in the device buffer (at
                // least `bytes.len()` long); the source pages stay locked and
                // alive until the stream is synchronized below.
                if let Err(err) = unsafe { result::memcpy_htod_async(dst + s as u64, &bytes[s..e], stream.cu_stream()) }
                {
                    error = Some(err.into());
                    break 'batches;
                }
                copied = e;
            }
        }
        // The DMA reads the locked pages until the stream drains.
        let sync = stream.synchronize();
        let t = Instant::now();
        locked.par_iter().with_max_len(1).for_each(|&a| {
            let _ = ctx.bind_to_thread();
            // SAFETY: registered above, no DMA reads it any more (or the
            // synchronize failed, and the context is unusable anyway).
            let _ = unsafe { sys::cuMemHostUnregister(a as *mut c_void) };
        });
        self.paths.unregister_s += t.elapsed().as_secs_f64();
        self.paths.direct_s += t_all.elapsed().as_secs_f64();
        sync?;
        if let Some(e) = error {
            return Err(e);
        }
        if let Some(code) = failure {
            if self.paths.fallback.is_none() {
                let name = result::DriverError(code)
                    .error_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_else(|_| format!("{code:?}"));
                self.paths.fallback = Some(format!(
                    "cuMemHostRegister of {} bytes failed ({name}); copied through pinned staging instead",
                    hi - lo
                ));
            }
            // Another registration of the same pages is this copy's problem only.
            if code != sys::CUresult::CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED {
                self.direct = false;
            }
        }
        self.paths.direct_bytes += copied as u64;
        Ok(copied)
    }

    /// The staged path, `bytes` to `dst`.
    fn staged(
        &mut self,
        ctx: &Arc<CudaContext>,
        stream: &Arc<CudaStream>,
        bytes: &[u8],
        dst: sys::CUdeviceptr,
    ) -> Result<(), CudaError> {
        let t = Instant::now();
        self.ensure(ctx)?;
        for (i, chunk) in bytes.chunks(STAGE_BYTES).enumerate() {
            let buf = &self.bufs[i % 2];
            // The DMA that last read this buffer is done before it is refilled.
            buf.done.synchronize()?;
            // SAFETY: the buffer holds STAGE_BYTES >= chunk.len() bytes, and no
            // DMA reads it now (the event above has completed).
            let stage = unsafe { std::slice::from_raw_parts_mut(buf.ptr, chunk.len()) };
            fill(stage, chunk);
            let offset = (i * STAGE_BYTES) as u64;
            // SAFETY: `dst + offset .. + chunk.len()` lies inside the device
            // buffer (its byte length is at least `bytes.len()` past `dst`);
            // `stage` is page-locked and stays untouched until `done`
            // (recorded right after) completes.
            unsafe { result::memcpy_htod_async(dst + offset, &*stage, stream.cu_stream()) }?;
            buf.done.record(stream)?;
        }
        self.paths.staged_bytes += bytes.len() as u64;
        self.paths.staged_s += t.elapsed().as_secs_f64();
        Ok(())
    }
}

impl Staging {
    /// The staged path for an index array narrowed to `u32` on the way: each
    /// staging buffer is filled with the next piece of `host` converted (a
    /// parallel pass, many cores), so no narrowed copy of the whole array is
    /// made on the host. Returns whether every value fit (if not, the device
    /// buffer holds garbage, and the caller refuses it).
    fn staged_u32<T: Copy + Send + Sync + TryInto<u32>>(
        &mut self,
        ctx: &Arc<CudaContext>,
        stream: &Arc<CudaStream>,
        host: &[T],
        dst: sys::CUdeviceptr,
    ) -> Result<bool, CudaError> {
        let t = Instant::now();
        self.ensure(ctx)?;
        let mut fits = true;
        for (i, chunk) in host.chunks(STAGE_BYTES / 4).enumerate() {
            let buf = &self.bufs[i % 2];
            buf.done.synchronize()?;
            // SAFETY: the buffer holds STAGE_BYTES >= 4 chunk.len() bytes, page-aligned
            // (so aligned for u32); no DMA reads it now (the event above has completed).
            let stage = unsafe { std::slice::from_raw_parts_mut(buf.ptr.cast::<u32>(), chunk.len()) };
            fits &= narrow_into(chunk, stage);
            let offset = (i * STAGE_BYTES) as u64;
            // SAFETY: as in `staged`: inside the device buffer, and `stage` stays
            // untouched until `done` (recorded right after) completes.
            unsafe { result::memcpy_htod_async(dst + offset, &*stage, stream.cu_stream()) }?;
            buf.done.record(stream)?;
        }
        self.paths.staged_bytes += 4 * host.len() as u64;
        self.paths.staged_s += t.elapsed().as_secs_f64();
        Ok(fits)
    }
}

/// `src` copied into `dst` (same length) by many threads, a [`COPY_PIECE`] each.
pub(crate) fn fill(dst: &mut [u8], src: &[u8]) {
    assert_eq!(dst.len(), src.len(), "staging copy of unequal lengths");
    dst.par_chunks_mut(COPY_PIECE)
        .zip(src.par_chunks(COPY_PIECE))
        .for_each(|(d, s)| d.copy_from_slice(s));
}

/// `src` narrowed to `u32` into `dst` (same length), in parallel; whether every value fit.
fn narrow_into<T: Copy + Send + Sync + TryInto<u32>>(src: &[T], dst: &mut [u32]) -> bool {
    const PIECE: usize = 1 << 16;
    dst.par_chunks_mut(PIECE)
        .zip(src.par_chunks(PIECE))
        .map(|(d, s)| {
            let mut fits = true;
            for (d, &s) in d.iter_mut().zip(s) {
                match s.try_into() {
                    Ok(v) => *d = v,
                    Err(_) => fits = false,
                }
            }
            fits
        })
        .reduce(|| true, |a, b| a & b)
}

impl crate::Device {
    /// An index array (`what`, for the error) uploaded as `u32`, refused when a
    /// value does not fit. Large arrays are narrowed while they are staged
    /// ([`Staging::staged_u32`]); small ones in one parallel pass. Either way no
    /// collect of `Result`s (which builds and joins per-task vectors).
    pub(crate) fn upload_u32<T: Copy + Send + Sync + TryInto<u32>>(
        &self,
        what: &str,
        host: &[T],
    ) -> Result<CudaSlice<u32>, CudaError> {
        let too_large = || CudaError::TooLarge {
            what: what.to_string(),
            n: host.len(),
        };
        if 4 * host.len() < STAGE_MIN_BYTES {
            let mut v = vec![0u32; host.len()];
            if !narrow_into(host, &mut v) {
                return Err(too_large());
            }
            return self.upload(&v);
        }
        self.count(4 * host.len() as u64, 0);
        // SAFETY: every element is written by the staged copy below.
        let mut dev = unsafe { self.stream.alloc::<u32>(host.len()) }?;
        let fits = {
            let (dst, _record) = dev.device_ptr_mut(&self.stream);
            self.staging
                .lock()
                .unwrap()
                .staged_u32(&self.ctx, &self.stream, host, dst)?
        };
        if fits {
            Ok(dev)
        } else {
            Err(too_large())
        }
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        for b in &self.bufs {
            // A failure here cannot be returned; the buffer is freed regardless
            // only once its DMA is known to be done, else it is leaked.
            if b.done.synchronize().is_ok() {
                // SAFETY: allocated by `malloc_host` in `ensure`, freed once.
                let _ = unsafe { result::free_host(b.ptr.cast()) };
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Device, DeviceOptions};

    /// Bytes that differ from their neighbours and from any zeroed page.
    fn pattern(n: usize) -> Vec<u8> {
        (0..n)
            .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8 ^ 0x5a)
            .collect()
    }

    #[test]
    fn parallel_fill_equals_its_source_at_odd_offsets_and_sizes() {
        // Arrange: a source and a destination that both start off alignment.
        let src = pattern(3 * COPY_PIECE + 777);
        for (d_off, s_off, n) in [
            (0, 0, 0),
            (1, 3, 63),
            (5, 0, 64 + 17),
            (15, 9, COPY_PIECE + 1),
            (7, 1, 2 * COPY_PIECE + 333),
        ] {
            let mut dst = vec![0u8; n + d_off + 64];
            // Act
            fill(&mut dst[d_off..d_off + n], &src[s_off..s_off + n]);
            // Assert: the range is the source's bytes, and nothing around it was written.
            assert_eq!(
                &dst[d_off..d_off + n],
                &src[s_off..s_off + n],
                "offsets {d_off}/{s_off}, {n} bytes"
            );
            assert!(dst[..d_off].iter().chain(&dst[d_off + n..]).all(|&b| b == 0));
        }
    }

    #[test]
    fn staged_upload_of_odd_sizes_reads_back_bitwise() {
        // Arrange: skips without a driver (no device to copy to).
        let Ok(dev) = Device::open(DeviceOptions::default()) else {
            return;
        };
        let src = pattern(2 * STAGE_BYTES + 4099);
        // Sizes that end mid-buffer, one past a buffer, and at an odd offset of the source.
        for (off, n) in [
            (0, STAGE_MIN_BYTES + 1),
            (3, STAGE_BYTES + 1),
            (1, 2 * STAGE_BYTES + 4097),
        ] {
            let host = &src[off..off + n];
            // Act
            let back = dev.download(&dev.upload(host).unwrap()).unwrap();
            // Assert
            assert_eq!(back.len(), n);
            assert!(back == host, "offset {off}, {n} bytes differ after the staged copy");
        }
        assert!(dev.counters().upload_paths.staged_bytes >= (3 * STAGE_BYTES) as u64);
    }
}
