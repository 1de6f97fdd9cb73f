//! CUDA C for a solve that keeps its scalars on the device: CG's fused
//! update and direction kernels reading `alpha` and `beta` from a scalar
//! vector, the reduction that stores into a slot of it, the Chebyshev /
//! point-block Jacobi update reading its coefficients from device memory, and
//! the coarse solve as two triangular matrix-vector products with the
//! inverse Cholesky factor (computed once per factorization, blocked).
//!
//! Every kernel here reads nothing from its launch arguments that changes
//! between iterations or matrix setups, so a recorded launch (a CUDA graph)
//! replays unchanged.
use crate::entry::{param as p, KernelEntry, ParamTy};
use crate::gpu_base::DOT_THREADS;
use std::fmt::Write;

/// `out[keep] = out[slot]; out[slot] = sum of n partials` (one block).
pub const SUM_PARTIAL_KEEP: &str = "ptap_vec_sum_partial_keep";
/// CG's `x += alpha p`, `r -= alpha ap` and the partial sums of `r . r`.
pub const CG_UPDATE: &str = "ptap_cg_update";
/// CG's `p = z + beta p`.
pub const CG_DIRECTION: &str = "ptap_cg_direction";
/// `y += c x` or `y = x + c y` with `c = s[num] / s[den]` (the arithmetic of
/// `ptap_vec_axpby`): the eigen-estimate's steps with their scalars on the device.
pub const AXPBY_RATIO: &str = "ptap_axpby_ratio";
/// Modes of [`AXPBY_RATIO`].
pub mod ratio_mode {
    /// `y += c x`.
    pub const AXPY: u32 = 0;
    /// `y -= c x` (`y += (-c) x`).
    pub const AXPY_NEG: u32 = 1;
    /// `y = x + c y`.
    pub const XPBY: u32 = 2;
}
/// Rows `k0 .. k0 + 32` of `W = L^-1` (blocked forward substitution on the identity).
pub const CHOL_INVERSE_PANEL: &str = "ptap_chol_inverse_panel";
/// The update of `W`'s rows below a panel.
pub const CHOL_INVERSE_UPDATE: &str = "ptap_chol_inverse_update";
/// Columns per block of [`CHOL_INVERSE_PANEL`] (one warp each).
pub const CHOL_INVERSE_WARPS: usize = 8;
/// A triangle of a dense row-major matrix times a vector, one warp per row.
pub const TRI_MV: &str = "ptap_tri_mv";
/// Largest coarse order given the inverse factor (two more `n x n` matrices).
pub const CHOL_INVERSE_MAX_N: usize = 48 * 1024 / 8;
/// Warps per block of [`TRI_MV`].
pub const TRI_MV_WARPS: usize = 8;

/// The point-block Jacobi update reading `alpha`, `beta` from device memory.
pub fn jacobi_update_at_name(b: usize) -> String {
    format!("ptap_jacobi_update_at_{b}")
}

/// Chebyshev's first step in one pass: `t = coef[alpha_at] D^-1 r`, `x = t`
/// or `x += t` (`jacobi_step`).
pub fn jacobi_step_name(b: usize) -> String {
    format!("ptap_jacobi_step_{b}")
}

/// The eigen-estimate's update in one pass: `r -= c ap`, `z = D^-1 r` and the
/// partial sums of `r . z` (`lanczos_step`).
pub fn lanczos_step_name(b: usize) -> String {
    format!("ptap_lanczos_step_{b}")
}

/// The shape-free kernels of this module (the common module's).
pub(crate) fn common(src: &mut String) -> Vec<KernelEntry> {
    use ParamTy::*;
    let mut entries = Vec::new();
    let half = DOT_THREADS / 2;
    let tree = format!(
        "  sh[threadIdx.x] = acc;\n  __syncthreads();\n  \
         for (u32 h = {half}; h > 0; h >>= 1) {{ if (threadIdx.x < h) sh[threadIdx.x] += sh[threadIdx.x + h]; __syncthreads(); }}\n"
    );

    let keep = KernelEntry {
        name: SUM_PARTIAL_KEEP.into(),
        params: vec![
            p("part", PtrF64),
            p("out", PtrMutF64),
            p("slot", U32),
            p("keep", U32),
            p("n", U32),
        ],
        doc: format!(
            "out[keep] = out[slot], then out[slot] = sum of n partials (one block of {DOT_THREADS} threads, \
             the fixed tree of ptap_vec_sum_partial)"
        ),
    };
    keep.write_signature(src, " {");
    writeln!(
        src,
        "  __shared__ double sh[{DOT_THREADS}];\n  double acc = 0.0;\n  \
         for (u32 t = threadIdx.x; t < n; t += {DOT_THREADS}) acc += part[t];\n{tree}  \
         if (threadIdx.x == 0) {{ out[keep] = out[slot]; out[slot] = sh[0]; }}\n}}\n"
    )
    .unwrap();
    entries.push(keep);

    let upd = KernelEntry {
        name: CG_UPDATE.into(),
        params: vec![
            p("s", PtrF64),
            p("rz_at", U32),
            p("pap_at", U32),
            p("p", PtrF64),
            p("ap", PtrF64),
            p("x", PtrMutF64),
            p("r", PtrMutF64),
            p("part", PtrMutF64),
            p("n", U64),
        ],
        doc: format!(
            "alpha = s[rz_at] / s[pap_at]; x += alpha p; r -= alpha ap; per-block partial sums of the new r . r \
             ({DOT_THREADS} threads, grid-stride: the thread-to-element map of ptap_vec_dot_partial)"
        ),
    };
    upd.write_signature(src, " {");
    writeln!(
        src,
        "  __shared__ double sh[{DOT_THREADS}];\n  double alpha = s[rz_at] / s[pap_at];\n  double acc = 0.0;\n  \
         u64 stride = (u64)gridDim.x * blockDim.x;\n  \
         for (u64 t = (u64)blockIdx.x * blockDim.x + threadIdx.x; t < n; t += stride) {{\n    \
           x[t] = alpha * p[t] + x[t];\n    double v = -alpha * ap[t] + r[t];\n    r[t] = v;\n    acc += v * v;\n  }}\n\
         {tree}  if (threadIdx.x == 0) part[blockIdx.x] = sh[0];\n}}\n"
    )
    .unwrap();
    entries.push(upd);

    let dir = KernelEntry {
        name: CG_DIRECTION.into(),
        params: vec![
            p("s", PtrF64),
            p("num_at", U32),
            p("den_at", U32),
            p("z", PtrF64),
            p("pv", PtrMutF64),
            p("n", U64),
        ],
        doc: "beta = s[num_at] / s[den_at]; p = z + beta p".into(),
    };
    dir.write_signature(src, " {");
    writeln!(
        src,
        "  u64 t = (u64)blockIdx.x * blockDim.x + threadIdx.x;\n  if (t >= n) return;\n  \
         double beta = s[num_at] / s[den_at];\n  pv[t] = 1.0 * z[t] + beta * pv[t];\n}}\n"
    )
    .unwrap();
    entries.push(dir);

    let ratio = KernelEntry {
        name: AXPBY_RATIO.into(),
        params: vec![
            p("s", PtrF64),
            p("num_at", U32),
            p("den_at", U32),
            p("mode", U32),
            p("x", PtrF64),
            p("y", PtrMutF64),
            p("n", U64),
        ],
        doc: "c = s[num_at] / s[den_at]; mode 0: y = c x + y, 1: y = (-c) x + y, 2: y = x + c y \
              (y = a x + b y as ptap_vec_axpby computes it)"
            .into(),
    };
    ratio.write_signature(src, " {");
    writeln!(
        src,
        "  u64 t = (u64)blockIdx.x * blockDim.x + threadIdx.x;\n  if (t >= n) return;\n  \
         double c = s[num_at] / s[den_at];\n  \
         double a = mode == 2u ? 1.0 : (mode == 1u ? -c : c), b = mode == 2u ? c : 1.0;\n  \
         y[t] = b == 0.0 ? a * x[t] : a * x[t] + b * y[t];\n}}\n"
    )
    .unwrap();
    entries.push(ratio);

    let nb = crate::gpu_solve::CHOL_NB;
    let iw = CHOL_INVERSE_WARPS;
    let inv = KernelEntry {
        name: CHOL_INVERSE_PANEL.into(),
        params: vec![
            p("l", PtrF64),
            p("w", PtrMutF64),
            p("wt", PtrMutF64),
            p("n", U32),
            p("k0", U32),
        ],
        doc: format!(
            "rows k0 .. k0 + {nb} of W = L^-1 (row-major, lower) and of W^T's columns: L W = I solved a panel of \
             {nb} rows at a time; w holds minus the earlier panels' terms (zero at the start). One warp per \
             column c < k0 + {nb}, {iw} per block, lane j owning row k0 + j: W_rc = (delta_rc + w_rc - sum over \
             earlier rows m of the panel of L_rm W_mc) / L_rr, the terms in row order"
        ),
    };
    inv.write_signature(src, " {");
    writeln!(
        src,
        "  __shared__ double d[{nb}][{nb1}];\n  u32 tid = threadIdx.x;\n  \
         u32 h = n - k0 < {nb}u ? n - k0 : {nb}u;\n  \
         for (u32 q = tid; q < h * h; q += blockDim.x) {{ u32 i = q / h, c = q % h; d[i][c] = c <= i ? l[(u64)(k0 + i) * n + k0 + c] : 0.0; }}\n  \
         __syncthreads();\n  \
         u32 lane = tid & 31, c = blockIdx.x * {iw} + (tid >> 5);\n  if (c >= k0 + h) return;\n  \
         u32 r = k0 + lane;\n  \
         double acc = lane < h ? (r == c ? 1.0 : 0.0) + w[(u64)r * n + c] : 0.0;\n  \
         for (u32 j = 0; j < h; ++j) {{\n    double x = __shfl_sync(0xffffffffu, acc, j) / d[j][j];\n    \
           if (lane == j) acc = x;\n    else if (lane > j && lane < h) acc = acc - d[lane][j] * x;\n  }}\n  \
         if (lane < h && c <= r) {{ w[(u64)r * n + c] = acc; wt[(u64)c * n + r] = acc; }}\n}}\n",
        nb1 = nb + 1
    )
    .unwrap();
    entries.push(inv);

    let upd = KernelEntry {
        name: CHOL_INVERSE_UPDATE.into(),
        params: vec![p("l", PtrF64), p("w", PtrMutF64), p("n", U32), p("k0", U32)],
        doc: format!(
            "after the panel of W's rows k0 .. k0 + {nb}: w_ic -= L_i,k0+m W_k0+m,c for m in order, rows \
             i >= k0 + {nb}, columns c < k0 + {nb}; one {nb}x{nb} tile per block of {nb}x8 threads"
        ),
    };
    upd.write_signature(src, " {");
    writeln!(
        src,
        "  __shared__ double li[{nb}][{nb1}], wc[{nb}][{nb1}];\n  \
         u32 k1 = k0 + {nb}, tx = threadIdx.x, ty = threadIdx.y;\n  \
         u32 r0 = k1 + blockIdx.y * {nb}, c0 = blockIdx.x * {nb};\n  \
         for (u32 q = ty; q < {nb}; q += 8) {{\n    \
           li[q][tx] = r0 + q < n ? l[(u64)(r0 + q) * n + k0 + tx] : 0.0;\n    \
           wc[q][tx] = w[(u64)(k0 + q) * n + c0 + tx];\n  }}\n  \
         __syncthreads();\n  u32 c = c0 + tx;\n  \
         for (u32 q = ty; q < {nb}; q += 8) {{\n    u32 i = r0 + q;\n    if (i >= n) continue;\n    \
           double acc = w[(u64)i * n + c];\n    \
           for (u32 m = 0; m < {nb}; ++m) acc = acc - li[q][m] * wc[m][tx];\n    \
           w[(u64)i * n + c] = acc;\n  }}\n}}\n",
        nb1 = nb + 1
    )
    .unwrap();
    entries.push(upd);

    let mv = KernelEntry {
        name: TRI_MV.into(),
        params: vec![
            p("m", PtrF64),
            p("x", PtrF64),
            p("y", PtrMutF64),
            p("n", U32),
            p("lower", U32),
        ],
        doc: format!(
            "y_i = sum over the lower (k <= i) or upper (k >= i) triangle of row i of the row-major n x n m \
             times x_k; one warp per row, {TRI_MV_WARPS} warps per block, lanes summed in a fixed tree"
        ),
    };
    mv.write_signature(src, " {");
    writeln!(
        src,
        "  u32 i = blockIdx.x * {TRI_MV_WARPS} + (threadIdx.x >> 5), lane = threadIdx.x & 31;\n  if (i >= n) return;\n  \
         u32 k0 = lower ? 0 : i, k1 = lower ? i + 1 : n;\n  const double* mi = m + (u64)i * n;\n  double acc = 0.0;\n  \
         for (u32 k = k0 + lane; k < k1; k += 32) acc += mi[k] * x[k];\n  \
         for (int o = 16; o > 0; o >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, o);\n  \
         if (lane == 0) y[i] = acc;\n}}\n"
    )
    .unwrap();
    entries.push(mv);
    entries
}

/// The point-block Jacobi update of `b x b` blocks with its scalars read from
/// `coef` (`beta_at == u32::MAX`: `beta = 0`, `t` unread), the arithmetic of
/// `ptap_jacobi_update_{b}`.
pub(crate) fn jacobi_update_at(src: &mut String, b: usize) -> KernelEntry {
    use ParamTy::*;
    let e = KernelEntry {
        name: jacobi_update_at_name(b),
        params: vec![
            p("dinv", PtrF64),
            p("coef", PtrF64),
            p("alpha_at", U32),
            p("beta_at", U32),
            p("r", PtrF64),
            p("t", PtrF64),
            p("x", PtrMutF64),
            p("nrows", U32),
        ],
        doc: format!(
            "x += coef[alpha_at] D^-1 r + coef[beta_at] t ({b}x{b} blocks; beta_at = 0xffffffff: no t term), \
             one thread per scalar"
        ),
    };
    e.write_signature(src, " {");
    dinv_row_times_r(
        src,
        b,
        "double alpha = coef[alpha_at], beta = beta_at == 0xffffffffu ? 0.0 : coef[beta_at];",
    );
    writeln!(
        src,
        "  double v = alpha * y + (beta != 0.0 ? beta * t[s] : 0.0);\n  x[s] = x[s] + v;\n}}\n"
    )
    .unwrap();
    e
}

/// The body both one-thread-per-scalar Jacobi kernels open with: the
/// thread's scalar `s` (row `i`, entry `q`), the coefficients (`coefs`, a C
/// declaration), and `y`, row `q` of row `i`'s block of `D^-1` times `r`'s
/// block, summed in column order.
fn dinv_row_times_r(src: &mut String, b: usize, coefs: &str) {
    let bb = b * b;
    writeln!(
        src,
        "  u64 s = (u64)blockIdx.x * blockDim.x + threadIdx.x;\n  if (s >= (u64)nrows * {b}) return;\n  \
         {coefs}\n  \
         u64 i = s / {b}; u32 q = (u32)(s % {b});\n  \
         const double* d = dinv + i * {bb} + q * {b};\n  const double* ri = r + i * {b};\n  double y = 0.0;"
    )
    .unwrap();
    for c in 0..b {
        writeln!(src, "  y = y + d[{c}] * ri[{c}];").unwrap();
    }
}

/// Chebyshev's first step after its residual `r`, one thread per scalar:
/// `t = coef[alpha_at] D^-1 r`, then `x = t` (`zero != 0`: `x` unread) or
/// `x += t`. The arithmetic of `t` zeroed, [`jacobi_update_at`] into it with
/// no `t` term, then the copy or `axpy(1, t, x)`: the same bits in one pass
/// that reads `D^-1`, `r` (and `x`) once and writes `t` and `x`.
pub(crate) fn jacobi_step(src: &mut String, b: usize) -> KernelEntry {
    use ParamTy::*;
    let e = KernelEntry {
        name: jacobi_step_name(b),
        params: vec![
            p("dinv", PtrF64),
            p("coef", PtrF64),
            p("alpha_at", U32),
            p("r", PtrF64),
            p("t", PtrMutF64),
            p("x", PtrMutF64),
            p("zero", U32),
            p("nrows", U32),
        ],
        doc: format!("t = coef[alpha_at] D^-1 r; x = t (zero != 0) or x += t ({b}x{b} blocks), one thread per scalar"),
    };
    e.write_signature(src, " {");
    dinv_row_times_r(src, b, "double alpha = coef[alpha_at];");
    // `0.0 + ...`: t was zeroed, then updated; x starts from 0 when zero.
    writeln!(
        src,
        "  double v = 0.0 + (alpha * y + 0.0);\n  t[s] = v;\n  x[s] = (zero != 0u ? 0.0 : x[s]) + v;\n}}\n"
    )
    .unwrap();
    e
}

/// The eigen-estimate's step after `s[den_at] = p . ap`, one thread per block
/// row (grid-stride, [`DOT_THREADS`] threads per block): `r -= (s[num_at] /
/// s[den_at]) ap` (the arithmetic of [`AXPBY_RATIO`]), `z = D^-1 r` (of
/// `ptap_jacobi_update` into a zeroed `z`) and the block's partial sum of
/// `r . z`, the row's entries in order, in a fixed tree. One pass instead of
/// four (and a fill); the partials are summed in another order than
/// `ptap_vec_dot_partial`'s.
pub(crate) fn lanczos_step(src: &mut String, b: usize) -> KernelEntry {
    use ParamTy::*;
    let bb = b * b;
    let e = KernelEntry {
        name: lanczos_step_name(b),
        params: vec![
            p("s", PtrF64),
            p("num_at", U32),
            p("den_at", U32),
            p("dinv", PtrF64),
            p("ap", PtrF64),
            p("r", PtrMutF64),
            p("z", PtrMutF64),
            p("part", PtrMutF64),
            p("nrows", U64),
        ],
        doc: format!(
            "c = s[num_at] / s[den_at]; r = (-c) ap + r; z = D^-1 r; per-block partial sums of r . z \
             ({b}x{b} blocks, one thread per block row, {DOT_THREADS} threads, grid-stride, fixed tree)"
        ),
    };
    e.write_signature(src, " {");
    let half = DOT_THREADS / 2;
    writeln!(
        src,
        "  __shared__ double sh[{DOT_THREADS}];\n  double c = s[num_at] / s[den_at];\n  double acc = 0.0;\n  \
         u64 stride = (u64)gridDim.x * blockDim.x;\n  \
         for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < nrows; i += stride) {{\n    \
           double* ri = r + i * {b};\n    const double* ai = ap + i * {b};\n    \
           const double* d = dinv + i * {bb};"
    )
    .unwrap();
    for q in 0..b {
        writeln!(
            src,
            "    double r{q} = -c * ai[{q}] + 1.0 * ri[{q}];\n    ri[{q}] = r{q};"
        )
        .unwrap();
    }
    for q in 0..b {
        writeln!(src, "    {{\n      double y = 0.0;").unwrap();
        for c in 0..b {
            writeln!(src, "      y = y + d[{}] * r{c};", q * b + c).unwrap();
        }
        writeln!(
            src,
            "      double v = 0.0 + (1.0 * y + 0.0);\n      z[i * {b} + {q}] = v;\n      acc += r{q} * v;\n    }}"
        )
        .unwrap();
    }
    writeln!(
        src,
        "  }}\n  sh[threadIdx.x] = acc;\n  __syncthreads();\n  \
         for (u32 h = {half}; h > 0; h >>= 1) {{ if (threadIdx.x < h) sh[threadIdx.x] += sh[threadIdx.x + h]; __syncthreads(); }}\n  \
         if (threadIdx.x == 0) part[blockIdx.x] = sh[0];\n}}\n"
    )
    .unwrap();
    e
}
