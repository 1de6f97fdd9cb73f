//! CUDA C for the GPU executor's kernel families (the paper's sections
//! `sec:impl-cuda` and `sec:perf-spmv`).
//!
//! Every Galerkin-product stage is `C = X Y` over `C`'s pattern with `M x K`
//! blocks of `X` (stored `K x M` and applied transposed when the stage reads
//! `P` as `P^T`), `K x N` blocks of `Y` and `M x N` blocks of `C`. Block
//! sizes are compile-time constants and every block position is unrolled.
//!
//! Accumulation order: each output element sums, contribution by contribution
//! in the schedule's order, the products `x(i,k) y(k,j)` for `k = 0..K` one at
//! a time into one accumulator, exactly the loop nest of the CPU reference
//! (`ptap_sparse::dense::gemm_acc`). Compiled with `--fmad=false`, the
//! order-preserving kernels (two-pass, slot-tiled, column-split, flat stream)
//! therefore reproduce the CPU two-pass product bit for bit.
use crate::entry::{param as p, CudaModule, KernelEntry, ParamTy};
use crate::gpu_base::x_stride;
pub use crate::gpu_base::{spmv_name, spmv_staged, spmv_warps, Stage, DOT_THREADS, SMEM_LIMIT, SPMV_WARPS};
use crate::shape::ShapeSet;
use std::fmt::Write;

/// Threads per block of the slot-tiled kernel (slots per tile) where the
/// tile's output blocks fit the static shared memory; see [`slot_tile`].
pub const SLOT_TILE: usize = 128;
/// Largest column-split window the kernels' shared memory is sized for.
pub const COLUMN_SPLIT_WINDOW_MAX: usize = 48;

/// Slots per block of the slot-tiled stage `st`: [`SLOT_TILE`], halved until the
/// tile of `M x N` output blocks fits [`SMEM_LIMIT`] (10x10 blocks: 32 slots).
pub fn slot_tile(st: Stage) -> usize {
    let mut tile = SLOT_TILE;
    while tile > 1 && tile * st.m * st.n * 8 > SMEM_LIMIT {
        tile /= 2;
    }
    tile
}

/// Kernel names of the families, per stage (the SpMV's: [`spmv_name`]).
pub fn gather_r_name(s: ShapeSet) -> String {
    format!("ptap_gather_r_{}x{}", s.bf, s.bc)
}
pub fn row_owner_name(st: Stage) -> String {
    format!("ptap_row_owner_{}", st.tag())
}
pub fn slot_tiled_name(st: Stage) -> String {
    format!("ptap_slot_tiled_{}", st.tag())
}
pub fn column_split_name(st: Stage) -> String {
    format!("ptap_column_split_{}", st.tag())
}
pub fn row_gustavson_name(st: Stage) -> String {
    format!("ptap_row_gustavson_{}", st.tag())
}
pub fn flat_stream_name(st: Stage) -> String {
    format!("ptap_flat_stream_{}", st.tag())
}
pub fn scatter_name(st: Stage) -> String {
    format!("ptap_scatter_{}", st.tag())
}

const PRELUDE: &str = "typedef unsigned int u32;\ntypedef unsigned long long u64;\n";

/// `R = P^T` as a gather: one thread per scalar of `R`.
fn gather_r(out: &mut String, s: ShapeSet) -> KernelEntry {
    use ParamTy::*;
    let (bf, bc) = (s.bf, s.bc);
    let e = KernelEntry {
        name: gather_r_name(s),
        params: vec![p("pv", PtrF64), p("src", PtrU32), p("rv", PtrMutF64), p("nblocks", U32)],
        doc: format!("R = P^T, {bc}x{bf} blocks gathered from transposed {bf}x{bc} blocks of P"),
    };
    e.write_signature(out, " {");
    let l = bf * bc;
    writeln!(
        out,
        "  u64 t = (u64)blockIdx.x * blockDim.x + threadIdx.x;\n  if (t >= (u64)nblocks * {l}) return;\n  \
         u32 b = (u32)(t / {l}); u32 e = (u32)(t % {l});\n  u32 i = e / {bf}, j = e % {bf};\n  \
         rv[t] = pv[(u64)src[b] * {l} + j * {bc} + i];\n}}\n"
    )
    .unwrap();
    e
}

/// V0 stage: the owner of each output element walks `X`'s row of its slot and
/// finds the matching block of `Y`'s row by binary search; register
/// accumulation, no atomics, coalesced writes.
fn row_owner(out: &mut String, st: Stage) -> KernelEntry {
    use ParamTy::*;
    let (m, k, n) = (st.m, st.k, st.n);
    let (mk, kn, mn) = (m * k, k * n, m * n);
    let e = KernelEntry {
        name: row_owner_name(st),
        params: vec![
            p("xv", PtrF64),
            p("yv", PtrF64),
            p("x_rp", PtrU32),
            p("x_ci", PtrU32),
            p("y_rp", PtrU32),
            p("y_ci", PtrU32),
            p("c_row", PtrU32),
            p("c_ci", PtrU32),
            p("cv", PtrMutF64),
            p("nslots", U32),
        ],
        doc: format!("two-pass stage C = X Y ({m}x{k} by {k}x{n}), one thread per output scalar"),
    };
    e.write_signature(out, " {");
    writeln!(
        out,
        "  u64 t = (u64)blockIdx.x * blockDim.x + threadIdx.x;\n  if (t >= (u64)nslots * {mn}) return;\n  \
         u32 s = (u32)(t / {mn}); u32 e = (u32)(t % {mn});\n  u32 i = e / {n}, j = e % {n};\n  \
         u32 row = c_row[s], col = c_ci[s];\n  double acc = 0.0;\n  \
         for (u32 kx = x_rp[row]; kx < x_rp[row + 1]; ++kx) {{\n    u32 l = x_ci[kx];\n    \
         u32 lo = y_rp[l], hi = y_rp[l + 1], end = hi;\n    \
         while (lo < hi) {{ u32 mid = (lo + hi) >> 1; if (y_ci[mid] < col) lo = mid + 1; else hi = mid; }}\n    \
         if (lo < end && y_ci[lo] == col) {{\n      const double* xb = xv + (u64)kx * {mk};\n      \
         const double* yb = yv + (u64)lo * {kn};"
    )
    .unwrap();
    for kk in 0..k {
        let xa = st.x_at("xb", "i", &kk.to_string());
        writeln!(out, "      acc = acc + {xa} * yb[{kk} * {n} + j];").unwrap();
    }
    writeln!(out, "    }}\n  }}\n  cv[t] = acc;\n}}\n").unwrap();
    e
}

/// Loads of the `x` and `y` blocks of contribution `q` into registers.
fn load_blocks(out: &mut String, st: Stage, indent: &str) {
    let (mk, kn) = (st.m * st.k, st.k * st.n);
    writeln!(
        out,
        "{indent}const double* xb = xv + (u64)rx[q] * {mk};\n{indent}const double* yb = yv + (u64)ry[q] * {kn};"
    )
    .unwrap();
}

/// V2b stage: one thread per output slot accumulates the slot's run in
/// registers, stages its finished block in shared memory, and the tile is
/// written back with coalesced stores.
fn slot_tiled(out: &mut String, st: Stage) -> KernelEntry {
    use ParamTy::*;
    let (m, k, n) = (st.m, st.k, st.n);
    let mn = m * n;
    let tile = slot_tile(st);
    let e = KernelEntry {
        name: slot_tiled_name(st),
        params: vec![
            p("xv", PtrF64),
            p("yv", PtrF64),
            p("ptr", PtrU32),
            p("rx", PtrU32),
            p("ry", PtrU32),
            p("cv", PtrMutF64),
            p("nslots", U32),
        ],
        doc: format!("slot-tiled stage ({m}x{k} by {k}x{n}), {tile} slots per block, register accumulators"),
    };
    e.write_signature(out, " {");
    writeln!(
        out,
        "  __shared__ double tile[{tile} * {mn}];\n  u32 s0 = blockIdx.x * {tile};\n  \
         u32 s = s0 + threadIdx.x;"
    )
    .unwrap();
    for q in 0..mn {
        writeln!(out, "  double a{q} = 0.0;").unwrap();
    }
    writeln!(
        out,
        "  if (s < nslots) {{\n    for (u32 q = ptr[s]; q < ptr[s + 1]; ++q) {{"
    )
    .unwrap();
    load_blocks(out, st, "      ");
    for kk in 0..k {
        for j in 0..n {
            writeln!(out, "      double y{kk}_{j} = yb[{}];", kk * n + j).unwrap();
        }
    }
    for kk in 0..k {
        for i in 0..m {
            let xa = st.x_at("xb", &i.to_string(), &kk.to_string());
            writeln!(out, "      {{ double x = {xa};").unwrap();
            for j in 0..n {
                writeln!(out, "        a{0} = a{0} + x * y{kk}_{j};", i * n + j).unwrap();
            }
            writeln!(out, "      }}").unwrap();
        }
    }
    writeln!(out, "    }}\n  }}").unwrap();
    for q in 0..mn {
        writeln!(out, "  tile[threadIdx.x * {mn} + {q}] = a{q};").unwrap();
    }
    writeln!(
        out,
        "  __syncthreads();\n  u32 valid = nslots - s0 < {tile} ? nslots - s0 : {tile};\n  \
         for (u32 e = threadIdx.x; e < valid * {mn}; e += {tile}) cv[(u64)s0 * {mn} + e] = tile[e];\n}}\n"
    )
    .unwrap();
    e
}

/// How a column-split group walks its run: `unroll` contributions staged per
/// step (memory-level parallelism), block indices fetched `n * index_rounds`
/// at a time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ColumnSplitConfig {
    pub unroll: usize,
    pub index_rounds: usize,
}

/// The configuration the column-split product uses for `st`: two contributions
/// per step for blocks of up to 18 scalars (the fine level's 3x3 / 3x6 stages,
/// measured fastest on the H200 at k = 16), one for larger blocks (6x6: register
/// and shared-memory pressure outweigh the extra loads in flight).
pub fn column_split_config(st: Stage) -> ColumnSplitConfig {
    ColumnSplitConfig {
        unroll: if st.m * st.k <= 18 { 2 } else { 1 },
        index_rounds: 1,
    }
}

/// The configuration actually generated for `st`: the unroll is halved until a
/// block of `window` slots fits the default shared-memory limit.
pub fn column_split_effective(st: Stage, cfg: ColumnSplitConfig, window: usize) -> ColumnSplitConfig {
    let mut c = cfg;
    while c.unroll > 1 && column_split_bytes(st, c, window) > SMEM_LIMIT {
        c.unroll /= 2;
    }
    c
}

/// Dynamic shared memory of one column-split block of `window` slots, in bytes.
pub fn column_split_bytes(st: Stage, cfg: ColumnSplitConfig, window: usize) -> usize {
    let (gpw, bytes) = column_split_geometry(st, cfg);
    window.div_ceil(gpw).max(1) * gpw * bytes
}

/// Geometry of the column-split kernel of `st`: slot groups per warp (a group
/// never straddles a warp) and the dynamic shared memory of one group in bytes
/// (an odd number of 16-byte units, so the groups of a warp start in distinct banks).
pub fn column_split_geometry(st: Stage, cfg: ColumnSplitConfig) -> (usize, usize) {
    assert!((1..=32).contains(&st.n), "column split needs 1..=32 lanes per slot");
    let gpw = 32 / st.n;
    let raw = cfg.unroll * x_stride(st.m * st.k) * 8 + 2 * st.n * cfg.index_rounds * 4;
    let units = raw.div_ceil(16) | 1;
    (gpw, units * 16)
}

/// Threads and dynamic shared-memory bytes of one column-split block of `window` slots.
pub fn column_split_launch(st: Stage, cfg: ColumnSplitConfig, window: usize) -> (u32, u32) {
    let (gpw, _) = column_split_geometry(st, cfg);
    let warps = window.div_ceil(gpw).max(1);
    ((warps * 32) as u32, column_split_bytes(st, cfg, window) as u32)
}

/// Column-split stage: `N` lanes per slot, one output column per lane, slots
/// taken in the schedule's run-length-sorted order within each window. The
/// lanes of a group fetch the run's block indices `N * R` at a time with
/// coalesced loads, stage `U` contributions' `x` blocks per step in shared
/// memory (16-byte loads where the block allows; every block read once per
/// slot, not once per lane) and read them back as broadcasts; lane `j` reads
/// only column `j` of each `y` block. Groups never straddle a warp, so
/// `__syncwarp` over the group's lanes orders the staging. Each output element
/// still sums its contributions one by one in the run's order.
fn column_split(out: &mut String, st: Stage, cfg: ColumnSplitConfig, name: String) -> KernelEntry {
    use ParamTy::*;
    let (m, k, n) = (st.m, st.k, st.n);
    let (mk, kn, mn) = (m * k, k * n, m * n);
    let (gpw, gbytes) = column_split_geometry(st, cfg);
    let (unroll, chunk) = (cfg.unroll, n * cfg.index_rounds);
    let xs = x_stride(mk);
    let mask: u64 = if n == 32 { 0xffff_ffff } else { (1u64 << n) - 1 };
    let e = KernelEntry {
        name,
        params: vec![
            p("xv", PtrF64),
            p("yv", PtrF64),
            p("ptr", PtrU32),
            p("rx", PtrU32),
            p("ry", PtrU32),
            p("order", PtrU32),
            p("cv", PtrMutF64),
            p("nslots", U32),
            p("window", U32),
        ],
        doc: format!(
            "column-split stage ({m}x{k} by {k}x{n}), {n} lanes per slot, {gpw} slots per warp, one window per block, \
             x staged in shared memory, {unroll} contributions per step, {chunk} indices per fetch"
        ),
    };
    e.write_signature(out, " {");
    writeln!(
        out,
        "  extern __shared__ double2 cs_smem[];\n  \
         u32 lane = threadIdx.x & 31, gw = lane / {n};\n  if (gw >= {gpw}) return;\n  \
         u32 j = lane - gw * {n};\n  u32 g = (threadIdx.x >> 5) * {gpw} + gw;\n  if (g >= window) return;\n  \
         u32 idx = blockIdx.x * window + g;\n  if (idx >= nslots) return;\n  u32 s = order[idx];\n  \
         double* sx = (double*)((char*)cs_smem + (u64)g * {gbytes});\n  u32* si = (u32*)(sx + {sxo});\n  \
         const u32 gm = {mask}u << (gw * {n});",
        sxo = unroll * xs
    )
    .unwrap();
    for i in 0..m {
        writeln!(out, "  double c{i} = 0.0;").unwrap();
    }
    writeln!(
        out,
        "  u32 q1 = ptr[s + 1];\n  for (u32 q0 = ptr[s]; q0 < q1; q0 += {chunk}) {{\n    \
         u32 cnt = q1 - q0 < {chunk} ? q1 - q0 : {chunk};"
    )
    .unwrap();
    for r in 0..cfg.index_rounds {
        writeln!(
            out,
            "    {{ u32 e = {} + j; if (e < cnt) {{ si[e] = rx[q0 + e]; si[{chunk} + e] = ry[q0 + e]; }} }}",
            r * n
        )
        .unwrap();
    }
    writeln!(
        out,
        "    __syncwarp(gm);\n    for (u32 t = 0; t < cnt; t += {unroll}) {{"
    )
    .unwrap();
    // Cooperative staging of the x blocks: 16-byte pieces when a block is a whole number of them.
    let (units, ty) = if mk % 2 == 0 {
        (mk / 2, "double2")
    } else {
        (mk, "double")
    };
    for u in 0..unroll {
        let guard = if u == 0 {
            String::new()
        } else {
            format!("if (t + {u} < cnt) ")
        };
        let decl: Vec<String> = (0..k).map(|kk| format!("y{u}_{kk} = 0.0")).collect();
        writeln!(
            out,
            "      double {decl};\n      {guard}{{\n        \
             const {ty}* xs_g = (const {ty}*)(xv + (u64)si[t + {u}] * {mk});\n        \
             const double* yb = yv + (u64)si[{chunk} + t + {u}] * {kn};\n        \
             {ty}* xs_s = ({ty}*)(sx + {off});",
            off = u * xs,
            decl = decl.join(", ")
        )
        .unwrap();
        for r in 0..units.div_ceil(n) {
            let e0 = r * n;
            if e0 + n <= units {
                writeln!(out, "        xs_s[{e0} + j] = xs_g[{e0} + j];").unwrap();
            } else {
                writeln!(out, "        if ({e0} + j < {units}) xs_s[{e0} + j] = xs_g[{e0} + j];").unwrap();
            }
        }
        for kk in 0..k {
            writeln!(out, "        y{u}_{kk} = yb[{kk} * {n} + j];").unwrap();
        }
        writeln!(out, "      }}").unwrap();
    }
    writeln!(out, "      __syncwarp(gm);").unwrap();
    // The staged block comes back as 16-byte broadcasts (the groups of a warp hit distinct banks).
    for u in 0..unroll {
        if u > 0 {
            writeln!(out, "      if (t + {u} < cnt) {{").unwrap();
        }
        for h in 0..xs / 2 {
            writeln!(
                out,
                "      double2 x{u}_{h} = ((const double2*)(sx + {}))[{h}];",
                u * xs
            )
            .unwrap();
        }
        for kk in 0..k {
            for i in 0..m {
                let e = if st.xt { kk * m + i } else { i * k + kk };
                let half = if e % 2 == 0 { "x" } else { "y" };
                writeln!(out, "      c{i} = c{i} + x{u}_{}.{half} * y{u}_{kk};", e / 2).unwrap();
            }
        }
        if u > 0 {
            writeln!(out, "      }}").unwrap();
        }
    }
    writeln!(out, "      __syncwarp(gm);\n    }}\n  }}").unwrap();
    for i in 0..m {
        writeln!(out, "  cv[(u64)s * {mn} + {} + j] = c{i};", i * n).unwrap();
    }
    writeln!(out, "}}\n").unwrap();
    e
}

/// Output positions per chunk of the row-Gustavson stage (the inspector's
/// `ROW_GUSTAVSON_CHUNK`; the device checks they agree).
pub const ROW_GUSTAVSON_CHUNK: usize = 32;

/// Warps per block of the row-Gustavson stage `st`: up to 4, as many as one
/// chunk accumulator each fits [`SMEM_LIMIT`] (0: the shape's chunk does not fit).
pub fn row_gustavson_warps(st: Stage) -> usize {
    (SMEM_LIMIT / (ROW_GUSTAVSON_CHUNK * st.m * st.n * 8)).min(4)
}

/// Row-Gustavson stage: one warp per output chunk (up to
/// [`ROW_GUSTAVSON_CHUNK`] consecutive slots of one output row), its
/// accumulator in shared memory. The warp sweeps the chunk's segments in
/// order: every lane loads the segment's `x` block into registers (one block
/// read per segment, not per contribution), then lane `t` takes column `t % N`
/// of the segment's `Y` block `t / N`, and adds `x y` into the block at the
/// schedule's position, element by element in `k` order. A chunk position
/// gets at most one block of a segment, so only segments need ordering
/// (`__syncwarp`): every output element sums its contributions in V0's order.
fn row_gustavson(out: &mut String, st: Stage) -> KernelEntry {
    use ParamTy::*;
    let (m, k, n) = (st.m, st.k, st.n);
    let (mk, kn, mn) = (m * k, k * n, m * n);
    let (ch, warps) = (ROW_GUSTAVSON_CHUNK, row_gustavson_warps(st).max(1));
    let e = KernelEntry {
        name: row_gustavson_name(st),
        params: vec![
            p("xv", PtrF64),
            p("yv", PtrF64),
            p("chunk_slot", PtrU32),
            p("chunk_seg", PtrU32),
            p("chunk_pos", PtrU32),
            p("seg_x", PtrU32),
            p("seg_y", PtrU32),
            p("seg_n", PtrU32),
            p("pos", PtrU32),
            p("cv", PtrMutF64),
            p("nchunks", U32),
        ],
        doc: format!(
            "row-Gustavson stage ({m}x{k} by {k}x{n}), one warp per chunk of {ch} output slots, {warps} warps per block"
        ),
    };
    e.write_signature(out, " {");
    writeln!(
        out,
        "  __shared__ double rg_acc[{warps}][{ch} * {mn}];\n  \
         u32 wl = threadIdx.x >> 5, lane = threadIdx.x & 31;\n  u32 c = blockIdx.x * {warps} + wl;\n  \
         if (c >= nchunks) return;\n  double* acc = rg_acc[wl];\n  \
         u32 s0 = chunk_slot[c], ne = (chunk_slot[c + 1] - s0) * {mn};\n  \
         for (u32 e = lane; e < ne; e += 32) acc[e] = 0.0;\n  __syncwarp();\n  \
         const unsigned char* sn = (const unsigned char*)seg_n;\n  const unsigned char* ps = (const unsigned char*)pos;\n  \
         u32 pb = chunk_pos[c];\n  u32 g1 = chunk_seg[c + 1];\n  \
         for (u32 g = chunk_seg[c]; g < g1; ++g) {{\n    \
         u32 cnt = sn[g];\n    const double* xb = xv + (u64)seg_x[g] * {mk};\n    \
         const double* yb0 = yv + (u64)seg_y[g] * {kn};"
    )
    .unwrap();
    for q in 0..mk {
        writeln!(out, "    double x{q} = __ldg(xb + {q});").unwrap();
    }
    writeln!(
        out,
        "    for (u32 t = lane; t < cnt * {n}; t += 32) {{\n      u32 b = t / {n}, j = t - b * {n};\n      \
         const double* yb = yb0 + (u64)b * {kn};\n      double* o = acc + (u32)ps[pb + b] * {mn} + j;"
    )
    .unwrap();
    for kk in 0..k {
        writeln!(out, "      double y{kk} = __ldg(yb + {kk} * {n} + j);").unwrap();
    }
    for i in 0..m {
        writeln!(out, "      {{ double a = o[{}];", i * n).unwrap();
        for kk in 0..k {
            let q = if st.xt { kk * m + i } else { i * k + kk };
            writeln!(out, "        a = a + x{q} * y{kk};").unwrap();
        }
        writeln!(out, "        o[{}] = a; }}", i * n).unwrap();
    }
    writeln!(
        out,
        "    }}\n    pb += cnt;\n    __syncwarp();\n  }}\n  \
         for (u32 e = lane; e < ne; e += 32) cv[(u64)s0 * {mn} + e] = acc[e];\n}}\n"
    )
    .unwrap();
    e
}

/// V3 stage: one warp per record tile (whole output rows); the tile's output
/// is zeroed, then every record is accumulated in order, lane `l` owning
/// scalars `l, l + 32, ..` of each output block.
fn flat_stream(out: &mut String, st: Stage) -> KernelEntry {
    use ParamTy::*;
    let (m, k, n) = (st.m, st.k, st.n);
    let mn = m * n;
    let e = KernelEntry {
        name: flat_stream_name(st),
        params: vec![
            p("xv", PtrF64),
            p("yv", PtrF64),
            p("rx", PtrU32),
            p("ry", PtrU32),
            p("rslot", PtrU32),
            p("tile_rows", PtrU32),
            p("tile_records", PtrU32),
            p("c_rp", PtrU32),
            p("cv", PtrMutF64),
            p("ntiles", U32),
        ],
        doc: format!("flat-stream stage ({m}x{k} by {k}x{n}), one warp per record tile"),
    };
    e.write_signature(out, " {");
    writeln!(
        out,
        "  u32 w = (u32)(((u64)blockIdx.x * blockDim.x + threadIdx.x) >> 5), lane = threadIdx.x & 31;\n  \
         if (w >= ntiles) return;\n  u64 e0 = (u64)c_rp[tile_rows[w]] * {mn}, e1 = (u64)c_rp[tile_rows[w + 1]] * {mn};\n  \
         for (u64 e = e0 + lane; e < e1; e += 32) cv[e] = 0.0;\n  __syncwarp();\n  \
         for (u32 q = tile_records[w]; q < tile_records[w + 1]; ++q) {{"
    )
    .unwrap();
    load_blocks(out, st, "    ");
    writeln!(
        out,
        "    double* cb = cv + (u64)rslot[q] * {mn};\n    \
         for (u32 e = lane; e < {mn}; e += 32) {{\n      u32 i = e / {n}, j = e % {n};\n      double c = cb[e];"
    )
    .unwrap();
    for kk in 0..k {
        let xa = st.x_at("xb", "i", &kk.to_string());
        writeln!(out, "      c = c + {xa} * yb[{kk} * {n} + j];").unwrap();
    }
    writeln!(out, "      cb[e] = c;\n    }}\n  }}\n}}\n").unwrap();
    e
}

/// V4 pass: one thread per scalar of each record's block product, added to the
/// output with `atomicAdd` (the output must be zeroed first). Not deterministic.
fn scatter(out: &mut String, st: Stage) -> KernelEntry {
    use ParamTy::*;
    let (m, k, n) = (st.m, st.k, st.n);
    let mn = m * n;
    let e = KernelEntry {
        name: scatter_name(st),
        params: vec![
            p("xv", PtrF64),
            p("yv", PtrF64),
            p("rx", PtrU32),
            p("ry", PtrU32),
            p("rslot", PtrU32),
            p("cv", PtrMutF64),
            p("nrecords", U32),
        ],
        doc: format!("outer-product scatter pass ({m}x{k} by {k}x{n}), atomic accumulation"),
    };
    e.write_signature(out, " {");
    writeln!(
        out,
        "  u64 t = (u64)blockIdx.x * blockDim.x + threadIdx.x;\n  if (t >= (u64)nrecords * {mn}) return;\n  \
         u32 q = (u32)(t / {mn}); u32 e = (u32)(t % {mn});\n  u32 i = e / {n}, j = e % {n};"
    )
    .unwrap();
    load_blocks(out, st, "  ");
    writeln!(out, "  double v = 0.0;").unwrap();
    for kk in 0..k {
        let xa = st.x_at("xb", "i", &kk.to_string());
        writeln!(out, "  v = v + {xa} * yb[{kk} * {n} + j];").unwrap();
    }
    writeln!(out, "  atomicAdd(cv + (u64)rslot[q] * {mn} + e, v);\n}}\n").unwrap();
    e
}

/// A translation unit under construction: one prelude, every entry point once.
pub(crate) struct Unit {
    src: String,
    entries: Vec<KernelEntry>,
}

impl Unit {
    pub(crate) fn new() -> Self {
        Unit {
            src: String::from(PRELUDE),
            entries: Vec::new(),
        }
    }

    /// Emits the kernel `name` with `gen` unless the unit defines it already (the
    /// fine and coarse products of a set may share a stage shape).
    pub(crate) fn add(&mut self, name: &str, gen: impl FnOnce(&mut String) -> KernelEntry) {
        if self.entries.iter().all(|e| e.name != name) {
            let e = gen(&mut self.src);
            debug_assert_eq!(e.name, name);
            self.entries.push(e);
        }
    }

    /// Emits several kernels at once (`gen` returns every entry it wrote).
    pub(crate) fn add_all(&mut self, gen: impl FnOnce(&mut String) -> Vec<KernelEntry>) {
        let es = gen(&mut self.src);
        self.entries.extend(es);
    }

    pub(crate) fn finish(self, name: String) -> CudaModule {
        CudaModule {
            name,
            source: self.src,
            entries: self.entries,
        }
    }
}

/// The product kernels of `(bf, bc)`: the `R` gather, the two-pass stages
/// (`A P`, `R W`) and per family the `A P` and `P^T W` stages.
fn product_kernels(u: &mut Unit, s: ShapeSet) {
    u.add(&gather_r_name(s), |o| gather_r(o, s));
    let (ap, ptw, rw) = (Stage::ap(s), Stage::ptw(s), Stage::rw(s));
    // With bf == bc the explicit-R stage has the A P stage's shape: one kernel serves both.
    for st in [ap, rw] {
        u.add(&row_owner_name(st), |o| row_owner(o, st));
    }
    for st in [ap, ptw] {
        u.add(&slot_tiled_name(st), |o| slot_tiled(o, st));
        let cfg = column_split_effective(st, column_split_config(st), COLUMN_SPLIT_WINDOW_MAX);
        u.add(&column_split_name(st), |o| {
            column_split(o, st, cfg, column_split_name(st))
        });
        u.add(&flat_stream_name(st), |o| flat_stream(o, st));
        u.add(&crate::gpu_lane::lane_tiled_name(st), |o| {
            crate::gpu_lane::lane_tiled(o, st)
        });
        if let Some(g) = crate::gpu_lane::k_split(st) {
            u.add(&crate::gpu_lane::k_split_name(st), |o| {
                crate::gpu_lane::k_split_stage(o, st, g)
            });
        }
        if crate::gpu_mma::mma_fits(st) {
            u.add(&crate::gpu_mma::mma_name(st), |o| {
                crate::gpu_mma::mma_stage(o, st, false)
            });
        }
        if crate::gpu_mma::mma_pair_fits(st) {
            u.add(&crate::gpu_mma::mma_pair_name(st), |o| {
                crate::gpu_mma::mma_pair_stage(o, st, false)
            });
        }
        // The symmetric product's A P stage halves A's diagonal blocks (W' = (L + D/2) P).
        if st == ap && crate::gpu_mma::mma_fits(st) {
            u.add(&crate::gpu_mma::mma_half_name(st), |o| {
                crate::gpu_mma::mma_stage(o, st, true)
            });
            if crate::gpu_mma::mma_pair_fits(st) {
                u.add(&crate::gpu_mma::mma_pair_half_name(st), |o| {
                    crate::gpu_mma::mma_pair_stage(o, st, true)
                });
            }
            u.add(&crate::gpu_mma::symmetrize_name(s.bc), |o| {
                crate::gpu_mma::symmetrize(o, s.bc)
            });
            // Its pass over X's chunk sums where the P^T W' runs are split across warps.
            u.add(&crate::gpu_mma::symmetrize_split_name(s.bc), |o| {
                crate::gpu_mma::symmetrize_split(o, s.bc)
            });
            // Its P^T W' stage folded onto A_c's upper triangle (X + X^T in the same launch).
            if crate::gpu_mma::mma_fits(ptw) {
                u.add(&crate::gpu_mma::mma_fold_name(ptw), |o| {
                    crate::gpu_mma::mma_fold_stage(o, ptw)
                });
            }
        }
        if row_gustavson_warps(st) > 0 {
            u.add(&row_gustavson_name(st), |o| row_gustavson(o, st));
        }
        u.add(&scatter_name(st), |o| scatter(o, st));
    }
}

/// The CUDA module of a declared set, what `kernels!` emits as `CUDA_SOURCE`
/// and the device launches: the product kernels of the fine product `(bf, bc)`
/// and the coarse product `(bc, bc)`, the merge-path SpMV of the four block
/// shapes, and the point-block Jacobi of `bf` and `bc` blocks.
pub fn set_module(s: ShapeSet) -> CudaModule {
    let mut u = Unit::new();
    for (bf, bc) in s.products() {
        product_kernels(&mut u, ShapeSet { bf, bc });
    }
    for (r, c) in s.block_shapes() {
        u.add(&spmv_name(r, c), |o| crate::gpu_spmv::spmv(o, r, c, false));
        if r == c {
            u.add(&crate::gpu_spmv::residual_name(r), |o| {
                crate::gpu_spmv::spmv(o, r, c, true)
            });
        }
    }
    // The operators the mixed-precision smoother applies: square blocks, f32 values.
    for (r, c) in s.block_shapes() {
        if r == c {
            use crate::gpu_spmv::{residual_f32_name, spmv_f32_name, spmv_of, Values};
            u.add(&spmv_f32_name(r), |o| spmv_of(o, r, c, false, Values::F32));
            u.add(&residual_f32_name(r), |o| spmv_of(o, r, c, true, Values::F32));
        }
    }
    // Symmetric operators read through their upper triangle.
    for (r, c) in s.block_shapes() {
        if r == c {
            use crate::gpu_spmv::{residual_mirror_name, spmv_mirror_name, spmv_of, Values};
            u.add(&spmv_mirror_name(r), |o| spmv_of(o, r, c, false, Values::Mirror));
            u.add(&residual_mirror_name(r), |o| spmv_of(o, r, c, true, Values::Mirror));
        }
    }
    for b in s.square_blocks() {
        u.add_all(|o| crate::gpu_solve::jacobi(o, b));
        u.add(&crate::gpu_cg::jacobi_update_at_name(b), |o| {
            crate::gpu_cg::jacobi_update_at(o, b)
        });
        u.add(&crate::gpu_cg::jacobi_step_name(b), |o| {
            crate::gpu_cg::jacobi_step(o, b)
        });
        u.add(&crate::gpu_cg::lanczos_step_name(b), |o| {
            crate::gpu_cg::lanczos_step(o, b)
        });
    }
    u.finish(format!("ptap_{}", s.stem()))
}

/// The entry points of [`set_module`]`(s)`, with the parameter lists the
/// device checks its launches against.
pub fn set_entries(s: ShapeSet) -> Vec<KernelEntry> {
    set_module(s).entries
}

/// The module of the kernels no block shape enters: vector kernels, fill and
/// the coarse Cholesky (`ptap_common.cu`).
pub fn common_module() -> CudaModule {
    let mut u = Unit::new();
    u.add_all(vector_kernels);
    u.add_all(crate::gpu_solve::coarse);
    u.add_all(crate::gpu_cg::common);
    u.finish(COMMON_MODULE.into())
}

/// File stem of [`common_module`].
pub const COMMON_MODULE: &str = "ptap_common";

/// Names of the vector kernels of the device solve.
pub mod vector {
    pub const AXPBY: &str = "ptap_vec_axpby";
    pub const DOT_PARTIAL: &str = "ptap_vec_dot_partial";
    pub const SUM_PARTIAL: &str = "ptap_vec_sum_partial";
    pub const COPY: &str = "ptap_vec_copy";
    pub const SCALE_CHEB: &str = "ptap_vec_cheb_update";
    pub const TO_F32: &str = "ptap_vec_to_f32";
}

/// Vector kernels: `y = a x + b y`, copies, and a two-stage deterministic dot
/// product (fixed-shape block partials, then one block folds them in order).
fn vector_kernels(src: &mut String) -> Vec<KernelEntry> {
    use ParamTy::*;
    let mut entries = Vec::new();
    let axpby = KernelEntry {
        name: vector::AXPBY.into(),
        params: vec![p("a", F64), p("x", PtrF64), p("b", F64), p("y", PtrMutF64), p("n", U64)],
        doc: "y = a x + b y (b = 0 overwrites y)".into(),
    };
    axpby.write_signature(src, " {");
    writeln!(
        src,
        "  u64 t = (u64)blockIdx.x * blockDim.x + threadIdx.x;\n  if (t >= n) return;\n  \
         y[t] = b == 0.0 ? a * x[t] : a * x[t] + b * y[t];\n}}\n"
    )
    .unwrap();
    entries.push(axpby);
    let copy = KernelEntry {
        name: vector::COPY.into(),
        params: vec![p("x", PtrF64), p("y", PtrMutF64), p("n", U64)],
        doc: "y = x, grid-stride with 16-byte accesses where aligned".into(),
    };
    copy.write_signature(src, " {");
    writeln!(
        src,
        "  u64 stride = (u64)gridDim.x * blockDim.x;\n  u64 n2 = n / 2;\n  \
         const double2* x2 = (const double2*)x; double2* y2 = (double2*)y;\n  \
         for (u64 t = (u64)blockIdx.x * blockDim.x + threadIdx.x; t < n2; t += stride) y2[t] = x2[t];\n  \
         if ((n & 1) && blockIdx.x == 0 && threadIdx.x == 0) y[n - 1] = x[n - 1];\n}}\n"
    )
    .unwrap();
    entries.push(copy);
    let to_f32 = KernelEntry {
        name: vector::TO_F32.into(),
        params: vec![p("x", PtrF64), p("y", PtrMutF32), p("overflow", PtrMutU32), p("n", U64)],
        doc: "y = x rounded to the nearest f32 (ties to even), grid-stride; overflow[0] = 1 where a finite \
              x rounds to an infinite y"
            .into(),
    };
    to_f32.write_signature(src, " {");
    writeln!(
        src,
        "  u64 stride = (u64)gridDim.x * blockDim.x;\n  \
         for (u64 t = (u64)blockIdx.x * blockDim.x + threadIdx.x; t < n; t += stride) {{\n    \
         double v = x[t];\n    float f = __double2float_rn(v);\n    y[t] = f;\n    \
         if (isinf(f) && !isinf(v)) overflow[0] = 1u;\n  }}\n}}\n"
    )
    .unwrap();
    entries.push(to_f32);
    let dot = KernelEntry {
        name: vector::DOT_PARTIAL.into(),
        params: vec![p("x", PtrF64), p("y", PtrF64), p("part", PtrMutF64), p("n", U64)],
        doc: format!("per-block partial sums of x . y ({DOT_THREADS} threads, grid-stride, fixed tree)"),
    };
    dot.write_signature(src, " {");
    writeln!(
        src,
        "  __shared__ double sh[{DOT_THREADS}];\n  double s = 0.0;\n  u64 stride = (u64)gridDim.x * blockDim.x;\n  \
         for (u64 t = (u64)blockIdx.x * blockDim.x + threadIdx.x; t < n; t += stride) s += x[t] * y[t];\n  \
         sh[threadIdx.x] = s;\n  __syncthreads();\n  \
         for (u32 h = {half}; h > 0; h >>= 1) {{ if (threadIdx.x < h) sh[threadIdx.x] += sh[threadIdx.x + h]; __syncthreads(); }}\n  \
         if (threadIdx.x == 0) part[blockIdx.x] = sh[0];\n}}\n",
        half = DOT_THREADS / 2
    )
    .unwrap();
    entries.push(dot);
    let sum = KernelEntry {
        name: vector::SUM_PARTIAL.into(),
        params: vec![p("part", PtrF64), p("out", PtrMutF64), p("slot", U32), p("n", U32)],
        doc: format!("out[slot] = sum of n partials (one block of {DOT_THREADS} threads, fixed tree)"),
    };
    sum.write_signature(src, " {");
    writeln!(
        src,
        "  __shared__ double sh[{DOT_THREADS}];\n  double s = 0.0;\n  \
         for (u32 t = threadIdx.x; t < n; t += {DOT_THREADS}) s += part[t];\n  sh[threadIdx.x] = s;\n  __syncthreads();\n  \
         for (u32 h = {half}; h > 0; h >>= 1) {{ if (threadIdx.x < h) sh[threadIdx.x] += sh[threadIdx.x + h]; __syncthreads(); }}\n  \
         if (threadIdx.x == 0) out[slot] = sh[0];\n}}\n",
        half = DOT_THREADS / 2
    )
    .unwrap();
    entries.push(sum);
    entries
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu_base::spmv_stage_doubles;
    use crate::gpu_solve::{densify_name, jacobi_invert_name, jacobi_update_name};

    const SETS: [(usize, usize); 4] = [(1, 1), (2, 3), (3, 6), (4, 10)];

    /// Every kernel name the device backend looks up for a level of the set.
    fn device_lookups(s: ShapeSet) -> Vec<String> {
        let mut v = Vec::new();
        for (bf, bc) in s.products() {
            let ps = ShapeSet { bf, bc };
            let (ap, ptw, rw) = (Stage::ap(ps), Stage::ptw(ps), Stage::rw(ps));
            v.extend([gather_r_name(ps), row_owner_name(ap), row_owner_name(rw)]);
            for st in [ap, ptw] {
                v.extend([
                    slot_tiled_name(st),
                    column_split_name(st),
                    crate::gpu_lane::lane_tiled_name(st),
                    crate::gpu_lane::k_split_name(st),
                    flat_stream_name(st),
                    scatter_name(st),
                ]);
                if crate::gpu_mma::mma_fits(st) {
                    v.push(crate::gpu_mma::mma_name(st));
                }
                if crate::gpu_mma::mma_pair_fits(st) {
                    v.push(crate::gpu_mma::mma_pair_name(st));
                }
                if st == ap && crate::gpu_mma::mma_fits(st) {
                    v.extend([
                        crate::gpu_mma::mma_half_name(st),
                        crate::gpu_mma::symmetrize_name(ps.bc),
                        crate::gpu_mma::symmetrize_split_name(ps.bc),
                    ]);
                    if crate::gpu_mma::mma_fits(ptw) {
                        v.push(crate::gpu_mma::mma_fold_name(ptw));
                    }
                    if crate::gpu_mma::mma_pair_fits(st) {
                        v.push(crate::gpu_mma::mma_pair_half_name(st));
                    }
                }
            }
        }
        for (r, c) in s.block_shapes() {
            v.push(spmv_name(r, c));
            if r == c {
                v.extend([
                    crate::gpu_spmv::residual_name(r),
                    crate::gpu_spmv::spmv_f32_name(r),
                    crate::gpu_spmv::residual_f32_name(r),
                    crate::gpu_spmv::spmv_mirror_name(r),
                    crate::gpu_spmv::residual_mirror_name(r),
                ]);
            }
        }
        for b in s.square_blocks() {
            v.extend([
                jacobi_invert_name(b),
                jacobi_update_name(b),
                densify_name(b),
                crate::gpu_cg::jacobi_update_at_name(b),
                crate::gpu_cg::jacobi_step_name(b),
                crate::gpu_cg::lanczos_step_name(b),
            ]);
        }
        v
    }

    #[test]
    fn set_module_defines_every_entry_the_device_looks_up_once() {
        for (bf, bc) in SETS {
            let s = ShapeSet { bf, bc };
            let m = set_module(s);
            assert_eq!(m.name, format!("ptap_{}", s.stem()));
            let mut names: Vec<&str> = m.entries.iter().map(|e| e.name.as_str()).collect();
            names.sort();
            names.dedup();
            assert_eq!(names.len(), m.entries.len(), "{}: entry names are unique", m.name);
            assert_eq!(
                m.source.matches("extern \"C\" __global__").count(),
                m.entries.len(),
                "{}",
                m.name
            );
            for e in &m.entries {
                assert!(
                    m.waits_on_grid_dependency(&e.name),
                    "{}: {} opens without the grid dependency",
                    m.name,
                    e.name
                );
            }
            for want in device_lookups(s) {
                assert!(names.contains(&want.as_str()), "{}: {want} missing", m.name);
                assert!(
                    m.source.contains(&format!("void {want}(")),
                    "{}: {want} not defined",
                    m.name
                );
            }
            assert_eq!(set_entries(s), m.entries);
        }
        // 3x3 / 3x6 / 6x6: 26 kernels of the fine product, 21 of the coarse one
        // (its R W stage is its A P stage; no tensor-pair A P stage for 6-row
        // blocks; the symmetric product's halving A P stages, folded P^T W'
        // stages and one 6x6 symmetrize and split pass shared by both), 4 SpMV, 2 residuals,
        // 2 x 2 f32 SpMV and residuals and 2 x 2 mirrored ones (the square shapes), 2 x 6 Jacobi.
        let m = set_module(ShapeSet { bf: 3, bc: 6 });
        assert_eq!(m.entries.len(), 26 + 21 + 4 + 2 + 4 + 4 + 12);
        assert!(m.source.contains("ptap_spmv_mirror_3x3(") && m.source.contains("ptap_residual_mirror_6x6("));
        assert!(m.source.contains("ptap_mma2h_3x3x6") && m.source.contains("ptap_mmah_6x6x6("));
        assert!(m.source.contains("ptap_mma2f_6x3x6t(") && m.source.contains("ptap_mma2f_6x6x6t("));
        assert!(m.source.contains("ptap_symmetrize_6x6(") && m.source.contains("ptap_symsplit_6x6("));
        assert!(m.source.contains("ptap_mma_6x6x6t") && m.source.contains("ptap_mma2_6x6x6t"));
        assert!(!m.source.contains("ptap_mma2_6x6x6("));
        assert!(m.source.contains("ptap_column_split_6x3x6t"));
        // Transposed access of P in the coarse stage: x(i,k) = xb[k*M + i].
        assert!(m.source.contains("xb[(2)*6+(5)]"));
        // 1x1: one product, one block shape (f64, f32 and mirrored), one Jacobi.
        assert_eq!(
            set_module(ShapeSet { bf: 1, bc: 1 }).entries.len(),
            25 + 1 + 1 + 2 + 2 + 6
        );
    }

    #[test]
    fn common_module_holds_the_shape_free_kernels() {
        let m = common_module();
        let names: Vec<&str> = m.entries.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(
            names,
            [
                vector::AXPBY,
                vector::COPY,
                vector::TO_F32,
                vector::DOT_PARTIAL,
                vector::SUM_PARTIAL,
                crate::gpu_solve::FILL,
                crate::gpu_solve::CHOL_SCALE,
                crate::gpu_solve::CHOL_PANEL,
                crate::gpu_solve::CHOL_UPDATE,
                crate::gpu_solve::CHOL_SOLVE,
                crate::gpu_cg::SUM_PARTIAL_KEEP,
                crate::gpu_cg::CG_UPDATE,
                crate::gpu_cg::CG_DIRECTION,
                crate::gpu_cg::AXPBY_RATIO,
                crate::gpu_cg::CHOL_INVERSE_PANEL,
                crate::gpu_cg::CHOL_INVERSE_UPDATE,
                crate::gpu_cg::TRI_MV,
            ]
        );
        assert_eq!(m.name, "ptap_common");
    }

    #[test]
    fn shared_memory_stays_within_48_kib_for_every_block_size() {
        // Static shared memory: the slot tile and the SpMV staging.
        for m in 1..=16 {
            for n in 1..=16 {
                let st = Stage { m, k: m, n, xt: false };
                assert!(slot_tile(st) * m * n * 8 <= SMEM_LIMIT, "slot tile {m}x{n}");
                if spmv_staged(m, n) {
                    assert!(
                        spmv_warps(m, n) * spmv_stage_doubles(m, n) * 8 <= SMEM_LIMIT,
                        "spmv {m}x{n}"
                    );
                }
            }
        }
        assert_eq!(slot_tile(Stage::ap(ShapeSet { bf: 3, bc: 6 })), SLOT_TILE);
        assert_eq!(slot_tile(Stage::ptw(ShapeSet { bf: 10, bc: 10 })), 32);
        assert_eq!((spmv_warps(6, 6), spmv_warps(4, 10), spmv_warps(10, 10)), (4, 4, 1));
        assert!(spmv_staged(10, 10) && !spmv_staged(16, 16));
        let m = set_module(ShapeSet { bf: 4, bc: 10 });
        assert!(m.source.contains("__shared__ double tile[32 * 100];"));
        assert!(m.source.contains("__shared__ double2 stage2[1][1600];"));
        // Dynamic shared memory of the column split at the largest window, 4x4 / 4x10 / 10x10.
        for (bf, bc) in [(4, 10), (10, 10)] {
            let s = ShapeSet { bf, bc };
            for st in [Stage::ap(s), Stage::ptw(s)] {
                let cfg = column_split_effective(st, column_split_config(st), COLUMN_SPLIT_WINDOW_MAX);
                let bytes = column_split_bytes(st, cfg, COLUMN_SPLIT_WINDOW_MAX);
                assert!(bytes <= SMEM_LIMIT, "{st:?}: {bytes}");
            }
        }
        let st = Stage::ptw(ShapeSet { bf: 10, bc: 10 });
        assert_eq!(
            column_split_bytes(st, column_split_config(st), COLUMN_SPLIT_WINDOW_MAX),
            42240
        );
    }

    #[test]
    fn braces_balance_in_every_module() {
        for m in [
            set_module(ShapeSet { bf: 3, bc: 6 }),
            set_module(ShapeSet { bf: 4, bc: 10 }),
            common_module(),
        ] {
            let open = m.source.matches('{').count();
            let close = m.source.matches('}').count();
            assert_eq!(open, close, "{}", m.name);
        }
    }
}
