//! The variant inspectors' own invariants (panel tiles' halo factor, the
//! column split's order) and the refusal of a shape no set ships. Every
//! variant's product against V0 is the conformance suite's
//! (`every_product_variant_is_equivalent_to_two_pass`).
use ptap_fem::BeamProblem;
use ptap_runtime::{executor_for, Hierarchy, HierarchyOptions};
use ptap_schedules::{TwoPassSchedule, Variant, VariantSchedule};
use ptap_sparse::BlockCsr;
use ptap_tests::{random_block_csr, Rng};
use std::sync::Arc;

/// Values spread over 16 orders of magnitude, so any change of summation order
/// shows in the bits.
fn wide_values(m: &mut BlockCsr, rng: &mut Rng) {
    for v in m.values_mut() {
        *v *= 10f64.powi(rng.below(17) as i32 - 8);
    }
}

fn random_case(seed: u64, nf: usize, nc: usize, bf: usize, bc: usize) -> (BlockCsr, BlockCsr) {
    let mut rng = Rng::new(seed);
    let mut a = random_block_csr(&mut rng, nf, nf, bf, bf, 0.3, true);
    let mut p = random_block_csr(&mut rng, nf, nc, bf, bc, 0.35, false);
    wide_values(&mut a, &mut rng);
    wide_values(&mut p, &mut rng);
    (a, p)
}

#[test]
fn panel_tiles_measure_a_halo_factor() {
    let problem = BeamProblem::build(2).unwrap();
    let mut opts = HierarchyOptions::default();
    opts.amg.coarse_eq_limit = 100;
    let h = Hierarchy::build(problem.a, &problem.near_null, 6, &opts, &mut |_| {}).unwrap();
    let lev = &h.levels()[0];
    let p = &lev.transfer.as_ref().unwrap().p;
    let base = Arc::new(TwoPassSchedule::inspect(lev.a.pattern_arc().clone(), p.pattern_arc().clone()).unwrap());
    // One coarse row per tile: every fine row is staged once per aggregate it feeds.
    let one = ptap_schedules::variants::PanelTiledSchedule::inspect(base.clone(), 0);
    assert_eq!(one.tiles(), base.c.nrows());
    let expect = base.stats.z_p as f64 / base.stats.m_f as f64 - 1.0;
    assert!(
        (one.halo_factor - expect).abs() < 1e-12,
        "h = {} vs n_P - 1 = {expect}",
        one.halo_factor
    );
    // A single tile holding everything stages every fine row once: h = 0.
    let all = ptap_schedules::variants::PanelTiledSchedule::inspect(base.clone(), usize::MAX);
    assert_eq!(all.tiles(), 1);
    assert!(all.halo_factor.abs() < 1e-12);
}

#[test]
fn column_split_order_is_a_windowed_run_length_sort() {
    let (a, p) = random_case(42, 50, 12, 3, 6);
    let base = Arc::new(TwoPassSchedule::inspect(a.pattern_arc().clone(), p.pattern_arc().clone()).unwrap());
    let s = ptap_schedules::variants::ColumnSplitSchedule::inspect(base, 8);
    for (runs, order) in [(&s.tiled.ap, &s.ap_order), (&s.tiled.rw, &s.rw_order)] {
        assert_eq!(order.len(), runs.slots());
        for (w, chunk) in order.chunks(8).enumerate() {
            // A permutation of its own window ...
            let mut sorted: Vec<u32> = chunk.to_vec();
            sorted.sort_unstable();
            let want: Vec<u32> = (w as u32 * 8..w as u32 * 8 + chunk.len() as u32).collect();
            assert_eq!(sorted, want);
            // ... in non-increasing run length.
            let lens: Vec<usize> = chunk.iter().map(|&s| runs.run(s as usize).len()).collect();
            assert!(lens.windows(2).all(|x| x[0] >= x[1]), "{lens:?}");
        }
    }
}

#[test]
fn non_shipped_shape_is_refused_by_optimized_variants_with_a_clear_message() {
    let (a, p) = random_case(1, 10, 4, 4, 10);
    let base = Arc::new(TwoPassSchedule::inspect(a.pattern_arc().clone(), p.pattern_arc().clone()).unwrap());
    let s = VariantSchedule::inspect(Variant::SlotTiled, base, 40);
    let err = executor_for(&s, 4, 10).err().expect("4x10 is not shipped").to_string();
    assert!(err.contains("4x4 / 4x10"), "{err}");
}
