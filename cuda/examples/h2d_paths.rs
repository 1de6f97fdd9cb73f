//! Host-to-device copy paths of one 1 GiB array, timed on this machine: the
//! pageable copy (the driver's own staging), a copy from page-locked memory
//! (and what allocating and filling it cost), the backend's staged upload
//! alone and beside a parallel host load (as a start's cache check is), and
//! page-locking the array in place. Prints one JSON object.
use cudarc::driver::result;
use ptap_cuda::{Device, DeviceOptions};
use rayon::prelude::*;
use std::time::Instant;

fn best<F: FnMut() -> f64>(n: usize, mut f: F) -> f64 {
    (0..n).map(|_| f()).fold(f64::INFINITY, f64::min)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dev = Device::open(DeviceOptions::default())?;
    const N: usize = 1 << 30;
    let host: Vec<u8> = (0..N).into_par_iter().map(|i| (i >> 12) as u8).collect();
    let mut d = dev.zeros::<u8>(N)?;
    let stream = dev.stream().clone();
    let pageable_s = best(3, || {
        let t = Instant::now();
        stream.memcpy_htod(&host, &mut d).unwrap();
        stream.synchronize().unwrap();
        t.elapsed().as_secs_f64()
    });
    dev.context().bind_to_thread()?;
    let t = Instant::now();
    // SAFETY: a fresh page-locked allocation of N bytes, freed below.
    let pinned = unsafe { result::malloc_host(N, 0) }? as *mut u8;
    let pin_alloc_s = t.elapsed().as_secs_f64();
    // SAFETY: N bytes owned here until `free_host`.
    let pin = unsafe { std::slice::from_raw_parts_mut(pinned, N) };
    let t = Instant::now();
    pin.par_chunks_mut(1 << 20)
        .zip(host.par_chunks(1 << 20))
        .for_each(|(a, b)| a.copy_from_slice(b));
    let pin_fill_s = t.elapsed().as_secs_f64();
    let pinned_s = best(3, || {
        let t = Instant::now();
        stream.memcpy_htod(&*pin, &mut d).unwrap();
        stream.synchronize().unwrap();
        t.elapsed().as_secs_f64()
    });
    // SAFETY: allocated above; the stream has drained.
    unsafe { result::free_host(pinned.cast()) }?;
    let staged_s = best(3, || {
        let t = Instant::now();
        dev.upload_into(&host, &mut d).unwrap();
        dev.synchronize().unwrap();
        t.elapsed().as_secs_f64()
    });
    // The staged upload beside a parallel pass over 2 GiB on the same pool.
    let other: Vec<u64> = (0..N / 4).into_par_iter().map(|i| i as u64).collect();
    // One parallel pass over `other`, timed (the host work a load does beside the upload).
    let host_pass = || {
        let t = Instant::now();
        let x: u64 = other
            .par_chunks(1 << 16)
            .map(|c| c.iter().fold(0u64, |a, &v| a ^ v.rotate_left(7)))
            .sum();
        std::hint::black_box(x);
        t.elapsed().as_secs_f64()
    };
    let (staged_beside_s, load_s) = std::thread::scope(|s| {
        let h = s.spawn(host_pass);
        let t = Instant::now();
        dev.upload_into(&host, &mut d).unwrap();
        dev.synchronize().unwrap();
        let up = t.elapsed().as_secs_f64();
        (up, h.join().unwrap())
    });
    let load_alone_s = host_pass();
    // Page-locking the array where it lies, one registration.
    let t = Instant::now();
    // SAFETY: `host` is N readable bytes, alive until unregistered below.
    let reg = unsafe {
        cudarc::driver::sys::cuMemHostRegister_v2(
            host.as_ptr() as *mut _,
            N,
            cudarc::driver::sys::CU_MEMHOSTREGISTER_READ_ONLY,
        )
    };
    let register_s = t.elapsed().as_secs_f64();
    let mut registered_copy_s = f64::NAN;
    let mut unregister_s = f64::NAN;
    if reg == cudarc::driver::sys::CUresult::CUDA_SUCCESS {
        registered_copy_s = best(3, || {
            let t = Instant::now();
            stream.memcpy_htod(&host, &mut d).unwrap();
            stream.synchronize().unwrap();
            t.elapsed().as_secs_f64()
        });
        let t = Instant::now();
        // SAFETY: registered above; the stream has drained.
        unsafe { cudarc::driver::sys::cuMemHostUnregister(host.as_ptr() as *mut _) };
        unregister_s = t.elapsed().as_secs_f64();
    }
    let gbs = |s: f64| N as f64 / s / 1e9;
    println!(
        "{{\"bytes\": {N}, \"threads\": {}, \"pageable_s\": {pageable_s:.5}, \"pageable_gbs\": {:.2}, \"pin_alloc_s\": {pin_alloc_s:.5}, \"pin_fill_s\": {pin_fill_s:.5}, \"pinned_s\": {pinned_s:.5}, \"pinned_gbs\": {:.2}, \"staged_s\": {staged_s:.5}, \"staged_gbs\": {:.2}, \"staged_beside_load_s\": {staged_beside_s:.5}, \"load_beside_s\": {load_s:.5}, \"load_alone_s\": {load_alone_s:.5}, \"register_s\": {register_s:.5}, \"register_result\": \"{reg:?}\", \"registered_copy_s\": {registered_copy_s:.5}, \"unregister_s\": {unregister_s:.5}}}",
        rayon::current_num_threads(),
        gbs(pageable_s),
        gbs(pinned_s),
        gbs(staged_s)
    );
    Ok(())
}
