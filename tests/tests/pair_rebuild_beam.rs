//! The beam's tensor-pair schedules through a schedule file (format 5 stores
//! the units, not their entries; the inspector builds none either): every
//! level loads the inspector's units, and the entries built from them and the
//! loaded runs, on the host and (where there is a GPU) as the device builds
//! them, are the plain reference's from the runs, in the same order.
use ptap_fem::BeamProblem;
use ptap_runtime::bundle::{hierarchy_bundle, load_level};
use ptap_runtime::{Hierarchy, HierarchyOptions};
use ptap_schedules::file::{write_bundle, MappedBundle};
use ptap_schedules::variants::{reference, PairedRuns};
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
    let dev = ptap_tests::cuda_device_or_skip(ptap_cuda::DeviceOptions::default());
    let (mut checked, mut on_device) = (0, 0);
    for (l, lev) in h.levels().iter().enumerate() {
        let Some(t) = lev.transfer.as_ref() else { continue };
        let VariantSchedule::TensorPair(built) = &t.variant_schedule else {
            panic!("level {l} is not a tensor pair")
        };
        let stored = load_level(&bundle, l as u32, &lev.pattern).unwrap();
        let VariantSchedule::TensorPair(loaded) = &stored.schedule else {
            panic!("level {l} loads as another variant")
        };
        for (got, want, runs) in [
            (&loaded.ap, &built.ap, &loaded.split.tiled.ap),
            (&loaded.rw, &built.rw, &loaded.split.tiled.rw),
        ] {
            assert!(got.ent.is_empty() && want.ent.is_empty());
            assert_eq!(got, want, "level {l}");
            let plain = reference::pair_entries(want, runs);
            let r = PairedRuns::rebuild(got.width, got.ptr.clone(), got.slots.clone(), runs).unwrap();
            assert!(r.ent[..] == plain[..], "level {l}: the host's entries differ");
            // The device builds the same entries from the loaded units and runs.
            if let Some(dev) = &dev {
                let ent = ptap_cuda::pair_entries_on_device(dev, got, runs).unwrap();
                assert!(ent == plain, "level {l}: the device's entries differ");
            }
        }
        assert!(loaded.ap.entries() < loaded.split.tiled.ap.contributions());
        on_device += dev.is_some() as usize;
        checked += 1;
    }
    assert!(checked >= 2, "{checked} levels");
    assert!(dev.is_none() || on_device == checked);
}

/// The beam's symmetric tensor-pair schedules through a schedule file (format
/// 7): every level loads the inspector's `W'` pattern, runs, units (the `A P`
/// pairs and the folded `P^T W'` units) and transposed-slot map, and the
/// entries rebuilt from the loaded units and runs (on the host and, where
/// there is a GPU, on the device) are the inspector's. The `A P` stage runs
/// about half of the tensor pair's contributions; the folded stage one unit
/// per slot of `A_c`'s upper triangle. The inspector builds no entries: the
/// plain reference from the runs is what both are held to.
#[test]
fn the_beams_symmetric_pair_schedules_round_trip_exactly() {
    let problem = BeamProblem::build(3).unwrap();
    let mut opts = HierarchyOptions::default();
    opts.amg.coarse_eq_limit = 100;
    opts.variant = Some(Variant::TensorPairSym);
    let h = Hierarchy::build(problem.a.clone(), &problem.near_null, 6, &opts, &mut |_| {}).unwrap();
    let path = std::env::temp_dir().join(format!("ptap-sym-beam-{}.ptaps", std::process::id()));
    write_bundle(&path, &hierarchy_bundle(&h, "beam k = 3")).unwrap();
    let bundle = Arc::new(MappedBundle::open(&path).unwrap());
    std::fs::remove_file(&path).unwrap();
    let dev = ptap_tests::cuda_device_or_skip(ptap_cuda::DeviceOptions::default());
    let mut checked = 0;
    for (l, lev) in h.levels().iter().enumerate() {
        let Some(t) = lev.transfer.as_ref() else { continue };
        let VariantSchedule::TensorPairSym(built) = &t.variant_schedule else {
            panic!("level {l} is not a symmetric tensor pair")
        };
        let stored = load_level(&bundle, l as u32, &lev.pattern).unwrap();
        let VariantSchedule::TensorPairSym(loaded) = &stored.schedule else {
            panic!("level {l} loads as another variant")
        };
        assert_eq!(*loaded.wh, *built.wh, "level {l}");
        assert_eq!((&loaded.ap, &loaded.rw), (&built.ap, &built.rw), "level {l}");
        assert_eq!(loaded.transpose, built.transpose, "level {l}");
        assert_eq!(loaded.ap_order, built.ap_order, "level {l}");
        let (got, want, runs) = (&loaded.ap_pairs, &built.ap_pairs, &loaded.ap);
        assert!(got.ent.is_empty() && want.ent.is_empty());
        assert_eq!(got, want, "level {l}");
        let plain = reference::pair_entries(want, runs);
        let r = PairedRuns::rebuild(got.width, got.ptr.clone(), got.slots.clone(), runs).unwrap();
        assert!(r.ent[..] == plain[..], "level {l}: the host's entries differ");
        if let Some(dev) = &dev {
            let ent = ptap_cuda::pair_entries_on_device(dev, got, runs).unwrap();
            assert!(ent == plain, "level {l}: the device's entries differ");
        }
        // The folded units: each half is its slot's run, the diagonal's second half empty.
        assert_eq!(loaded.rw_fold, built.rw_fold, "level {l}");
        let f = &loaded.rw_fold;
        let c = &built.base.c;
        let upper: usize = (0..c.nrows())
            .map(|i| c.row(i).iter().filter(|&&j| j as usize >= i).count())
            .sum();
        assert_eq!((f.units(), f.entries()), (upper, built.rw.contributions()), "level {l}");
        let ent = f.entries_of(&loaded.rw);
        assert_eq!(ent.len(), 2 * built.rw.contributions());
        if let Some(dev) = &dev {
            let got = ptap_cuda::pair_entries_on_device(dev, &f.halves(), &loaded.rw).unwrap();
            assert!(got == ent, "level {l}: the device's folded entries differ");
        }
        let full: usize = (0..lev.a.pattern().nrows())
            .map(|i| {
                lev.a
                    .pattern()
                    .row(i)
                    .iter()
                    .map(|&k| t.p.pattern().row(k as usize).len())
                    .sum::<usize>()
            })
            .sum();
        let (ap, _) = built.contributions();
        assert!(2 * ap < full + full / 4, "level {l}: {ap} of {full} A P contributions");
        checked += 1;
    }
    assert!(checked >= 2, "{checked} levels");
}

/// The symmetric pair's work at k = 16 (the bench's hierarchy): per level the
/// block contributions of both stages against the tensor pair's, and the
/// units the device runs. Prints them (the ledger's counts) and checks the
/// `A P` stage runs at most 60 % of the full product's contributions.
#[test]
#[ignore = "k = 16 needs ~6 GB of host memory; run with --include-ignored"]
fn the_symmetric_pair_halves_the_a_p_work_at_k16() {
    use ptap_schedules::variants::row_work;
    for (l, _, s) in ptap_tests::beam_sym_pair_levels(16) {
        let b = &s.base;
        let full_ap: usize = row_work(&b.a, &b.p).iter().sum();
        let full_rw = b.stats.block_multiplies - full_ap;
        let (ap, rw) = s.contributions();
        println!(
            "level {l}: A P {ap} of {full_ap} ({:.3}), P^T W {rw} of {full_rw} ({:.3}), W' {} of {} blocks, \
             A P units {} ({} entries), P^T W' folded units {} (of {} slots)",
            ap as f64 / full_ap as f64,
            rw as f64 / full_rw as f64,
            s.wh.nnzb(),
            b.w.nnzb(),
            s.ap_pairs.units(),
            s.ap_pairs.entries(),
            s.rw_fold.units(),
            b.c.nnzb()
        );
        assert!(10 * ap <= 6 * full_ap && rw <= full_rw, "level {l}");
    }
}

/// The run lengths of the symmetric pair's stages at k = 16 (units per warp):
/// count, mean, quantiles and max per level and stage, and the waves they make
/// of `resident` warps (the H200 keeps 6,336 of the pair kernels': 132 SMs,
/// 12 blocks of 4 warps). A stage of few waves waits on its longest units.
#[test]
#[ignore = "k = 16 needs ~6 GB of host memory; run with --include-ignored"]
fn the_symmetric_pairs_run_lengths_at_k16() {
    let resident = 6336.0;
    for (l, _, s) in ptap_tests::beam_sym_pair_levels(16) {
        let ap_units: Vec<u64> = (0..s.ap_pairs.units())
            .map(|u| s.ap_pairs.ptr[u + 1] - s.ap_pairs.ptr[u])
            .collect();
        let ap_runs: Vec<u64> = s.ap.ptr.windows(2).map(|w| w[1] - w[0]).collect();
        let rw_runs: Vec<u64> = s.rw.ptr.windows(2).map(|w| w[1] - w[0]).collect();
        let fold: Vec<u64> = s
            .rw_fold
            .ptr
            .chunks(2)
            .zip(s.rw_fold.ptr.iter().skip(2).step_by(2))
            .map(|(c, e)| e - c[0])
            .collect();
        for (name, v) in [
            ("A P units", ap_units),
            ("A P runs", ap_runs),
            ("P^T W' runs", rw_runs),
            ("folded", fold),
        ] {
            let mut v = v;
            v.sort_unstable();
            let n = v.len();
            if n == 0 {
                continue;
            }
            let sum: u64 = v.iter().sum();
            let q = |f: f64| v[((n as f64 - 1.0) * f) as usize];
            let max = v[n - 1];
            // Longest unit against the mean per resident warp: what the stage waits on.
            let per_warp = sum as f64 / (n as f64).min(resident);
            println!(
                "level {l} {name}: {n} units, {sum} entries, mean {:.1}, p50 {} p90 {} p99 {} max {}, {:.2} waves, \
                 max / (entries per resident warp) {:.2}",
                sum as f64 / n as f64,
                q(0.5),
                q(0.9),
                q(0.99),
                max,
                n as f64 / resident,
                max as f64 / per_warp
            );
            assert!(max >= q(0.5));
        }
    }
}

/// How many `A` loads the symmetric pair's `A P` could share between two slots
/// `(i, J1)`, `(i, J2)` of one row of `W'` at k = 16: a contribution `A_ik P_kJ`
/// of each slot whose `k` the other slot has too needs one `A` block for both.
/// Per level: the contributions, and the shared ones where each row's slots are
/// paired greedily by their common `k` (largest first) or as neighbours in
/// column order. Prints them (the ledger's counts for a column-paired kernel)
/// and checks that pairing never claims more than half the contributions.
#[test]
#[ignore = "k = 16 needs ~6 GB of host memory; run with --include-ignored"]
fn the_symmetric_pairs_column_pairs_at_k16() {
    use ptap_schedules::variants::DIAGONAL_FLAG;
    for (l, _, s) in ptap_tests::beam_sym_pair_levels(16) {
        let (runs, wh) = (&s.ap, &s.wh);
        let (mut greedy, mut neighbours) = (0usize, 0usize);
        let mut sets: Vec<Vec<u32>> = Vec::new();
        let mut pairs: Vec<(usize, usize, usize)> = Vec::new();
        for i in 0..wh.nrows() {
            sets.clear();
            for slot in wh.row_range(i) {
                let mut x: Vec<u32> = runs.run(slot).map(|e| runs.x[e] & !DIAGONAL_FLAG).collect();
                x.sort_unstable();
                sets.push(x);
            }
            let common = |a: &[u32], b: &[u32]| {
                let (mut p, mut q, mut n) = (0, 0, 0);
                while p < a.len() && q < b.len() {
                    match a[p].cmp(&b[q]) {
                        std::cmp::Ordering::Less => p += 1,
                        std::cmp::Ordering::Greater => q += 1,
                        std::cmp::Ordering::Equal => (n, p, q) = (n + 1, p + 1, q + 1),
                    }
                }
                n
            };
            pairs.clear();
            for a in 0..sets.len() {
                for b in a + 1..sets.len() {
                    pairs.push((common(&sets[a], &sets[b]), a, b));
                }
            }
            pairs.sort_unstable_by(|x, y| y.cmp(x));
            let mut used = vec![false; sets.len()];
            for &(n, a, b) in &pairs {
                if !used[a] && !used[b] {
                    used[a] = true;
                    used[b] = true;
                    greedy += n;
                }
            }
            neighbours += (0..sets.len() / 2)
                .map(|p| common(&sets[2 * p], &sets[2 * p + 1]))
                .sum::<usize>();
        }
        let n = runs.contributions();
        println!(
            "level {l}: {n} A P contributions over {} W' slots; A loads shared by column pairs: greedy {greedy} ({:.3}), \
             neighbours {neighbours} ({:.3})",
            wh.nnzb(),
            greedy as f64 / n as f64,
            neighbours as f64 / n as f64
        );
        assert!(2 * greedy <= n && 2 * neighbours <= n, "level {l}");
    }
}

/// What a coarse `A P` staging its operands per tile of consecutive `W'` rows
/// would read from the L2 at k = 16: each tile's `A` blocks of `(L + D/2)` and
/// the `P` rows of their columns, once, with the tile grown while both fit a
/// shared-memory budget. Per 6x6 level and budget: the tiles, the rows per
/// tile, and the staged bytes against the slot-run kernels' gathers (both
/// blocks of every contribution). Prints them (the ledger's counts) and checks
/// that staging never reads more than the gathers do.
#[test]
#[ignore = "k = 16 needs ~6 GB of host memory; run with --include-ignored"]
fn the_symmetric_pairs_staged_row_tiles_at_k16() {
    for (l, _, s) in ptap_tests::beam_sym_pair_levels(16) {
        let (runs, wh, p) = (&s.ap, &s.wh, &s.base.p);
        let (a, bf, bc) = (&s.base.a, 6usize, 6usize);
        if l == 0 {
            continue; // 3x3 / 3x6: the fine kernels' pairs already share P between rows
        }
        let block = 8 * bf * bc;
        let gathered = runs.contributions() * 2 * block;
        for budget in [100usize << 10, 200 << 10] {
            let mut in_tile = vec![false; a.ncols()];
            let (mut tiles, mut staged, mut rows_max, mut rows_min) = (0usize, 0usize, 0usize, usize::MAX);
            // Tiles of one row that alone passes the budget (the kernel could not stage them).
            let mut over = 0usize;
            let mut i = 0;
            while i < wh.nrows() {
                let (mut bytes, mut rows) = (0usize, 0usize);
                let mut cols: Vec<usize> = Vec::new();
                while i < wh.nrows() {
                    // Row i's lower-half A blocks and the P rows of columns new to the tile.
                    let ks: Vec<usize> = a.row(i).iter().map(|&k| k as usize).filter(|&k| k <= i).collect();
                    let add: usize = ks.len() * block
                        + ks.iter()
                            .filter(|&&k| !in_tile[k])
                            .map(|&k| p.row(k).len() * block)
                            .sum::<usize>();
                    if rows > 0 && bytes + add > budget {
                        break;
                    }
                    for &k in &ks {
                        if !in_tile[k] {
                            in_tile[k] = true;
                            cols.push(k);
                        }
                    }
                    bytes += add;
                    rows += 1;
                    i += 1;
                }
                for k in cols {
                    in_tile[k] = false;
                }
                tiles += 1;
                staged += bytes;
                over += usize::from(bytes > budget);
                rows_max = rows_max.max(rows);
                rows_min = rows_min.min(rows);
            }
            println!(
                "level {l}, budget {} KB: {tiles} tiles of {rows_min}-{rows_max} rows ({:.1} mean, {over} over the \
                 budget), staged {:.1} MB against {:.1} MB gathered by the slot runs ({:.2})",
                budget >> 10,
                wh.nrows() as f64 / tiles as f64,
                staged as f64 / 1e6,
                gathered as f64 / 1e6,
                staged as f64 / gathered as f64
            );
            assert!(staged <= gathered, "level {l}");
        }
    }
}

/// Summed over `groups` (each the run entries one block of warps applies): the
/// distinct `x` blocks (index under `x_mask`) and the distinct `y` blocks.
fn distinct_per_group<G, E>(runs: &ptap_schedules::variants::SlotRuns, groups: G, x_mask: u32) -> (usize, usize)
where
    G: Iterator<Item = E>,
    E: Iterator<Item = usize>,
{
    let (mut xs, mut ys) = (std::collections::HashSet::new(), std::collections::HashSet::new());
    let (mut dx, mut dy) = (0, 0);
    for grp in groups {
        xs.clear();
        ys.clear();
        for e in grp {
            xs.insert(runs.x[e] & x_mask);
            ys.insert(runs.y[e]);
        }
        dx += xs.len();
        dy += ys.len();
    }
    (dx, dy)
}

/// Counted for the ledger (not a check of the code): the distinct `A` and `P`
/// blocks each block of `g` warps of the coarse halving `A P` gathers, under
/// the schedule's slot order and under plain row-major order.
#[test]
#[ignore = "counts for the products ledger at k = 16; run with --ignored --nocapture"]
fn the_symmetric_pairs_block_reuse_at_k16() {
    for (l, _, s) in ptap_tests::beam_sym_pair_levels(16) {
        if l == 0 {
            continue;
        }
        let runs = &s.ap;
        let n = runs.slots();
        let total = runs.contributions();
        let ident: Vec<u32> = (0..n as u32).collect();
        // Rows taken `h` at a time, their slots interleaved by column.
        let interleave = |h: usize| -> Vec<u32> {
            let wh = &s.wh;
            let mut out = Vec::with_capacity(n);
            let mut i = 0;
            while i < wh.nrows() {
                let rows: Vec<usize> = (i..(i + h).min(wh.nrows())).collect();
                let mut cols: Vec<(u32, usize, usize)> = rows
                    .iter()
                    .flat_map(|&r| wh.row(r).iter().enumerate().map(move |(k, &c)| (c, r, k)))
                    .collect();
                cols.sort_unstable();
                out.extend(cols.iter().map(|&(_, r, k)| (wh.row_ptr()[r] + k) as u32));
                i += h;
            }
            out
        };
        let (pairs, quads) = (interleave(2), interleave(4));
        for (name, order) in [
            ("window", &s.ap_order[..]),
            ("row-major", &ident[..]),
            ("row-pairs", &pairs[..]),
            ("row-quads", &quads[..]),
        ] {
            assert_eq!(order.len(), n);
            for g in [4usize, 8, 16, 32] {
                let groups = order
                    .chunks(g)
                    .map(|grp| grp.iter().flat_map(|&sl| runs.run(sl as usize)));
                let (da, dp) = distinct_per_group(runs, groups, 0x7fff_ffff);
                println!(
                    "level {l}, {name} order, {g} warps per block: {total} contributions; distinct A {da} ({:.2}), \
                     distinct P {dp} ({:.2}), both {:.2}",
                    da as f64 / total as f64,
                    dp as f64 / total as f64,
                    (da + dp) as f64 / (2 * total) as f64
                );
            }
        }
    }
}

/// Counted for the ledger (not a check of the code): the distinct `P` and `W'`
/// blocks each block of `g` consecutive folded `P^T W'` units gathers (level 1
/// runs the fold), against the entries they apply.
#[test]
#[ignore = "counts for the products ledger at k = 16; run with --ignored --nocapture"]
fn the_symmetric_pairs_fold_block_reuse_at_k16() {
    for (l, _, s) in ptap_tests::beam_sym_pair_levels(16) {
        if l != 1 {
            continue;
        }
        let (runs, f) = (&s.rw, &s.rw_fold);
        let units = f.units();
        let run_of = |u: usize, h: usize| {
            let sl = f.slots[2 * u + h];
            if sl == u32::MAX {
                0..0
            } else {
                runs.run(sl as usize)
            }
        };
        let total: usize = (0..units).map(|u| run_of(u, 0).len() + run_of(u, 1).len()).sum();
        for g in [4usize, 8, 16, 32] {
            let groups = (0..units)
                .step_by(g)
                .map(|u0| (u0..(u0 + g).min(units)).flat_map(|u| run_of(u, 0).chain(run_of(u, 1))));
            let (dp, dw) = distinct_per_group(runs, groups, u32::MAX);
            println!(
                "level {l}, fold, {g} units per block: {units} units, {total} entries; distinct P {dp} ({:.2}), \
                 distinct W' {dw} ({:.2}), both {:.2}",
                dp as f64 / total as f64,
                dw as f64 / total as f64,
                (dp + dw) as f64 / (2 * total) as f64
            );
        }
    }
}

/// Ledger step 38 (counted on the CPU): would fusing the two stages keep `W'`
/// in the L2? A fused executor would run the `A P` units of a tile of `W'`
/// rows, then every `X` unit (one per slot of `A_c`) whose last `W'` row that
/// tile completed. Per level: how far back in `W'` (in bytes, from the end of
/// the tile that runs it) each `X` gather reaches, for tiles of 4 / 16 MB, the
/// launches such a schedule takes, and each unit's own span of `W'`. Prints the
/// counts and checks that every gather lies behind its tile's end.
#[test]
#[ignore = "counts for the products ledger at k = 16; run with --ignored --nocapture"]
fn the_symmetric_pairs_fused_tile_reach_at_k16() {
    for (l, _, s) in ptap_tests::beam_sym_pair_levels(16) {
        let (rw, wh) = (&s.rw, &s.wh);
        let bf = if l == 0 { 3 } else { 6 };
        let block = 8 * bf * 6;
        let rp = wh.row_ptr();
        let mut row_of = vec![0u32; wh.nnzb()];
        for r in 0..wh.nrows() {
            row_of[rp[r]..rp[r + 1]].fill(r as u32);
        }
        // Each X unit's last W' row (it can run once that row exists) and its span in bytes.
        let mut units: Vec<(u32, usize)> = Vec::with_capacity(rw.slots());
        let mut spans: Vec<usize> = Vec::with_capacity(rw.slots());
        for u in 0..rw.slots() {
            let ys = &rw.y[rw.run(u)];
            if ys.is_empty() {
                continue;
            }
            let (lo, hi) = ys.iter().fold((u32::MAX, 0u32), |(lo, hi), &y| (lo.min(y), hi.max(y)));
            units.push((row_of[hi as usize], u));
            spans.push((hi - lo + 1) as usize * block);
        }
        units.sort_by_key(|&(r, _)| r);
        spans.sort_unstable();
        let q = |f: f64| spans[((spans.len() - 1) as f64 * f) as usize] as f64 / 1e6;
        let total = wh.nnzb() * block;
        println!(
            "level {l}: W' {:.1} MB in {} rows; an X unit spans W' by {:.2} / {:.2} / {:.2} / {:.2} MB \
             (median / p90 / p99 / max)",
            total as f64 / 1e6,
            wh.nrows(),
            q(0.5),
            q(0.9),
            q(0.99),
            q(1.0)
        );
        for tile in [4usize << 20, 16 << 20] {
            // Tile ends on row boundaries: the first row end at or past each multiple of `tile` bytes.
            let mut ends: Vec<usize> = Vec::new();
            let mut next = tile;
            for r in 0..wh.nrows() {
                if rp[r + 1] * block >= next || r + 1 == wh.nrows() {
                    ends.push(r);
                    next = rp[r + 1] * block + tile;
                }
            }
            let mut reach = [0usize; 4]; // gathered bytes within 8 / 16 / 32 / 48 MB of the tile's end
            let (mut gathered, mut t) = (0usize, 0usize);
            for &(last, u) in &units {
                while ends[t] < last as usize {
                    t += 1;
                }
                let end = rp[ends[t] + 1] * block;
                for &y in &rw.y[rw.run(u)] {
                    let back = end - y as usize * block;
                    assert!(back >= block, "level {l}: a gather past its tile");
                    for (k, lim) in [8usize, 16, 32, 48].into_iter().enumerate() {
                        reach[k] += usize::from(back <= lim << 20) * block;
                    }
                    gathered += block;
                }
            }
            let f = |k: usize| reach[k] as f64 / gathered as f64;
            println!(
                "level {l}, tiles of {} MB: {} tiles ({} launches); of {:.1} MB of X gathers, {:.2} / {:.2} / {:.2} / \
                 {:.2} lie within 8 / 16 / 32 / 48 MB of their tile's end",
                tile >> 20,
                ends.len(),
                2 * ends.len(),
                gathered as f64 / 1e6,
                f(0),
                f(1),
                f(2),
                f(3)
            );
        }
    }
}

/// Counted for the ledger (not a check of the code): a coarse `A P` block per
/// tile of consecutive `W'` rows and a band of coarse columns, staging the
/// `P` blocks `P[K, J]` (`J` in the band, `K` any lower-half `A` column of the
/// tile's rows) in shared memory, its slots those of the tile's rows in the
/// band. Per band width and budget: the tiles, the staged `P` bytes against
/// the slot runs' `P` gathers, and the tiles' slot counts.
#[test]
#[ignore = "counts for the products ledger at k = 16; run with --ignored --nocapture"]
fn the_symmetric_pairs_p_band_tiles_at_k16() {
    for (l, _, s) in ptap_tests::beam_sym_pair_levels(16) {
        if l == 0 {
            continue;
        }
        let (runs, wh, p, a) = (&s.ap, &s.wh, &s.base.p, &s.base.a);
        let block = 8 * 36usize;
        let nc = p.ncols();
        let mut pcol = vec![0usize; nc];
        for r in 0..p.nrows() {
            for &c in p.row(r) {
                pcol[c as usize] += 1;
            }
        }
        let total = runs.contributions();
        println!(
            "level {l}: W' {} rows x {nc} columns, {} slots; A {} blocks, P {} blocks ({:.2} per row, {}-{} per \
             column); {total} contributions, P gathered {:.1} MB, A gathered {:.1} MB",
            wh.nrows(),
            runs.slots(),
            a.nnzb(),
            p.nnzb(),
            p.nnzb() as f64 / p.nrows() as f64,
            pcol.iter().min().unwrap(),
            pcol.iter().max().unwrap(),
            (total * block) as f64 / 1e6,
            (total * block) as f64 / 1e6
        );
        for band in [nc, 64, 32, 16, 8, 4] {
            for budget in [48usize << 10, 100 << 10, 200 << 10] {
                let mut seen = std::collections::HashSet::new();
                let (mut tiles, mut staged, mut over) = (0usize, 0usize, 0usize);
                let mut slots_per_tile = Vec::new();
                for j0 in (0..nc).step_by(band) {
                    let j1 = (j0 + band).min(nc);
                    let mut i = 0;
                    while i < wh.nrows() {
                        seen.clear();
                        let (mut bytes, mut rows, mut slots) = (0usize, 0usize, 0usize);
                        while i < wh.nrows() {
                            let mut new = Vec::new();
                            for &k in a.row(i) {
                                let k = k as usize;
                                if k > i {
                                    continue;
                                }
                                for &j in p.row(k) {
                                    let j = j as usize;
                                    if j >= j0 && j < j1 && !seen.contains(&(k, j)) && !new.contains(&(k, j)) {
                                        new.push((k, j));
                                    }
                                }
                            }
                            let add = new.len() * block;
                            if rows > 0 && bytes + add > budget {
                                break;
                            }
                            seen.extend(new);
                            bytes += add;
                            rows += 1;
                            slots += wh
                                .row(i)
                                .iter()
                                .filter(|&&j| (j as usize) >= j0 && (j as usize) < j1)
                                .count();
                            i += 1;
                        }
                        if slots == 0 {
                            continue;
                        }
                        tiles += 1;
                        staged += bytes;
                        over += usize::from(bytes > budget);
                        slots_per_tile.push(slots);
                    }
                }
                slots_per_tile.sort_unstable();
                println!(
                    "  band {band}, budget {} KB: {tiles} tiles ({over} over), staged P {:.1} MB ({:.2} of its \
                     gathers), slots per tile median {} max {}",
                    budget >> 10,
                    staged as f64 / 1e6,
                    staged as f64 / (total * block) as f64,
                    slots_per_tile[slots_per_tile.len() / 2],
                    slots_per_tile.last().unwrap()
                );
            }
        }
    }
}

/// Counted for the ledger (not a check of the code): tiles of one coarse
/// column `J` and a range of `rows` consecutive `W'` rows, staging the `P`
/// blocks `P[K, J]` of every lower-half `A` column `K` of the range's slots.
#[test]
#[ignore = "counts for the products ledger at k = 16; run with --ignored --nocapture"]
fn the_symmetric_pairs_p_column_tiles_at_k16() {
    for (l, _, s) in ptap_tests::beam_sym_pair_levels(16) {
        if l == 0 {
            continue;
        }
        let (runs, wh) = (&s.ap, &s.wh);
        let block = 8 * 36usize;
        let total = runs.contributions();
        for rows in [8usize, 16, 32, 64, 128, 256] {
            let (mut tiles, mut staged, mut maxb) = (0usize, 0usize, 0usize);
            let mut slots_per_tile = Vec::new();
            let mut i0 = 0;
            while i0 < wh.nrows() {
                let i1 = (i0 + rows).min(wh.nrows());
                // column -> (slots, distinct P blocks (their y index))
                let mut cols: std::collections::BTreeMap<u32, (usize, std::collections::HashSet<u32>)> =
                    Default::default();
                for i in i0..i1 {
                    for (k, &j) in wh.row(i).iter().enumerate() {
                        let slot = wh.row_ptr()[i] + k;
                        let e = cols.entry(j).or_default();
                        e.0 += 1;
                        for q in runs.run(slot) {
                            e.1.insert(runs.y[q]);
                        }
                    }
                }
                for (_, (n, ys)) in cols {
                    tiles += 1;
                    staged += ys.len() * block;
                    maxb = maxb.max(ys.len() * block);
                    slots_per_tile.push(n);
                }
                i0 = i1;
            }
            slots_per_tile.sort_unstable();
            println!(
                "level {l}, {rows} rows per tile: {tiles} tiles, staged P {:.1} MB ({:.3} of the P gathers {:.1} MB), \
                 largest {:.1} KB, slots per tile median {} max {} (of {})",
                staged as f64 / 1e6,
                staged as f64 / (total * block) as f64,
                (total * block) as f64 / 1e6,
                maxb as f64 / 1024.0,
                slots_per_tile[slots_per_tile.len() / 2],
                slots_per_tile.last().unwrap(),
                runs.slots()
            );
        }
    }
}
