//! Every Galerkin-product variant against V0: bytewise where the variant
//! promises V0's bytes (V2b, V2c, V3, column split), within 1e-13 relative
//! Frobenius otherwise (V1, V2a reassociate to (R A) P; V4 sums in atomic order).
use proptest::prelude::*;
use ptap_fem::BeamProblem;
use ptap_runtime::{executor_for, Hierarchy, HierarchyOptions};
use ptap_schedules::{TwoPassSchedule, Variant, VariantSchedule};
use ptap_sparse::dense::relative_frobenius;
use ptap_sparse::BlockCsr;
use ptap_tests::{random_block_csr, Rng};
use std::sync::Arc;

const TOL: f64 = 1e-13;

fn product(variant: Variant, a: &BlockCsr, p: &BlockCsr) -> BlockCsr {
    let (bf, bc) = p.block_shape();
    let base = Arc::new(TwoPassSchedule::inspect(a.pattern_arc().clone(), p.pattern_arc().clone()).unwrap());
    let schedule = VariantSchedule::inspect(variant, base.clone(), bf * bc);
    assert_eq!(schedule.variant(), variant);
    let mut exec = executor_for(&schedule, bf, bc).unwrap();
    let mut c = BlockCsr::zeros(base.c.clone(), bc, bc);
    c.values_mut().fill(f64::NAN); // every slot must be written
    exec.numeric(a, p, &mut c).unwrap();
    c
}

fn assert_matches_v0(variant: Variant, a: &BlockCsr, p: &BlockCsr, what: &str) {
    let v0 = product(Variant::TwoPass, a, p);
    let got = product(variant, a, p);
    assert_eq!(got.pattern(), v0.pattern(), "{variant} {what}: pattern");
    if variant.bitwise_v0() {
        let same = got
            .values()
            .iter()
            .zip(v0.values())
            .all(|(x, y)| x.to_bits() == y.to_bits());
        assert!(
            same,
            "{variant} {what}: not bitwise identical to V0 (rel {:e})",
            relative_frobenius(got.values(), v0.values())
        );
    } else {
        let err = relative_frobenius(got.values(), v0.values());
        assert!(err <= TOL, "{variant} {what}: relative error {err:e}");
    }
}

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

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]

    #[test]
    fn variants_match_v0_on_3x3_3x6(seed in any::<u64>(), nf in 1usize..60, nc in 1usize..14) {
        let (a, p) = random_case(seed, nf, nc, 3, 6);
        for v in Variant::ALL {
            assert_matches_v0(v, &a, &p, &format!("seed {seed} 3x3/3x6"));
        }
    }

    #[test]
    fn variants_match_v0_on_6x6_6x6(seed in any::<u64>(), nf in 1usize..40, nc in 1usize..10) {
        let (a, p) = random_case(seed, nf, nc, 6, 6);
        for v in Variant::ALL {
            assert_matches_v0(v, &a, &p, &format!("seed {seed} 6x6/6x6"));
        }
    }

    #[test]
    fn variants_match_v0_on_1x1_1x1(seed in any::<u64>(), nf in 1usize..80, nc in 1usize..20) {
        let (a, p) = random_case(seed, nf, nc, 1, 1);
        for v in Variant::ALL {
            assert_matches_v0(v, &a, &p, &format!("seed {seed} 1x1/1x1"));
        }
    }
}

#[test]
fn variants_match_v0_on_the_beam_hierarchy_at_k2() {
    // Arrange: a three-level hierarchy so both 3x3/3x6 and 6x6/6x6 products occur.
    let problem = BeamProblem::build(2).unwrap();
    let mut opts = HierarchyOptions::default();
    opts.amg.coarse_eq_limit = 100;
    let h = Hierarchy::build(problem.a, &problem.near_null, 6, &opts, &mut |_| {}).unwrap();
    assert!(
        h.num_levels() >= 3,
        "want at least two products, got {} levels",
        h.num_levels()
    );
    for l in 0..h.num_levels() - 1 {
        let lev = &h.levels()[l];
        let p = &lev.transfer.as_ref().unwrap().p;
        for v in Variant::ALL {
            // Act + Assert
            assert_matches_v0(v, &lev.a, p, &format!("beam k=2 level {l}"));
        }
    }
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
