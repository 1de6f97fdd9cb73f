//! Host-to-device copies of large arrays through pinned staging.
//!
//! A copy from pageable host memory makes the driver stage it through its
//! own small pinned buffers, one at a time (about 5 GB/s on the H200 host).
//! Here two page-locked buffers of [`STAGE_BYTES`] alternate: the host fills
//! one (a parallel copy, many cores) while the device reads the other by DMA,
//! so a large upload runs at the bus's rate. Each buffer has an event recorded
//! after the DMA that reads it, and the host waits on that event before it
//! writes the buffer again. Small copies take the plain path.
use crate::CudaError;
use cudarc::driver::{result, sys, CudaContext, CudaEvent, CudaSlice, CudaStream, DevicePtrMut, DeviceRepr};
use rayon::prelude::*;
use std::sync::Arc;

/// Bytes of each of the two staging buffers.
pub const STAGE_BYTES: usize = 32 << 20;
/// Copies at least this long go through the staging buffers.
pub const STAGE_MIN_BYTES: usize = 4 << 20;
/// Bytes one task of the parallel host copy moves.
const COPY_PIECE: usize = 1 << 20;

/// One page-locked buffer and the event after the last DMA that read it.
struct Buffer {
    ptr: *mut u8,
    done: CudaEvent,
}

/// The two staging buffers of a device (allocated on the first large copy).
pub(crate) struct Staging {
    bufs: Vec<Buffer>,
}

// SAFETY: the buffers are plain page-locked host memory owned by this value;
// every use goes through `&mut Staging` (the device keeps it in a mutex).
unsafe impl Send for Staging {}

impl Staging {
    pub(crate) fn new() -> Self {
        Self { bufs: Vec::new() }
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

    /// Copies `host` into `dev` (whose length is at least `host`'s) through
    /// the staging buffers, on `stream`. Returns when every byte of `host`
    /// is in a staging buffer or on the device: the caller may drop `host`.
    pub(crate) fn upload<T: DeviceRepr>(
        &mut self,
        ctx: &Arc<CudaContext>,
        stream: &Arc<CudaStream>,
        host: &[T],
        dev: &mut CudaSlice<T>,
    ) -> Result<(), CudaError> {
        assert!(host.len() <= dev.len(), "staged upload into a shorter device buffer");
        self.ensure(ctx)?;
        // SAFETY: `T: DeviceRepr` is plain data (integers and floats here), so
        // its bytes are initialized; `u8` has alignment 1; same extent.
        let bytes = unsafe { std::slice::from_raw_parts(host.as_ptr().cast::<u8>(), std::mem::size_of_val(host)) };
        let (dst, _record) = dev.device_ptr_mut(stream);
        for (i, chunk) in bytes.chunks(STAGE_BYTES).enumerate() {
            let buf = &self.bufs[i % 2];
            // The DMA that last read this buffer is done before it is refilled.
            buf.done.synchronize()?;
            // SAFETY: the buffer holds STAGE_BYTES >= chunk.len() bytes, and no
            // DMA reads it now (the event above has completed).
            let stage = unsafe { std::slice::from_raw_parts_mut(buf.ptr, chunk.len()) };
            stage
                .par_chunks_mut(COPY_PIECE)
                .zip(chunk.par_chunks(COPY_PIECE))
                .for_each(|(d, s)| d.copy_from_slice(s));
            let offset = (i * STAGE_BYTES) as u64;
            // SAFETY: `dst + offset .. + chunk.len()` lies inside `dev` (its byte
            // length is at least `bytes.len()`); `stage` is page-locked and stays
            // untouched until `done` (recorded right after) completes.
            unsafe { result::memcpy_htod_async(dst + offset, &*stage, stream.cu_stream()) }?;
            buf.done.record(stream)?;
        }
        Ok(())
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
