//! The merge-path block SpMV (paper, `sec:perf-spmv`), `y = A x` and the
//! fused residual `r = b - A x`.
//!
//! Each warp owns an equal, block-aligned range of the block stream. It walks
//! it 32 blocks at a time: the next 32 blocks' values (16-byte loads), block
//! columns and block rows are loaded into registers while the current ones,
//! staged in shared memory, are multiplied (one block per lane at
//! compile-time positions) and combined by a warp-segmented scan by block row
//! before memory is touched. A row wholly inside the range is stored once. A
//! row that crosses a range boundary (at most one per boundary, since a range
//! is at least as long as the longest row) has two partial sums: each warp
//! stores its part in the boundary's slot, and the second to arrive (an atomic
//! ticket) stores `tail + head` in that order, so the result does not depend
//! on which warp finishes first and nothing needs zeroing beforehand. Which
//! rows cross is known from the block rows at the range ends; no row pointer
//! is read.
use crate::entry::{param as p, KernelEntry, ParamTy};
use crate::gpu_base::{spmv_name, spmv_staged, spmv_warps};
use std::fmt::Write;

/// Most `double2` registers per lane the prefetch of 32 blocks may take (6x6 blocks).
pub const PREFETCH_MAX: usize = 18;

/// The fused residual `r = b - A x` of `b x b` blocks.
pub fn residual_name(b: usize) -> String {
    format!("ptap_residual_merge_{b}x{b}")
}

/// The SpMV of `b x b` blocks whose values are stored as `f32` (the
/// mixed-precision smoother): each value is widened to `f64` (exactly) where
/// it is used, `x`, `y` and every sum stay `f64`.
pub fn spmv_f32_name(b: usize) -> String {
    format!("ptap_spmv_merge_f32_{b}x{b}")
}

/// The fused residual `r = b - A x` of `b x b` blocks stored as `f32`.
pub fn residual_f32_name(b: usize) -> String {
    format!("ptap_residual_merge_f32_{b}x{b}")
}

/// The SpMV of a symmetric operator of `b x b` blocks that reads only the
/// blocks on and above the diagonal: a block `(i, j)` below it is read as the
/// transpose of its mirror `(j, i)` (see [`Values::Mirror`]).
pub fn spmv_mirror_name(b: usize) -> String {
    format!("ptap_spmv_mirror_{b}x{b}")
}

/// The fused residual `r = b - A x` of [`spmv_mirror_name`].
pub fn residual_mirror_name(b: usize) -> String {
    format!("ptap_residual_mirror_{b}x{b}")
}

/// The storage type of a matrix's values the SpMV reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Values {
    F64,
    /// `f32`, widened to `f64` where used: the same sums as the `f64` kernel
    /// on the values rounded to `f32`.
    F32,
    /// `f64` read through `pos`: stream entry `k` (block `(i, j)` of the
    /// pattern, in pattern order) multiplies the block stored at `pos[k] &
    /// 0x7fffffff`, transposed where bit 31 is set. For a symmetric operator
    /// `pos` sends every block below the diagonal to its mirror above it, so
    /// only the upper triangle's values are read (twice; the second read of
    /// a block is meant to hit the L2). The sums are the `f64` kernel's, in
    /// the same order: on an operator whose blocks equal their mirrors'
    /// transposes bit for bit the result is the `f64` kernel's bit for bit.
    Mirror,
}

/// Thread blocks per SM the compiler must leave room for (`__launch_bounds__`):
/// the f32 kernels of blocks of at most 9 values took 72 registers, 7
/// blocks per SM; 8 blocks (64 registers) on the H200.
fn min_blocks_per_sm(br: usize, bc: usize, vals: Values) -> Option<usize> {
    (vals == Values::F32 && br * bc <= 9).then_some(8)
}

/// `y = A x` (`residual`: `y = b - A x`) for `br x bc` blocks.
pub(crate) fn spmv(src: &mut String, br: usize, bc: usize, residual: bool) -> KernelEntry {
    spmv_of(src, br, bc, residual, Values::F64)
}

/// [`spmv`] reading values of type `vals`: `f64` values move as `double2`
/// (16 bytes, 2 values), `f32` values as `float4` (16 bytes, 4 values).
pub(crate) fn spmv_of(src: &mut String, br: usize, bc: usize, residual: bool, vals: Values) -> KernelEntry {
    use ParamTy::*;
    let bl = br * bc;
    let mirror = vals == Values::Mirror;
    assert!(!mirror || br == bc, "the mirrored SpMV needs square blocks");
    // The mirrored kernel gathers each block where its position says: no
    // contiguous run of 32 blocks to stage.
    let (warps, staged) = (spmv_warps(br, bc), spmv_staged(br, bc) && !mirror);
    let f32v = vals == Values::F32;
    // Values per 16-byte word, its C type, the scalar's.
    let (per, word, scalar) = if f32v {
        (4, "float4", "float")
    } else {
        (2, "double2", "double")
    };
    let mut params = vec![p("av", if f32v { PtrF32 } else { PtrF64 })];
    if mirror {
        params.push(p("pos", PtrU32));
    }
    params.extend([p("ci", PtrU32), p("brow", PtrU32), p("x", PtrF64)]);
    if residual {
        params.push(p("bv", PtrF64));
    }
    params.extend([
        p("y", PtrMutF64),
        p("carry", PtrMutF64),
        p("ticket", PtrMutU32),
        p("nblocks", U32),
        p("per_warp", U32),
    ]);
    let e = KernelEntry {
        name: match (residual, vals) {
            (true, Values::F64) => residual_name(br),
            (false, Values::F64) => spmv_name(br, bc),
            (true, Values::F32) => residual_f32_name(br),
            (false, Values::F32) => spmv_f32_name(br),
            (true, Values::Mirror) => residual_mirror_name(br),
            (false, Values::Mirror) => spmv_mirror_name(br),
        },
        params,
        doc: format!(
            "merge-path block SpMV {}, {br}x{bc} blocks{}, {warps} warps per block, the next 32 blocks loaded \
             while the current ones are multiplied{}; rows crossing a warp range meet in carry[boundary] \
             (tail + head, stored by the second warp to take the boundary's ticket)",
            if residual { "y = b - A x" } else { "y = A x" },
            match vals {
                Values::F32 => " (values stored as f32, widened to f64; x, y and the sums f64)",
                Values::F64 => "",
                Values::Mirror =>
                    " (each block read at pos[k], transposed where bit 31 is set: a symmetric operator's \
                     upper triangle only)",
            },
            if staged {
                ""
            } else if mirror {
                ", blocks gathered from global memory"
            } else {
                ", blocks read from global memory (too large to stage)"
            }
        ),
    };
    e.write_bounded_signature(src, " {", min_blocks_per_sm(br, bc, vals).map(|m| (32 * warps, m)));
    // The prefetch registers: whole 16-byte words of 32 blocks spread over the lanes.
    let half = (32 * bl).div_ceil(per);
    let q = half.div_ceil(32);
    // Blocks of more than 36 scalars stage straight from memory: their
    // prefetch would take more registers than it saves latency.
    let prefetch = staged && q <= PREFETCH_MAX;
    if staged {
        writeln!(src, "  __shared__ {word} stage2[{warps}][{half}];").unwrap();
    }
    writeln!(
        src,
        "  u32 wl = threadIdx.x >> 5, lane = threadIdx.x & 31;\n  \
         u64 w = (u64)blockIdx.x * {warps} + wl;\n  u64 b0 = w * per_warp;\n  if (b0 >= nblocks) return;\n  \
         u64 b1 = b0 + per_warp < nblocks ? b0 + per_warp : nblocks;\n  \
         u32 head_row = b0 > 0 && brow[b0 - 1] == brow[b0] ? brow[b0] : 0xffffffffu;\n  \
         u32 tail_row = b1 < nblocks && brow[b1] == brow[b1 - 1] ? brow[b1 - 1] : 0xffffffffu;\n  \
         u32 carry_row = 0xffffffffu;"
    )
    .unwrap();
    if staged {
        writeln!(src, "  {scalar}* stage = ({scalar}*)stage2[wl];").unwrap();
    }
    if prefetch {
        for i in 0..q {
            writeln!(src, "  {word} pf{i};").unwrap();
        }
        if f32v {
            // Up to 3 values past the last whole word, one per lane.
            writeln!(src, "  float pf_odd = 0.0f;").unwrap();
        } else {
            writeln!(src, "  double pf_odd = 0.0;").unwrap();
        }
    }
    for r in 0..br {
        writeln!(src, "  double k{r} = 0.0;").unwrap();
    }
    // Loads of the chunk at `at` (count `n`) into the prefetch registers.
    let load = |src: &mut String, at: &str, n: &str, indent: &str| {
        writeln!(src, "{indent}{{").unwrap();
        if prefetch {
            writeln!(
                src,
                "{indent}  u32 nd = {n} * {bl};\n{indent}  const {word}* src2 = (const {word}*)(av + {at} * {bl});"
            )
            .unwrap();
            for i in 0..q {
                writeln!(
                    src,
                    "{indent}  if (lane + {o} < nd / {per}) pf{i} = src2[lane + {o}];",
                    o = 32 * i
                )
                .unwrap();
            }
            if f32v {
                writeln!(
                    src,
                    "{indent}  if (lane < (nd & 3u)) pf_odd = av[{at} * {bl} + (nd & ~3u) + lane];"
                )
                .unwrap();
            } else {
                writeln!(
                    src,
                    "{indent}  if ((nd & 1) && lane == 0) pf_odd = av[{at} * {bl} + nd - 1];"
                )
                .unwrap();
            }
        }
        writeln!(
            src,
            "{indent}  pci = lane < {n} ? ci[{at} + lane] : 0;\n{indent}  prow = lane < {n} ? brow[{at} + lane] : 0xfffffffeu;"
        )
        .unwrap();
        if mirror {
            writeln!(src, "{indent}  ppos = lane < {n} ? pos[{at} + lane] : 0;").unwrap();
        }
        writeln!(src, "{indent}}}").unwrap();
    };
    writeln!(
        src,
        "  u32 pci = 0, prow = 0xfffffffeu;\n  u32 pcnt = (u32)(b1 - b0 < 32 ? b1 - b0 : 32);"
    )
    .unwrap();
    if mirror {
        writeln!(src, "  u32 ppos = 0;").unwrap();
    }
    load(src, "b0", "pcnt", "  ");
    writeln!(
        src,
        "  for (u64 base = b0; base < b1; base += 32) {{\n    u32 cnt = pcnt;\n    u32 col = pci, row = prow;"
    )
    .unwrap();
    if mirror {
        writeln!(src, "    u32 mpos = ppos;").unwrap();
    }
    if staged && !prefetch && f32v {
        writeln!(
            src,
            "    {{\n      u32 nd = cnt * {bl};\n      const float4* src2 = (const float4*)(av + base * {bl});\n      \
             for (u32 h = lane; h < nd / 4; h += 32) stage2[wl][h] = src2[h];\n      \
             if (lane < (nd & 3u)) stage[(nd & ~3u) + lane] = av[base * {bl} + (nd & ~3u) + lane];\n    }}\n    __syncwarp();"
        )
        .unwrap();
    } else if staged && !prefetch {
        writeln!(
            src,
            "    {{\n      u32 nd = cnt * {bl};\n      const double2* src2 = (const double2*)(av + base * {bl});\n      \
             for (u32 h = lane; h < nd / 2; h += 32) stage2[wl][h] = src2[h];\n      \
             if ((nd & 1) && lane == 0) stage[nd - 1] = av[base * {bl} + nd - 1];\n    }}\n    __syncwarp();"
        )
        .unwrap();
    }
    if prefetch {
        writeln!(src, "    {{\n      u32 nd = cnt * {bl};").unwrap();
        for i in 0..q {
            writeln!(
                src,
                "      if (lane + {o} < nd / {per}) stage2[wl][lane + {o}] = pf{i};",
                o = 32 * i
            )
            .unwrap();
        }
        if f32v {
            writeln!(
                src,
                "      if (lane < (nd & 3u)) stage[(nd & ~3u) + lane] = pf_odd;\n    }}\n    __syncwarp();"
            )
            .unwrap();
        } else {
            writeln!(
                src,
                "      if ((nd & 1) && lane == 0) stage[nd - 1] = pf_odd;\n    }}\n    __syncwarp();"
            )
            .unwrap();
        }
    }
    writeln!(
        src,
        "    u64 nbase = base + 32;\n    if (nbase < b1) {{\n      pcnt = (u32)(b1 - nbase < 32 ? b1 - nbase : 32);"
    )
    .unwrap();
    load(src, "nbase", "pcnt", "      ");
    writeln!(src, "    }}\n    bool valid = lane < cnt;").unwrap();
    for r in 0..br {
        writeln!(src, "    double v{r} = 0.0;").unwrap();
    }
    writeln!(
        src,
        "    if (valid) {{\n      const {scalar}* a = {};",
        if staged {
            format!("stage + lane * {bl}")
        } else if mirror {
            format!("av + (u64)(mpos & 0x7fffffffu) * {bl};\n      bool tr = (mpos >> 31) != 0u")
        } else {
            format!("av + (base + lane) * {bl}")
        }
    )
    .unwrap();
    // The f32 kernels take the block's `x` entries in as few 16-byte loads
    // as their alignment allows: each load instruction of the warp is its
    // own L1 request, and with half the value bytes the gathers keep L1/TEX
    // busy (f32 fine A 323 -> 312 us on the H200). The f64 kernels keep one
    // 8-byte gather per entry: the 16-byte loads left their SpMV as fast and
    // made the fused 3x3 residual ~2% slower there.
    if f32v && bc % 2 == 0 {
        writeln!(src, "      const double2* xc2 = (const double2*)(x + (u64)col * {bc});").unwrap();
        for h in 0..bc / 2 {
            writeln!(src, "      double2 xv{h} = xc2[{h}];").unwrap();
        }
        for c in 0..bc {
            writeln!(
                src,
                "      double x{c} = xv{}.{};",
                c / 2,
                if c % 2 == 0 { "x" } else { "y" }
            )
            .unwrap();
        }
    } else if f32v && bc == 3 {
        // 3 entries start on 16 bytes at even columns: a double2 and a
        // double either way, picked without a branch.
        writeln!(
            src,
            "      const double* xc = x + (u64)col * 3;\n      bool xodd = (col & 1u) != 0u;\n      \
             double xs = xc[xodd ? 0 : 2];\n      double2 xv = *(const double2*)(xc + (xodd ? 1 : 0));\n      \
             double x0 = xodd ? xs : xv.x;\n      double x1 = xodd ? xv.x : xv.y;\n      double x2 = xodd ? xv.y : xs;"
        )
        .unwrap();
    } else {
        for c in 0..bc {
            writeln!(src, "      double x{c} = x[(u64)col * {bc} + {c}];").unwrap();
        }
    }
    // Blocks of up to 36 values are loaded whole, then each position picks its
    // own value or its transpose's; larger ones pick the address instead (a
    // 10x10 block would hold 100 registers).
    let preload = mirror && bl <= 36;
    if preload {
        for e in 0..bl {
            writeln!(src, "      double e{e} = a[{e}];").unwrap();
        }
    }
    for r in 0..br {
        let terms: Vec<String> = (0..bc)
            .map(|c| {
                if f32v {
                    format!("(double)a[{}] * x{c}", r * bc + c)
                } else if preload && r == c {
                    format!("e{} * x{c}", r * bc + c)
                } else if preload {
                    format!("(tr ? e{} : e{}) * x{c}", c * bc + r, r * bc + c)
                } else if mirror && r != c {
                    format!("a[tr ? {} : {}] * x{c}", c * bc + r, r * bc + c)
                } else {
                    format!("a[{}] * x{c}", r * bc + c)
                }
            })
            .collect();
        // Left-to-right sum over the block's columns, as the CPU's gemv_acc.
        writeln!(src, "      v{r} = {};", terms.join(" + ")).unwrap();
    }
    writeln!(src, "    }}\n    __syncwarp();").unwrap();
    // Segmented inclusive scan by row (Hillis-Steele with shuffles).
    writeln!(
        src,
        "    #pragma unroll\n    for (u32 d = 1; d < 32; d <<= 1) {{\n      \
         u32 orow = __shfl_up_sync(0xffffffffu, row, d);"
    )
    .unwrap();
    for r in 0..br {
        writeln!(src, "      double o{r} = __shfl_up_sync(0xffffffffu, v{r}, d);").unwrap();
    }
    writeln!(src, "      if (lane >= d && orow == row) {{").unwrap();
    for r in 0..br {
        writeln!(src, "        v{r} = o{r} + v{r};").unwrap();
    }
    writeln!(
        src,
        "      }}\n    }}\n    u32 next = __shfl_down_sync(0xffffffffu, row, 1);\n    \
         bool last = valid && (lane == cnt - 1 || next != row);\n    \
         if (last && row == carry_row) {{"
    )
    .unwrap();
    for r in 0..br {
        writeln!(src, "      v{r} = k{r} + v{r};").unwrap();
    }
    // The tail segment continues into the next 32 blocks of this warp: carry it.
    writeln!(
        src,
        "    }}\n    u32 tail_c = __shfl_sync(0xffffffffu, row, cnt - 1);\n    \
         u32 next_first = __shfl_sync(0xffffffffu, prow, 0);\n    \
         bool cont = nbase < b1 && next_first == tail_c;\n    \
         carry_row = cont ? tail_c : 0xffffffffu;"
    )
    .unwrap();
    for r in 0..br {
        writeln!(src, "    k{r} = __shfl_sync(0xffffffffu, v{r}, cnt - 1);").unwrap();
    }
    let store = |src: &mut String, indent: &str, val: &dyn Fn(usize) -> String| {
        for r in 0..br {
            let v = val(r);
            if residual {
                writeln!(src, "{indent}yr[{r}] = 1.0 * br_[{r}] - 1.0 * ({v});").unwrap();
            } else {
                writeln!(src, "{indent}yr[{r}] = {v};").unwrap();
            }
        }
    };
    writeln!(
        src,
        "    if (last && !(cont && lane == cnt - 1)) {{\n      \
         double* yr = y + (u64)row * {br};{}\n      \
         if (row != head_row && row != tail_row) {{",
        if residual {
            format!("\n      const double* br_ = bv + (u64)row * {br};")
        } else {
            String::new()
        }
    )
    .unwrap();
    store(src, "        ", &|r| format!("v{r}"));
    writeln!(
        src,
        "      }} else {{\n        bool is_tail = row == tail_row;\n        \
         u64 bw = is_tail ? w + 1 : w;\n        \
         double* mine = carry + (bw * 2 + (is_tail ? 0 : 1)) * {br};\n        \
         double* other = carry + (bw * 2 + (is_tail ? 1 : 0)) * {br};"
    )
    .unwrap();
    for r in 0..br {
        writeln!(src, "        mine[{r}] = v{r};").unwrap();
    }
    writeln!(
        src,
        "        __threadfence();\n        \
         if (atomicAdd(ticket + bw, 1u) == 1u) {{\n          __threadfence();\n          ticket[bw] = 0u;"
    )
    .unwrap();
    for r in 0..br {
        writeln!(
            src,
            "          double t{r} = is_tail ? v{r} : __ldcg(other + {r});\n          \
             double h{r} = is_tail ? __ldcg(other + {r}) : v{r};"
        )
        .unwrap();
    }
    store(src, "          ", &|r| format!("t{r} + h{r}"));
    writeln!(src, "        }}\n      }}\n    }}\n    __syncwarp();\n  }}\n}}\n").unwrap();
    e
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_block_position_is_unrolled_and_the_residual_reads_b() {
        let mut src = String::new();
        let e = spmv(&mut src, 3, 6, false);
        assert_eq!(e.name, "ptap_spmv_merge_3x6");
        for q in 0..18 {
            assert!(src.contains(&format!("a[{q}]")), "position {q} is unrolled");
        }
        assert!(!src.contains("a[18]") && !src.contains("rp["));
        let mut src = String::new();
        let e = spmv(&mut src, 3, 3, true);
        assert_eq!(e.name, residual_name(3));
        assert!(e.params.iter().any(|q| q.name == "bv"));
        assert!(src.contains("yr[2] = 1.0 * br_[2] - 1.0 * (t2 + h2);"));
        assert_eq!(src.matches('{').count(), src.matches('}').count());
    }

    #[test]
    fn the_mirrored_kernels_gather_each_block_where_pos_says_and_transpose_below_the_diagonal() {
        let mut src = String::new();
        let e = spmv_of(&mut src, 3, 3, false, Values::Mirror);
        assert_eq!(e.name, spmv_mirror_name(3));
        let names: Vec<&str> = e.params.iter().map(|q| q.name.as_str()).collect();
        assert_eq!(names[..3], ["av", "pos", "ci"]);
        assert!(src.contains("ppos = lane < pcnt ? pos[b0 + lane] : 0;"));
        assert!(src.contains("const double* a = av + (u64)(mpos & 0x7fffffffu) * 9;"));
        assert!(src.contains("bool tr = (mpos >> 31) != 0u;"));
        // Row 0: its own row or its mirror's column 0, in the plain kernel's order.
        assert!(src.contains("v0 = e0 * x0 + (tr ? e3 : e1) * x1 + (tr ? e6 : e2) * x2;"));
        assert!(src.contains("v2 = (tr ? e2 : e6) * x0 + (tr ? e5 : e7) * x1 + e8 * x2;"));
        // Nothing staged: the blocks of a chunk are not contiguous.
        assert!(!src.contains("__shared__") && !src.contains("pf0"));
        let mut src = String::new();
        let e = spmv_of(&mut src, 6, 6, true, Values::Mirror);
        assert_eq!(e.name, residual_mirror_name(6));
        assert!(e.params.iter().any(|q| q.name == "bv"));
        assert!(src.contains("(tr ? e30 : e5) * x5") && src.contains("e35 * x5"));
        assert_eq!(src.matches('{').count(), src.matches('}').count());
        // 10x10: the address is picked, not the value.
        let mut src = String::new();
        spmv_of(&mut src, 10, 10, false, Values::Mirror);
        assert!(!src.contains("double e0"));
        assert!(src.contains("a[tr ? 90 : 9] * x9") && src.contains("a[99] * x9"));
    }

    #[test]
    fn only_the_small_f32_kernels_bound_their_registers() {
        let sig = |b: usize, vals: Values| {
            let mut src = String::new();
            let e = spmv_of(&mut src, b, b, true, vals);
            assert!(
                src.contains(&format!("void {}(", e.name)),
                "{b}: the entry keeps its name"
            );
            src.lines().find(|l| l.starts_with("extern")).unwrap().to_string()
        };
        assert!(sig(3, Values::F32).contains("extern \"C\" __global__ __launch_bounds__(128, 8) void "));
        assert!(sig(1, Values::F32).contains("__launch_bounds__(128, 8)"));
        for (b, vals) in [(6, Values::F32), (3, Values::F64), (6, Values::F64)] {
            assert!(!sig(b, vals).contains("__launch_bounds__"), "{b} {vals:?}");
        }
    }

    #[test]
    fn the_f32_kernels_gather_x_in_16_byte_loads_where_aligned() {
        for (bc, loads) in [(6, "xv2 = xc2[2]"), (10, "xv4 = xc2[4]"), (3, "double2 xv = ")] {
            let mut src = String::new();
            spmv_of(&mut src, bc, bc, false, Values::F32);
            assert!(src.contains(loads), "{bc}");
            assert!(!src.contains(&format!("x[(u64)col * {bc} + 0]")), "{bc}");
            for c in 0..bc {
                assert!(src.contains(&format!("double x{c} = ")), "{bc}: x{c}");
            }
        }
        // An odd width other than 3, and every f64 kernel: one double per entry.
        let mut src = String::new();
        spmv_of(&mut src, 1, 1, false, Values::F32);
        assert!(src.contains("double x0 = x[(u64)col * 1 + 0];"));
        let mut src = String::new();
        spmv(&mut src, 3, 6, false);
        assert!(src.contains("double x5 = x[(u64)col * 6 + 5];") && !src.contains("xc2"));
    }

    #[test]
    fn the_f32_kernels_widen_each_value_and_keep_the_f64_kernels_text() {
        // The f64 kernel is what it was: no f32 spelling leaks into it.
        let mut f64_src = String::new();
        spmv(&mut f64_src, 3, 3, true);
        assert!(!f64_src.contains("float"));
        for (b, residual) in [
            (3, false),
            (3, true),
            (6, false),
            (6, true),
            (1, true),
            (10, false),
            (16, true),
        ] {
            let mut src = String::new();
            let e = spmv_of(&mut src, b, b, residual, Values::F32);
            let name = if residual {
                residual_f32_name(b)
            } else {
                spmv_f32_name(b)
            };
            assert_eq!(e.name, name);
            assert_eq!(e.params[0].ty, ParamTy::PtrF32);
            assert!(e.params[1..].iter().all(|q| q.ty != ParamTy::PtrF32));
            for q in 0..b * b {
                assert!(
                    src.contains(&format!("(double)a[{q}] * x{}", q % b)),
                    "{b}: position {q}"
                );
            }
            assert!(
                !src.contains("double2 stage2") && !src.contains("double2* src2"),
                "{b}: values move as float4"
            );
            assert_eq!(src.matches('{').count(), src.matches('}').count());
        }
    }
}
