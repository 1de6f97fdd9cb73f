//! The drivers users call, as library code (the `ptap` binary only parses
//! arguments and prints): the time-stepping loop on the beam
//! ([`time_loop::run_beam`]) on the CPU or a GPU, with the schedule cache.
//!
//! This crate sits at the top of the house: it knows the problem (`ptap-fem`,
//! with its device assembly) and the backends (`ptap-runtime`'s CPU,
//! `ptap-cuda`), which know nothing of it.
pub mod time_loop;

use rayon::prelude::*;
use std::time::Instant;

/// Best-of-5 parallel copy of 256 MiB on the host, counting read plus write bytes.
pub fn measure_copy_bandwidth() -> f64 {
    let n = 32 << 20;
    let src = vec![1.0f64; n];
    let mut dst = vec![0.0f64; n];
    let mut best = f64::INFINITY;
    for _ in 0..5 {
        let t = Instant::now();
        dst.par_chunks_mut(1 << 16)
            .zip(src.par_chunks(1 << 16))
            .for_each(|(d, s)| d.copy_from_slice(s));
        best = best.min(t.elapsed().as_secs_f64());
    }
    std::hint::black_box(&dst);
    2.0 * (n * 8) as f64 / best
}
