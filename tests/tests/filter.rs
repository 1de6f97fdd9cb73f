//! Prolongator filtering on the beam: fewer blocks, and every projected row
//! keeps its action on the whole near-null space (rotations included), hence
//! reproduces B wherever smoothing did, where a translation-only lumping does not.
use ptap_amg::prolongator::smoothing_omega;
use ptap_amg::{
    aggregate_mis2, filter_prolongator, filter_prolongator_preserving, merge_rank_deficient, smooth_prolongator,
    strength_graph, tentative_prolongator, AmgOptions,
};
use ptap_fem::BeamProblem;
use ptap_sparse::BlockCsr;

/// Level 0 of the beam's hierarchy: smoothed `P`, fine `B`, coarse `B_c`.
struct Level0 {
    p: BlockCsr,
    near_null: Vec<f64>,
    coarse_near_null: Vec<f64>,
}

fn level0(dim: usize, k: usize) -> Level0 {
    let opts = AmgOptions::default();
    let beam = BeamProblem::build_in(dim, k).unwrap();
    let (a, b, nm) = (&beam.a, dim, beam.modes);
    let g = strength_graph(a, opts.threshold_at(0));
    let mut aggs = aggregate_mis2(&g);
    merge_rank_deficient(&mut aggs, &g, b, nm, &beam.near_null, opts.rank_tolerance);
    let tent = tentative_prolongator(&aggs, &beam.near_null, b, nm, opts.rank_tolerance);
    let omega = smoothing_omega(a, opts.smoothing_factor, opts.eig_iterations, 0).unwrap();
    Level0 {
        p: smooth_prolongator(a, &tent.p0, omega, 0).unwrap(),
        near_null: beam.near_null,
        coarse_near_null: tent.coarse_near_null,
    }
}

/// `P B_c`, row-major `n*b x nm`.
fn action(p: &BlockCsr, coarse_near_null: &[f64]) -> Vec<f64> {
    let (b, nm) = p.block_shape();
    let pat = p.pattern();
    let mut out = vec![0.0; p.scalar_rows() * nm];
    for i in 0..pat.nrows() {
        for k in pat.row_range(i) {
            let j = pat.col_idx()[k] as usize;
            for r in 0..b {
                for c in 0..nm {
                    for m in 0..nm {
                        out[(i * b + r) * nm + m] += p.block(k)[r * nm + c] * coarse_near_null[(j * nm + c) * nm + m];
                    }
                }
            }
        }
    }
    out
}

/// Per block row `i`: `||(x - y)_i[:, cols]||_F / ||B_i[:, cols]||_F`.
fn row_diff(x: &[f64], y: &[f64], l: &Level0, cols: std::ops::Range<usize>) -> Vec<f64> {
    let (b, nm) = l.p.block_shape();
    (0..l.p.nrows())
        .map(|i| {
            let (mut num, mut den) = (0.0, 0.0);
            for r in 0..b {
                for m in cols.clone() {
                    let at = (i * b + r) * nm + m;
                    num += (x[at] - y[at]) * (x[at] - y[at]);
                    den += l.near_null[at] * l.near_null[at];
                }
            }
            (num / den).sqrt()
        })
        .collect()
}

/// Rows that lost at least one block.
fn dropped_rows(before: &BlockCsr, after: &BlockCsr) -> Vec<usize> {
    (0..before.nrows())
        .filter(|&i| after.pattern().row(i).len() < before.pattern().row(i).len())
        .collect()
}

#[test]
fn filtered_rows_keep_p_b_c_and_so_reproduce_b_wherever_smoothing_did_in_3d_and_2d() {
    // (dim, k, blocks before, blocks after, rows that dropped a block, of them rows with P B_c = B before)
    for (dim, k, before, after, rows, exact) in [(3usize, 2usize, 5008, 3939, 620, 596), (2, 8, 9377, 8748, 586, 578)] {
        // Arrange
        let l = level0(dim, k);
        let (b, nm) = l.p.block_shape();
        // Act
        let f = filter_prolongator(&l.p, &l.coarse_near_null, 0.03, 1e-6);
        // Assert: fewer blocks, no row short of rank.
        assert_eq!((l.p.nnzb(), f.stats.blocks_before), (before, before), "dim {dim}");
        assert_eq!((f.p.nnzb(), f.stats.blocks_after), (after, after), "dim {dim}");
        assert_eq!(f.stats.rank_deficient_rows, 0);
        let dropped = dropped_rows(&l.p, &f.p);
        assert_eq!((dropped.len(), f.stats.filtered_rows), (rows, rows), "dim {dim}");
        // Every projected row keeps its action on all modes; where that was B, it still is.
        let (smoothed, filtered) = (action(&l.p, &l.coarse_near_null), action(&f.p, &l.coarse_near_null));
        let kept_action = row_diff(&filtered, &smoothed, &l, 0..nm);
        let was_b = row_diff(&smoothed, &l.near_null, &l, 0..nm);
        let is_b = row_diff(&filtered, &l.near_null, &l, 0..nm);
        let worst = dropped.iter().map(|&i| kept_action[i]).fold(0.0, f64::max);
        assert!(worst <= 1e-12, "dim {dim}: worst change of P B_c {worst:e}");
        let exact_rows: Vec<usize> = dropped.iter().copied().filter(|&i| was_b[i] <= 1e-12).collect();
        assert_eq!(exact_rows.len(), exact, "dim {dim}");
        let worst_b = exact_rows.iter().map(|&i| is_b[i]).fold(0.0, f64::max);
        assert!(worst_b <= 1e-12, "dim {dim}: worst ||P B_c - B|| {worst_b:e}");
        // Rows that dropped nothing are the smoothed rows, bitwise.
        for i in (0..l.p.nrows()).filter(|i| !dropped.contains(i)) {
            let (before, after) = (l.p.pattern().row_range(i), f.p.pattern().row_range(i));
            assert_eq!(l.p.pattern().row(i), f.p.pattern().row(i));
            assert_eq!(
                &l.p.values()[before.start * b * nm..before.end * b * nm],
                &f.p.values()[after.start * b * nm..after.end * b * nm]
            );
        }
    }
}

#[test]
fn translation_lumping_loses_the_rotations_that_the_projection_keeps() {
    // Arrange: the 3D beam at k = 2, pf = 0.03.
    let l = level0(3, 2);
    let smoothed = action(&l.p, &l.coarse_near_null);
    // Act: restore only the 3 translations (lumping's guarantee), or all 6 modes.
    let lumped = filter_prolongator_preserving(&l.p, &l.coarse_near_null, 0.03, 3, 1e-6);
    let projected = filter_prolongator(&l.p, &l.coarse_near_null, 0.03, 1e-6);
    // Assert: same blocks dropped; translations kept by both; rotations only by the projection.
    assert_eq!(lumped.p.pattern(), projected.p.pattern());
    let rows = dropped_rows(&l.p, &projected.p);
    let worst = |p: &BlockCsr, modes| {
        let d = row_diff(&action(p, &l.coarse_near_null), &smoothed, &l, modes);
        rows.iter().map(|&i| d[i]).fold(0.0, f64::max)
    };
    assert!(worst(&lumped.p, 0..3) <= 1e-12);
    assert!(worst(&projected.p, 0..3) <= 1e-12);
    let lumped_rot = worst(&lumped.p, 3..6);
    let projected_rot = worst(&projected.p, 3..6);
    println!("rotation residual: lumping {lumped_rot:e}, projection {projected_rot:e}");
    assert!(lumped_rot >= 1e-3, "lumping's rotation residual {lumped_rot:e}");
    assert!(
        projected_rot <= 1e-12,
        "projection's rotation residual {projected_rot:e}"
    );
}

#[test]
fn zero_threshold_keeps_p_and_options_scale_pf_per_level() {
    // Arrange
    let l = level0(3, 1);
    let mut opts = AmgOptions {
        pf: 0.0,
        ..AmgOptions::default()
    };
    // Act
    let f = filter_prolongator(&l.p, &l.coarse_near_null, 0.0, 1e-6);
    let off = opts.filter_for_level(l.p.clone(), &l.coarse_near_null, 0);
    opts.pf = 0.03;
    // Assert
    assert_eq!(f.p, l.p);
    assert_eq!(f.stats.filtered_rows, 0);
    assert_eq!(off, l.p);
    assert_eq!(AmgOptions::default().pf, ptap_amg::DEFAULT_PF);
    assert_eq!(opts.pf_scale, 0.5);
    assert!((opts.pf_at(2) - 0.0075).abs() < 1e-15);
}
