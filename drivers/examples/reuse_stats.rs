//! Operand reuse a register tile could find in the product stages of the beam
//! hierarchy: for tiles of `T` output slots sharing an operand, how many slot
//! contributions one merged entry serves (`Tf`), and how evenly column split's
//! run-length order fills a warp. The ledger of issue #12
//! (`benches/results/h200-2026-11-22-products-ledger.md`) quotes its output.
//!
//! ```sh
//! cargo run --release -p ptap-drivers --example reuse_stats -- 8 0.03
//! ```
//! Row tiles are `T` consecutive slots of one output row (they share the `X`
//! block of every `X`-row entry both runs hold: `A[i,l]` in `A P`, `P[l,I]` in
//! `P^T W`); column tiles are the slots of one column in `T` consecutive rows
//! (they share the `Y` block: `P[l,K]`, `W[l,J]`).
use ptap_amg::Aggregation;
use ptap_fem::BeamProblem;
use ptap_runtime::{HierarchyOptions, MeshSetup};
use ptap_schedules::variants::{ColumnSplitSchedule, SlotRuns, COLUMN_SPLIT_WINDOW};
use ptap_schedules::Variant;
use ptap_sparse::BlockPattern;
use std::collections::HashMap;

const TILES: [usize; 5] = [2, 3, 4, 6, 8];

/// Contributions per merged entry of row tiles of `t` slots.
fn row_tiles(runs: &SlotRuns, c: &BlockPattern, t: usize) -> f64 {
    let mut entries = 0usize;
    let mut xs: Vec<u32> = Vec::new();
    for i in 0..c.nrows() {
        let r = c.row_range(i);
        for s in r.clone().step_by(t) {
            xs.clear();
            for q in s..(s + t).min(r.end) {
                xs.extend_from_slice(&runs.x[runs.run(q)]);
            }
            xs.sort_unstable();
            xs.dedup();
            entries += xs.len();
        }
    }
    runs.contributions() as f64 / entries.max(1) as f64
}

/// Contributions per merged entry of column tiles of `t` rows.
fn column_tiles(runs: &SlotRuns, c: &BlockPattern, t: usize) -> f64 {
    let mut entries = 0usize;
    let mut by_col: HashMap<u32, Vec<u32>> = HashMap::new();
    for i0 in (0..c.nrows()).step_by(t) {
        by_col.clear();
        for i in i0..(i0 + t).min(c.nrows()) {
            for q in c.row_range(i) {
                by_col
                    .entry(c.col_idx()[q])
                    .or_default()
                    .extend_from_slice(&runs.y[runs.run(q)]);
            }
        }
        for v in by_col.values_mut() {
            v.sort_unstable();
            v.dedup();
            entries += v.len();
        }
    }
    runs.contributions() as f64 / entries.max(1) as f64
}

/// Useful over issued group steps when warps of `gpw` groups take `order`'s
/// slots in blocks of `window` (a warp runs as long as its longest run).
fn warp_efficiency(runs: &SlotRuns, order: &[u32], window: usize, gpw: usize) -> f64 {
    let (mut useful, mut issued) = (0usize, 0usize);
    for w in order.chunks(window) {
        for g in w.chunks(gpw) {
            let lens = g.iter().map(|&s| runs.run(s as usize).len());
            useful += lens.clone().sum::<usize>();
            issued += lens.max().unwrap_or(0) * gpw;
        }
    }
    useful as f64 / issued.max(1) as f64
}

fn main() {
    let mut args = std::env::args().skip(1);
    let k: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(8);
    let pf: f64 = args.next().and_then(|s| s.parse().ok()).unwrap_or(0.03);
    let problem = BeamProblem::build(k).expect("the beam");
    let mut opts = HierarchyOptions::default();
    opts.amg.aggregation = Aggregation::Natural;
    opts.amg.pf = pf;
    opts.variant = Some(Variant::TwoPass);
    let setup =
        MeshSetup::build(problem.a, &problem.near_null, problem.modes, &opts, &mut |_| {}).expect("the hierarchy");
    println!("k = {k}, pf = {pf}: contributions per merged entry (Tf) for T = {TILES:?}");
    for (l, lev) in setup.levels.iter().enumerate() {
        let Some(t) = &lev.transfer else { continue };
        let cs = ColumnSplitSchedule::inspect(t.schedule.clone(), COLUMN_SPLIT_WINDOW);
        let b = &t.schedule;
        for (name, runs, order, c) in [
            ("A P", &cs.tiled.ap, &cs.ap_order, &b.w),
            ("P^T W", &cs.tiled.rw, &cs.rw_order, &b.c),
        ] {
            let rows: Vec<String> = TILES.iter().map(|&n| format!("{:.2}", row_tiles(runs, c, n))).collect();
            let cols: Vec<String> = TILES
                .iter()
                .map(|&n| format!("{:.2}", column_tiles(runs, c, n)))
                .collect();
            let slots = runs.slots().max(1);
            println!(
                "level {l} {name}: slots {}, mean run {:.1}; row tiles {}; column tiles {}; warp efficiency \
                 (5 groups, window {COLUMN_SPLIT_WINDOW}) {:.3}",
                runs.slots(),
                runs.contributions() as f64 / slots as f64,
                rows.join(" "),
                cols.join(" "),
                warp_efficiency(runs, order, COLUMN_SPLIT_WINDOW, 5)
            );
        }
    }
}
