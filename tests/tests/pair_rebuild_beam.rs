//! The beam's tensor-pair schedules through a schedule file (format 5 stores
//! the units, not their entries): every level loads with the inspector's
//! entries, the same entries in the same order.
use ptap_fem::BeamProblem;
use ptap_runtime::bundle::{hierarchy_bundle, load_level};
use ptap_runtime::{Hierarchy, HierarchyOptions};
use ptap_schedules::file::{write_bundle, MappedBundle};
use ptap_schedules::{Variant, VariantSchedule};
use std::sync::Arc;

#[test]
fn the_beams_tensor_pair_entries_are_rebuilt_exactly() {
    let problem = BeamProblem::build(3).unwrap();
    let mut opts = HierarchyOptions::default();
    opts.amg.coarse_eq_limit = 100;
    opts.variant = Some(Variant::TensorPair);
    let h = Hierarchy::build(problem.a.clone(), &problem.near_null, 6, &opts, &mut |_| {}).unwrap();
    let path = std::env::temp_dir().join(format!("ptap-pair-beam-{}.ptaps", std::process::id()));
    write_bundle(&path, &hierarchy_bundle(&h, "beam k = 3")).unwrap();
    let bundle = Arc::new(MappedBundle::open(&path).unwrap());
    std::fs::remove_file(&path).unwrap(); // the mapping stays valid
    let mut checked = 0;
    for (l, lev) in h.levels().iter().enumerate() {
        let Some(t) = lev.transfer.as_ref() else { continue };
        let VariantSchedule::TensorPair(built) = &t.variant_schedule else {
            panic!("level {l} is not a tensor pair")
        };
        let stored = load_level(&bundle, l as u32, &lev.pattern).unwrap();
        let VariantSchedule::TensorPair(loaded) = &stored.schedule else {
            panic!("level {l} loads as another variant")
        };
        assert_eq!(loaded.ap, built.ap, "level {l}, A P");
        assert_eq!(loaded.rw, built.rw, "level {l}, P^T W");
        assert!(loaded.ap.entries() < loaded.split.tiled.ap.contributions());
        checked += 1;
    }
    assert!(checked >= 2, "{checked} levels");
}
