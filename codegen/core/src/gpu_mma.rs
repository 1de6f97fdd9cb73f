//! The tensor-core product stage: column split's schedule (slot runs visited
//! in the run-length order of their window) executed with FP64 MMA
//! (`mma.sync.aligned.m8n8k4.f64`, sm_80 and later).
//!
//! One warp owns one output slot; its `M x N` block is the top-left corner of
//! the `8 x 8` accumulator fragment (lane `l` holds rows `l / 4`, columns
//! `2 (l % 4)` and `2 (l % 4) + 1`). Per contribution the warp loads the `x`
//! block as the `8 x 4` `A` fragment (lane `l`: row `l / 4`, inner index
//! `l % 4`) and the `y` block as the `4 x 8` `B` fragment (lane `l`: inner
//! index `l % 4`, column `l / 4`), one double per lane and fragment
//! (positions outside the block add nothing, see [`mma_predicated`]), and
//! issues `ceil(K / 4)` MMAs. Each fragment load is a
//! single warp request over one block, so a contribution costs about as many
//! L1 wavefronts as its blocks touch cache lines (column split: one request
//! per row of `y` across five blocks, plus the shared-memory staging of `x`).
//! The block indices come 16 contributions at a time (lanes 0-15 read `rx`,
//! 16-31 read `ry`, one request) and are broadcast by shuffles.
//!
//! Order: every contribution's products are added into the accumulator in
//! the run's order, one MMA after the other, but how the unit rounds the four
//! products of one inner step is not specified to be V0's one rounding per
//! product, so the promise is V0 to rounding; the same inputs give the same
//! bytes. (Measured on the H200: the same difference from the CPU two-pass,
//! to all digits, as FMA-contracted column split.)
//!
//! Why (H200, k = 16, `benches/results/h200-2026-11-22-products-ledger.md`,
//! step 3): column split is bound by the L1 LSU data-pipe wavefronts (10-25
//! per contribution); the fragment loads cut that to 6-17, and the MMA unit
//! has twice the FMA pipe's FP64 rate. Measured faster than column split on
//! every level (pf 0.03: 8.56 / 1.102 / 0.213 ms against 9.30 / 1.435 /
//! 0.377); the fine `A P` stage, at about 22 instructions per contribution,
//! is bound by issue and latency rather than the L1.
use crate::entry::{param as p, KernelEntry, ParamTy};
use crate::gpu_base::Stage;
use std::fmt::Write;

/// Warps (slots) per block of the tensor-core stage.
pub const MMA_WARPS: usize = 8;
/// Contributions whose indices one warp fetches at once (lanes 0-15: `x`, 16-31: `y`).
const MMA_INDEX_CHUNK: usize = 16;

/// Whether the tensor-core stage exists for `st`: the output block must fit
/// the `8 x 8` accumulator.
pub fn mma_fits(st: Stage) -> bool {
    st.m <= 8 && st.n <= 8 && st.k >= 1
}

/// Contributions loaded per step of the tensor-core stage of `st` (loads in
/// flight per lane: `unroll * ceil(K / 4) * 2` doubles).
pub fn mma_unroll(st: Stage) -> usize {
    if st.k <= 4 {
        4
    } else {
        2
    }
}

/// Whether the fragment loads of `st` are predicated (lanes outside the
/// blocks issue none) rather than issued by every lane with the `K` padding
/// multiplied by 0. Predicated loads cost fewer L1 wavefronts (a 3-row `A`
/// fragment stays in one half-warp) but about 5 more instructions per
/// contribution (the compiler loads into temporaries and moves them). On the
/// H200 at k = 16 (ledger step 3) they won where the L1 pipe binds and a
/// contribution has two MMAs to spread them over (6x6x6: 0.879 against 0.935
/// ms, 6x6x6t: 0.465 against 0.513; levels 1 / 2 1.104 / 0.207 ms against
/// 1.202 / 0.236) and lost on the fine stages (3x3x6, 6x3x6t: level 0 8.84
/// against 8.56 ms).
pub fn mma_predicated(st: Stage) -> bool {
    st.k > 4
}

pub fn mma_name(st: Stage) -> String {
    format!("ptap_mma_{}", st.tag())
}

/// The tensor-core `A P` stage of the symmetric product (`W' = (L + D/2) P`):
/// an `x` index with bit 31 set names a diagonal block of `A`, which the
/// stage halves. A slot's diagonal contribution is its run's last (the
/// schedule's V0 order, checked on load), and bit 31 of the run's end bound
/// says the run has one: the warp takes the others unscaled, then doubles its
/// accumulator, adds the diagonal's products and halves it. Scaling by 2 is
/// exact, so that rounds as adding `(D/2) P` does, bit for bit (in the normal
/// range), and the loop tests no flags: on an H100 at k = 16 (ledger step 35)
/// level 1 took 0.368-0.370 ms against 0.387-0.389 scaling each flagged
/// contribution, its `A P` kernel 189-192 us against 210-212 (20 % fewer
/// instructions, no spills), and level 2 0.088-0.090 against 0.093-0.094.
/// Its `ptr` holds each warp's run
/// bounds, `ptr[2w]` and `ptr[2w + 1]` of the run of slot `order[w]`, so that
/// a warp's first index load waits on one load, not two (the run pointers
/// read through `order`). On an H100 at k = 16 (ledger step 29) level 1's
/// kernel took 0.240 ms against 0.249-0.253 reading `ptr[order[w]]`. A block
/// walks `chunk` consecutive slots of `order` (its last parameter), its warps
/// interleaved: `chunk` = the block's warps is one slot per warp.
pub fn mma_half_name(st: Stage) -> String {
    format!("ptap_mmah_{}", st.tag())
}

/// The `__launch_bounds__(threads, blocks)` the symmetric product's
/// tensor-core `A P` kernel ([`mma_half_name`]) is compiled with, where it
/// has one: the predicated shapes ([`mma_predicated`]: inner dimension past
/// 4, the beam's 6x6 coarse levels) at 6 blocks of [`MMA_WARPS`] warps per
/// SM, so at most 40 registers and 48 warps per SM. Left to itself the
/// compiler takes 48 (the device's NVRTC) to 56 registers for 6x6 (36-40
/// warps); capped, it spills a few words (28 bytes stored, 60 loaded, to the
/// L1; since the later steps' pointers are offsets of step 0's,
/// `later_step_pointers`, level 1's local loads are 1.07 M against 3.83 M).
/// The 8x8 shapes already fit 40. Level 1 at k = 16 measured 0.677 ms against
/// 0.688-0.692 on two H100s (ledger steps 21 and 22), level 2 even
/// (0.131-0.132). Its loads hide behind more warps: the kernel is latency
/// bound (issue 50 %, warps 54 % of the slots active), not bound by its L1
/// sectors (a quarter fewer of them changed nothing, step 22).
pub fn mma_half_bounds(st: Stage) -> Option<(usize, usize)> {
    // The block size is the launch's ([`mma_launch`]), so the two cannot part.
    mma_predicated(st).then_some((mma_launch().0 as usize, 6))
}

/// Bit of an `x` index that marks a diagonal `A` block to be halved
/// (`ptap_schedules::variants::DIAGONAL_FLAG`).
pub const HALF_FLAG: u32 = 1 << 31;

/// Threads and slots of one tensor-core block.
pub fn mma_launch() -> (u32, u32) {
    ((MMA_WARPS * 32) as u32, MMA_WARPS as u32)
}

/// Warps (units, or slots where a stage runs column split's runs) per block
/// of the tensor-pair product. Its warps run units of unequal length, and a
/// block leaves the SM only when its last warp ends: with 4 warps per block
/// more warp slots stayed busy than with 8 (H200, k = 16, fine `A P`: 80 %
/// against 74 %) and levels 0 / 1 / 2 took 5.524 / 1.027 / 0.202 ms against
/// 5.725 / 1.091 / 0.213 (2 warps, at most 32 blocks per SM: 6.125 / 1.041 /
/// 0.208; ledger step 5).
pub const MMA_PAIR_WARPS: usize = 4;

/// Threads and units of one tensor-pair block (both of its kernels read the
/// warp count from `blockDim`).
pub fn mma_pair_launch() -> (u32, u32) {
    ((MMA_PAIR_WARPS * 32) as u32, MMA_PAIR_WARPS as u32)
}

/// A predicated kernel's lane predicates and pointers for inner step `h > 0`
/// (lane row `rr`). A lane that loads at step `h` (inner index `4h + t < K`)
/// loads at step 0 too, where its pointers are its elements `(rr, t)` of the
/// `x` block and `(t, r)` of the `y` block; at step `h` they are a constant
/// further on (`4h` in a row-major `x`, `4h M` in a transposed one, `4h N` in
/// `y`). So the kernel keeps step 0's two base pointers and each later load
/// takes the constant as its immediate offset, where it kept two opaque
/// pointers per step before. The 6x6 kernels free 4 registers: on an H100 at
/// k = 16 (ledger step 32) the coarse halving `A P` kernel's local loads
/// (spills under its 40-register bound) fell from 3.83 M to 1.07 M on level
/// 1, its instructions by 11 %, its time from 0.237-0.239 to 0.223-0.225 ms;
/// levels 1 / 2 took 0.402-0.404 / 0.095-0.097 ms against 0.420-0.421 /
/// 0.099-0.100 (the fold gains 2-3 % too). Every lane loads the same
/// addresses as before and adds in the same order, so the bytes are the same.
fn later_step_pointers(out: &mut String, st: Stage, h: usize, rr: &str) {
    let (m, k, n) = (st.m, st.k, st.n);
    let kk = format!("({} + t)", 4 * h);
    let xo = if st.xt { 4 * h * m } else { 4 * h };
    writeln!(
        out,
        "  const bool av{h} = {rr} < {m} && {kk} < {k}, bv{h} = r < {n} && {kk} < {k};\n  \
         const double* xl{h} = xl0 + {xo};\n  const double* yl{h} = yl0 + {yo};",
        yo = 4 * h * n
    )
    .unwrap();
}

/// The tensor-core stage `C = X Y` of `st` (see the module documentation);
/// `st` must satisfy [`mma_fits`].
pub(crate) fn mma_stage(out: &mut String, st: Stage, half: bool) -> KernelEntry {
    use ParamTy::*;
    assert!(mma_fits(st), "the tensor-core stage needs M, N <= 8");
    let (m, k, n) = (st.m, st.k, st.n);
    let (mk, kn, mn) = (m * k, k * n, m * n);
    let steps = k.div_ceil(4);
    let unroll = mma_unroll(st);
    let ch = MMA_INDEX_CHUNK;
    let e = KernelEntry {
        name: if half { mma_half_name(st) } else { mma_name(st) },
        params: vec![
            p("xv", PtrF64),
            p("yv", PtrF64),
            p("ptr", PtrU32),
            p("rx", PtrU32),
            p("ry", PtrU32),
            p("order", PtrU32),
            p("cv", PtrMutF64),
            p("nslots", U32),
        ]
        .into_iter()
        .chain(half.then(|| p("chunk", U32)))
        .collect(),
        doc: format!(
            "tensor-core stage ({m}x{k} by {k}x{n}), {}, {steps} FP64 m8n8k4 MMA per contribution, \
             {unroll} contributions per step{}",
            if half {
                "a block's warps interleaved over `chunk` consecutive slots"
            } else {
                "one warp per slot"
            },
            if half {
                ", a run's last x block halved where its end bound has bit 31"
            } else {
                ""
            }
        ),
    };
    e.write_bounded_signature(out, " {", mma_half_bounds(st).filter(|_| half));
    // The halving kernel reads its warp's run bounds from `ptr[2w]`, `ptr[2w + 1]` (the runs'
    // pointers in `order`, [`mma_half_name`]), beside `order[w]`: neither load waits on the other.
    let bounds = if half {
        "uint2 qb = __ldg((const uint2*)ptr + w);\n  u32 s = order[w];\n  \
         const bool dg = (int)qb.y < 0;"
    } else {
        "u32 s = order[w];"
    };
    // The halving kernel's block walks `chunk` consecutive slots of `order`, its warps
    // interleaved ([`mma_half_name`]); `chunk` = the block's warps is one slot per warp.
    let head = if half {
        "const u32 nbw = blockDim.x >> 5, w1 = min(blockIdx.x * chunk + chunk, nslots);\n  \
         for (u32 w = blockIdx.x * chunk + (threadIdx.x >> 5); w < w1; w += nbw) {"
    } else {
        "u32 w = blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);\n  if (w >= nslots) return;"
    };
    writeln!(
        out,
        "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800\n  \
         u32 lane = threadIdx.x & 31;\n  {head}\n  {bounds}\n  u32 r = lane >> 2, t = lane & 3;"
    )
    .unwrap();
    // Per inner step h (inner index 4h + t): the lane's element of the `x` and
    // `y` blocks. Two ways to keep fragment positions outside the blocks out
    // of the sums ([`mma_predicated`]): lanes outside never load and keep 0,
    // or every lane loads (offset 0 outside the block: a finite value of the
    // same block, in a cache line the warp reads anyway), rows past M and
    // columns past N only reach accumulator entries that are never stored,
    // and an inner index past K is multiplied by 0. The empty asm keeps the
    // lane's base pointers opaque, so that each load's address is one wide
    // multiply-add of the block index onto them.
    let predicated = mma_predicated(st);
    for h in 0..steps {
        if predicated && h > 0 {
            later_step_pointers(out, st, h, "r");
            continue;
        }
        let kk = format!("({} + t)", 4 * h);
        let aoff = if st.xt {
            format!("{kk} * {m} + r")
        } else {
            format!("r * {k} + {kk}")
        };
        if predicated {
            writeln!(
                out,
                "  const bool av{h} = r < {m} && {kk} < {k}, bv{h} = r < {n} && {kk} < {k};\n  \
                 const double* xl{h} = xv + (av{h} ? {aoff} : 0);\n  \
                 const double* yl{h} = yv + (bv{h} ? {kk} * {n} + r : 0);\n  \
                 asm(\"\" : \"+l\"(xl{h}), \"+l\"(yl{h}));"
            )
            .unwrap();
        } else {
            writeln!(
                out,
                "  const double* xl{h} = xv + (r < {m} && {kk} < {k} ? {aoff} : 0);\n  \
                 const double* yl{h} = yv + (r < {n} && {kk} < {k} ? {kk} * {n} + r : 0);\n  \
                 asm(\"\" : \"+l\"(xl{h}), \"+l\"(yl{h}));"
            )
            .unwrap();
            if 4 * h + 4 > k {
                writeln!(out, "  const double ym{h} = {kk} < {k} ? 1.0 : 0.0;").unwrap();
            }
        }
    }
    let (qstart, qend) = if half {
        ("qb.x", "qb.y & 0x7fffffffu")
    } else {
        ("ptr[s]", "ptr[s + 1]")
    };
    // The halving kernel's last contribution of a flagged run is the diagonal one, taken
    // after the chunk's others: `ce` contributions before it.
    let ce = if half {
        "\n    u32 ce = cnt - (dg && q0 + cnt == q1 ? 1 : 0);"
    } else {
        ""
    };
    writeln!(
        out,
        "  double d0 = 0.0, d1 = 0.0;\n  u32 q1 = {qend};\n  \
         for (u32 q0 = {qstart}; q0 < q1; q0 += {ch}) {{\n    \
         u32 cnt = q1 - q0 < {ch} ? q1 - q0 : {ch};{ce}\n    u32 e = lane & {cm};\n    \
         u32 idx = 0;\n    if (e < cnt) idx = lane < {ch} ? rx[q0 + e] : ry[q0 + e];\n    u32 u = 0;",
        cm = ch - 1
    )
    .unwrap();
    let lim = if half { "ce" } else { "cnt" };
    // Whole steps of `unroll` contributions (every load before any MMA), then one at a time.
    // The halving kernel's diagonal step last, its accumulator doubled before and halved
    // after: 0.5 (2 S + D P) rounds as S + (D / 2) P does, bit for bit.
    let diag = half.then(|| ("if (u < cnt)".to_string(), 1, true));
    for (loop_head, count, diag_step) in [
        (format!("for (; u + {unroll} <= {lim}; u += {unroll})"), unroll, false),
        (format!("for (; u < {lim}; ++u)"), 1, false),
    ]
    .into_iter()
    .chain(diag)
    {
        writeln!(out, "    {loop_head} {{").unwrap();
        for c in 0..count {
            writeln!(
                out,
                "      u32 xi{c} = __shfl_sync(0xffffffffu, idx, u + {c}), yi{c} = __shfl_sync(0xffffffffu, idx, {ch} + u + {c});"
            )
            .unwrap();
            if diag_step {
                writeln!(out, "      xi{c} &= 0x7fffffffu;").unwrap();
            }
            for h in 0..steps {
                if predicated {
                    writeln!(
                        out,
                        "      double a{c}_{h} = 0.0, b{c}_{h} = 0.0;\n      \
                         if (av{h}) a{c}_{h} = __ldg(xl{h} + (u64)xi{c} * {mk});\n      \
                         if (bv{h}) b{c}_{h} = __ldg(yl{h} + (u64)yi{c} * {kn});"
                    )
                    .unwrap();
                    continue;
                }
                let mask = if 4 * h + 4 > k {
                    format!(" * ym{h}")
                } else {
                    String::new()
                };
                writeln!(
                    out,
                    "      double a{c}_{h} = __ldg(xl{h} + (u64)xi{c} * {mk}), b{c}_{h} = __ldg(yl{h} + (u64)yi{c} * {kn}){mask};"
                )
                .unwrap();
            }
        }
        if diag_step {
            writeln!(out, "      d0 *= 2.0;\n      d1 *= 2.0;").unwrap();
        }
        for c in 0..count {
            for h in 0..steps {
                writeln!(
                    out,
                    "      asm volatile(\"mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {{%0, %1}}, {{%2}}, {{%3}}, {{%0, %1}};\" \
                     : \"+d\"(d0), \"+d\"(d1) : \"d\"(a{c}_{h}), \"d\"(b{c}_{h}));"
                )
                .unwrap();
            }
        }
        if diag_step {
            writeln!(out, "      d0 *= 0.5;\n      d1 *= 0.5;").unwrap();
        }
        writeln!(out, "    }}").unwrap();
    }
    writeln!(out, "  }}\n  u32 c0 = 2 * t;\n  double* cb = cv + (u64)s * {mn};").unwrap();
    if n % 2 == 0 {
        writeln!(
            out,
            "  if (r < {m} && c0 < {n}) *(double2*)(cb + r * {n} + c0) = make_double2(d0, d1);"
        )
        .unwrap();
    } else {
        writeln!(
            out,
            "  if (r < {m}) {{ if (c0 < {n}) cb[r * {n} + c0] = d0; if (c0 + 1 < {n}) cb[r * {n} + c0 + 1] = d1; }}"
        )
        .unwrap();
    }
    if half {
        writeln!(out, "  }}").unwrap();
    }
    writeln!(out, "#else\n  __trap();\n#endif\n}}\n").unwrap();
    e
}

/// How the tensor-pair stage lays a unit's slots over the accumulator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum PairMode {
    /// One slot per unit (`P^T W`); entries `(x, y)`.
    Single,
    /// Two slots per unit whose `M x N` blocks both fit half the accumulator
    /// (`M <= 4`): rows 0-3 serve the first slot, rows 4-7 the second, one
    /// MMA per entry and inner step for both.
    Packed,
    /// One slot `(I, J)` of the symmetric pair's `P^T W'` per unit, summing
    /// `X_IJ + X_JI^T` ([`mma_fold_stage`]).
    Fold,
}

/// Whether the tensor-pair product runs stage `st` on its units: `P^T W`
/// wherever the tensor core runs (its runs, interleaved), `A P` where two
/// output blocks fit the accumulator (`M <= 4`: the fine stages). Elsewhere
/// (the 6x6 levels' `A P`) it runs column split's runs with the tensor core's
/// kernel: there a unit of two 6-row slots needs two accumulators and an MMA
/// per side, which measured slower on the H200 (k = 16, pf 0.03: level 1
/// 1.210 ms against 1.079, level 2 0.236 against 0.208; ledger step 4).
pub fn mma_pair_fits(st: Stage) -> bool {
    mma_fits(st) && (st.xt || 2 * st.m <= 8)
}

pub fn mma_pair_name(st: Stage) -> String {
    format!("ptap_mma2_{}", st.tag())
}

/// The symmetric product's folded `P^T W'` stage (`mma_fold_stage`).
pub fn mma_fold_name(st: Stage) -> String {
    format!("ptap_mma2f_{}", st.tag())
}

/// The tensor-pair `A P` stage of the symmetric product (see [`mma_half_name`]).
/// A unit merges the runs of rows `2r` and `2r + 1` by `y`; each run ends on
/// its diagonal block, the largest `y` of row `2r` and of the unit, so both
/// diagonals are among the unit's last two entries (the loader checks it).
/// The warp takes the others unscaled and those two as one tail step between
/// doubling and halving its accumulator, a flagged side as it is and any
/// other doubled: the bits of the halved diagonal. On an H100 at k = 16
/// (ledger step 36) level 0 took 2.465-2.466 ms against 2.529-2.532 testing
/// and scaling every entry's flag, its kernel 1.504-1.508 ms against
/// 1.567-1.570 (11 % fewer instructions, 31 % fewer local loads).
pub fn mma_pair_half_name(st: Stage) -> String {
    format!("ptap_mma2h_{}", st.tag())
}

/// The `__launch_bounds__(threads, blocks)` the symmetric pair's `A P`
/// kernel ([`mma_pair_half_name`]) is compiled with, where it has one: blocks
/// of at most 4 warps, 16 of them per SM, so at most 32 registers and all 64
/// warp slots. Left to itself the compiler takes 40 registers (48 warps per
/// SM); capped, it spills a few words to local memory (L1-resident). With
/// 4-warp blocks walking spans of 4 units per warp it measured 7 % faster on
/// level 0 (one H100, k = 16: 4.089-4.095 ms against 4.394-4.408; the cap
/// alone, or 4 warps and 4 units alone, gave nothing; ledger step 21). Only
/// for fine blocks of at most 3 rows: the measured 3x3 and the smaller ones,
/// which need fewer registers.
pub fn mma_pair_half_bounds(st: Stage) -> Option<(usize, usize)> {
    (!st.xt && st.m <= 3).then_some((128, 16))
}

/// The tensor-pair stage `C = X Y` of `st` (one of [`mma_pair_fits`]) over
/// the units of `ptap_schedules::variants::PairedRuns`, one warp per unit:
/// pairs of slots for `A P` (rows 0-3 of the fragments serve the first, 4-7
/// the second), single slots for `P^T W`. Each lane reads its side of an
/// entry with one uniform 8-byte load, instead of the tensor core's
/// coalesced chunk and two shuffles per contribution; an entry that holds
/// both sides loads the shared `y` block and issues the MMA once for two
/// contributions. An absent side (`x` = `u32::MAX`) loads nothing: its `A`
/// rows are 0 and add nothing.
///
/// Two details cut the L1 work and the latency (H200, k = 16, ledger step 5):
/// lanes outside a block that load anyway read an element of their own row
/// or column, inside the span their half-warp reads, not the block's first
/// (fine `P^T W`: 8.5 -> 6.7 L1 wavefronts per contribution, fine `A P`
/// -11 %); and a unit's last `rem < unroll` entries run as one guarded step
/// (uniform branches) rather than one at a time, so they wait for one round
/// of dependent loads instead of `rem`. Each slot still adds its entries in
/// order, one MMA after the other: the same bytes as before.
pub(crate) fn mma_pair_stage(out: &mut String, st: Stage, halve: bool) -> KernelEntry {
    let mode = if st.xt { PairMode::Single } else { PairMode::Packed };
    pair_stage(out, st, mode, halve)
}

/// The symmetric product's `P^T W'` stage over the folded units of
/// `ptap_schedules::variants::FoldedRuns`, one warp per slot `(I, J)` of
/// `A_c`'s upper triangle: the single units' loop over half 0's entries
/// `(P_iI, W'_iJ)`, then over half 1's `(P_iJ, W'_iI)` with the two loaded
/// blocks swapped between the `A` and `B` fragments (`W'_iI^T P_iJ`: a
/// lane's element of both blocks sits at the same offset, `M = N`), into one
/// accumulator. It writes the sum to `(I, J)` and its transpose to `(J, I)`;
/// a diagonal unit (second slot absent) adds its accumulator's transpose
/// (shuffles) and writes `X_II + X_II^T`. The result is exactly symmetric, in
/// one launch instead of `X` and a symmetrize pass over all of `A_c`.
pub(crate) fn mma_fold_stage(out: &mut String, st: Stage) -> KernelEntry {
    assert!(st.xt && st.m == st.n, "only the P^T W' stage folds");
    pair_stage(out, st, PairMode::Fold, false)
}

fn pair_stage(out: &mut String, st: Stage, mode: PairMode, halve: bool) -> KernelEntry {
    use ParamTy::*;
    assert!(
        mma_pair_fits(st),
        "the tensor-pair stage needs M, N <= 8 (M <= 4 for A P)"
    );
    assert!(
        !halve || mode == PairMode::Packed,
        "only the A P stage halves diagonal blocks"
    );
    let (m, k, n) = (st.m, st.k, st.n);
    let (mk, kn, mn) = (m * k, k * n, m * n);
    let steps = k.div_ceil(4);
    let unroll = mma_unroll(st);
    let width = if mode == PairMode::Single { 1 } else { 2 };
    let e = KernelEntry {
        name: match (mode, halve) {
            (PairMode::Fold, _) => mma_fold_name(st),
            (_, true) => mma_pair_half_name(st),
            _ => mma_pair_name(st),
        },
        params: vec![
            p("xv", PtrF64),
            p("yv", PtrF64),
            p(if mode == PairMode::Fold { "hptr" } else { "uptr" }, PtrU32),
            p("uslot", PtrU32),
            p("ent", PtrU32),
            p("cv", PtrMutF64),
            p("nunits", U32),
        ]
        .into_iter()
        .chain(halve.then(|| [p("chunk", U32), p("inter", U32)]).into_iter().flatten())
        .collect(),
        doc: if mode == PairMode::Fold {
            format!(
                "folded P^T W' stage ({m}x{k} by {k}x{n}), one warp per slot (I, J) of the upper triangle summing \
                 X_IJ + X_JI^T, {steps} FP64 m8n8k4 MMA per entry, {unroll} entries per step, each half's last ones \
                 as one guarded step; writes (I, J) and (J, I)"
            )
        } else {
            format!(
                "tensor-pair stage ({m}x{k} by {k}x{n}, {mode:?}), {} of {width} slot(s), {steps} \
             FP64 m8n8k4 MMA per entry and side, {unroll} entries per step, the last ones as one guarded step{}",
                if halve {
                    "warps walking spans of units"
                } else {
                    "one warp per unit"
                },
                if halve {
                    ", x blocks flagged in bit 31 halved"
                } else {
                    ""
                }
            )
        },
    };
    e.write_bounded_signature(out, " {", mma_pair_half_bounds(st).filter(|_| halve));
    // The halving kernel's warps find their units in the loop below.
    let first = if halve {
        ""
    } else {
        "\n  u32 w = blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);\n  if (w >= nunits) return;"
    };
    writeln!(
        out,
        "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800\n  u32 lane = threadIdx.x & 31;{first}\n  \
         u32 r = lane >> 2, t = lane & 3;"
    )
    .unwrap();
    // Packed: lane row r is row r % 4 of side r / 4's block.
    let (rr, half) = if mode == PairMode::Packed {
        ("(r & 3)", "(r >> 2)")
    } else {
        ("r", "0")
    };
    let predicated = mma_predicated(st);
    // Where a lane outside the block points (its value is discarded or multiplied by 0):
    // inner index 0 of its own row (single units are P^T W's: x(i, k) at k * M + i) or column.
    let afb = match mode {
        PairMode::Single | PairMode::Fold => format!("(r < {m} ? r : {})", m - 1),
        PairMode::Packed => "0".to_string(),
    };
    let bfb = format!("(r < {n} ? r : {})", n - 1);
    for h in 0..steps {
        if predicated && h > 0 {
            later_step_pointers(out, st, h, rr);
            continue;
        }
        let kk = format!("({} + t)", 4 * h);
        let aoff = if st.xt {
            format!("{kk} * {m} + {rr}")
        } else {
            format!("{rr} * {k} + {kk}")
        };
        writeln!(
            out,
            "  const bool av{h} = {rr} < {m} && {kk} < {k}, bv{h} = r < {n} && {kk} < {k};\n  \
             const double* xl{h} = xv + (av{h} ? {aoff} : {afb});\n  \
             const double* yl{h} = yv + (bv{h} ? {kk} * {n} + r : {bfb});\n  \
             asm(\"\" : \"+l\"(xl{h}), \"+l\"(yl{h}));"
        )
        .unwrap();
        if !predicated && 4 * h + 4 > k {
            writeln!(out, "  const double ym{h} = {kk} < {k} ? 1.0 : 0.0;").unwrap();
        }
    }
    writeln!(out, "  const uint2* ep = (const uint2*)ent;").unwrap();
    // The halving kernel's warps walk spans of `chunk` consecutive units (with `inter`, a block's
    // warps interleave over a span of `chunk` units per warp), then a grid's worth of spans on.
    if halve {
        writeln!(
            out,
            "  const u32 nb = blockDim.x >> 5, lw = threadIdx.x >> 5, g = blockIdx.x * nb + lw;\n  \
             const u32 step = inter ? nb : 1, span = chunk * step;\n  \
             const u64 jump = (u64)(inter ? gridDim.x : gridDim.x * nb) * span;\n  \
             for (u64 b0 = (u64)(inter ? blockIdx.x : g) * span; b0 < nunits; b0 += jump) {{\n  \
             const u32 b1 = (u32)(b0 + span < nunits ? b0 + span : nunits);\n  \
             for (u32 w = (u32)b0 + (inter ? lw : 0); w < b1; w += step) {{"
        )
        .unwrap();
    }
    // A folded unit's halves: entries hptr[2w]..hptr[2w + 1], then ..hptr[2w + 2].
    let bounds = if mode == PairMode::Fold {
        "hptr[2 * w], q1 = hptr[2 * w + 1]"
    } else {
        "uptr[w], q1 = uptr[w + 1]"
    };
    writeln!(out, "  double d0 = 0.0, d1 = 0.0;\n  u32 q = {bounds};").unwrap();
    // The lane's side of entry q + c as a uint2 (entry q is uint2 q, or 2q + side when packed):
    // one 32-bit index, then a constant pointer offset per entry (an immediate in the load).
    let side_of = |c: usize| match mode {
        PairMode::Single | PairMode::Fold => format!("__ldg(ep + q + {c})"),
        PairMode::Packed => format!("__ldg(ep + (2 * q + {half}) + {})", 2 * c),
    };
    // The blocks of entries e0 .. e{count - 1} and their MMAs; `guard`: entry c only if c < rem;
    // `swap`: the `y` block is the A fragment, the `x` block the B (a fold's half 1).
    // `tail`: the halving kernel's last two entries of a unit, which hold its diagonal blocks
    // (see [`mma_pair_half_name`]): a flagged side as it is, any other doubled.
    let body = |out: &mut String, count: usize, guard: bool, swap: bool, tail: bool| {
        for c in 0..count {
            for h in 0..steps {
                let bload = format!("__ldg(yl{h} + (u64)e{c}.y * {kn})");
                let aload = if halve {
                    format!("__ldg(xl{h} + (u64)(e{c}.x & 0x7fffffffu) * {mk})")
                } else {
                    format!("__ldg(xl{h} + (u64)e{c}.x * {mk})")
                };
                let bstmt = if predicated {
                    format!("if (bv{h}) b{c}_{h} = {bload};")
                } else if 4 * h + 4 > k {
                    format!("b{c}_{h} = {bload} * ym{h};")
                } else {
                    format!("b{c}_{h} = {bload};")
                };
                // Single units never name an absent block; a paired side may.
                let astmt = match (mode, predicated) {
                    (PairMode::Packed, _) => format!("if (av{h} && e{c}.x != 0xffffffffu) a{c}_{h} = {aload};"),
                    (PairMode::Single | PairMode::Fold, true) => format!("if (av{h}) a{c}_{h} = {aload};"),
                    (PairMode::Single | PairMode::Fold, false) => format!("a{c}_{h} = {aload};"),
                };
                writeln!(out, "    double b{c}_{h} = 0.0, a{c}_{h} = 0.0;").unwrap();
                if guard && c > 0 {
                    writeln!(out, "    if ({c} < rem) {{ {bstmt} {astmt} }}").unwrap();
                } else {
                    writeln!(out, "    {bstmt}\n    {astmt}").unwrap();
                }
            }
        }
        // The flag of a side's `x` (an absent side's, u32::MAX, scales a 0).
        for c in 0..count {
            for h in (0..steps).filter(|_| tail) {
                writeln!(out, "    a{c}_{h} *= (int)e{c}.x < 0 ? 1.0 : 2.0;").unwrap();
            }
        }
        for c in 0..count {
            let g = if guard && c > 0 {
                format!("if ({c} < rem) ")
            } else {
                String::new()
            };
            let (fa, fb) = if swap { ("b", "a") } else { ("a", "b") };
            for h in 0..steps {
                writeln!(
                    out,
                    "    {g}asm volatile(\"mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {{%0, %1}}, {{%2}}, {{%3}}, {{%0, %1}};\" \
                     : \"+d\"(d0), \"+d\"(d1) : \"d\"({fa}{c}_{h}), \"d\"({fb}{c}_{h}));"
                )
                .unwrap();
            }
        }
    };
    // Whole steps of `unroll` entries, then the last `rem < unroll` as one guarded step.
    // The halving kernel stops them two entries short of the unit's end: the tail step.
    let lim = if halve { "qt" } else { "q1" };
    let run = |out: &mut String, swap: bool| {
        if halve {
            writeln!(out, "  const u32 qt = q1 - q < 2 ? q : q1 - 2;").unwrap();
        }
        writeln!(out, "  for (; q + {unroll} <= {lim}; q += {unroll}) {{").unwrap();
        for c in 0..unroll {
            writeln!(out, "    uint2 e{c} = {};", side_of(c)).unwrap();
        }
        body(out, unroll, false, swap, false);
        writeln!(
            out,
            "  }}\n  if (q < {lim}) {{\n    u32 rem = {lim} - q;\n    uint2 e0 = {};",
            side_of(0)
        )
        .unwrap();
        for c in 1..unroll - 1 {
            writeln!(
                out,
                "    uint2 e{c} = make_uint2(0, 0);\n    if ({c} < rem) e{c} = {};",
                side_of(c)
            )
            .unwrap();
        }
        body(out, unroll - 1, true, swap, false);
        writeln!(out, "  }}").unwrap();
        if halve {
            // Doubled before, halved after: 0.5 (2 S + 2 A P + D P) rounds as S + A P + (D/2) P.
            writeln!(
                out,
                "  q = qt;\n  if (q < q1) {{\n    u32 rem = q1 - q;\n    d0 *= 2.0;\n    d1 *= 2.0;\n    \
                 uint2 e0 = {};\n    uint2 e1 = make_uint2(0, 0);\n    if (1 < rem) e1 = {};",
                side_of(0),
                side_of(1)
            )
            .unwrap();
            body(out, 2, true, swap, true);
            writeln!(out, "    d0 *= 0.5;\n    d1 *= 0.5;\n  }}").unwrap();
        }
    };
    run(out, false);
    if mode == PairMode::Fold {
        writeln!(out, "  q = q1;\n  q1 = hptr[2 * w + 2];").unwrap();
        run(out, true);
        fold_store(out, st);
        writeln!(out, "#else\n  __trap();\n#endif\n}}\n").unwrap();
        return e;
    }
    // Packed: lanes of rows 4-7 store the second slot (absent: u32::MAX, nothing stored).
    let side = if mode == PairMode::Packed { half } else { "0" };
    writeln!(
        out,
        "  u32 c0 = 2 * t;\n  {{\n  u32 s = uslot[{width} * w + {side}];\n  double* cb = cv + (u64)s * {mn};\n  \
         if (s != 0xffffffffu && {rr} < {m}) {{"
    )
    .unwrap();
    if n % 2 == 0 {
        writeln!(
            out,
            "    if (c0 < {n}) *(double2*)(cb + {rr} * {n} + c0) = make_double2(d0, d1);"
        )
        .unwrap();
    } else {
        writeln!(
            out,
            "    if (c0 < {n}) cb[{rr} * {n} + c0] = d0; if (c0 + 1 < {n}) cb[{rr} * {n} + c0 + 1] = d1;"
        )
        .unwrap();
    }
    writeln!(out, "  }}\n  }}").unwrap();
    if halve {
        writeln!(out, "  }}\n  }}").unwrap();
    }
    writeln!(out, "#else\n  __trap();\n#endif\n}}\n").unwrap();
    e
}

/// The folded unit's store: `D` to slot `uslot[2w]` and `D^T` to
/// `uslot[2w + 1]`, or, where that is absent (a diagonal slot), `D + D^T` to
/// the first. Lane `(r, t)` holds `D(r, 2t)` and `D(r, 2t + 1)`; `D(2t + j, r)`
/// is lane `(2t + j) * 4 + r / 2`'s `d{r % 2}`. Both orders of a sum
/// `D(a, b) + D(b, a)` round alike, so the diagonal block is exactly symmetric.
fn fold_store(out: &mut String, st: Stage) {
    let (m, n, mn) = (st.m, st.n, st.m * st.n);
    writeln!(
        out,
        "  u32 c0 = 2 * t;\n  u32 s0 = uslot[2 * w], s1 = uslot[2 * w + 1];\n  \
         if (s1 == 0xffffffffu) {{\n    u32 la = c0 * 4 + (r >> 1);\n    \
         double a0 = __shfl_sync(0xffffffffu, d0, la), a1 = __shfl_sync(0xffffffffu, d1, la);\n    \
         double b0 = __shfl_sync(0xffffffffu, d0, la + 4), b1 = __shfl_sync(0xffffffffu, d1, la + 4);\n    \
         d0 += (r & 1) ? a1 : a0;\n    d1 += (r & 1) ? b1 : b0;\n  }}\n  \
         if (r < {m}) {{\n    double* cb = cv + (u64)s0 * {mn};"
    )
    .unwrap();
    if n % 2 == 0 {
        writeln!(
            out,
            "    if (c0 < {n}) *(double2*)(cb + r * {n} + c0) = make_double2(d0, d1);"
        )
        .unwrap();
    } else {
        writeln!(
            out,
            "    if (c0 < {n}) cb[r * {n} + c0] = d0; if (c0 + 1 < {n}) cb[r * {n} + c0 + 1] = d1;"
        )
        .unwrap();
    }
    writeln!(
        out,
        "    if (s1 != 0xffffffffu) {{\n      double* ct = cv + (u64)s1 * {mn};\n      \
         if (c0 < {n}) ct[c0 * {n} + r] = d0; if (c0 + 1 < {n}) ct[(c0 + 1) * {n} + r] = d1;\n    }}\n  }}"
    )
    .unwrap();
}

/// The symmetrize kernel of `n x n` blocks.
pub fn symmetrize_name(n: usize) -> String {
    format!("ptap_symmetrize_{n}x{n}")
}

/// `C = X + X^T` in place over `C`'s slots (`X` written there by the `P^T W'`
/// stage): one thread per slot element; the thread of slot `s` and element
/// `(a, b)` owns it and its mirror `(b, a)` of the transposed slot `tr[s]`
/// where `s < tr[s]` (or `s == tr[s]`, `a <= b`), reads both and writes their
/// sum to both, so no element is read after another thread wrote it and the
/// result is exactly symmetric.
pub(crate) fn symmetrize(out: &mut String, n: usize) -> KernelEntry {
    use ParamTy::*;
    let nn = n * n;
    let e = KernelEntry {
        name: symmetrize_name(n),
        params: vec![p("cv", PtrMutF64), p("tr", PtrU32), p("nslots", U32)],
        doc: format!("C = X + X^T in place over {n}x{n} blocks, one thread per slot element"),
    };
    e.write_signature(out, " {");
    writeln!(
        out,
        "  u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x;\n  if (i >= (u64)nslots * {nn}) return;\n  \
         u32 s = (u32)(i / {nn}), e = (u32)(i % {nn}), a = e / {n}, b = e % {n};\n  u32 t = tr[s];\n  \
         if (s < t || (s == t && a <= b)) {{\n    \
         double* x = cv + (u64)s * {nn} + a * {n} + b;\n    double* y = cv + (u64)t * {nn} + b * {n} + a;\n    \
         double v = *x + *y;\n    *x = v;\n    *y = v;\n  }}\n}}\n"
    )
    .unwrap();
    e
}

/// The split symmetrize kernel of `n x n` blocks.
pub fn symmetrize_split_name(n: usize) -> String {
    format!("ptap_symsplit_{n}x{n}")
}

/// `C = X + X^T` where the `P^T W'` stage wrote `X` as partial sums: slot
/// `s`'s run split into the contiguous chunks `first[s]..first[s + 1]`, each
/// chunk's sum at its index in `xs`. One thread per slot element `(a, b)`
/// adds its slot's chunks and those of the transposed slot `tr[s]` (element
/// `(b, a)`), each in chunk order from the first chunk's value, and writes
/// the sum to `C` only: the thread of the mirror element adds the same two
/// values, so the result is exactly symmetric, and a slot of one chunk gives
/// the unsplit pass's bytes.
pub(crate) fn symmetrize_split(out: &mut String, n: usize) -> KernelEntry {
    use ParamTy::*;
    let nn = n * n;
    let e = KernelEntry {
        name: symmetrize_split_name(n),
        params: vec![
            p("cv", PtrMutF64),
            p("xs", PtrF64),
            p("first", PtrU32),
            p("tr", PtrU32),
            p("nslots", U32),
        ],
        doc: format!("C = X + X^T over {n}x{n} blocks from X's chunk sums, one thread per slot element"),
    };
    e.write_signature(out, " {");
    writeln!(
        out,
        "  u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x;\n  if (i >= (u64)nslots * {nn}) return;\n  \
         u32 s = (u32)(i / {nn}), e = (u32)(i % {nn}), a = e / {n}, b = e % {n};\n  u32 t = tr[s];\n  \
         u32 c = first[s], c1 = first[s + 1];\n  double x = __ldg(xs + (u64)c * {nn} + a * {n} + b);\n  \
         for (++c; c < c1; ++c) x += __ldg(xs + (u64)c * {nn} + a * {n} + b);\n  \
         c = first[t]; c1 = first[t + 1];\n  double y = __ldg(xs + (u64)c * {nn} + b * {n} + a);\n  \
         for (++c; c < c1; ++c) y += __ldg(xs + (u64)c * {nn} + b * {n} + a);\n  \
         cv[(u64)s * {nn} + e] = x + y;\n}}\n"
    )
    .unwrap();
    e
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shape::ShapeSet;

    #[test]
    fn the_halving_kernel_reads_its_run_bounds_beside_its_slot() {
        let st = Stage::ap(ShapeSet { bf: 6, bc: 6 });
        let mut src = String::new();
        mma_stage(&mut src, st, true);
        assert!(src.contains("uint2 qb = __ldg((const uint2*)ptr + w);\n  u32 s = order[w];"));
        assert!(src.contains("u32 q1 = qb.y & 0x7fffffffu;") && src.contains("for (u32 q0 = qb.x; q0 < q1;"));
        assert!(!src.contains("ptr[s]"));
        // The diagonal flag is the end bound's: the loop takes `ce` contributions unscaled, then
        // the run's last one between doubling and halving the accumulator; no scale per
        // contribution.
        assert!(src.contains("const bool dg = (int)qb.y < 0;"));
        assert!(src.contains("u32 ce = cnt - (dg && q0 + cnt == q1 ? 1 : 0);"));
        assert!(src.contains("for (; u < ce; ++u)") && src.contains("if (u < cnt) {"));
        assert_eq!(src.matches("xi0 &= 0x7fffffffu;").count(), 1);
        let (d2, dh) = (src.find("d0 *= 2.0;").unwrap(), src.find("d0 *= 0.5;").unwrap());
        assert!(d2 < src[d2..].find("mma.sync").unwrap() + d2 && d2 < dh);
        assert!(!src.contains("hs0"));
        let mut plain = String::new();
        mma_stage(&mut plain, st, false);
        assert!(plain.contains("u32 q1 = ptr[s + 1];") && !plain.contains("qb"));
    }

    #[test]
    fn the_pair_halving_kernel_takes_a_units_last_two_entries_as_its_tail_step() {
        let st = Stage::ap(ShapeSet { bf: 3, bc: 6 });
        let mut src = String::new();
        mma_pair_stage(&mut src, st, true);
        // The whole and guarded steps stop two entries short of the unit's end, with no flag
        // scale; the tail takes the rest between doubling and halving the accumulator, a
        // flagged side as it is and any other doubled.
        assert!(src.contains("const u32 qt = q1 - q < 2 ? q : q1 - 2;"));
        assert!(src.contains("for (; q + 4 <= qt; q += 4) {") && src.contains("u32 rem = qt - q;"));
        let tail = src.find("  q = qt;\n  if (q < q1) {").unwrap();
        assert!(!src[..tail].contains("? 1.0 : 2.0") && !src[..tail].contains("0.5"));
        let (d2, sc, dh) = (
            src[tail..].find("d0 *= 2.0;").unwrap(),
            src[tail..].find("a0_0 *= (int)e0.x < 0 ? 1.0 : 2.0;").unwrap(),
            src[tail..].find("d0 *= 0.5;").unwrap(),
        );
        let mma = src[tail..].find("mma.sync").unwrap();
        assert!(d2 < sc && sc < mma && mma < dh);
        assert_eq!(src.matches("? 1.0 : 2.0;").count(), 2);
        let mut plain = String::new();
        mma_pair_stage(&mut plain, st, false);
        assert!(!plain.contains("qt") && !plain.contains("d0 *= 2.0;"));
    }

    #[test]
    fn later_steps_offset_step_zeros_pointers_in_every_predicated_kernel() {
        let s = ShapeSet { bf: 6, bc: 6 };
        // Transposed x (P^T W'): x(i, k) at k * M + i, so step 1 is 4 M further on.
        let mut fold = String::new();
        mma_fold_stage(&mut fold, Stage::ptw(s));
        assert!(fold.contains("const double* xl1 = xl0 + 24;\n  const double* yl1 = yl0 + 24;"));
        let mut single = String::new();
        mma_pair_stage(&mut single, Stage::ptw(s), false);
        assert!(single.contains("const double* xl1 = xl0 + 24;"));
        // Step 0 keeps its opaque base pointers; loads stay guarded by their own step's predicate.
        for src in [&fold, &single] {
            assert!(src.contains("asm(\"\" : \"+l\"(xl0), \"+l\"(yl0));"));
            assert!(src.contains("if (av1) a0_1 = __ldg(xl1") && src.contains("if (bv1) b0_1 = __ldg(yl1"));
        }
        // Three inner steps (K = 10, P^T W of 10x6 P blocks, transposed x): 4 M and 8 M, 4 N and 8 N.
        let mut wide = String::new();
        mma_stage(&mut wide, Stage::ptw(ShapeSet { bf: 10, bc: 6 }), false);
        assert!(
            wide.contains("xl1 = xl0 + 24;") && wide.contains("xl2 = xl0 + 48;") && wide.contains("yl2 = yl0 + 48;")
        );
        // Unpredicated shapes (K <= 4) have one step and nothing to offset.
        let mut fine = String::new();
        mma_stage(&mut fine, Stage::ap(ShapeSet { bf: 3, bc: 6 }), true);
        assert!(!fine.contains("xl1"));
    }

    #[test]
    fn fragments_cover_the_block_and_guard_the_architecture() {
        let s = ShapeSet { bf: 3, bc: 6 };
        let mut src = String::new();
        let st = Stage::ptw(s);
        let e = mma_stage(&mut src, st, false);
        assert_eq!(e.name, "ptap_mma_6x3x6t");
        // One inner step for K = 3, transposed x: x(i,k) at k*M + i.
        assert!(src.contains("xv + (r < 6 && (0 + t) < 3 ? (0 + t) * 6 + r : 0)"));
        assert!(src.contains("ym0 = (0 + t) < 3 ? 1.0 : 0.0") && !src.contains("xl1"));
        assert!(src.contains("__CUDA_ARCH__ >= 800") && src.contains("__trap()"));
        // The unrolled step and the one-at-a-time remainder.
        assert_eq!(src.matches("mma.sync.aligned.m8n8k4").count(), mma_unroll(st) + 1);
        // Two inner steps for 6x6x6; the second covers k = 4, 5.
        let mut src = String::new();
        mma_stage(&mut src, Stage::ap(ShapeSet { bf: 6, bc: 6 }), false);
        assert!(src.contains("bv1 = r < 6 && (4 + t) < 6") && src.contains("yv + (bv0 ? (0 + t) * 6 + r : 0)"));
        // The second step's pointers: step 0's plus the constant (row-major x: 4, y: 4 N).
        assert!(src.contains("const double* xl1 = xl0 + 4;\n  const double* yl1 = yl0 + 24;"));
        assert!(!src.contains("xv + (av1") && !src.contains("\"+l\"(xl1)"));
        assert!(src.contains("if (av1) a0_1 = __ldg(xl1") && !src.contains("const double ym"));
        assert_eq!(src.matches("mma.sync.aligned.m8n8k4").count(), 2 * (2 + 1));
        assert!(!mma_fits(Stage::ap(ShapeSet { bf: 4, bc: 10 })));
        assert_eq!(src.matches('{').count(), src.matches('}').count());
    }

    #[test]
    fn pairs_share_the_b_fragment_on_the_fine_a_p_stage_only() {
        let fine = ShapeSet { bf: 3, bc: 6 };
        let coarse = ShapeSet { bf: 6, bc: 6 };
        assert!(mma_pair_fits(Stage::ap(fine)) && mma_pair_fits(Stage::ptw(fine)));
        assert!(!mma_pair_fits(Stage::ap(coarse)) && mma_pair_fits(Stage::ptw(coarse)));
        let mut src = String::new();
        let e = mma_pair_stage(&mut src, Stage::ap(fine), false);
        assert_eq!(e.name, "ptap_mma2_3x3x6");
        // Rows 4-7 of the fragments are row r - 4 of the second slot; its side of entry q is uint2 2q + 1.
        assert!(src.contains("const bool av0 = (r & 3) < 3 && (0 + t) < 3"));
        assert!(src.contains("uint2 e3 = __ldg(ep + (2 * q + (r >> 2)) + 6);"));
        assert!(src.contains("if (av0 && e0.x != 0xffffffffu) a0_0 = __ldg(xl0 + (u64)e0.x * 9);"));
        assert!(src.contains("u32 s = uslot[2 * w + (r >> 2)];"));
        // Columns 6, 7 of the B fragment read column 5 (in the span of columns 4, 5), not column 0.
        assert!(src.contains("yv + (bv0 ? (0 + t) * 6 + r : (r < 6 ? r : 5))"));
        // One MMA per entry serves both slots: a step of 4, and a guarded tail of at most 3.
        let unroll = mma_unroll(Stage::ap(fine));
        assert_eq!(src.matches("mma.sync.aligned.m8n8k4").count(), 2 * unroll - 1);
        assert!(
            src.contains("u32 rem = q1 - q;") && src.contains("if (2 < rem) e2 = __ldg(ep + (2 * q + (r >> 2)) + 4);")
        );
        assert!(src.contains("    if (2 < rem) asm volatile(\"mma.sync"));
        assert!(src.contains("blockIdx.x * (blockDim.x >> 5)"));
        let mut src = String::new();
        mma_pair_stage(&mut src, Stage::ptw(fine), false);
        // Rows 6, 7 of the transposed A fragment read row 5, inside the span of rows 4, 5.
        assert!(src.contains("xv + (av0 ? (0 + t) * 6 + r : (r < 6 ? r : 5))"));
        let mut src = String::new();
        mma_pair_stage(&mut src, Stage::ptw(coarse), false);
        assert!(src.contains("uint2 e1 = __ldg(ep + q + 1);") && src.contains("uslot[1 * w + 0]"));
        assert!(src.contains("if (av1) a0_1 = __ldg(xl1"));
        // Two entries per step: the tail is the one remaining entry, unguarded.
        assert!(!src.contains("if (1 < rem)"));
        assert_eq!(src.matches('{').count(), src.matches('}').count());
    }

    #[test]
    fn the_split_pass_adds_each_slots_chunks_in_order_and_writes_only_its_own_element() {
        let mut src = String::new();
        let e = symmetrize_split(&mut src, 6);
        assert_eq!(e.name, "ptap_symsplit_6x6");
        // From the first chunk's value, then the others in order; the mirror's element (b, a).
        assert!(src.contains("double x = __ldg(xs + (u64)c * 36 + a * 6 + b);"));
        assert!(src.contains("for (++c; c < c1; ++c) y += __ldg(xs + (u64)c * 36 + b * 6 + a);"));
        assert!(src.contains("cv[(u64)s * 36 + e] = x + y;") && src.matches("cv[").count() == 1);
        assert_eq!(src.matches('{').count(), src.matches('}').count());
    }

    #[test]
    fn the_fold_runs_both_halves_into_one_accumulator_and_writes_both_slots() {
        for (s, unroll) in [(ShapeSet { bf: 3, bc: 6 }, 4), (ShapeSet { bf: 6, bc: 6 }, 2)] {
            let st = Stage::ptw(s);
            let mut src = String::new();
            let e = mma_fold_stage(&mut src, st);
            assert_eq!(e.name, format!("ptap_mma2f_{}", st.tag()));
            // Half 0, then half 1 from where it ended, in the same accumulator.
            assert!(src.contains("u32 q = hptr[2 * w], q1 = hptr[2 * w + 1];"));
            assert!(src.contains("  q = q1;\n  q1 = hptr[2 * w + 2];"));
            assert_eq!(src.matches("double d0 = 0.0").count(), 1);
            // Each half: a step of `unroll` and a guarded tail of unroll - 1; half 1 swaps the fragments.
            let steps = st.k.div_ceil(4);
            let per_half = steps * (2 * unroll - 1);
            assert_eq!(src.matches("mma.sync.aligned.m8n8k4").count(), 2 * per_half);
            assert_eq!(src.matches(r#""d"(b0_0), "d"(a0_0)"#).count(), 2);
            assert_eq!(src.matches(r#""d"(a0_0), "d"(b0_0)"#).count(), 2);
            // A lane's element of the x and y blocks sits at the same offset (M = N).
            assert!(src.contains("xl0 = xv + (av0 ? (0 + t) * 6 + r : (r < 6 ? r : 5))"));
            assert!(src.contains("yl0 = yv + (bv0 ? (0 + t) * 6 + r : (r < 6 ? r : 5))"));
            // D to the slot, D^T to its mirror; a diagonal slot gets D + D^T through shuffles.
            assert!(src.contains("*(double2*)(cb + r * 6 + c0) = make_double2(d0, d1);"));
            assert!(src.contains("ct[c0 * 6 + r] = d0; if (c0 + 1 < 6) ct[(c0 + 1) * 6 + r] = d1;"));
            assert!(src.contains("u32 la = c0 * 4 + (r >> 1);") && src.contains("d0 += (r & 1) ? a1 : a0;"));
            assert_eq!(src.matches("__shfl_sync").count(), 4);
            assert_eq!(src.matches('{').count(), src.matches('}').count());
        }
    }
}
