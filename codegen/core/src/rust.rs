//! Rust CPU kernels, fully unrolled per block shape.
//!
//! The emitted items implement the traits of `ptap_kernels` (paths are
//! absolute, `::ptap_kernels::..`), so the same text serves the shipped crate
//! and any user crate that declares its own shapes.
//!
//! Accumulation order (the contract every bitwise-V0 variant relies on): an
//! output entry `c(i, j)` receives `x(i, k) y(k, j)` for `k = 0, 1, ..` one term
//! at a time, `((c + x0 y0) + x1 y1) + ..`, exactly the loop nest of
//! `ptap_sparse::dense::gemm_acc` and `gemm_tn_acc`. Rust never contracts `a * b + c`
//! into a fused multiply-add, so the unrolled text rounds like the loops.
use crate::shape::ShapeSet;
use std::fmt::Write;

/// Where `x(i, k)` of an `m x k` operand lives: row-major, or stored `k x m`
/// and read transposed.
#[derive(Clone, Copy)]
enum Layout {
    Normal,
    Transposed,
}

/// `x(i, k)`'s index in an `m x kk` operand.
fn at(layout: Layout, m: usize, kk: usize, i: usize, k: usize) -> usize {
    match layout {
        Layout::Normal => i * kk + k,
        Layout::Transposed => k * m + i,
    }
}

/// `c (m x n) += x (m x k) y (k x n)`.
fn gemm(out: &mut String, doc: &str, name: &str, m: usize, k: usize, n: usize, layout: Layout) {
    writeln!(out, "    /// {doc}").unwrap();
    writeln!(out, "    #[inline(always)]").unwrap();
    writeln!(out, "    fn {name}(x: &[f64], y: &[f64], c: &mut [f64]) {{").unwrap();
    writeln!(
        out,
        "        let (x, y, c) = (&x[..{}], &y[..{}], &mut c[..{}]);",
        m * k,
        k * n,
        m * n
    )
    .unwrap();
    for i in 0..m {
        for j in 0..n {
            let terms: Vec<String> = (0..k)
                .map(|q| format!("x[{}] * y[{}]", at(layout, m, k, i, q), q * n + j))
                .collect();
            writeln!(out, "        c[{0}] = c[{0}] + {1};", i * n + j, terms.join(" + ")).unwrap();
        }
    }
    writeln!(out, "    }}").unwrap();
}

/// `col (m) += (x y)(:, j)`: the column-split lane's share of one product.
fn gemm_col(out: &mut String, doc: &str, name: &str, m: usize, k: usize, n: usize, layout: Layout) {
    writeln!(out, "    /// {doc}").unwrap();
    writeln!(out, "    #[inline(always)]").unwrap();
    writeln!(out, "    fn {name}(x: &[f64], y: &[f64], j: usize, col: &mut [f64]) {{").unwrap();
    // One bounds check for the column: y[q * n + j] for q < k lies in y[j..j + (k-1) n + 1].
    writeln!(
        out,
        "        let (x, y, col) = (&x[..{}], &y[j..j + {}], &mut col[..{m}]);",
        m * k,
        (k - 1) * n + 1
    )
    .unwrap();
    for i in 0..m {
        let terms: Vec<String> = (0..k)
            .map(|q| format!("x[{}] * y[{}]", at(layout, m, k, i, q), q * n))
            .collect();
        writeln!(out, "        col[{i}] = col[{i}] + {};", terms.join(" + ")).unwrap();
    }
    writeln!(out, "    }}").unwrap();
}

fn block_type(r: usize, c: usize) -> String {
    format!("Block{r}x{c}")
}

fn product_type(bf: usize, bc: usize) -> String {
    format!("Product{bf}x{bc}")
}

/// `BlockKernels` (and `SquareBlockKernels` when square) for `r x c` blocks.
fn block(out: &mut String, r: usize, c: usize) {
    let ty = block_type(r, c);
    writeln!(out, "/// Kernels of `{r}x{c}` blocks.").unwrap();
    writeln!(out, "#[derive(Clone, Copy, Debug, Default)]\npub struct {ty};\n").unwrap();
    writeln!(out, "impl ::ptap_kernels::BlockKernels for {ty} {{").unwrap();
    writeln!(out, "    const R: usize = {r};\n    const C: usize = {c};").unwrap();
    writeln!(out, "    type Block = [f64; {}];", r * c).unwrap();
    writeln!(out, "    type Rows = [f64; {r}];").unwrap();
    // gemv: row sums first, then one add onto y (the order of dense::gemv_acc).
    writeln!(
        out,
        "    /// `y ({r}) += a x`, each row summed left to right before the add."
    )
    .unwrap();
    writeln!(out, "    #[inline(always)]").unwrap();
    writeln!(out, "    fn gemv_acc(a: &[f64], x: &[f64], y: &mut [f64]) {{").unwrap();
    writeln!(
        out,
        "        let (a, x, y) = (&a[..{}], &x[..{c}], &mut y[..{r}]);",
        r * c
    )
    .unwrap();
    for i in 0..r {
        let terms: Vec<String> = (0..c).map(|j| format!("a[{}] * x[{j}]", i * c + j)).collect();
        writeln!(out, "        y[{i}] += {};", terms.join(" + ")).unwrap();
    }
    writeln!(out, "    }}").unwrap();
    writeln!(out, "    /// `out ({c}x{r}) = a^T`.").unwrap();
    writeln!(out, "    #[inline(always)]").unwrap();
    writeln!(out, "    fn transpose(a: &[f64], out: &mut [f64]) {{").unwrap();
    writeln!(out, "        let (a, out) = (&a[..{0}], &mut out[..{0}]);", r * c).unwrap();
    for i in 0..r {
        for j in 0..c {
            writeln!(out, "        out[{}] = a[{}];", j * r + i, i * c + j).unwrap();
        }
    }
    writeln!(out, "    }}\n}}\n").unwrap();
    if r == c {
        square(out, r);
    }
}

/// Point-block Jacobi: inverse of a diagonal block and the Chebyshev update.
fn square(out: &mut String, b: usize) {
    let ty = block_type(b, b);
    let bb = b * b;
    writeln!(out, "impl ::ptap_kernels::SquareBlockKernels for {ty} {{").unwrap();
    writeln!(
        out,
        "    /// `x ({b}) += alpha D^-1 r + beta t` for one block row (`t` unread when `beta == 0`)."
    )
    .unwrap();
    writeln!(out, "    #[inline(always)]").unwrap();
    writeln!(
        out,
        "    fn chebyshev_update(dinv: &[f64], alpha: f64, r: &[f64], beta: f64, t: &[f64], x: &mut [f64]) {{"
    )
    .unwrap();
    writeln!(
        out,
        "        let (d, r, t, x) = (&dinv[..{bb}], &r[..{b}], &t[..{b}], &mut x[..{b}]);"
    )
    .unwrap();
    writeln!(out, "        let with_t = beta != 0.0;").unwrap();
    for i in 0..b {
        let terms: Vec<String> = (0..b).map(|j| format!("d[{}] * r[{j}]", i * b + j)).collect();
        writeln!(out, "        let y{i} = 0.0 + ({});", terms.join(" + ")).unwrap();
    }
    for i in 0..b {
        writeln!(
            out,
            "        x[{i}] += alpha * y{i} + if with_t {{ beta * t[{i}] }} else {{ 0.0 }};"
        )
        .unwrap();
    }
    writeln!(out, "    }}").unwrap();
    // The pivot search is data dependent, so the inverse is emitted with
    // constant trip counts (LLVM unrolls them) rather than as straight-line code;
    // it runs once per refresh, not in the solve.
    writeln!(
        out,
        "    /// In-place inverse by Gauss-Jordan with partial pivoting (pivots below `1e-14` times the\n    \
         /// largest entry are singular), as `ptap_sparse::dense::invert_in_place`."
    )
    .unwrap();
    write!(
        out,
        r#"    fn invert(a: &mut [f64]) -> Result<(), ::ptap_kernels::SingularBlock> {{
        const N: usize = {b};
        let a = &mut a[..N * N];
        let scale = a.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        if !scale.is_finite() {{
            return Err(::ptap_kernels::SingularBlock::NotFinite {{ n: N }});
        }}
        if scale == 0.0 {{
            return Err(::ptap_kernels::SingularBlock::Zero {{ n: N }});
        }}
        let mut perm = [0usize; N];
        for (i, p) in perm.iter_mut().enumerate() {{
            *p = i;
        }}
        for col in 0..N {{
            let (mut piv, mut best) = (col, a[col * N + col].abs());
            for r in col + 1..N {{
                if a[r * N + col].abs() > best {{
                    best = a[r * N + col].abs();
                    piv = r;
                }}
            }}
            if best <= 1e-14 * scale {{
                return Err(::ptap_kernels::SingularBlock::Pivot {{ n: N, pivot: best, column: col }});
            }}
            if piv != col {{
                for j in 0..N {{
                    a.swap(piv * N + j, col * N + j);
                }}
                perm.swap(piv, col);
            }}
            let inv = 1.0 / a[col * N + col];
            a[col * N + col] = 1.0;
            for j in 0..N {{
                a[col * N + j] *= inv;
            }}
            for r in 0..N {{
                if r != col {{
                    let f = a[r * N + col];
                    if f != 0.0 {{
                        a[r * N + col] = 0.0;
                        for j in 0..N {{
                            a[r * N + j] -= f * a[col * N + j];
                        }}
                    }}
                }}
            }}
        }}
        // Row swaps on the input are column swaps on the inverse.
        let mut cols = [0usize; N];
        for (i, &p) in perm.iter().enumerate() {{
            cols[p] = i;
        }}
        let mut tmp = [0.0f64; N];
        for r in 0..N {{
            tmp.copy_from_slice(&a[r * N..(r + 1) * N]);
            for j in 0..N {{
                a[r * N + j] = tmp[cols[j]];
            }}
        }}
        Ok(())
    }}
}}

"#
    )
    .unwrap();
}

/// `ProductKernels` for the Galerkin product with `bf x bf` fine and `bc x bc` coarse blocks.
fn product(out: &mut String, bf: usize, bc: usize) {
    use Layout::*;
    let ty = product_type(bf, bc);
    writeln!(
        out,
        "/// Block contractions of `P^T A P` with `{bf}x{bf}` fine, `{bf}x{bc}` prolongator and `{bc}x{bc}` coarse blocks."
    )
    .unwrap();
    writeln!(out, "#[derive(Clone, Copy, Debug, Default)]\npub struct {ty};\n").unwrap();
    writeln!(out, "impl ::ptap_kernels::ProductKernels for {ty} {{").unwrap();
    writeln!(out, "    const BF: usize = {bf};\n    const BC: usize = {bc};").unwrap();
    writeln!(out, "    type FineCoarse = [f64; {}];", bf * bc).unwrap();
    writeln!(out, "    type CoarseCoarse = [f64; {}];", bc * bc).unwrap();
    gemm(
        out,
        &format!("`w ({bf}x{bc}) += a ({bf}x{bf}) p ({bf}x{bc})`: `W = A P`."),
        "ap_acc",
        bf,
        bf,
        bc,
        Normal,
    );
    gemm(
        out,
        &format!("`c ({bc}x{bc}) += r ({bc}x{bf}) w ({bf}x{bc})`: `A_c = R W`."),
        "rw_acc",
        bc,
        bf,
        bc,
        Normal,
    );
    gemm(
        out,
        &format!("`c ({bc}x{bc}) += p^T w`, `p` stored `{bf}x{bc}`: `A_c = P^T W` without `R`."),
        "ptw_acc",
        bc,
        bf,
        bc,
        Transposed,
    );
    gemm(
        out,
        &format!("`t ({bc}x{bf}) += p^T a`, `p` stored `{bf}x{bc}`: the fused product's `P^T A`."),
        "pta_acc",
        bc,
        bf,
        bf,
        Transposed,
    );
    writeln!(out, "    /// `r ({bc}x{bf}) = p^T`.\n    #[inline(always)]").unwrap();
    writeln!(out, "    fn p_transpose(p: &[f64], r: &mut [f64]) {{").unwrap();
    writeln!(
        out,
        "        <{} as ::ptap_kernels::BlockKernels>::transpose(p, r)\n    }}",
        block_type(bf, bc)
    )
    .unwrap();
    gemm_col(
        out,
        &format!("`col ({bf}) += (a p)(:, j)`."),
        "ap_col_acc",
        bf,
        bf,
        bc,
        Normal,
    );
    gemm_col(
        out,
        &format!("`col ({bc}) += (p^T w)(:, j)`."),
        "ptw_col_acc",
        bc,
        bf,
        bc,
        Transposed,
    );
    writeln!(out, "}}\n").unwrap();
}

/// `CUDA_SOURCE`, `CUDA_ENTRIES` and their doc lines.
fn cuda_items(out: &mut String, cuda: &crate::CudaModule, what: &str) {
    writeln!(out, "/// CUDA C of {what} (`{}.cu`).", cuda.name).unwrap();
    writeln!(out, "pub const CUDA_SOURCE: &str = {:?};\n", cuda.source).unwrap();
    let names: Vec<String> = cuda.entries.iter().map(|e| format!("{:?}", e.name)).collect();
    writeln!(out, "/// The `extern \"C\"` entry points of [`CUDA_SOURCE`].").unwrap();
    writeln!(out, "pub const CUDA_ENTRIES: &[&str] = &[{}];\n", names.join(", ")).unwrap();
}

/// The items of the shape-free CUDA module (vector kernels, coarse Cholesky):
/// `CUDA_MODULE`, `CUDA_SOURCE`, `CUDA_ENTRIES` and the typed launchers.
pub fn common_body() -> String {
    let cuda = crate::gpu::common_module();
    let mut out = String::from("// Generated by ptap-codegen-core; do not edit.\n\n");
    writeln!(out, "/// File stem of [`CUDA_SOURCE`].").unwrap();
    writeln!(out, "pub const CUDA_MODULE: &str = {:?};\n", cuda.name).unwrap();
    cuda_items(
        &mut out,
        &cuda,
        "the kernels no block shape enters (vectors, fill, coarse Cholesky)",
    );
    out.push_str(&crate::launcher::launchers(&cuda));
    out
}

/// The items of a declared set's module (without the `mod` wrapper): block and
/// product kernels, the `Set` tying them together, the CUDA source the device
/// launches for the set's shapes ([`crate::gpu::set_module`]) and its typed
/// launchers.
pub fn module_body(set: &ShapeSet) -> String {
    let (bf, bc) = (set.bf, set.bc);
    let cuda = crate::gpu::set_module(*set);
    let mut out = String::new();
    writeln!(
        out,
        "// Generated by ptap-codegen-core from `{}`; do not edit.\n",
        set.declaration()
    )
    .unwrap();
    for (r, c) in set.block_shapes() {
        block(&mut out, r, c);
    }
    for (f, c) in set.products() {
        product(&mut out, f, c);
    }
    cuda_items(
        &mut out,
        &cuda,
        "the set's products (every device variant), SpMV and point-block Jacobi",
    );
    writeln!(
        out,
        "/// The declared set `{}`: what a registry needs to serve it.",
        set.declaration()
    )
    .unwrap();
    writeln!(out, "#[derive(Clone, Copy, Debug, Default)]\npub struct Set;\n").unwrap();
    writeln!(out, "impl ::ptap_kernels::KernelSet for Set {{").unwrap();
    writeln!(out, "    const BF: usize = {bf};\n    const BC: usize = {bc};").unwrap();
    writeln!(out, "    const DECLARATION: &'static str = {:?};", set.declaration()).unwrap();
    writeln!(out, "    type FineProduct = {};", product_type(bf, bc)).unwrap();
    writeln!(out, "    type CoarseProduct = {};", product_type(bc, bc)).unwrap();
    writeln!(out, "    type Fine = {};", block_type(bf, bf)).unwrap();
    writeln!(out, "    type Prolongator = {};", block_type(bf, bc)).unwrap();
    writeln!(out, "    type Restriction = {};", block_type(bc, bf)).unwrap();
    writeln!(out, "    type Coarse = {};", block_type(bc, bc)).unwrap();
    writeln!(out, "    const CUDA_MODULE: &'static str = {:?};", cuda.name).unwrap();
    writeln!(out, "    const CUDA_SOURCE: &'static str = CUDA_SOURCE;").unwrap();
    writeln!(out, "    const CUDA_ENTRIES: &'static [&'static str] = CUDA_ENTRIES;").unwrap();
    writeln!(out, "}}\n").unwrap();
    out.push_str(&crate::launcher::launchers(&cuda));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gemm_terms_follow_the_inner_index_in_order() {
        let mut s = String::new();
        gemm(&mut s, "", "f", 2, 3, 2, Layout::Normal);
        // c(1, 1) = c(1,1) + x(1,0) y(0,1) + x(1,1) y(1,1) + x(1,2) y(2,1).
        assert!(
            s.contains("c[3] = c[3] + x[3] * y[1] + x[4] * y[3] + x[5] * y[5];"),
            "{s}"
        );
        let mut t = String::new();
        gemm(&mut t, "", "f", 2, 3, 2, Layout::Transposed);
        // x stored 3x2: x(1, k) = x[k*2 + 1].
        assert!(
            t.contains("c[3] = c[3] + x[1] * y[1] + x[3] * y[3] + x[5] * y[5];"),
            "{t}"
        );
    }

    #[test]
    fn module_body_has_every_kernel_type_of_the_set() {
        let body = module_body(&ShapeSet { bf: 3, bc: 6 });
        for ty in [
            "Block3x3",
            "Block3x6",
            "Block6x3",
            "Block6x6",
            "Product3x6",
            "Product6x6",
            "pub struct Set",
        ] {
            assert!(body.contains(ty), "{ty} missing");
        }
        assert!(body.contains("impl ::ptap_kernels::SquareBlockKernels for Block6x6"));
        assert!(!body.contains("SquareBlockKernels for Block3x6"));
        let one = module_body(&ShapeSet { bf: 1, bc: 1 });
        assert_eq!(one.matches("pub struct Block").count(), 1);
        assert_eq!(one.matches("pub struct Product").count(), 1);
    }
}
