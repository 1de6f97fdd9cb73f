//! CUDA C for the device solve: point-block Jacobi (diagonal-block inversion
//! and the Chebyshev update) per block size, and the dense coarse solve
//! (densify, blocked right-looking Cholesky, one-block triangular solves).
//!
//! The algorithms are the CPU's (`ptap_sparse::dense::invert_in_place`,
//! `Cholesky::refactor` / `solve_in_place`, `PointBlockJacobi::update`): the
//! same pivoting, the same thresholds, the same sequential update order where
//! the device allows it (the forward substitution subtracts in the CPU's
//! order; the Cholesky dot products are warp reductions).
use crate::entry::{param as p, KernelEntry, ParamTy};
use std::fmt::Write;

/// Kernel names of the solve module of `b x b` blocks and of the coarse module.
pub fn jacobi_invert_name(b: usize) -> String {
    format!("ptap_jacobi_invert_{b}")
}
pub fn jacobi_update_name(b: usize) -> String {
    format!("ptap_jacobi_update_{b}")
}
pub fn densify_name(b: usize) -> String {
    format!("ptap_densify_{b}")
}
pub const FILL: &str = "ptap_fill";
pub const CHOL_SCALE: &str = "ptap_chol_scale";
pub const CHOL_SOLVE: &str = "ptap_chol_solve";
/// One panel of [`CHOL_NB`] columns of the blocked Cholesky factor.
pub const CHOL_PANEL: &str = "ptap_chol_panel";
/// The trailing update after a panel.
pub const CHOL_UPDATE: &str = "ptap_chol_update";
/// Columns per panel of the blocked Cholesky factorization (one warp's lanes).
pub const CHOL_NB: usize = 32;
/// Warps per block of [`CHOL_PANEL`] (one row below the panel's diagonal block each).
pub const CHOL_PANEL_WARPS: usize = 8;
/// Threads of the one-block triangular solve.
pub const CHOL_SOLVE_THREADS: usize = 1024;

/// `status[0]` starts at 0 (OK); a failing row `i` leaves `u32::MAX - i`
/// there (`atomicMax`, so the smallest failing row wins).
pub fn failing_row(status: u32) -> Option<usize> {
    (status != 0).then(|| (u32::MAX - status) as usize)
}

/// Jacobi kernels of `b x b` blocks: inversion, the update, densification.
/// Any `b` up to [`crate::MAX_BLOCK_DIM`]: the inversion keeps its block in a
/// per-thread array (local memory past the register file, as for 10x10 or 16x16).
pub(crate) fn jacobi(src: &mut String, b: usize) -> Vec<KernelEntry> {
    use ParamTy::*;
    let bb = b * b;
    let mut entries = Vec::new();

    let inv = KernelEntry {
        name: jacobi_invert_name(b),
        params: vec![
            p("av", PtrF64),
            p("diag_pos", PtrU32),
            p("dinv", PtrMutF64),
            p("status", PtrMutU32),
            p("nrows", U32),
        ],
        doc: format!(
            "inverse of every {b}x{b} diagonal block (Gauss-Jordan, partial pivoting, as invert_in_place); \
             a singular or missing block records its row in status[0]"
        ),
    };
    inv.write_signature(src, " {");
    writeln!(
        src,
        "  u32 i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i >= nrows) return;\n  \
         u32 k = diag_pos[i];\n  if (k == 0xffffffffu) {{ atomicMax(status, 0xffffffffu - i); return; }}\n  \
         double a[{bb}];\n  double scale = 0.0;\n  \
         for (int q = 0; q < {bb}; ++q) {{ a[q] = av[(u64)k * {bb} + q]; scale = fmax(scale, fabs(a[q])); }}\n  \
         if (!isfinite(scale) || scale == 0.0) {{ atomicMax(status, 0xffffffffu - i); return; }}\n  \
         int perm[{b}];\n  for (int q = 0; q < {b}; ++q) perm[q] = q;\n  \
         for (int col = 0; col < {b}; ++col) {{\n    \
           int piv = col; double best = fabs(a[col * {b} + col]);\n    \
           for (int r = col + 1; r < {b}; ++r) if (fabs(a[r * {b} + col]) > best) {{ best = fabs(a[r * {b} + col]); piv = r; }}\n    \
           if (best <= 1e-14 * scale) {{ atomicMax(status, 0xffffffffu - i); return; }}\n    \
           if (piv != col) {{\n      for (int j = 0; j < {b}; ++j) {{ double t = a[piv * {b} + j]; a[piv * {b} + j] = a[col * {b} + j]; a[col * {b} + j] = t; }}\n      \
             int t = perm[piv]; perm[piv] = perm[col]; perm[col] = t;\n    }}\n    \
           double inv = 1.0 / a[col * {b} + col];\n    a[col * {b} + col] = 1.0;\n    \
           for (int j = 0; j < {b}; ++j) a[col * {b} + j] *= inv;\n    \
           for (int r = 0; r < {b}; ++r) {{\n      if (r != col) {{\n        double f = a[r * {b} + col];\n        \
               if (f != 0.0) {{\n          a[r * {b} + col] = 0.0;\n          \
                 for (int j = 0; j < {b}; ++j) a[r * {b} + j] -= f * a[col * {b} + j];\n        }}\n      }}\n    }}\n  }}\n  \
         int cols[{b}];\n  for (int q = 0; q < {b}; ++q) cols[perm[q]] = q;\n  \
         for (int r = 0; r < {b}; ++r)\n    for (int j = 0; j < {b}; ++j) dinv[(u64)i * {bb} + r * {b} + j] = a[r * {b} + cols[j]];\n}}\n"
    )
    .unwrap();
    entries.push(inv);

    let upd = KernelEntry {
        name: jacobi_update_name(b),
        params: vec![
            p("dinv", PtrF64),
            p("alpha", F64),
            p("r", PtrF64),
            p("beta", F64),
            p("t", PtrF64),
            p("x", PtrMutF64),
            p("nrows", U32),
        ],
        doc: format!("x += alpha D^-1 r + beta t ({b}x{b} blocks; t unread when beta = 0), one thread per scalar"),
    };
    upd.write_signature(src, " {");
    writeln!(
        src,
        "  u64 s = (u64)blockIdx.x * blockDim.x + threadIdx.x;\n  if (s >= (u64)nrows * {b}) return;\n  \
         u64 i = s / {b}; u32 q = (u32)(s % {b});\n  \
         const double* d = dinv + i * {bb} + q * {b};\n  const double* ri = r + i * {b};\n  double y = 0.0;"
    )
    .unwrap();
    for c in 0..b {
        writeln!(src, "  y = y + d[{c}] * ri[{c}];").unwrap();
    }
    writeln!(
        src,
        "  double v = alpha * y + (beta != 0.0 ? beta * t[s] : 0.0);\n  x[s] = x[s] + v;\n}}\n"
    )
    .unwrap();
    entries.push(upd);

    let dens = KernelEntry {
        name: densify_name(b),
        params: vec![
            p("av", PtrF64),
            p("brow", PtrU32),
            p("ci", PtrU32),
            p("dense", PtrMutF64),
            p("nblocks", U32),
            p("n", U32),
        ],
        doc: format!("scatter {b}x{b} block-CSR values into a zeroed row-major n x n matrix"),
    };
    dens.write_signature(src, " {");
    writeln!(
        src,
        "  u64 t = (u64)blockIdx.x * blockDim.x + threadIdx.x;\n  if (t >= (u64)nblocks * {bb}) return;\n  \
         u32 k = (u32)(t / {bb}), e = (u32)(t % {bb});\n  u64 i = (u64)brow[k] * {b} + e / {b};\n  \
         u64 j = (u64)ci[k] * {b} + e % {b};\n  dense[i * n + j] = av[t];\n}}\n"
    )
    .unwrap();
    entries.push(dens);
    entries
}

/// The dense coarse solve and a fill kernel.
pub(crate) fn coarse(src: &mut String) -> Vec<KernelEntry> {
    use ParamTy::*;
    let mut entries = Vec::new();

    let fill = KernelEntry {
        name: FILL.into(),
        params: vec![p("y", PtrMutF64), p("v", F64), p("n", U64)],
        doc: "y = v".into(),
    };
    fill.write_signature(src, " {");
    writeln!(
        src,
        "  u64 t = (u64)blockIdx.x * blockDim.x + threadIdx.x;\n  if (t < n) y[t] = v;\n}}\n"
    )
    .unwrap();
    entries.push(fill);

    let scale = KernelEntry {
        name: CHOL_SCALE.into(),
        params: vec![p("a", PtrF64), p("out", PtrMutF64), p("n", U32)],
        doc: "out[0] = max |a_ii| (one block of 256 threads)".into(),
    };
    scale.write_signature(src, " {");
    writeln!(
        src,
        "  __shared__ double sh[256];\n  double m = 0.0;\n  \
         for (u32 i = threadIdx.x; i < n; i += 256) m = fmax(m, fabs(a[(u64)i * n + i]));\n  \
         sh[threadIdx.x] = m;\n  __syncthreads();\n  \
         for (u32 h = 128; h > 0; h >>= 1) {{ if (threadIdx.x < h) sh[threadIdx.x] = fmax(sh[threadIdx.x], sh[threadIdx.x + h]); __syncthreads(); }}\n  \
         if (threadIdx.x == 0) out[0] = sh[0];\n}}\n"
    )
    .unwrap();
    entries.push(scale);

    let nb = CHOL_NB;
    let pw = CHOL_PANEL_WARPS;
    let panel = KernelEntry {
        name: CHOL_PANEL.into(),
        params: vec![
            p("a", PtrMutF64),
            p("l", PtrMutF64),
            p("lt", PtrMutF64),
            p("scale", PtrF64),
            p("status", PtrMutU32),
            p("n", U32),
            p("k0", U32),
        ],
        doc: format!(
            "columns k0 .. k0 + {nb} of the Cholesky factor (blocked right-looking; a holds the operator less \
             the earlier panels' updates): every block factors the diagonal block in shared memory, block 0 \
             writes it; then one warp per row i below it, {pw} warps per block, solves the row against it, \
             lane c owning column k0 + c. Each entry subtracts its terms in the order of Cholesky::refactor. \
             Writes L (row-major) and L^T; a pivot below 1e-14 max|a_ii| or not finite records its row in status[0]"
        ),
    };
    panel.write_signature(src, " {");
    writeln!(
        src,
        "  __shared__ double d[{nb}][{nb1}];\n  u32 tid = threadIdx.x, nt = blockDim.x;\n  \
         u32 w = n - k0 < {nb}u ? n - k0 : {nb}u;\n  \
         for (u32 q = tid; q < w * w; q += nt) {{ u32 i = q / w, c = q % w; d[i][c] = a[(u64)(k0 + i) * n + k0 + c]; }}\n  \
         __syncthreads();\n  \
         for (u32 j = 0; j < w; ++j) {{\n    \
           if (tid == 0) {{\n      double v = d[j][j];\n      \
             if (blockIdx.x == 0 && (!isfinite(v) || v <= 1e-14 * scale[0])) atomicMax(status, 0xffffffffu - (k0 + j));\n      \
             d[j][j] = sqrt(v);\n    }}\n    __syncthreads();\n    \
           for (u32 i = j + 1 + tid; i < w; i += nt) d[i][j] = d[i][j] / d[j][j];\n    __syncthreads();\n    \
           u32 m = w - j - 1;\n    \
           for (u32 q = tid; q < m * m; q += nt) {{ u32 i = j + 1 + q / m, c = j + 1 + q % m; if (c <= i) d[i][c] = d[i][c] - d[i][j] * d[c][j]; }}\n    \
           __syncthreads();\n  }}\n  \
         if (blockIdx.x == 0)\n    \
           for (u32 q = tid; q < w * w; q += nt) {{ u32 i = q / w, c = q % w; if (c <= i) {{ double v = d[i][c]; \
         l[(u64)(k0 + i) * n + k0 + c] = v; lt[(u64)(k0 + c) * n + k0 + i] = v; }} }}\n  \
         u32 lane = tid & 31;\n  u32 i = k0 + w + blockIdx.x * {pw} + (tid >> 5);\n  if (i >= n) return;\n  \
         double acc = lane < w ? a[(u64)i * n + k0 + lane] : 0.0;\n  \
         for (u32 j = 0; j < w; ++j) {{\n    double x = __shfl_sync(0xffffffffu, acc, j) / d[j][j];\n    \
           if (lane == j) acc = x;\n    else if (lane > j && lane < w) acc = acc - x * d[lane][j];\n  }}\n  \
         if (lane < w) {{ l[(u64)i * n + k0 + lane] = acc; lt[(u64)(k0 + lane) * n + i] = acc; }}\n}}\n",
        nb1 = nb + 1
    )
    .unwrap();
    entries.push(panel);

    let update = KernelEntry {
        name: CHOL_UPDATE.into(),
        params: vec![p("a", PtrMutF64), p("l", PtrF64), p("n", U32), p("k0", U32)],
        doc: format!(
            "trailing update after the panel of columns k0 .. k0 + {nb}: a_ic -= L_i,k0+m L_c,k0+m for m in order, \
             i >= c >= k0 + {nb}; one {nb}x{nb} tile of a per block of {nb}x8 threads (tiles above the diagonal exit)"
        ),
    };
    update.write_signature(src, " {");
    writeln!(
        src,
        "  __shared__ double li[{nb}][{nb1}], lc[{nb}][{nb1}];\n  \
         if (blockIdx.y < blockIdx.x) return;\n  \
         u32 k1 = k0 + {nb}, tx = threadIdx.x, ty = threadIdx.y;\n  \
         u32 r0 = k1 + blockIdx.y * {nb}, c0 = k1 + blockIdx.x * {nb};\n  \
         for (u32 q = ty; q < {nb}; q += 8) {{\n    \
           li[q][tx] = r0 + q < n ? l[(u64)(r0 + q) * n + k0 + tx] : 0.0;\n    \
           lc[q][tx] = c0 + q < n ? l[(u64)(c0 + q) * n + k0 + tx] : 0.0;\n  }}\n  \
         __syncthreads();\n  u32 c = c0 + tx;\n  if (c >= n) return;\n  \
         for (u32 q = ty; q < {nb}; q += 8) {{\n    u32 i = r0 + q;\n    if (i >= n || i < c) continue;\n    \
           double acc = a[(u64)i * n + c];\n    \
           for (u32 m = 0; m < {nb}; ++m) acc = acc - li[q][m] * lc[tx][m];\n    \
           a[(u64)i * n + c] = acc;\n  }}\n}}\n",
        nb1 = nb + 1
    )
    .unwrap();
    entries.push(update);

    let solve = KernelEntry {
        name: CHOL_SOLVE.into(),
        params: vec![p("l", PtrF64), p("lt", PtrF64), p("x", PtrMutF64), p("n", U32)],
        doc: format!(
            "x = (L L^T)^-1 x in place: column-oriented forward (rows of L^T) and backward (rows of L) \
             substitution, one block of {CHOL_SOLVE_THREADS} threads"
        ),
    };
    solve.write_signature(src, " {");
    writeln!(
        src,
        "  __shared__ double piv;\n  u32 tid = threadIdx.x;\n  \
         for (u32 j = 0; j < n; ++j) {{\n    \
           if (tid == 0) {{ double v = x[j] / lt[(u64)j * n + j]; x[j] = v; piv = v; }}\n    __syncthreads();\n    \
           double v = piv;\n    const double* row = lt + (u64)j * n;\n    \
           for (u32 i = j + 1 + tid; i < n; i += {CHOL_SOLVE_THREADS}) x[i] = x[i] - row[i] * v;\n    __syncthreads();\n  }}\n  \
         for (u32 i = n; i-- > 0;) {{\n    \
           if (tid == 0) {{ double v = x[i] / l[(u64)i * n + i]; x[i] = v; piv = v; }}\n    __syncthreads();\n    \
           double v = piv;\n    const double* row = l + (u64)i * n;\n    \
           for (u32 k = tid; k < i; k += {CHOL_SOLVE_THREADS}) x[k] = x[k] - row[k] * v;\n    __syncthreads();\n  }}\n}}\n"
    )
    .unwrap();
    entries.push(solve);
    entries
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::{common_module, set_module};
    use crate::ShapeSet;

    #[test]
    fn every_entry_is_defined_and_braces_balance() {
        for m in [
            set_module(ShapeSet { bf: 3, bc: 6 }),
            set_module(ShapeSet { bf: 16, bc: 16 }),
            common_module(),
        ] {
            for e in &m.entries {
                assert!(m.source.contains(&format!("void {}(", e.name)), "{} is defined", e.name);
            }
            assert_eq!(
                m.source.matches('{').count(),
                m.source.matches('}').count(),
                "{}",
                m.name
            );
        }
        let m = set_module(ShapeSet { bf: 3, bc: 6 });
        assert!(m.source.contains("y = y + d[5] * ri[5];"));
    }

    #[test]
    fn jacobi_of_16x16_blocks_is_emitted() {
        let mut src = String::new();
        let entries = jacobi(&mut src, 16);
        let names: Vec<&str> = entries.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(
            names,
            ["ptap_jacobi_invert_16", "ptap_jacobi_update_16", "ptap_densify_16"]
        );
        assert!(src.contains("double a[256];"));
        assert!(src.contains("y = y + d[15] * ri[15];"));
        assert!(!src.contains("d[16]"));
    }
}
