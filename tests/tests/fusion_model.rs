//! Ledger step 23's model (ignored; run by hand with `--nocapture`): what the
//! paper's tiled fusion would move in the symmetric pair's `P^T W'` stage.
//!
//! A block takes a tile of `T` consecutive fine rows, computes their `W'`
//! rows on chip, and adds `P_iI^T W'_iJ` for the tile's rows into one partial
//! sum per slot `(I, J)` the tile touches; each partial then goes to `A_c`'s
//! slot (atomically, or through a buffer reduced in a fixed order). `P`'s
//! rows are the tile's own, so `P` is read once; `W'` never leaves the chip.
//! What it costs is one 6x6 partial per (tile, slot) against today's reads of
//! both operands per entry.

#[test]
#[ignore = "k = 16 needs ~6 GB of host memory; run with --include-ignored"]
fn tiled_fusion_partials_at_k16() {
    let k: usize = std::env::var("K").ok().and_then(|v| v.parse().ok()).unwrap_or(16);
    for (l, p, s) in ptap_tests::beam_sym_pair_levels(k) {
        let wh = &s.wh;
        let n = wh.nrows();
        let mut row_of = vec![0u32; wh.nnzb()];
        for i in 0..n {
            for q in wh.row_range(i) {
                row_of[q] = i as u32;
            }
        }
        let (b, c) = (p.block_shape().0 as u64, 6u64);
        let entries = s.rw.contributions() as u64;
        let slots = s.rw.slots() as u64;
        // Today: every entry reads a P block and a W' block (b x c each).
        let today = entries * 2 * b * c * 8;
        println!(
            "level {l}: {n} fine rows, {} W' blocks, {slots} slots, {entries} entries; today's operand reads {:.2} GB",
            wh.nnzb(),
            today as f64 / 1e9
        );
        // Each row's home aggregate: the column of its largest `P` block (the
        // tentative block survives smoothing as the dominant one).
        let home: Vec<usize> = (0..n)
            .map(|i| {
                let r = p.pattern().row_range(i);
                let norm = |q: usize| p.block(q).iter().map(|v| v * v).sum::<f64>();
                let best = r.clone().max_by(|&x, &y| norm(x).total_cmp(&norm(y))).unwrap();
                p.pattern().col_idx()[best] as usize
            })
            .collect();
        let nagg = p.ncols();
        let rp = wh.row_ptr();
        let report = |name: String, tile_of: &dyn Fn(usize) -> usize, nt: usize| {
            let mut partials = 0u64;
            let mut tiles = Vec::new();
            for sl in 0..s.rw.slots() {
                tiles.clear();
                for e in s.rw.run(sl) {
                    tiles.push(tile_of(row_of[s.rw.y[e] as usize] as usize));
                }
                tiles.sort_unstable();
                tiles.dedup();
                partials += tiles.len() as u64;
            }
            let mut w_blocks = vec![0usize; nt];
            for i in 0..n {
                w_blocks[tile_of(i)] += rp[i + 1] - rp[i];
            }
            let wmax = *w_blocks.iter().max().unwrap() as u64;
            let wmean = wh.nnzb() as f64 / nt as f64;
            let partial_bytes = partials * c * c * 8;
            println!(
                "  {name}: {nt} tiles, {partials} partials ({:.2} per slot, {:.1} entries each), \
                 partial sums {:.2} GB, W' on chip mean {:.1} KB max {:.1} KB",
                partials as f64 / slots as f64,
                entries as f64 / partials as f64,
                partial_bytes as f64 / 1e9,
                wmean * (b * c * 8) as f64 / 1024.0,
                (wmax * b * c * 8) as f64 / 1024.0,
            );
            assert!(partials >= slots && partials <= entries);
        };
        for tile in [4usize, 8, 16, 32, 64] {
            report(format!("T = {tile:>2} rows"), &|i| i / tile, n.div_ceil(tile));
        }
        // Tiles of whole aggregates (consecutive aggregate numbers grouped).
        for g in [1usize, 2, 4] {
            report(format!("{g} aggregate(s)"), &|i| home[i] / g, nagg.div_ceil(g));
        }
    }
}
