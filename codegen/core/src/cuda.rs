//! CUDA C for the basic block operations of one declared set: block SpMV,
//! the point-block Jacobi (Chebyshev) update, and the two stages of the
//! two-pass product (V0) with its `R = P^T` gather.
//!
//! One `extern "C"` entry point per shape, named `ptap_<op>_<shape>`; blocks are
//! row-major doubles, block row pointers and column indices `unsigned int` (as
//! the GPU executor's families in [`crate::gpu`]). Each output value is summed
//! in the CPU's order; NVRTC contracts `a * b + c` into FMA unless compiled
//! with `--fmad=false`, so results match the CPU to rounding, bitwise only then.
use crate::entry::{param as p, CudaModule, KernelEntry, ParamTy};
use crate::shape::ShapeSet;
use std::fmt::Write;

/// `ptap_bsr_spmv_RxC`.
pub fn spmv_name(r: usize, c: usize) -> String {
    format!("ptap_bsr_spmv_{r}x{c}")
}
/// `ptap_pbj_update_BxB`.
pub fn pbj_update_name(b: usize) -> String {
    format!("ptap_pbj_update_{b}x{b}")
}
/// `ptap_two_pass_gather_r_BFxBC`.
pub fn gather_r_name(bf: usize, bc: usize) -> String {
    format!("ptap_two_pass_gather_r_{bf}x{bc}")
}
/// `ptap_two_pass_ap_BFxBC`.
pub fn ap_name(bf: usize, bc: usize) -> String {
    format!("ptap_two_pass_ap_{bf}x{bc}")
}
/// `ptap_two_pass_rw_BFxBC`.
pub fn rw_name(bf: usize, bc: usize) -> String {
    format!("ptap_two_pass_rw_{bf}x{bc}")
}

/// `y = A x + beta y` (`beta == 0` overwrites), one thread per block row.
fn spmv(out: &mut String, r: usize, c: usize) -> KernelEntry {
    use ParamTy::*;
    let e = KernelEntry {
        name: spmv_name(r, c),
        params: vec![
            p("nrows", U32),
            p("row_ptr", PtrU32),
            p("col_idx", PtrU32),
            p("vals", PtrF64),
            p("x", PtrF64),
            p("beta", F64),
            p("y", PtrMutF64),
        ],
        doc: format!("block SpMV y = A x + beta y with {r}x{c} blocks; one thread per block row"),
    };
    e.write_signature(out, "\n{");
    writeln!(
        out,
        "    const unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i >= nrows) return;"
    )
    .unwrap();
    for q in 0..r {
        writeln!(out, "    double acc{q} = 0.0;").unwrap();
    }
    writeln!(out, "    for (unsigned int k = row_ptr[i]; k < row_ptr[i + 1]; ++k) {{").unwrap();
    writeln!(
        out,
        "        const double* a = vals + (unsigned long long)k * {};\n        \
         const double* xj = x + (unsigned long long)col_idx[k] * {c};",
        r * c
    )
    .unwrap();
    for q in 0..r {
        let terms: Vec<String> = (0..c).map(|j| format!("a[{}] * xj[{j}]", q * c + j)).collect();
        writeln!(out, "        acc{q} += {};", terms.join(" + ")).unwrap();
    }
    writeln!(out, "    }}\n    double* yi = y + (unsigned long long)i * {r};").unwrap();
    writeln!(out, "    if (beta == 0.0) {{").unwrap();
    for q in 0..r {
        writeln!(out, "        yi[{q}] = acc{q};").unwrap();
    }
    writeln!(out, "    }} else {{").unwrap();
    for q in 0..r {
        writeln!(out, "        yi[{q}] = beta * yi[{q}] + acc{q};").unwrap();
    }
    writeln!(out, "    }}\n}}\n").unwrap();
    e
}

/// `x += alpha D^-1 r + beta t` per block row (`t` unread when `beta == 0`).
fn pbj_update(out: &mut String, b: usize) -> KernelEntry {
    use ParamTy::*;
    let e = KernelEntry {
        name: pbj_update_name(b),
        params: vec![
            p("nrows", U32),
            p("dinv", PtrF64),
            p("alpha", F64),
            p("r", PtrF64),
            p("beta", F64),
            p("t", PtrF64),
            p("x", PtrMutF64),
        ],
        doc: format!("point-block Jacobi / Chebyshev update x += alpha D^-1 r + beta t, {b}x{b} blocks; one thread per block row"),
    };
    e.write_signature(out, "\n{");
    writeln!(
        out,
        "    const unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i >= nrows) return;\n    \
         const double* d = dinv + (unsigned long long)i * {};\n    \
         const unsigned long long o = (unsigned long long)i * {b};",
        b * b
    )
    .unwrap();
    for q in 0..b {
        writeln!(out, "    const double r{q} = r[o + {q}];").unwrap();
    }
    for q in 0..b {
        let terms: Vec<String> = (0..b).map(|j| format!("d[{}] * r{j}", q * b + j)).collect();
        writeln!(out, "    const double y{q} = {};", terms.join(" + ")).unwrap();
    }
    for q in 0..b {
        writeln!(
            out,
            "    x[o + {q}] += alpha * y{q} + (beta != 0.0 ? beta * t[o + {q}] : 0.0);"
        )
        .unwrap();
    }
    writeln!(out, "}}\n").unwrap();
    e
}

/// `R = P^T`: block `b` of `R` is the transpose of block `r_source[b]` of `P`.
fn gather_r(out: &mut String, bf: usize, bc: usize) -> KernelEntry {
    use ParamTy::*;
    let e = KernelEntry {
        name: gather_r_name(bf, bc),
        params: vec![
            p("nblocks", U32),
            p("r_source", PtrU32),
            p("p_vals", PtrF64),
            p("r_vals", PtrMutF64),
        ],
        doc: format!("two-pass R = P^T as a gather of transposed {bf}x{bc} blocks; one thread per block of R"),
    };
    e.write_signature(out, "\n{");
    writeln!(
        out,
        "    const unsigned int b = blockIdx.x * blockDim.x + threadIdx.x;\n    if (b >= nblocks) return;\n    \
         const double* s = p_vals + (unsigned long long)r_source[b] * {l};\n    \
         double* d = r_vals + (unsigned long long)b * {l};",
        l = bf * bc
    )
    .unwrap();
    for i in 0..bf {
        for j in 0..bc {
            writeln!(out, "    d[{}] = s[{}];", j * bf + i, i * bc + j).unwrap();
        }
    }
    writeln!(out, "}}\n").unwrap();
    e
}

/// One row-owner stage `C = X Y` of the two-pass product: thread `t` owns
/// column `t % n` of every block of output row `t / n`, zeroes it, and adds
/// `X(i, l) Y(l, j)` over `X`'s row then `Y`'s row `l`, as the CPU's V0. The
/// slot of column `j` in the output row is found by binary search (V0's
/// schedule holds patterns only; the families of [`crate::gpu`] replay
/// precomputed slots instead).
fn row_owner(
    out: &mut String,
    name: String,
    doc: String,
    (m, k, n): (usize, usize, usize),
    xs: &str,
    ys: &str,
    cs: &str,
) -> KernelEntry {
    use ParamTy::*;
    let e = KernelEntry {
        name,
        params: vec![
            p("nrows", U32),
            p(&format!("{xs}_row_ptr"), PtrU32),
            p(&format!("{xs}_col_idx"), PtrU32),
            p(&format!("{xs}_vals"), PtrF64),
            p(&format!("{ys}_row_ptr"), PtrU32),
            p(&format!("{ys}_col_idx"), PtrU32),
            p(&format!("{ys}_vals"), PtrF64),
            p(&format!("{cs}_row_ptr"), PtrU32),
            p(&format!("{cs}_col_idx"), PtrU32),
            p(&format!("{cs}_vals"), PtrMutF64),
        ],
        doc,
    };
    e.write_signature(out, "\n{");
    writeln!(
        out,
        "    const unsigned int t = blockIdx.x * blockDim.x + threadIdx.x;\n    \
         if (t >= nrows * {n}u) return;\n    \
         const unsigned int i = t / {n}u, q = t % {n}u;\n    \
         const unsigned int c0 = {cs}_row_ptr[i], c1 = {cs}_row_ptr[i + 1];\n    \
         for (unsigned int s = c0; s < c1; ++s) {{"
    )
    .unwrap();
    for r in 0..m {
        writeln!(
            out,
            "        {cs}_vals[(unsigned long long)s * {} + {} + q] = 0.0;",
            m * n,
            r * n
        )
        .unwrap();
    }
    writeln!(
        out,
        "    }}\n    for (unsigned int kx = {xs}_row_ptr[i]; kx < {xs}_row_ptr[i + 1]; ++kx) {{\n        \
         const unsigned int l = {xs}_col_idx[kx];\n        \
         const double* xb = {xs}_vals + (unsigned long long)kx * {};",
        m * k
    )
    .unwrap();
    writeln!(
        out,
        "        for (unsigned int ky = {ys}_row_ptr[l]; ky < {ys}_row_ptr[l + 1]; ++ky) {{"
    )
    .unwrap();
    writeln!(
        out,
        "            const unsigned int j = {ys}_col_idx[ky];\n            \
         unsigned int lo = c0, hi = c1;\n            \
         while (lo < hi) {{\n                const unsigned int mid = (lo + hi) >> 1;\n                \
         if ({cs}_col_idx[mid] < j) lo = mid + 1; else hi = mid;\n            }}\n            \
         const double* yb = {ys}_vals + (unsigned long long)ky * {} + q;\n            \
         double* cb = {cs}_vals + (unsigned long long)lo * {} + q;",
        k * n,
        m * n
    )
    .unwrap();
    for kk in 0..k {
        writeln!(out, "            const double y{kk} = yb[{}];", kk * n).unwrap();
    }
    for r in 0..m {
        let mut s = format!("cb[{}]", r * n);
        for kk in 0..k {
            s = format!("{s} + xb[{}] * y{kk}", r * k + kk);
        }
        writeln!(out, "            cb[{}] = {s};", r * n).unwrap();
    }
    writeln!(out, "        }}\n    }}\n}}\n").unwrap();
    e
}

/// The set's module: SpMV for every block shape, the Jacobi update for every
/// square block, and per product `(bf, bc)` the `R` gather and both stages.
pub fn module(set: &ShapeSet) -> CudaModule {
    let mut src = format!(
        "// Generated by ptap-codegen-core from `{}`; do not edit.\n\
         // Row-major f64 blocks; block row pointers and column indices are unsigned int.\n\n",
        set.declaration()
    );
    let mut entries = Vec::new();
    for (r, c) in set.block_shapes() {
        entries.push(spmv(&mut src, r, c));
    }
    for b in set.square_blocks() {
        entries.push(pbj_update(&mut src, b));
    }
    for (bf, bc) in set.products() {
        entries.push(gather_r(&mut src, bf, bc));
        entries.push(row_owner(
            &mut src,
            ap_name(bf, bc),
            format!("two-pass stage W = A P ({bf}x{bf} by {bf}x{bc}); thread t owns column t % {bc} of W's block row t / {bc}"),
            (bf, bf, bc),
            "a",
            "p",
            "w",
        ));
        entries.push(row_owner(
            &mut src,
            rw_name(bf, bc),
            format!("two-pass stage A_c = R W ({bc}x{bf} by {bf}x{bc}); thread t owns column t % {bc} of A_c's block row t / {bc}"),
            (bc, bf, bc),
            "r",
            "w",
            "c",
        ));
    }
    CudaModule {
        name: format!("ptap_{}", set.stem()),
        source: src,
        entries,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn module_defines_one_entry_per_operation_and_shape() {
        let m = module(&ShapeSet { bf: 3, bc: 6 });
        let names: Vec<&str> = m.entries.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "ptap_bsr_spmv_3x3",
                "ptap_bsr_spmv_3x6",
                "ptap_bsr_spmv_6x3",
                "ptap_bsr_spmv_6x6",
                "ptap_pbj_update_3x3",
                "ptap_pbj_update_6x6",
                "ptap_two_pass_gather_r_3x6",
                "ptap_two_pass_ap_3x6",
                "ptap_two_pass_rw_3x6",
                "ptap_two_pass_gather_r_6x6",
                "ptap_two_pass_ap_6x6",
                "ptap_two_pass_rw_6x6",
            ]
        );
        assert_eq!(m.name, "ptap_3x3_3x6_6x6");
        for e in &m.entries {
            assert_eq!(m.source.matches(&format!("void {}(", e.name)).count(), 1, "{}", e.name);
        }
        assert_eq!(m.source.matches('{').count(), m.source.matches('}').count());
    }

    #[test]
    fn stages_accumulate_in_the_cpu_order() {
        let m = module(&ShapeSet { bf: 2, bc: 3 });
        // W = A P, 2x2 by 2x3: row 1 of the block adds a(1,0) y0 then a(1,1) y1.
        assert!(
            m.source.contains("cb[3] = cb[3] + xb[2] * y0 + xb[3] * y1;"),
            "{}",
            m.source
        );
        // The 3x3 spmv row 2 sums a[6..9].
        assert!(m.source.contains("acc2 += a[6] * xj[0] + a[7] * xj[1] + a[8] * xj[2];"));
    }
}
