//! Allocation-free parallel loops over disjoint row ranges.
use rayon::prelude::*;
use std::ops::Range;

/// Splits `0..nrows` into about `target` contiguous ranges of roughly equal `work`
/// (`work[i]` is the cost of row `i`). Used by inspectors; the result is stored
/// and reused by every numeric call.
pub fn balanced_row_chunks(work: &[usize], target: usize) -> Vec<Range<usize>> {
    let n = work.len();
    if n == 0 {
        return Vec::new();
    }
    let target = target.clamp(1, n);
    let total: usize = work.iter().map(|&w| w.max(1)).sum();
    let per = total.div_ceil(target);
    let mut chunks = Vec::with_capacity(target + 1);
    let (mut start, mut acc) = (0, 0);
    for (i, &w) in work.iter().enumerate() {
        acc += w.max(1);
        if acc >= per {
            chunks.push(start..i + 1);
            start = i + 1;
            acc = 0;
        }
    }
    if start < n {
        chunks.push(start..n);
    }
    chunks
}

/// The default number of row chunks for parallel numeric kernels.
pub fn default_chunk_count(nrows: usize) -> usize {
    (rayon::current_num_threads() * 8).min(nrows.max(1))
}

/// Runs `f(rows, values_of_those_rows, scratch)` for every chunk in parallel.
///
/// `chunks` must be contiguous, ordered and cover the rows whose values start at
/// block `row_ptr[chunks[0].start]`; `values` holds `block_len` scalars per block
/// of those rows; `scratch` has one entry per chunk. Splitting by recursive
/// `split_at_mut` keeps this safe and allocation-free.
pub fn for_each_row_chunk<S, F>(
    chunks: &[Range<usize>],
    row_ptr: &[usize],
    block_len: usize,
    values: &mut [f64],
    scratch: &mut [S],
    f: &F,
) where
    S: Send,
    F: Fn(Range<usize>, &mut [f64], &mut S) + Sync,
{
    debug_assert_eq!(chunks.len(), scratch.len());
    if chunks.is_empty() {
        return;
    }
    if chunks.len() == 1 {
        f(chunks[0].clone(), values, &mut scratch[0]);
        return;
    }
    let mid = chunks.len() / 2;
    let base = row_ptr[chunks[0].start];
    let split = (row_ptr[chunks[mid].start] - base) * block_len;
    let (lv, rv) = values.split_at_mut(split);
    let (ls, rs) = scratch.split_at_mut(mid);
    rayon::join(
        || for_each_row_chunk(&chunks[..mid], row_ptr, block_len, lv, ls, f),
        || for_each_row_chunk(&chunks[mid..], row_ptr, block_len, rv, rs, f),
    );
}

/// `sum_i x_i y_i`, in parallel. The reduction tree splits at fixed points
/// (halving down to 4096 entries), so the result is bitwise reproducible
/// whatever the thread count or scheduling, and nothing is allocated.
pub fn dot(x: &[f64], y: &[f64]) -> f64 {
    debug_assert_eq!(x.len(), y.len());
    const LEAF: usize = 4096;
    if x.len() <= LEAF {
        return x.iter().zip(y).map(|(p, q)| p * q).sum();
    }
    let mid = (x.len() / 2).div_ceil(LEAF) * LEAF;
    let (xa, xb) = x.split_at(mid);
    let (ya, yb) = y.split_at(mid);
    let (a, b) = rayon::join(|| dot(xa, ya), || dot(xb, yb));
    a + b
}

/// Euclidean norm.
pub fn norm2(x: &[f64]) -> f64 {
    dot(x, x).sqrt()
}

/// `y += alpha x`.
pub fn axpy(alpha: f64, x: &[f64], y: &mut [f64]) {
    y.par_chunks_mut(4096).zip(x.par_chunks(4096)).for_each(|(yc, xc)| {
        for (a, b) in yc.iter_mut().zip(xc) {
            *a += alpha * b;
        }
    });
}

/// `y = x + beta y`.
pub fn xpby(x: &[f64], beta: f64, y: &mut [f64]) {
    y.par_chunks_mut(4096).zip(x.par_chunks(4096)).for_each(|(yc, xc)| {
        for (a, b) in yc.iter_mut().zip(xc) {
            *a = b + beta * *a;
        }
    });
}
