//! Two product stages that replay column split's schedule (slot runs visited
//! in the run-length order of their window) with another split of a slot's
//! work over lanes:
//!
//! * **lane tiled** ([`lane_tiled_name`]): each lane owns an `a x b` tile of
//!   the output block, chosen by [`lane_tile`] so that a lane issues the
//!   fewest loads per contribution, and reads its rows of `x` and columns of
//!   `y` straight from global memory into registers (16 bytes at a time where
//!   the tile allows); no shared memory but the index chunk. Each output
//!   element sums its contributions in the run's order, and within one the
//!   products `x(i,kk) y(kk,j)` for `kk = 0..K` one at a time, exactly as the
//!   CPU reference: with `--fmad=false` it is bitwise equal to the CPU
//!   two-pass product.
//! * **k-split** ([`k_split_name`]): lane `(kk, c)` owns the inner index `kk`:
//!   the group reads every `y` block in memory order with one request and
//!   stages `x` with one, each lane keeps partial sums over `kk` alone, and
//!   the `K` partials are added in `kk` order at the end of the slot.
//!   Deterministic, equal to V0 to rounding.
//!
//! Why (H200, k = 16, `benches/results/h200-2026-11-22-products-ledger.md`,
//! step 2): column split is bound by the L1's LSU data-pipe wavefronts (one
//! per SM per cycle, 87-94 % busy); 41-52 % of them are shared-memory
//! wavefronts (the staging of `x`, the index chunk). Lane tiled trades those
//! for global requests, k-split
//! trades global requests for shared reads; measured, neither issues
//! materially fewer wavefronts, and both are slower than column split.
use crate::entry::{param as p, KernelEntry, ParamTy};
use crate::gpu_base::Stage;
use std::fmt::Write;

/// Warps per block of the lane-tiled stage.
pub const LANE_TILED_WARPS: usize = 8;

/// How one slot's output block is split over lanes: each lane owns `a` rows and
/// `b` columns; `lanes = (M / a) (N / b)` lanes per slot, `groups` slots per warp,
/// and `unroll` contributions loaded before their multiplies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaneTile {
    pub a: usize,
    pub b: usize,
    pub lanes: usize,
    pub groups: usize,
    pub unroll: usize,
}

/// Loads of `n` contiguous doubles starting at an even offset of a block
/// with an even number of scalars: 16-byte loads, else one per double.
fn loads(n: usize, aligned: bool) -> usize {
    if aligned && n % 2 == 0 {
        n / 2
    } else {
        n
    }
}

/// Loads one lane issues per contribution with tile `a x b` of `st`.
fn tile_loads(st: Stage, a: usize, b: usize) -> usize {
    let (m, k, n) = (st.m, st.k, st.n);
    // y: row kk, columns j0..j0+b (j0 a multiple of b): aligned when b and N are even.
    let y = k * loads(b, n % 2 == 0);
    // x transposed (stored K x M): column kk's rows i0..i0+a are contiguous.
    // x row-major (M x K): each of the lane's rows is K contiguous doubles.
    let x = if st.xt {
        k * loads(a, m % 2 == 0)
    } else {
        a * loads(k, k % 2 == 0)
    };
    x + y
}

/// The lane tile of `st`: among the tiles that divide the block and need at
/// most 32 lanes per slot, the one with the fewest loads per lane and
/// contribution (ties: fewer lanes per slot, so more slots per warp).
pub fn lane_tile(st: Stage) -> LaneTile {
    let (m, n) = (st.m, st.n);
    let mut best: Option<(usize, usize, usize, usize)> = None;
    for a in (1..=m).filter(|a| m % a == 0) {
        for b in (1..=n).filter(|b| n % b == 0) {
            let lanes = (m / a) * (n / b);
            if lanes > 32 {
                continue;
            }
            let key = (tile_loads(st, a, b), lanes);
            if best.is_none_or(|(l, g, _, _)| key < (l, g)) {
                best = Some((key.0, key.1, a, b));
            }
        }
    }
    let (_, lanes, a, b) = best.expect("a = M, b = N always fits one lane");
    let regs = a * st.k + st.k * b;
    LaneTile {
        a,
        b,
        lanes,
        groups: 32 / lanes,
        unroll: if regs <= 24 { 2 } else { 1 },
    }
}

/// Threads and slots of one lane-tiled block of `st`.
pub fn lane_tiled_launch(st: Stage) -> (u32, u32) {
    let t = lane_tile(st);
    ((LANE_TILED_WARPS * 32) as u32, (LANE_TILED_WARPS * t.groups) as u32)
}

pub fn lane_tiled_name(st: Stage) -> String {
    format!("ptap_lane_tiled_{}", st.tag())
}

/// Lane-tiled stage `C = X Y` (see the module documentation).
pub(crate) fn lane_tiled(out: &mut String, st: Stage) -> KernelEntry {
    use ParamTy::*;
    let (m, k, n) = (st.m, st.k, st.n);
    let (mk, kn, mn) = (m * k, k * n, m * n);
    let t = lane_tile(st);
    let (a, b, g, gpw, unroll) = (t.a, t.b, t.lanes, t.groups, t.unroll);
    let nb = n / b;
    let per_block = LANE_TILED_WARPS * gpw;
    let mask: u64 = if g == 32 { 0xffff_ffff } else { (1u64 << g) - 1 };
    let e = KernelEntry {
        name: lane_tiled_name(st),
        params: vec![
            p("xv", PtrF64),
            p("yv", PtrF64),
            p("ptr", PtrU32),
            p("rx", PtrU32),
            p("ry", PtrU32),
            p("order", PtrU32),
            p("cv", PtrMutF64),
            p("nslots", U32),
        ],
        doc: format!(
            "lane-tiled stage ({m}x{k} by {k}x{n}), {g} lanes per slot each owning {a}x{b} outputs, {gpw} slots per warp, \
             operands read straight into registers, {unroll} contributions per step"
        ),
    };
    e.write_signature(out, " {");
    writeln!(
        out,
        "  __shared__ u32 lt_idx[{per_block} * {two_g}];\n  \
         u32 lane = threadIdx.x & 31, gw = lane / {g};\n  if (gw >= {gpw}) return;\n  \
         u32 r = lane - gw * {g};\n  u32 ti = r / {nb}, tj = r - ti * {nb};\n  \
         u32 gl = (threadIdx.x >> 5) * {gpw} + gw;\n  u32 idx = blockIdx.x * {per_block} + gl;\n  \
         if (idx >= nslots) return;\n  u32 s = order[idx];\n  u32* si = lt_idx + gl * {two_g};\n  \
         const u32 gm = {mask}u << (gw * {g});\n  \
         u32 xo = {xo};\n  u32 yo = tj * {b};",
        two_g = 2 * g,
        xo = if st.xt {
            format!("ti * {a}")
        } else {
            format!("ti * {}", a * k)
        },
    )
    .unwrap();
    for i in 0..a {
        for j in 0..b {
            writeln!(out, "  double c{i}_{j} = 0.0;").unwrap();
        }
    }
    writeln!(
        out,
        "  u32 q1 = ptr[s + 1];\n  for (u32 q0 = ptr[s]; q0 < q1; q0 += {g}) {{\n    \
         u32 cnt = q1 - q0 < {g} ? q1 - q0 : {g};\n    \
         if (r < cnt) {{ si[r] = rx[q0 + r]; si[{g} + r] = ry[q0 + r]; }}\n    \
         __syncwarp(gm);\n    for (u32 t = 0; t < cnt; t += {unroll}) {{"
    )
    .unwrap();
    for u in 0..unroll {
        // Operand registers of contribution u, loaded before any multiply of the step.
        let xdecl: Vec<String> = (0..a)
            .flat_map(|i| (0..k).map(move |kk| format!("x{u}_{i}_{kk} = 0.0")))
            .collect();
        let ydecl: Vec<String> = (0..k)
            .flat_map(|kk| (0..b).map(move |j| format!("y{u}_{kk}_{j} = 0.0")))
            .collect();
        writeln!(
            out,
            "      double {};\n      double {};",
            xdecl.join(", "),
            ydecl.join(", ")
        )
        .unwrap();
        let guard = if u == 0 {
            String::new()
        } else {
            format!("if (t + {u} < cnt) ")
        };
        writeln!(
            out,
            "      {guard}{{\n        const double* xb = xv + (u64)si[t + {u}] * {mk} + xo;\n        \
             const double* yb = yv + (u64)si[{g} + t + {u}] * {kn} + yo;"
        )
        .unwrap();
        // y: row kk of the lane's columns.
        for kk in 0..k {
            emit_run(out, "yb", kk * n, b, n % 2 == 0, |j| format!("y{u}_{kk}_{j}"));
        }
        // x: the lane's rows.
        if st.xt {
            for kk in 0..k {
                emit_run(out, "xb", kk * m, a, m % 2 == 0, |i| format!("x{u}_{i}_{kk}"));
            }
        } else {
            for i in 0..a {
                emit_run(out, "xb", i * k, k, k % 2 == 0, |kk| format!("x{u}_{i}_{kk}"));
            }
        }
        writeln!(out, "      }}").unwrap();
    }
    for u in 0..unroll {
        if u > 0 {
            writeln!(out, "      if (t + {u} < cnt) {{").unwrap();
        }
        for i in 0..a {
            for j in 0..b {
                for kk in 0..k {
                    writeln!(out, "      c{i}_{j} = c{i}_{j} + x{u}_{i}_{kk} * y{u}_{kk}_{j};").unwrap();
                }
            }
        }
        if u > 0 {
            writeln!(out, "      }}").unwrap();
        }
    }
    writeln!(
        out,
        "    }}\n    __syncwarp(gm);\n  }}\n  double* cb = cv + (u64)s * {mn};"
    )
    .unwrap();
    for i in 0..a {
        for j in 0..b {
            writeln!(out, "  cb[(ti * {a} + {i}) * {n} + tj * {b} + {j}] = c{i}_{j};").unwrap();
        }
    }
    writeln!(out, "}}\n").unwrap();
    e
}

/// Loads `len` contiguous doubles at `ptr[off..]` into the registers `reg(0..len)`:
/// 16-byte loads when `len` is even and `even_ok` (the run starts at an even
/// scalar of a block with an even number of scalars), else one double at a time.
fn emit_run(out: &mut String, ptr: &str, off: usize, len: usize, even_ok: bool, reg: impl Fn(usize) -> String) {
    if even_ok && len % 2 == 0 {
        for h in 0..len / 2 {
            writeln!(
                out,
                "        {{ double2 v = ((const double2*)({ptr} + {off}))[{h}]; {} = v.x; {} = v.y; }}",
                reg(2 * h),
                reg(2 * h + 1)
            )
            .unwrap();
        }
    } else {
        for q in 0..len {
            writeln!(out, "        {} = {ptr}[{}];", reg(q), off + q).unwrap();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shape::ShapeSet;

    #[test]
    fn tiles_of_the_shipped_and_user_stages() {
        let s = ShapeSet { bf: 3, bc: 6 };
        let c = ShapeSet { bf: 6, bc: 6 };
        let u = ShapeSet { bf: 10, bc: 10 };
        let got = |st: Stage| {
            let t = lane_tile(st);
            (t.a, t.b, t.lanes, t.groups, t.unroll, tile_loads(st, t.a, t.b))
        };
        // 3x3 A by 3x6 P: one row, two columns per lane (x row: 3 loads, y: 3 16-byte loads).
        assert_eq!(got(Stage::ap(s)), (1, 2, 9, 3, 2, 6));
        // P^T W: 2x2 per lane, both operands by 16-byte loads.
        assert_eq!(got(Stage::ptw(s)), (2, 2, 9, 3, 2, 6));
        // 6x6 A by 6x6 P: a whole x row (3 loads) and 6 y rows; 18 lanes.
        assert_eq!(got(Stage::ap(c)), (1, 2, 18, 1, 2, 9));
        assert_eq!(got(Stage::ptw(c)), (2, 2, 9, 3, 2, 12));
        assert_eq!(got(Stage::ap(ShapeSet { bf: 1, bc: 1 })), (1, 1, 1, 32, 2, 2));
        // 10x10 blocks: at most 32 lanes per slot.
        let t = lane_tile(Stage::ap(u));
        assert!(t.lanes <= 32 && 10 % t.a == 0 && 10 % t.b == 0);
        assert_eq!(t.groups, 32 / t.lanes);
    }

    #[test]
    fn k_split_geometry_of_the_shipped_and_user_stages() {
        let g = |st: Stage| {
            let k = k_split(st).unwrap();
            (k.b, k.lanes, k.groups, k.unroll, k.group_bytes % 128, k.warps)
        };
        let s = ShapeSet { bf: 3, bc: 6 };
        let c = ShapeSet { bf: 6, bc: 6 };
        // 3x3 by 3x6: lane (kk, c) reads 16 bytes of y; 9 lanes; the groups'
        // 8-byte staging stores continue one another modulo 128 bytes.
        assert_eq!(g(Stage::ap(s)), (2, 9, 3, 2, 72, 8));
        assert_eq!(g(Stage::ptw(s)), (2, 9, 3, 2, 16, 8));
        assert_eq!(g(Stage::ap(c)), (2, 18, 1, 1, 32, 8));
        assert_eq!(g(Stage::ptw(c)), (2, 18, 1, 1, 32, 8));
        // Odd N: one column per lane; 10x10 blocks: five columns per lane, 20 lanes.
        assert_eq!(g(Stage::ap(ShapeSet { bf: 2, bc: 3 })).0, 1);
        let u = k_split(Stage::ap(ShapeSet { bf: 10, bc: 10 })).unwrap();
        assert_eq!((u.b, u.lanes), (5, 20));
        assert!(u.warps * u.groups * u.group_bytes <= crate::gpu_base::SMEM_LIMIT);
        for st in [Stage::ap(s), Stage::ptw(s), Stage::ap(c), Stage::ptw(c)] {
            let k = k_split(st).unwrap();
            assert!(
                k.warps * k.groups * k.group_bytes <= crate::gpu_base::SMEM_LIMIT,
                "{st:?}"
            );
            assert_eq!(k.group_bytes % 8, 0);
        }
    }

    #[test]
    fn k_split_adds_the_partials_of_every_element_in_k_order() {
        for st in [
            Stage::ap(ShapeSet { bf: 3, bc: 6 }),
            Stage::ptw(ShapeSet { bf: 3, bc: 6 }),
            Stage::ptw(ShapeSet { bf: 2, bc: 3 }),
        ] {
            let g = k_split(st).unwrap();
            let mut src = String::new();
            let e = k_split_stage(&mut src, st, g);
            assert_eq!(e.name, k_split_name(st));
            let mn = st.m * st.n;
            // Each lane writes its M x b partials once, and the sum runs kk = 1.. in order.
            assert_eq!(src.matches("  part[(kk * ").count(), st.m * g.b, "{st:?}");
            let adds: Vec<usize> = (1..st.k)
                .map(|kk| src.find(&format!("v = v + part[{} + e];", kk * mn)).unwrap())
                .collect();
            assert!(adds.windows(2).all(|w| w[0] < w[1]), "{st:?}");
            assert_eq!(src.matches('{').count(), src.matches('}').count());
        }
    }

    #[test]
    fn every_output_element_is_stored_once_and_every_product_summed_in_k_order() {
        for st in [
            Stage::ap(ShapeSet { bf: 3, bc: 6 }),
            Stage::ptw(ShapeSet { bf: 3, bc: 6 }),
            Stage::ap(ShapeSet { bf: 2, bc: 3 }),
            Stage::ptw(ShapeSet { bf: 6, bc: 6 }),
        ] {
            let mut src = String::new();
            let e = lane_tiled(&mut src, st);
            assert_eq!(e.name, lane_tiled_name(st));
            let t = lane_tile(st);
            assert_eq!(src.matches("  cb[").count(), t.a * t.b, "{st:?}");
            // Within one output element the products come in kk order.
            let first: Vec<usize> = (0..st.k)
                .map(|kk| src.find(&format!("c0_0 = c0_0 + x0_0_{kk} * y0_{kk}_0;")).unwrap())
                .collect();
            assert!(first.windows(2).all(|w| w[0] < w[1]), "{st:?}");
            assert_eq!(src.matches('{').count(), src.matches('}').count());
        }
    }
}

/// Warps per block of the k-split stage (fewer where its shared memory would pass 48 KiB).
pub const K_SPLIT_WARPS: usize = 8;

/// Geometry of the k-split stage of `st`: `b` output columns per lane (2 where
/// `N` is even), `lanes = K N / b` per slot, `groups` slots per warp, `unroll`
/// contributions staged per step, the doubles of one staged `x` block, the
/// shared-memory bytes of one slot's group and the warps per block; `None`
/// where one group's shared memory passes 48 KiB.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KSplit {
    pub b: usize,
    pub lanes: usize,
    pub groups: usize,
    pub unroll: usize,
    pub x_stride: usize,
    pub group_bytes: usize,
    pub warps: usize,
}

pub fn k_split(st: Stage) -> Option<KSplit> {
    let (m, k, n) = (st.m, st.k, st.n);
    // Two columns (16 bytes) per lane where N is even and the slot fits a warp;
    // else the narrowest run of columns that does.
    let fits = |b: usize| n % b == 0 && k * (n / b) <= 32;
    let b = if n % 2 == 0 && fits(2) {
        2
    } else {
        (1..=n).find(|&b| fits(b))?
    };
    let lanes = k * (n / b);
    let groups = 32 / lanes;
    let mk = m * k;
    let x_stride = mk + (mk & 1);
    let unroll = if mk <= 18 { 2 } else { 1 };
    // Staged x blocks, the index chunk (2 * lanes u32) and the partials of the
    // final reduction (K M N doubles) share one region per group. Regions are
    // spaced so that the staging stores of consecutive groups continue one
    // another modulo 128 bytes (the banks): a warp's stores are conflict-free.
    let staging = unroll * x_stride * 8 + 2 * lanes * 4;
    let partials = k * m * n * 8;
    let piece = if mk % 2 == 0 { 16 } else { 8 };
    let group_bytes = staging.max(partials).div_ceil(128) * 128 + (lanes * piece) % 128;
    let warps = (crate::gpu_base::SMEM_LIMIT / (groups * group_bytes)).min(K_SPLIT_WARPS);
    (warps > 0).then_some(KSplit {
        b,
        lanes,
        groups,
        unroll,
        x_stride,
        group_bytes,
        warps,
    })
}

pub fn k_split_name(st: Stage) -> String {
    format!("ptap_k_split_{}", st.tag())
}

/// Threads, slots and dynamic shared-memory bytes of one k-split block of `st`.
pub fn k_split_launch(st: Stage) -> Option<(u32, u32, u32)> {
    k_split(st).map(|g| {
        (
            (g.warps * 32) as u32,
            (g.warps * g.groups) as u32,
            (g.warps * g.groups * g.group_bytes) as u32,
        )
    })
}

/// K-split stage `C = X Y`: column split's schedule with the inner index split
/// over lanes. Lane `(kk, c)` of a slot's group reads row `kk`, columns
/// `c b .. c b + b` of every `y` block (the group's lanes read the block in
/// memory order, 16 bytes each, one request), the group stages the `x` block in
/// shared memory with one request, and the lane accumulates the partial sums
/// `sum_contributions x(i,kk) y(kk,j)` of its `M x b` outputs in registers. At
/// the end of the slot the `K` partials of every output element are added in
/// `kk` order. Deterministic; not V0's order (V0 adds the `K` products of each
/// contribution into one accumulator), so equal to V0 to rounding only.
pub(crate) fn k_split_stage(out: &mut String, st: Stage, g: KSplit) -> KernelEntry {
    use ParamTy::*;
    let (m, k, n) = (st.m, st.k, st.n);
    let (mk, kn, mn) = (m * k, k * n, m * n);
    let (b, lanes, gpw, unroll, xs) = (g.b, g.lanes, g.groups, g.unroll, g.x_stride);
    let nb = n / b;
    let per_block = g.warps * gpw;
    let mask: u64 = if lanes == 32 { 0xffff_ffff } else { (1u64 << lanes) - 1 };
    let e = KernelEntry {
        name: k_split_name(st),
        params: vec![
            p("xv", PtrF64),
            p("yv", PtrF64),
            p("ptr", PtrU32),
            p("rx", PtrU32),
            p("ry", PtrU32),
            p("order", PtrU32),
            p("cv", PtrMutF64),
            p("nslots", U32),
        ],
        doc: format!(
            "k-split stage ({m}x{k} by {k}x{n}), {lanes} lanes per slot each owning inner index kk and {b} columns, \
             {gpw} slots per warp, {} warps per block, {unroll} contributions per step, partials added in kk order",
            g.warps
        ),
    };
    e.write_signature(out, " {");
    writeln!(
        out,
        "  extern __shared__ double2 ks_smem[];\n  \
         u32 lane = threadIdx.x & 31, gw = lane / {lanes};\n  if (gw >= {gpw}) return;\n  \
         u32 r = lane - gw * {lanes};\n  u32 kk = r / {nb}, c = r - kk * {nb};\n  \
         u32 gl = (threadIdx.x >> 5) * {gpw} + gw;\n  u32 idx = blockIdx.x * {per_block} + gl;\n  \
         if (idx >= nslots) return;\n  u32 s = order[idx];\n  \
         double* sx = (double*)((char*)ks_smem + (u64)gl * {gb});\n  u32* si = (u32*)(sx + {sio});\n  \
         const u32 gm = {mask}u << (gw * {lanes});\n  u32 yo = kk * {n} + c * {b};",
        gb = g.group_bytes,
        sio = unroll * xs,
    )
    .unwrap();
    for i in 0..m {
        for j in 0..b {
            writeln!(out, "  double c{i}_{j} = 0.0;").unwrap();
        }
    }
    writeln!(
        out,
        "  u32 q1 = ptr[s + 1];\n  for (u32 q0 = ptr[s]; q0 < q1; q0 += {lanes}) {{\n    \
         u32 cnt = q1 - q0 < {lanes} ? q1 - q0 : {lanes};\n    \
         if (r < cnt) {{ si[r] = rx[q0 + r]; si[{lanes} + r] = ry[q0 + r]; }}\n    \
         __syncwarp(gm);\n    for (u32 t = 0; t < cnt; t += {unroll}) {{"
    )
    .unwrap();
    let (units, ty) = if mk % 2 == 0 {
        (mk / 2, "double2")
    } else {
        (mk, "double")
    };
    for u in 0..unroll {
        let decl: Vec<String> = (0..b).map(|j| format!("y{u}_{j} = 0.0")).collect();
        let guard = if u == 0 {
            String::new()
        } else {
            format!("if (t + {u} < cnt) ")
        };
        writeln!(
            out,
            "      double {};\n      {guard}{{\n        \
             const {ty}* xs_g = (const {ty}*)(xv + (u64)si[t + {u}] * {mk});\n        \
             {ty}* xs_s = ({ty}*)(sx + {off});\n        \
             const double* yb = yv + (u64)si[{lanes} + t + {u}] * {kn} + yo;",
            decl.join(", "),
            off = u * xs
        )
        .unwrap();
        for rr in 0..units.div_ceil(lanes) {
            let e0 = rr * lanes;
            if e0 + lanes <= units {
                writeln!(out, "        xs_s[{e0} + r] = xs_g[{e0} + r];").unwrap();
            } else {
                writeln!(out, "        if ({e0} + r < {units}) xs_s[{e0} + r] = xs_g[{e0} + r];").unwrap();
            }
        }
        emit_run(out, "yb", 0, b, n % 2 == 0, |j| format!("y{u}_{j}"));
        writeln!(out, "      }}").unwrap();
    }
    writeln!(out, "      __syncwarp(gm);").unwrap();
    for u in 0..unroll {
        if u > 0 {
            writeln!(out, "      if (t + {u} < cnt) {{").unwrap();
        }
        // x(i, kk) for every row i: a column of the row-major block, or a
        // contiguous run of the transposed one (16-byte reads where even).
        if st.xt && m % 2 == 0 {
            for h in 0..m / 2 {
                writeln!(
                    out,
                    "      double2 x{u}_{h} = ((const double2*)(sx + {off} + kk * {m}))[{h}];",
                    off = u * xs
                )
                .unwrap();
            }
        }
        for i in 0..m {
            let xa = if st.xt && m % 2 == 0 {
                format!("x{u}_{}.{}", i / 2, if i % 2 == 0 { "x" } else { "y" })
            } else if st.xt {
                format!("sx[{} + kk * {m} + {i}]", u * xs)
            } else {
                format!("sx[{} + {} + kk]", u * xs, i * k)
            };
            writeln!(out, "      {{ double x = {xa};").unwrap();
            for j in 0..b {
                writeln!(out, "        c{i}_{j} = c{i}_{j} + x * y{u}_{j};").unwrap();
            }
            writeln!(out, "      }}").unwrap();
        }
        if u > 0 {
            writeln!(out, "      }}").unwrap();
        }
    }
    writeln!(out, "      __syncwarp(gm);\n    }}\n  }}").unwrap();
    // The partials, then each output element as the kk-ordered sum of its K partials.
    writeln!(out, "  double* part = sx;").unwrap();
    for i in 0..m {
        for j in 0..b {
            writeln!(out, "  part[(kk * {m} + {i}) * {n} + c * {b} + {j}] = c{i}_{j};").unwrap();
        }
    }
    writeln!(
        out,
        "  __syncwarp(gm);\n  double* cb = cv + (u64)s * {mn};\n  \
         for (u32 e = r; e < {mn}; e += {lanes}) {{\n    double v = part[e];"
    )
    .unwrap();
    for kk in 1..k {
        writeln!(out, "    v = v + part[{} + e];", kk * mn).unwrap();
    }
    writeln!(out, "    cb[e] = v;\n  }}\n}}\n").unwrap();
    e
}
