//! Mesh setup gives the same bytes whatever the number of threads: the
//! aggregates, every level's `P`, product schedule and options figures, and
//! the coarse operators aggregation reads. The digests below were taken from
//! the serial-concatenation code this parallel setup replaced (commit
//! 3c24c01), so they also pin the setup to what it was before.
use ptap_amg::Aggregation;
use ptap_fem::BeamProblem;
use ptap_runtime::{HierarchyOptions, MeshSetup};
use ptap_schedules::file::ArrayData;
use ptap_schedules::Variant;

/// blake3 of everything mesh setup decided, level by level.
fn digest(s: &MeshSetup) -> String {
    let mut h = blake3::Hasher::new();
    let u64s = |h: &mut blake3::Hasher, v: &[usize]| {
        for &x in v {
            h.update(&(x as u64).to_le_bytes());
        }
    };
    for (l, lev) in s.levels.iter().enumerate() {
        let pat = lev.a.pattern();
        u64s(&mut h, &[l, pat.nrows(), pat.ncols(), lev.a.block_shape().0]);
        u64s(&mut h, pat.row_ptr());
        for &c in pat.col_idx() {
            h.update(&c.to_le_bytes());
        }
        if lev.has_values && l > 0 {
            for v in lev.a.values() {
                h.update(&v.to_bits().to_le_bytes());
            }
        }
        let Some(t) = &lev.transfer else { continue };
        u64s(
            &mut h,
            &[
                t.aggregates,
                t.merged_aggregates,
                t.unaggregated_nodes,
                t.omega.to_bits() as usize,
            ],
        );
        let (bf, bc) = t.p.block_shape();
        u64s(&mut h, t.p.pattern().row_ptr());
        for &c in t.p.pattern().col_idx() {
            h.update(&c.to_le_bytes());
        }
        for v in t.p.values() {
            h.update(&v.to_bits().to_le_bytes());
        }
        let rec = t.variant_schedule.to_record(l as u32, bf, bc);
        h.update(rec.variant.as_bytes());
        for (name, value) in &rec.sizes {
            h.update(name.as_bytes());
            h.update(&value.to_le_bytes());
        }
        for a in &rec.arrays {
            h.update(a.name.as_bytes());
            match &a.data {
                ArrayData::U32(v) => v.iter().for_each(|x| {
                    h.update(&x.to_le_bytes());
                }),
                ArrayData::U64(v) => v.iter().for_each(|x| {
                    h.update(&x.to_le_bytes());
                }),
                ArrayData::F64(v) => v.iter().for_each(|x| {
                    h.update(&x.to_bits().to_le_bytes());
                }),
            }
        }
    }
    h.finalize().to_hex().to_string()
}

fn setup_on(threads: usize, problem: &BeamProblem, aggregation: Aggregation, pf: f64, variant: Variant) -> String {
    let mut opts = HierarchyOptions::default();
    opts.amg.coarse_eq_limit = 100;
    opts.amg.aggregation = aggregation;
    opts.amg.pf = pf;
    opts.variant = Some(variant);
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
    let s = pool.install(|| MeshSetup::build(problem.a.clone(), &problem.near_null, 6, &opts, &mut |_| {}).unwrap());
    assert!(s.levels.len() >= 3, "{} levels", s.levels.len());
    digest(&s)
}

#[test]
fn mesh_setup_is_the_same_bytes_on_1_and_4_threads_and_as_before() {
    let problem = BeamProblem::build(2).unwrap();
    let cases = [
        (Aggregation::Natural, 0.0, Variant::TwoPass, PINNED[0]),
        (Aggregation::Natural, 0.03, Variant::ColumnSplit, PINNED[1]),
        (Aggregation::Petsc, 0.03, Variant::ColumnSplit, PINNED[2]),
    ];
    let got: Vec<(String, String)> = cases
        .iter()
        .map(|&(aggregation, pf, variant, _)| {
            (
                setup_on(1, &problem, aggregation, pf, variant),
                setup_on(4, &problem, aggregation, pf, variant),
            )
        })
        .collect();
    for ((aggregation, pf, variant, pinned), (one, four)) in cases.iter().zip(&got) {
        assert_eq!(one, four, "{aggregation} pf {pf} {variant}: 1 and 4 threads differ");
        assert_eq!(
            one, pinned,
            "{aggregation} pf {pf} {variant}: not the serial code's bytes; all: {got:?}"
        );
    }
}

const PINNED: [&str; 3] = [
    "7e03faa7b0f67617a8d7e0f5ed6c83ec0c48767ba02e2a416a1923f65e1b0646",
    "90fbd2c19aebfe67ed23237a856f5dc43edb0f858498e0a2b3b3da594d22606f",
    "19d60f0ccc00dbfa1a30f81bee7e2e943e9b9cb4a511518c22a0d3d8a49fc041",
];
