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

/// `parts` concatenated into one vector, copied in parallel (what the
/// chunked builders of patterns and schedules end with: the order is the
/// parts' order, whatever the thread count).
pub fn par_concat<T: Copy + Default + Send + Sync>(parts: &[Vec<T>]) -> Vec<T> {
    let total = parts.iter().map(Vec::len).sum();
    let mut out = vec![T::default(); total];
    let mut slices = Vec::with_capacity(parts.len());
    let mut rest = &mut out[..];
    for p in parts {
        let (head, tail) = rest.split_at_mut(p.len());
        slices.push(head);
        rest = tail;
    }
    slices
        .into_par_iter()
        .zip(parts.par_iter())
        .for_each(|(dst, src)| dst.copy_from_slice(src));
    out
}

/// Pointers `[0, l_0, l_0 + l_1, ...]` of the lengths in `parts` taken in
/// order (one entry per length, plus the leading 0), built in parallel.
pub fn par_offsets<T>(parts: &[Vec<T>]) -> Vec<T>
where
    T: Copy + Default + Send + Sync + std::ops::Add<Output = T>,
{
    let sums: Vec<T> = parts
        .par_iter()
        .map(|p| p.iter().fold(T::default(), |a, &b| a + b))
        .collect();
    let mut bases = Vec::with_capacity(parts.len());
    let mut acc = T::default();
    for &s in &sums {
        bases.push(acc);
        acc = acc + s;
    }
    let total: usize = parts.iter().map(Vec::len).sum();
    let mut out = vec![T::default(); total + 1];
    let mut slices = Vec::with_capacity(parts.len());
    let mut rest = &mut out[1..];
    for p in parts {
        let (head, tail) = rest.split_at_mut(p.len());
        slices.push(head);
        rest = tail;
    }
    slices
        .into_par_iter()
        .zip(parts.par_iter().zip(bases.par_iter()))
        .for_each(|(dst, (src, &base))| {
            let mut acc = base;
            for (d, &l) in dst.iter_mut().zip(src) {
                acc = acc + l;
                *d = acc;
            }
        });
    out
}

/// Contiguous row ranges of about equal size, `default_chunk_count` of them
/// (for row loops whose rows cost about the same).
pub fn uniform_row_chunks(nrows: usize) -> Vec<Range<usize>> {
    let target = default_chunk_count(nrows);
    let per = nrows.div_ceil(target.max(1)).max(1);
    (0..nrows).step_by(per).map(|s| s..(s + per).min(nrows)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn concat_and_offsets_follow_the_parts_in_order() {
        let parts = vec![vec![3u64, 1], vec![], vec![4, 1, 5]];
        assert_eq!(par_concat(&parts), vec![3, 1, 4, 1, 5]);
        assert_eq!(par_offsets(&parts), vec![0, 3, 4, 8, 9, 14]);
        let none: Vec<Vec<usize>> = Vec::new();
        assert_eq!(par_concat(&none), Vec::<usize>::new());
        assert_eq!(par_offsets(&none), vec![0]);
        for n in [0, 1, 7, 1000] {
            let chunks = uniform_row_chunks(n);
            assert_eq!(chunks.iter().map(|c| c.len()).sum::<usize>(), n);
            assert!(chunks.windows(2).all(|w| w[0].end == w[1].start));
        }
    }
}
