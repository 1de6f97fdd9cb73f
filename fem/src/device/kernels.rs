//! CUDA C for FEM assembly on the device: the Q2 element stiffness integrated
//! at the `3^dim` Gauss points, and the row-owner gather of `E_e K_ref`
//! blocks into a block-CSR value array through the element-to-block map.
//!
//! Both kernels follow the CPU (`ptap_fem::ElementStiffness` and
//! `ptap_fem::Assembler::assemble`) operation for operation:
//!
//! * `K_ref`: one thread per node pair `(a, b)`; the shape functions, the
//!   gradients `(prod_axis f_axis) * 2 / h_c`, the weight
//!   `((1 w_0) w_1) w_2 det J` and the update
//!   `k += w (diag + mu g_a[j] g_b[i] + lambda g_a[i] g_b[j])` are written in
//!   the CPU's evaluation order and summed over the Gauss points in the
//!   CPU's order.
//! * the gather: one warp per block row stages the row's values in shared
//!   memory, zeroes them, loads the row's element incidence, moduli and map
//!   rows up front (independent loads), then visits the incidence in the
//!   CPU's (colour) order, lane `b` adding `E_e K_ref(a, b)` into the block
//!   the map names (the blocks of one element are distinct, so lanes never
//!   collide), and finally writes the row out once, coalesced.
//!
//! Compiled with `--fmad=false` both reproduce the CPU bit for bit (every
//! product and sum is rounded as the CPU rounds it); with FMA contraction they
//! agree to round-off.
use ptap_codegen_core::{param as p, CudaModule, KernelEntry, ParamTy};
use std::fmt::Write;

/// Warps (block rows) per thread block of the gather kernel.
pub const GATHER_WARPS: usize = 4;
/// Threads per block of the element-stiffness kernel.
pub const KREF_THREADS: usize = 128;

/// The positive 3-point Gauss-Legendre node (the CPU's `GAUSS3_POINTS[2]`).
const GAUSS3: f64 = 0.774_596_669_241_483_4;

/// Module name for `dim` (2 or 3).
pub fn fem_module_name(dim: usize) -> String {
    format!("ptap_fem_{dim}d")
}
/// The element-stiffness kernel's name.
pub fn kref_name(dim: usize) -> String {
    format!("ptap_fem_kref_{dim}d")
}
/// The gather kernel's name.
pub fn gather_name(dim: usize) -> String {
    format!("ptap_fem_gather_{dim}d")
}

const PRELUDE: &str = "typedef unsigned int u32;\ntypedef unsigned long long u64;\n";

/// A C literal that parses to exactly `v` (Rust's shortest round-trip form).
fn lit(v: f64) -> String {
    let s = format!("{v:?}");
    if s.contains('.') || s.contains('e') {
        s
    } else {
        format!("{s}.0")
    }
}

/// The Q2 element-stiffness kernel: `kref` gets the `n x n` row-major
/// `dim x dim` blocks of the unit-modulus stiffness (`n = 3^dim`), laid out as
/// `ptap_fem::ElementStiffness::blocks`.
fn kref_kernel(out: &mut String, dim: usize) -> KernelEntry {
    use ParamTy::*;
    let n = 3usize.pow(dim as u32);
    let bb = dim * dim;
    let e = KernelEntry {
        name: kref_name(dim),
        params: vec![
            p("kref", PtrMutF64),
            p("hx", F64),
            p("hy", F64),
            p("hz", F64),
            p("nu", F64),
        ],
        doc: format!(
            "unit-modulus Q2 stiffness, {dim}D, {n} nodes, {n}-point Gauss rule; one thread per node pair (hz unused in 2D)"
        ),
    };
    e.write_signature(out, " {");
    let hs = ["hx", "hy", "hz"];
    let pow3: Vec<String> = (0..dim)
        .map(|axis| 3usize.pow((dim - 1 - axis) as u32).to_string())
        .collect();
    writeln!(
        out,
        "  u32 t = blockIdx.x * blockDim.x + threadIdx.x;\n  if (t >= {nn}u) return;\n  \
         u32 a = t / {n}u, b = t % {n}u;\n  \
         const double gp[3] = {{{m}, 0.0, {g}}};\n  \
         const double gw[3] = {{{w0}, {w1}, {w0}}};\n  \
         const u32 p3[{dim}] = {{{p3}}};\n  \
         const double h[{dim}] = {{{h}}};\n  \
         double mu = 1.0 / (2.0 * (1.0 + nu));\n  \
         double lambda = (1.0 * nu) / ((1.0 + nu) * (1.0 - 2.0 * nu));\n  \
         double det = 1.0;\n  for (u32 c = 0; c < {dim}; ++c) det = det * h[c];\n  det = det / {cells};\n  \
         double acc[{bb}];\n  for (u32 i = 0; i < {bb}; ++i) acc[i] = 0.0;\n  \
         u32 da[{dim}], db[{dim}];\n  \
         for (u32 ax = 0; ax < {dim}; ++ax) {{ da[ax] = (a / p3[ax]) % 3u; db[ax] = (b / p3[ax]) % 3u; }}",
        nn = n * n,
        m = lit(-GAUSS3),
        g = lit(GAUSS3),
        w0 = lit(5.0 / 9.0),
        w1 = lit(8.0 / 9.0),
        p3 = pow3.join(", "),
        h = hs[..dim].join(", "),
        cells = lit((1usize << dim) as f64),
    )
    .unwrap();
    writeln!(
        out,
        "  for (u32 q = 0; q < {n}u; ++q) {{\n    \
         double sh[{dim}][3], dv[{dim}][3];\n    double w = 1.0;\n    \
         for (u32 ax = 0; ax < {dim}; ++ax) {{\n      \
           u32 dq = (q / p3[ax]) % 3u;\n      double x = gp[dq];\n      \
           w = w * gw[dq];\n      \
           sh[ax][0] = 0.5 * x * (x - 1.0); sh[ax][1] = 1.0 - x * x; sh[ax][2] = 0.5 * x * (x + 1.0);\n      \
           dv[ax][0] = x - 0.5; dv[ax][1] = -2.0 * x; dv[ax][2] = x + 0.5;\n    }}\n    \
         w = w * det;\n    \
         double ga[{dim}], gb[{dim}];\n    \
         for (u32 c = 0; c < {dim}; ++c) {{\n      \
           double va = c == 0 ? dv[0][da[0]] : sh[0][da[0]];\n      \
           double vb = c == 0 ? dv[0][db[0]] : sh[0][db[0]];\n      \
           for (u32 ax = 1; ax < {dim}; ++ax) {{\n        \
             va = va * (ax == c ? dv[ax][da[ax]] : sh[ax][da[ax]]);\n        \
             vb = vb * (ax == c ? dv[ax][db[ax]] : sh[ax][db[ax]]);\n      }}\n      \
           ga[c] = va * 2.0 / h[c];\n      gb[c] = vb * 2.0 / h[c];\n    }}\n    \
         double dot = ga[0] * gb[0];\n    for (u32 c = 1; c < {dim}; ++c) dot = dot + ga[c] * gb[c];\n    \
         for (u32 i = 0; i < {dim}; ++i) {{\n      for (u32 j = 0; j < {dim}; ++j) {{\n        \
           double diag = i == j ? mu * dot : 0.0;\n        \
           acc[i * {dim} + j] += w * (diag + mu * ga[j] * gb[i] + lambda * ga[i] * gb[j]);\n      }}\n    }}\n  }}\n  \
         double* out = kref + (u64)t * {bb};\n  for (u32 i = 0; i < {bb}; ++i) out[i] = acc[i];\n}}\n"
    )
    .unwrap();
    e
}

/// The row-owner gather: `av` (the block-CSR values of rows `row0..row_end`
/// of the assembler's pattern, `dim x dim` blocks, from that range's first
/// block on) gets `sum_e E_e K_ref` row by row. A rank's slab writes its own
/// rows straight into its local values; the whole pattern is `0..nrows`.
///
/// `inc_ptr`/`inc` are each block row's element incidence (`e * npe + a`) in
/// colour order, `emap` the element map (`NONE = 0xffffffff` for a dropped
/// coupling), `rp` the pattern's row pointers. Dynamic shared memory:
/// [`GATHER_WARPS`] stages of `stage_len >= max row blocks * dim^2` doubles.
fn gather_kernel(out: &mut String, dim: usize) -> KernelEntry {
    use ParamTy::*;
    let npe = 3usize.pow(dim as u32);
    assert!(npe <= 32, "one lane per element node");
    let bb = dim * dim;
    // A node lies in at most 2^dim elements of a box mesh: one chunk per row.
    let max_inc = 1usize << dim;
    let e = KernelEntry {
        name: gather_name(dim),
        params: vec![
            p("kref", PtrF64),
            p("modulus", PtrF64),
            p("emap", PtrU32),
            p("inc_ptr", PtrU32),
            p("inc", PtrU32),
            p("rp", PtrU32),
            p("av", PtrMutF64),
            p("row0", U32),
            p("row_end", U32),
            p("stage_len", U32),
        ],
        doc: format!(
            "row-owner gather of E_e K_ref into {dim}x{dim}-block CSR values of rows row0..row_end (written \
             from av, block rp[row0] first), one warp per block row, {GATHER_WARPS} warps per block, rows staged \
             in shared memory"
        ),
    };
    e.write_signature(out, " {");
    writeln!(
        out,
        "  extern __shared__ double stage_all[];\n  \
         u32 wl = threadIdx.x >> 5, lane = threadIdx.x & 31u;\n  \
         u32 r = row0 + blockIdx.x * {GATHER_WARPS}u + wl;\n  if (r >= row_end) return;\n  \
         double* stage = stage_all + (u64)wl * stage_len;\n  \
         u32 b0 = rp[r];\n  u32 nv = (rp[r + 1] - b0) * {bb}u;\n  \
         u32 i0 = inc_ptr[r], cnt = inc_ptr[r + 1] - i0;\n  \
         for (u32 i = lane; i < nv; i += 32u) stage[i] = 0.0;\n  __syncwarp();\n  \
         for (u32 c0 = 0; c0 < cnt; c0 += {mi}u) {{\n    \
           u32 m = cnt - c0 < {mi}u ? cnt - c0 : {mi}u;\n    \
           u32 eas[{mi}], blks[{mi}];\n    double ss[{mi}];\n    \
           // All loads of the chunk first (independent), then the adds in order.\n    \
           #pragma unroll\n    for (u32 t = 0; t < {mi}u; ++t) eas[t] = t < m ? __ldg(inc + i0 + c0 + t) : 0u;\n    \
           #pragma unroll\n    for (u32 t = 0; t < {mi}u; ++t) {{\n      \
             ss[t] = t < m ? __ldg(modulus + eas[t] / {npe}u) : 0.0;\n      \
             blks[t] = t < m && lane < {npe}u ? __ldg(emap + (u64)eas[t] * {npe}u + lane) : 0xffffffffu;\n    }}\n    \
           #pragma unroll\n    for (u32 t = 0; t < {mi}u; ++t) {{\n      \
             if (t < m) {{\n        \
               u32 blk = blks[t];\n        \
               if (blk != 0xffffffffu) {{\n          \
                 double s = ss[t];\n          \
                 double* d = stage + (blk - b0) * {bb}u;\n          \
                 const double* k = kref + ((eas[t] % {npe}u) * {npe}u + lane) * {bb}u;",
        mi = max_inc
    )
    .unwrap();
    for ij in 0..bb {
        writeln!(out, "          d[{ij}] += s * __ldg(k + {ij});").unwrap();
    }
    writeln!(
        out,
        "        }}\n      }}\n      __syncwarp();\n    }}\n  }}\n  \
         double* o = av + (u64)(b0 - rp[row0]) * {bb}u;\n  \
         for (u32 i = lane; i < nv; i += 32u) o[i] = stage[i];\n}}\n"
    )
    .unwrap();
    e
}

/// The FEM module for `dim` (2 or 3): [`kref_name`] and [`gather_name`].
pub fn fem_module(dim: usize) -> CudaModule {
    assert!(dim == 2 || dim == 3, "dimension {dim}");
    let mut src = String::from(PRELUDE);
    let entries = vec![kref_kernel(&mut src, dim), gather_kernel(&mut src, dim)];
    CudaModule {
        name: fem_module_name(dim),
        source: src,
        entries,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn module_declares_its_entries() {
        for dim in [2, 3] {
            let m = fem_module(dim);
            for e in &m.entries {
                assert!(m.source.contains(&format!("void {}(", e.name)), "{}", e.name);
            }
            assert_eq!(m.entries.len(), 2);
            // Balanced braces: a cheap check that the emitted C is well formed.
            let open = m.source.matches('{').count();
            assert_eq!(open, m.source.matches('}').count());
        }
    }

    #[test]
    fn literals_round_trip() {
        for v in [GAUSS3, -GAUSS3, 5.0 / 9.0, 8.0 / 9.0, 8.0, 4.0] {
            assert_eq!(lit(v).parse::<f64>().unwrap().to_bits(), v.to_bits());
        }
        assert_eq!(lit(8.0), "8.0");
    }
}
