//! Schedules edited in range and resealed (issue 13, class 1): the keyed tag
//! refuses every such edit; with the tag forged too (a writer holding the key,
//! or a bug), the loader's own checks refuse what they can see.
use ptap_schedules::file::{
    reseal_for_testing, seal_for_testing, validate_bytes_with_key, write_bundle_with_key, ArrayKind, MappedBundle,
    ScheduleBundle,
};
use ptap_schedules::key::TagKey;
use ptap_schedules::{ScheduleFileError, TwoPassSchedule, Variant, VariantSchedule};
use ptap_sparse::BlockPattern;
use std::sync::Arc;

fn patterns() -> (Arc<BlockPattern>, Arc<BlockPattern>) {
    let (n, m) = (60usize, 12usize);
    let a_rows: Vec<Vec<u32>> = (0..n)
        .map(|i| {
            let mut r: Vec<u32> = [i.saturating_sub(3), i, (i + 3).min(n - 1)]
                .iter()
                .map(|&c| c as u32)
                .collect();
            r.dedup();
            r
        })
        .collect();
    // Each fifth row also couples to the next aggregate, so R's rows have gaps.
    let p_rows: Vec<Vec<u32>> = (0..n)
        .map(|i| {
            let c = (i / 5) as u32;
            if i % 5 == 0 && c + 1 < m as u32 {
                vec![c, c + 1]
            } else {
                vec![c]
            }
        })
        .collect();
    (
        Arc::new(BlockPattern::from_rows(n, &a_rows).unwrap()),
        Arc::new(BlockPattern::from_rows(m, &p_rows).unwrap()),
    )
}

const KEY: [u8; 32] = [7; 32];

/// A temporary file name of its own per call: the tests run in parallel in one
/// process, and two of them writing (and removing) one path made each other fail.
fn temp_path(tag: &str) -> std::path::PathBuf {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    std::env::temp_dir().join(format!("ptap-forged-{}-{n}-{tag}.ptaps", std::process::id()))
}

/// A written two-pass schedule's bytes.
fn written(variant: Variant) -> (Vec<u8>, Arc<BlockPattern>, Arc<BlockPattern>) {
    written_for(variant, patterns())
}

/// [`patterns`] with `A`'s couplings made symmetric (the symmetric tensor pair refuses others).
fn symmetric_patterns() -> (Arc<BlockPattern>, Arc<BlockPattern>) {
    let (_, p) = patterns();
    let n = 60usize;
    let rows: Vec<Vec<u32>> = (0..n)
        .map(|i| {
            [i.checked_sub(3), Some(i), (i + 3 < n).then_some(i + 3)]
                .into_iter()
                .flatten()
                .map(|c| c as u32)
                .collect()
        })
        .collect();
    (Arc::new(BlockPattern::from_rows(n, &rows).unwrap()), p)
}

fn written_for(
    variant: Variant,
    (a, p): (Arc<BlockPattern>, Arc<BlockPattern>),
) -> (Vec<u8>, Arc<BlockPattern>, Arc<BlockPattern>) {
    let base = Arc::new(TwoPassSchedule::inspect(a.clone(), p.clone()).unwrap());
    let s = VariantSchedule::inspect(variant, base, 2);
    let bundle = ScheduleBundle {
        created_by: "test".into(),
        problem: "forged".into(),
        records: vec![s.to_record(0, 1, 2)],
    };
    let path = temp_path(&variant.to_string());
    write_bundle_with_key(&path, &bundle, &TagKey::from_bytes(KEY)).unwrap();
    let bytes = std::fs::read(&path).unwrap();
    std::fs::remove_file(&path).unwrap();
    (bytes, a, p)
}

/// Changes one `u32` of array `name`: the first entry `k` that can grow by one
/// and stay below `bound` and (but in the unsorted `r.source`) below its
/// successor, so a sorted row stays sorted.
fn edit_u32(bytes: &mut [u8], name: &str, bound: u32) {
    let key = TagKey::from_bytes(KEY);
    let (off, kind, len) = {
        let m = validate_bytes_with_key(bytes, &key).unwrap();
        m.record(0).unwrap().array_file_offset(name).unwrap()
    };
    assert_eq!(kind, ArrayKind::U32);
    let at = |k: u64| (off + 4 * k) as usize;
    let get = |b: &[u8], k: u64| u32::from_le_bytes(b[at(k)..at(k) + 4].try_into().unwrap());
    let k = (0..len)
        .find(|&k| {
            let v = get(bytes, k);
            v + 1 < bound && (name == "r.source" || k + 1 == len || get(bytes, k + 1) != v + 1)
        })
        .expect("an editable entry");
    let v = get(bytes, k) + 1;
    bytes[at(k)..at(k) + 4].copy_from_slice(&v.to_le_bytes());
}

fn load(bytes: &[u8], a: &Arc<BlockPattern>, p: &Arc<BlockPattern>) -> Result<VariantSchedule, ScheduleFileError> {
    let m = Arc::new(validate_bytes_with_key(bytes, &TagKey::from_bytes(KEY))?);
    VariantSchedule::from_record(&m, 0, a.clone(), p.clone())
}

#[test]
fn in_range_edits_resealed_without_the_key_are_refused() {
    let (bytes, a, p) = written(Variant::TwoPass);
    load(&bytes, &a, &p).expect("the intact file loads");
    for (name, bound) in [
        ("c.col_idx", 12),
        ("w.col_idx", 12),
        ("r.col_idx", 60),
        ("r.source", 60),
    ] {
        let mut b = bytes.clone();
        edit_u32(&mut b, name, bound);
        reseal_for_testing(&mut b);
        let e = load(&b, &a, &p).unwrap_err();
        assert!(matches!(e, ScheduleFileError::Untrusted { .. }), "{name}: {e:?}");
        let msg = e.to_string();
        assert!(msg.contains("re-run `ptap inspect`"), "{msg}");
        // Another user's key refuses the intact file too.
        let e = MappedBundle::from_bytes(&bytes, "x".as_ref(), &TagKey::from_bytes([8; 32])).unwrap_err();
        assert!(matches!(e, ScheduleFileError::Untrusted { .. }), "{e:?}");
    }
}

#[test]
fn r_edits_are_refused_even_with_a_valid_tag() {
    let key = TagKey::from_bytes(KEY);
    let (bytes, a, p) = written(Variant::TwoPass);
    for (name, bound) in [("r.col_idx", 60), ("r.source", 71)] {
        let mut b = bytes.clone();
        edit_u32(&mut b, name, bound);
        seal_for_testing(&mut b, &key);
        let e = load(&b, &a, &p).unwrap_err();
        assert!(matches!(e, ScheduleFileError::Invalid { .. }), "{name}: {e:?}");
        assert!(
            e.to_string().contains("do not describe the transpose of the stored P"),
            "{name}: {e}"
        );
    }
}

#[test]
fn a_zero_window_and_an_oversized_panel_are_refused() {
    let key = TagKey::from_bytes(KEY);
    let edit_size = |variant: Variant, name: &str, value: u64| {
        let (bytes, a, p) = written(variant);
        let m = validate_bytes_with_key(&bytes, &key).unwrap();
        let mut rec = m.record(0).unwrap().to_record().unwrap();
        rec.sizes.iter_mut().find(|(n, _)| n == name).unwrap().1 = value;
        let bundle = ScheduleBundle {
            created_by: "test".into(),
            problem: "forged".into(),
            records: vec![rec],
        };
        let path = temp_path(&format!("size-{name}"));
        write_bundle_with_key(&path, &bundle, &key).unwrap();
        let b = std::fs::read(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        load(&b, &a, &p).unwrap_err().to_string()
    };
    let e = edit_size(Variant::ColumnSplit, "window", 0);
    assert!(e.contains("the column-split window is 0"), "{e}");
    let e = edit_size(Variant::PanelTiled, "max_panel_blocks", 1 << 40);
    assert!(
        e.contains("`max_panel_blocks` is 1099511627776 but the largest panel holds"),
        "{e}"
    );
}

/// Adds `delta` to entry `k` of the `u64` array `name`.
fn edit_u64(bytes: &mut [u8], name: &str, k: u64, delta: i64) {
    let key = TagKey::from_bytes(KEY);
    let (off, kind, len) = {
        let m = validate_bytes_with_key(bytes, &key).unwrap();
        m.record(0).unwrap().array_file_offset(name).unwrap()
    };
    assert_eq!(kind, ArrayKind::U64);
    assert!(k < len);
    let at = (off + 8 * k) as usize;
    let v = u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap()).wrapping_add_signed(delta);
    bytes[at..at + 8].copy_from_slice(&v.to_le_bytes());
}

#[test]
fn tensor_pair_units_that_do_not_merge_the_runs_are_refused() {
    let key = TagKey::from_bytes(KEY);
    let (bytes, a, p) = written(Variant::TensorPair);
    let VariantSchedule::TensorPair(s) = load(&bytes, &a, &p).expect("the intact file loads") else {
        panic!("not a tensor-pair schedule")
    };
    // Rows 2r and 2r + 1 of W share columns: some entries serve two slots.
    assert!(s.ap.entries() < s.split.tiled.ap.contributions());
    // Format 5 stores the units, not their entries (rebuilt at load).
    {
        let m = validate_bytes_with_key(&bytes, &key).unwrap();
        let rec = m.record(0).unwrap();
        assert!(rec.arrays().all(|(n, _, _)| !n.ends_with(".pair.ent")));
        assert!(rec.array_file_offset("ap.pair.slots").is_some() && rec.array_file_offset("rw.pair.ptr").is_some());
    }
    for (name, bound) in [("ap.pair.slots", 100), ("rw.pair.slots", 100)] {
        let mut b = bytes.clone();
        edit_u32(&mut b, name, bound);
        seal_for_testing(&mut b, &key);
        let e = load(&b, &a, &p).unwrap_err().to_string();
        assert!(
            e.contains("units do not merge each slot's run exactly once"),
            "{name}: {e}"
        );
    }
    // A unit pointer moved by one (a unit one entry longer, its neighbour one
    // shorter): still a pointer array, but not the counts of the merges.
    for (name, units) in [("ap.pair.ptr", s.ap.units()), ("rw.pair.ptr", s.rw.units())] {
        let k = (1..units as u64)
            .find(|&k| {
                let ptr = if name.starts_with("ap") { &s.ap.ptr } else { &s.rw.ptr };
                ptr[k as usize + 1] > ptr[k as usize]
            })
            .expect("a unit with entries");
        let mut b = bytes.clone();
        edit_u64(&mut b, name, k, 1);
        seal_for_testing(&mut b, &key);
        let e = load(&b, &a, &p).unwrap_err().to_string();
        assert!(
            e.contains("units do not merge each slot's run exactly once"),
            "{name}: {e}"
        );
        // The last pointer far past the contributions.
        let mut b = bytes.clone();
        edit_u64(&mut b, name, units as u64, 1 << 40);
        seal_for_testing(&mut b, &key);
        let e = load(&b, &a, &p).unwrap_err().to_string();
        assert!(
            e.contains("units do not merge each slot's run exactly once"),
            "{name}: {e}"
        );
    }
}

/// Flips the bits `mask` of entry `k` of the `u32` array `name`.
fn xor_u32(bytes: &mut [u8], name: &str, k: u64, mask: u32) {
    let key = TagKey::from_bytes(KEY);
    let (off, kind, len) = {
        let m = validate_bytes_with_key(bytes, &key).unwrap();
        m.record(0).unwrap().array_file_offset(name).unwrap()
    };
    assert_eq!(kind, ArrayKind::U32);
    assert!(k < len);
    let at = (off + 4 * k) as usize;
    let v = u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()) ^ mask;
    bytes[at..at + 4].copy_from_slice(&v.to_le_bytes());
}

/// The length of the merge by `y` of two runs' `y` blocks, as the loader's
/// units count it (an equal `y` on both sides is one entry).
fn merged_len(a: &[u32], b: &[u32]) -> usize {
    let (mut i, mut j, mut n) = (0, 0, 0);
    while i < a.len() || j < b.len() {
        if i < a.len() && j < b.len() && b[j] <= a[i] {
            i += (b[j] == a[i]) as usize;
            j += 1;
        } else if i < a.len() {
            i += 1;
        } else {
            j += 1;
        }
        n += 1;
    }
    n
}

#[test]
fn symmetric_pair_units_whose_diagonals_miss_the_tail_step_are_refused() {
    use ptap_schedules::variants::NO_BLOCK;
    let key = TagKey::from_bytes(KEY);
    // Couplings at distance 1 and 3: row 2r + 1's runs hold row 2r's diagonal `y` too.
    let (_, p) = patterns();
    let n = 60i64;
    let rows: Vec<Vec<u32>> = (0..n)
        .map(|i| {
            [-3, -1, 0, 1, 3]
                .iter()
                .map(|d| i + d)
                .filter(|c| (0..n).contains(c))
                .map(|c| c as u32)
                .collect()
        })
        .collect();
    let a = Arc::new(BlockPattern::from_rows(n as usize, &rows).unwrap());
    let (bytes, a, p) = written_for(Variant::TensorPairSym, (a, p));
    let VariantSchedule::TensorPairSym(s) = load(&bytes, &a, &p).expect("the intact file loads") else {
        panic!("not a symmetric tensor-pair schedule")
    };
    let (ap, pairs) = (&s.ap, &s.ap_pairs);
    // A unit whose second run holds the first run's diagonal `y` behind another entry and
    // ahead of its own diagonal. Moved to the front of that run, the block keeps its row,
    // the run still ends on its diagonal, and the units (their lengths mended) still merge
    // every run once; but the merge now puts the first run's diagonal three or more from
    // the end, where the device's pair kernel would take it whole.
    let (u, r1, at) = (0..pairs.units())
        .find_map(|u| {
            let s1 = pairs.slots[2 * u + 1];
            let r0 = ap.run(pairs.slots[2 * u] as usize);
            let r1 = (s1 != NO_BLOCK).then(|| ap.run(s1 as usize))?;
            let at = ap.y[r1.clone()].iter().position(|&y| y == ap.y[r0.end - 1])?;
            (at >= 1 && at + 1 < r1.len()).then_some((u, r1, at))
        })
        .expect("a unit whose second run holds the first's diagonal y mid-run");
    let r0 = ap.run(pairs.slots[2 * u] as usize);
    let mut b = bytes.clone();
    let mut ys = ap.y[r1.clone()].to_vec();
    for (name, v) in [("ap.x", &ap.x), ("ap.y", &ap.y)] {
        let mut moved = v[r1.clone()].to_vec();
        moved[..=at].rotate_right(1);
        if name == "ap.y" {
            ys = moved.clone();
        }
        for (k, (&old, &new)) in v[r1.clone()].iter().zip(&moved).enumerate() {
            if old != new {
                xor_u32(&mut b, name, (r1.start + k) as u64, old ^ new);
                seal_for_testing(&mut b, &key);
            }
        }
    }
    let y0 = &ap.y[r0];
    let delta = merged_len(y0, &ys) as i64 - merged_len(y0, &ap.y[r1.clone()]) as i64;
    if delta != 0 {
        for k in u + 1..=pairs.units() {
            edit_u64(&mut b, "ap.pair.ptr", k as u64, delta);
            seal_for_testing(&mut b, &key);
        }
    }
    let e = load(&b, &a, &p).unwrap_err().to_string();
    assert!(e.contains("not among the last two entries of its pair unit"), "{e}");
}

#[test]
fn symmetric_pair_flags_blocks_and_mirrors_that_lie_are_refused() {
    use ptap_schedules::variants::DIAGONAL_FLAG;
    let key = TagKey::from_bytes(KEY);
    let (bytes, a, p) = written_for(Variant::TensorPairSym, symmetric_patterns());
    let VariantSchedule::TensorPairSym(s) = load(&bytes, &a, &p).expect("the intact file loads") else {
        panic!("not a symmetric tensor-pair schedule")
    };
    let flagged = s.ap.x.iter().position(|&x| x & DIAGONAL_FLAG != 0).unwrap() as u64;
    let plain = s.ap.x.iter().position(|&x| x & DIAGONAL_FLAG == 0).unwrap() as u64;
    // A diagonal block unflagged (it would not be halved), an off-diagonal one flagged.
    for k in [flagged, plain] {
        let mut b = bytes.clone();
        xor_u32(&mut b, "ap.x", k, DIAGONAL_FLAG);
        seal_for_testing(&mut b, &key);
        let e = load(&b, &a, &p).unwrap_err().to_string();
        assert!(e.contains("its diagonal flag is wrong"), "{k}: {e}");
    }
    // A run's diagonal contribution swapped with the one before it (both sides): the same
    // sum, but the device's halving kernel takes a run's diagonal block last.
    let q = (0..s.ap.slots())
        .find(|&t| s.ap.run(t).len() >= 2 && s.ap.x[s.ap.ptr[t + 1] as usize - 1] & DIAGONAL_FLAG != 0)
        .map(|t| s.ap.ptr[t + 1] - 1)
        .expect("a run of two or more ending on the diagonal");
    let mut b = bytes.clone();
    for (name, v) in [("ap.x", &s.ap.x), ("ap.y", &s.ap.y)] {
        let d = v[q as usize] ^ v[q as usize - 1];
        for k in [q, q - 1] {
            xor_u32(&mut b, name, k, d);
            seal_for_testing(&mut b, &key);
        }
    }
    let e = load(&b, &a, &p).unwrap_err().to_string();
    assert!(e.contains("not its run's last"), "{e}");
    // An `x` block moved to the next block of A (upper, or the diagonal unflagged).
    let mut b = bytes.clone();
    edit_u32(&mut b, "ap.x", a.nnzb() as u32);
    seal_for_testing(&mut b, &key);
    let e = load(&b, &a, &p).unwrap_err().to_string();
    assert!(e.contains("at or left of the diagonal"), "{e}");
    // A transposed-slot map that points elsewhere, in range and out of it.
    let nc = s.base.c.nnzb() as u32;
    for (mask, what) in [(0u32, "in range"), (1 << 30, "out of range")] {
        let mut b = bytes.clone();
        if mask == 0 {
            edit_u32(&mut b, "c.transpose", nc);
        } else {
            xor_u32(&mut b, "c.transpose", 0, mask);
        }
        seal_for_testing(&mut b, &key);
        let e = load(&b, &a, &p).unwrap_err().to_string();
        assert!(
            e.contains("`c.transpose` does not map every slot of A_c onto its transposed slot"),
            "{what}: {e}"
        );
    }
    // The units stay checked as the tensor pair's are.
    let mut b = bytes.clone();
    edit_u32(&mut b, "ap.pair.slots", 100);
    seal_for_testing(&mut b, &key);
    let e = load(&b, &a, &p).unwrap_err().to_string();
    assert!(e.contains("units do not merge each slot's run exactly once"), "{e}");
}

/// Format 7's folded `P^T W'` units (one per slot of `A_c`'s upper triangle,
/// with its mirror or, on the diagonal, the absent mark): forged marks,
/// slots outside the upper triangle and wrong half lengths are refused in a
/// sentence, never followed.
#[test]
fn symmetric_pair_folded_units_that_lie_are_refused() {
    use ptap_schedules::variants::NO_BLOCK;
    let key = TagKey::from_bytes(KEY);
    let (bytes, a, p) = written_for(Variant::TensorPairSym, symmetric_patterns());
    let VariantSchedule::TensorPairSym(s) = load(&bytes, &a, &p).expect("the intact file loads") else {
        panic!("not a symmetric tensor-pair schedule")
    };
    {
        let m = validate_bytes_with_key(&bytes, &key).unwrap();
        let rec = m.record(0).unwrap();
        assert!(rec.array_file_offset("rw.fold.slots").is_some() && rec.array_file_offset("rw.pair.ptr").is_none());
    }
    let f = &s.rw_fold;
    let off = (0..f.units()).find(|&u| f.slots[2 * u + 1] != NO_BLOCK).unwrap() as u64;
    let diag = (0..f.units()).find(|&u| f.slots[2 * u + 1] == NO_BLOCK).unwrap() as u64;
    let refused = |b: &mut Vec<u8>, what: &str, want: &str| {
        seal_for_testing(b, &key);
        let e = load(b, &a, &p).unwrap_err().to_string();
        assert!(
            e.contains("the `rw.fold` units are not the inspector's") && e.contains(want),
            "{what}: {e}"
        );
    };
    // The absent mark on an off-diagonal unit, and a diagonal unit naming itself as its mirror.
    let mut b = bytes.clone();
    xor_u32(
        &mut b,
        "rw.fold.slots",
        2 * off + 1,
        f.slots[2 * off as usize + 1] ^ NO_BLOCK,
    );
    refused(&mut b, "absent mark forged", "is not the mirror of its first");
    let mut b = bytes.clone();
    xor_u32(
        &mut b,
        "rw.fold.slots",
        2 * diag + 1,
        NO_BLOCK ^ f.slots[2 * diag as usize],
    );
    refused(&mut b, "diagonal mirror forged", "is not the mirror of its first");
    // A unit led by the lower triangle's slot (its mirror), and a slot far out of range.
    let (s0, s1) = (f.slots[2 * off as usize], f.slots[2 * off as usize + 1]);
    let mut b = bytes.clone();
    xor_u32(&mut b, "rw.fold.slots", 2 * off, s0 ^ s1);
    seal_for_testing(&mut b, &key);
    xor_u32(&mut b, "rw.fold.slots", 2 * off + 1, s0 ^ s1);
    refused(&mut b, "lower triangle", "which is not slot");
    let mut b = bytes.clone();
    xor_u32(&mut b, "rw.fold.slots", 0, 1 << 30);
    refused(&mut b, "out of range", "which is not slot");
    // A half one entry longer (its successor shorter), and the last pointer far out.
    let k = (1..2 * f.units() as u64)
        .find(|&k| f.ptr[k as usize + 1] > f.ptr[k as usize])
        .unwrap();
    let mut b = bytes.clone();
    edit_u64(&mut b, "rw.fold.ptr", k, 1);
    refused(&mut b, "half moved", "entry ranges are not as long as its slots' runs");
    let mut b = bytes.clone();
    edit_u64(&mut b, "rw.fold.ptr", 2 * f.units() as u64, 1 << 40);
    refused(
        &mut b,
        "last pointer",
        "entry ranges are not as long as its slots' runs",
    );
}
