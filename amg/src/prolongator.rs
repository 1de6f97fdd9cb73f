//! Tentative prolongator by per-aggregate QR (amg.md step 3) and its Jacobi
//! smoothing (step 4).
use crate::aggregate::{Aggregates, UNAGGREGATED};
use crate::eig::{estimate_lambda_max, EigWorkspace};
use crate::AmgError;
use ptap_sparse::dense::thin_qr;
use ptap_sparse::spgemm::spgemm;
use ptap_sparse::{BlockCsr, BlockPattern};
use rayon::prelude::*;
use std::sync::Arc;

/// `P0` (`b x nm` blocks, one per aggregated fine node) and the coarse near-null
/// space `B_c` (row-major `count*nm x nm`) with `P0 B_c = B` on aggregated rows.
#[derive(Clone, Debug)]
pub struct Tentative {
    pub p0: BlockCsr,
    pub coarse_near_null: Vec<f64>,
}

/// For each aggregate, QR-factors the stacked rows of the near-null space
/// (`near_null`, row-major `n*b x nm`): `Q`'s rows become the blocks of `P0`,
/// `R` the aggregate's `nm x nm` block of `B_c`.
pub fn tentative_prolongator(aggs: &Aggregates, near_null: &[f64], b: usize, nm: usize, tol: f64) -> Tentative {
    let n = aggs.of_node.len();
    assert_eq!(near_null.len(), n * b * nm, "near-null space has the wrong size");
    let members = aggs.members();
    let factors: Vec<(Vec<f64>, Vec<f64>)> = members
        .par_iter()
        .map(|nodes| {
            let mut stack = Vec::with_capacity(nodes.len() * b * nm);
            for &i in nodes {
                let i = i as usize;
                stack.extend_from_slice(&near_null[i * b * nm..(i + 1) * b * nm]);
            }
            let (q, r, _rank) = thin_qr(nodes.len() * b, nm, &stack, tol);
            (q, r)
        })
        .collect();
    // P0: row i holds one block, in column of(i), unless unaggregated.
    let mut row_ptr = Vec::with_capacity(n + 1);
    row_ptr.push(0);
    let mut col_idx = Vec::with_capacity(n);
    for &a in &aggs.of_node {
        if a != UNAGGREGATED {
            col_idx.push(a);
        }
        row_ptr.push(col_idx.len());
    }
    let pattern =
        BlockPattern::new(n, aggs.count, row_ptr, col_idx).expect("one block per aggregated row is a valid pattern");
    let mut p0 = BlockCsr::zeros(Arc::new(pattern), b, nm);
    // Each aggregated row's place among its aggregate's members (members are
    // in increasing node order), then the blocks copied in parallel.
    let mut local_of = vec![0u32; n];
    for nodes in &members {
        for (local, &i) in nodes.iter().enumerate() {
            local_of[i as usize] = local as u32;
        }
    }
    let rows: Vec<u32> = (0..n as u32)
        .filter(|&i| aggs.of_node[i as usize] != UNAGGREGATED)
        .collect();
    p0.values_mut()
        .par_chunks_mut((b * nm).max(1))
        .zip(rows.par_iter())
        .with_min_len(1024)
        .for_each(|(blk, &i)| {
            let (a, local) = (aggs.of_node[i as usize] as usize, local_of[i as usize] as usize);
            blk.copy_from_slice(&factors[a].0[local * b * nm..(local + 1) * b * nm]);
        });
    let mut coarse_near_null = vec![0.0; aggs.count * nm * nm];
    coarse_near_null
        .par_chunks_mut((nm * nm).max(1))
        .zip(factors.par_iter())
        .for_each(|(dst, (_, r))| dst.copy_from_slice(r));
    Tentative { p0, coarse_near_null }
}

/// `omega = factor / lambda_max(D^-1 A)` with `D` the scalar diagonal.
pub fn smoothing_omega(a: &BlockCsr, factor: f64, iterations: usize, level: usize) -> Result<f64, AmgError> {
    let d = positive_scalar_diagonal(a, level)?;
    let jacobi = |x: &[f64], y: &mut [f64]| {
        y.par_iter_mut()
            .zip(x.par_iter())
            .zip(d.par_iter())
            .for_each(|((yi, xi), di)| *yi = xi / di);
    };
    let mut ws = EigWorkspace::new(a.scalar_rows());
    let lmax =
        estimate_lambda_max(a, &jacobi, iterations, &mut ws).map_err(|why| AmgError::EigenBreakdown { level, why })?;
    Ok(factor / lmax)
}

/// The scalar diagonal, checked positive (an SPD operator's is).
pub fn positive_scalar_diagonal(a: &BlockCsr, level: usize) -> Result<Vec<f64>, AmgError> {
    if let Some(row) = a.pattern().diagonal_positions().iter().position(|&k| k == usize::MAX) {
        return Err(AmgError::MissingDiagonal { level, row });
    }
    let d = a.scalar_diagonal();
    if let Some((row, &value)) = d.iter().enumerate().find(|(_, v)| !(**v > 0.0)) {
        return Err(AmgError::NonPositiveDiagonal { level, row, value });
    }
    Ok(d)
}

/// `P = (I - omega D^-1 A) P0`, over the pattern of `A P0` (which contains `P0`'s
/// because every row of `A` stores its diagonal block).
pub fn smooth_prolongator(a: &BlockCsr, p0: &BlockCsr, omega: f64, level: usize) -> Result<BlockCsr, AmgError> {
    let d = positive_scalar_diagonal(a, level)?;
    let mut p = spgemm(a, p0)?;
    let (b, nm) = p.block_shape();
    let pp = p.pattern_arc().clone();
    let p0p = p0.pattern();
    let vals = p.values_mut();
    // Row-parallel: scale by -omega D^-1, then add P0's block in place.
    let row_ptr = pp.row_ptr();
    let mut rows: Vec<&mut [f64]> = Vec::with_capacity(pp.nrows());
    let mut rest = vals;
    for i in 0..pp.nrows() {
        let (head, tail) = rest.split_at_mut((row_ptr[i + 1] - row_ptr[i]) * b * nm);
        rows.push(head);
        rest = tail;
    }
    rows.into_par_iter().enumerate().for_each(|(i, row)| {
        for blk in row.chunks_mut(b * nm) {
            for r in 0..b {
                let s = -omega / d[i * b + r];
                for v in &mut blk[r * nm..(r + 1) * nm] {
                    *v *= s;
                }
            }
        }
        for k0 in p0p.row_range(i) {
            let j = p0p.col_idx()[k0];
            let local = pp.row(i).binary_search(&j).expect("P0 pattern is inside A P0's");
            for (v, w) in row[local * b * nm..(local + 1) * b * nm].iter_mut().zip(p0.block(k0)) {
                *v += w;
            }
        }
    });
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tentative_reproduces_near_null_on_aggregated_rows() {
        // 6 nodes, 1 dof each, 2 modes; aggregates {0,1,2}, {3,4}, node 5 left out.
        let nn: Vec<f64> = (0..6).flat_map(|i| [1.0, i as f64 * 0.5 + 0.1]).collect();
        let aggs = Aggregates {
            of_node: vec![0, 0, 0, 1, 1, UNAGGREGATED],
            count: 2,
        };
        let t = tentative_prolongator(&aggs, &nn, 1, 2, 1e-10);
        let pd = t.p0.to_dense();
        let bc = ptap_sparse::dense::Dense {
            rows: 4,
            cols: 2,
            data: t.coarse_near_null.clone(),
        };
        let back = pd.matmul(&bc);
        for i in 0..5 {
            for m in 0..2 {
                assert!((back.at(i, m) - nn[i * 2 + m]).abs() < 1e-14);
            }
        }
        assert_eq!(back.at(5, 0), 0.0);
        // Columns of P0 are orthonormal.
        let g = pd.transpose().matmul(&pd);
        for i in 0..4 {
            for j in 0..4 {
                assert!((g.at(i, j) - if i == j { 1.0 } else { 0.0 }).abs() < 1e-14);
            }
        }
    }
}
