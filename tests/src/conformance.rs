//! One conformance suite for every [`Backend`]: each body below is written
//! once, generic over the backend, and compares it with the CPU reference
//! (the sequential loops, `invert_in_place`, `Cholesky`, the CPU two-pass
//! product, the CPU hierarchy, the CPU assembler). [`conformance!`](crate::conformance!) turns
//! the bodies into `#[test]`s for one backend, so adding a backend is one line
//! (Ginkgo's `..._is_equivalent_to_reference`, CubeCL's `testgen_all!`).
//!
//! What a backend promises is one table per backend, [`Conforming::promise`]:
//! bitwise where the operation keeps the reference's order and arithmetic,
//! within a stated tolerance otherwise. [`Exactness::assert_matches`] is the
//! only place a comparison is decided.
use crate::{random_block_csr, Rng};
use ptap_cuda::{Cuda, DeviceOptions, DEVICE_EXECUTORS};
use ptap_fem::device::{DeviceAssembler, Modulus};
use ptap_fem::{modulus_from_fn, BeamProblem, POISSON_RATIO};
use ptap_runtime::solver::CgWorkspace;
use ptap_runtime::{
    Backend, CgOptions, Cpu, Hierarchy, HierarchyOptions, KernelRegistry, SmootherPrecision, TwoPassExecutor,
};
use ptap_schedules::{TwoPassSchedule, Variant, VariantSchedule};
use ptap_sparse::dense::{invert_in_place, relative_frobenius, Cholesky, Dense};
use ptap_sparse::{BlockCsr, BlockPattern};
use std::sync::Arc;

/// A reordered sum of O(100) products, or the same sum with FMA contraction
/// (relative Frobenius distance).
pub const SUMS: f64 = 1e-13;
/// A dense Cholesky solve of a well-conditioned SPD matrix, factored in
/// another order (relative Frobenius distance).
pub const COARSE: f64 = 1e-11;
/// The CG solution and a V-cycle on the beam, when the operators differ in
/// the last bits (relative Frobenius distance).
pub const SOLVE: f64 = 1e-10;
/// The CG residual history `||r_k|| / ||b||`, each entry relative to itself:
/// late residuals are small differences of large numbers.
pub const HISTORY: f64 = 1e-6;
/// The Chebyshev eigen-estimates `lambda_max(D^-1 A)` (CG-Lanczos, relative).
pub const LAMBDA: f64 = 1e-8;

/// How close a backend's result must be to the reference.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Exactness {
    /// The same bits.
    Bitwise,
    /// Within this relative Frobenius distance.
    Within(f64),
}

impl Exactness {
    /// Bitwise when the operation promises it, within `tol` otherwise.
    pub fn promised(bitwise: bool, tol: f64) -> Self {
        if bitwise {
            Exactness::Bitwise
        } else {
            Exactness::Within(tol)
        }
    }

    /// The rule every comparison of the suite goes through: `got` against
    /// `want` over blocks of `block` scalars (`want.len()` for one distance
    /// over the whole array), each block within the tolerance or bitwise.
    pub fn assert_blocks_match(self, got: &[f64], want: &[f64], block: usize, what: &str) {
        assert!(
            got.len() >= want.len(),
            "{what}: {} values, want {}",
            got.len(),
            want.len()
        );
        // A backend may pad its storage; only the reference's length counts.
        let got = &got[..want.len()];
        match self {
            Exactness::Bitwise => {
                let differ = got.iter().zip(want).filter(|(x, y)| x.to_bits() != y.to_bits()).count();
                assert!(
                    differ == 0,
                    "{what}: {differ} of {} values differ in bits from the reference (relative {:e})",
                    want.len(),
                    relative_frobenius(got, want)
                );
            }
            Exactness::Within(tol) => {
                let block = block.max(1);
                let worst = got
                    .chunks(block)
                    .zip(want.chunks(block))
                    .map(|(g, w)| relative_frobenius(g, w))
                    // NaN (an unwritten slot) must fail, so do not use f64::max.
                    .fold(0.0f64, |m, e| if e.is_nan() || e > m { e } else { m });
                assert!(worst <= tol, "{what}: relative distance {worst:e} > {tol:e}");
            }
        }
    }

    /// A sum `got` against `want`, the distance taken relative to
    /// `magnitude` (`sum |terms|`): cancellation in the sum is not an error.
    pub fn assert_sum_matches(self, got: f64, want: f64, magnitude: f64, what: &str) {
        match self {
            Exactness::Bitwise => Exactness::Bitwise.assert_matches(&[got], &[want], what),
            Exactness::Within(tol) => {
                let err = (got - want).abs() / magnitude;
                assert!(
                    err <= tol,
                    "{what}: {got:e} vs {want:e}, distance {err:e} of the magnitude > {tol:e}"
                );
            }
        }
    }

    /// [`Self::assert_blocks_match`] over the whole array.
    pub fn assert_matches(self, got: &[f64], want: &[f64], what: &str) {
        self.assert_blocks_match(got, want, want.len(), what);
    }
}

/// What the suite checks a backend for, by kind of operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// `copy`, `fill`: moves, no arithmetic.
    Moves,
    /// `axpy`, `xpby` against the host expression.
    Elementwise,
    /// `dot`, `norm2` against a sequential sum (relative to `sum |x_i y_i|`).
    Reduction,
    /// SpMV, residual, the point-block Jacobi update: row sums in another order.
    RowSums,
    /// Point-block Jacobi inverses against `invert_in_place`.
    BlockInverse,
    /// The numeric Galerkin product of a variant against the CPU two-pass (V0).
    Product(Variant),
    /// The coarse factor and solve against `Cholesky`.
    CoarseSolve,
    /// A V-cycle and CG on a hierarchy of a variant's products against the CPU
    /// two-pass hierarchy.
    Solve(Variant),
    /// FEM assembly against the CPU assembler.
    Assembly,
}

/// A backend under the suite: its promises and the few things the suite needs
/// beyond [`Backend`].
pub trait Conforming: Backend {
    /// This backend's own FEM assembler (`Infallible` where it has none).
    type Assembler;
    /// The product variants this backend runs.
    fn variants(&self) -> Vec<Variant>;
    /// What `op` promises against the reference: this backend's table.
    fn promise(&self, op: Op) -> Exactness;
    /// Another backend on the same machine, for a [`Hierarchy`] to own.
    fn fresh(&self) -> Self;
    /// The assembler of `problem`'s operator, `None` where the backend
    /// assembles on the host with the reference assembler itself.
    fn assembler(&self, problem: &BeamProblem) -> Option<Self::Assembler>;
    /// The element reference stiffness the assembler integrated.
    fn reference_stiffness(&self, asm: &Self::Assembler) -> Vec<f64>;
    /// Assembles the operator for `modulus` (per element) into `a`'s values.
    fn assemble(&self, asm: &mut Self::Assembler, modulus: &[f64], a: &mut Self::Matrix);
}

impl Conforming for Cpu {
    type Assembler = std::convert::Infallible;
    fn variants(&self) -> Vec<Variant> {
        Variant::ALL.to_vec()
    }
    fn promise(&self, op: Op) -> Exactness {
        match op {
            Op::Moves | Op::Elementwise => Exactness::Bitwise,
            Op::Reduction | Op::RowSums | Op::BlockInverse => Exactness::Within(SUMS),
            // V1, V2a reassociate to (R A) P; V4 sums in atomic order.
            Op::Product(v) => Exactness::promised(v.bitwise_v0(), SUMS),
            // The backend's factor is `Cholesky::refactor` on the same dense matrix.
            Op::CoarseSolve => Exactness::Bitwise,
            // V0's coarse operators, the same kernels: the same solve.
            Op::Solve(v) => Exactness::promised(v.bitwise_v0(), SOLVE),
            // The CPU assembler is the reference; `ptap-fem`'s tests check it
            // against a sequential element-by-element assembly.
            Op::Assembly => Exactness::Bitwise,
        }
    }
    fn fresh(&self) -> Self {
        self.clone()
    }
    fn assembler(&self, _problem: &BeamProblem) -> Option<Self::Assembler> {
        None
    }
    fn reference_stiffness(&self, asm: &Self::Assembler) -> Vec<f64> {
        match *asm {}
    }
    fn assemble(&self, asm: &mut Self::Assembler, _modulus: &[f64], _a: &mut BlockCsr) {
        match *asm {}
    }
}

impl Conforming for Cuda {
    type Assembler = DeviceAssembler;
    fn variants(&self) -> Vec<Variant> {
        DEVICE_EXECUTORS.to_vec()
    }
    fn promise(&self, op: Op) -> Exactness {
        // Compiled with `--fmad=false` the device evaluates `a * b + c` as
        // written, so an operation in the reference's order gives its bits.
        let as_written = !self.device().options().fmad;
        match op {
            Op::Moves => Exactness::Bitwise,
            Op::Elementwise => Exactness::promised(as_written, SUMS),
            Op::Reduction | Op::RowSums | Op::BlockInverse => Exactness::Within(SUMS),
            // The outer-product scatter sums in atomic order, the k-split adds
            // per-k partials, the tensor core sums an MMA's four products in
            // its unit: none promises V0's bits.
            Op::Product(v) => Exactness::promised(as_written && v.bitwise_v0(), SUMS),
            Op::CoarseSolve => Exactness::Within(COARSE),
            // The merge-path SpMV sums rows in another order than the CPU's.
            Op::Solve(_) => Exactness::Within(SOLVE),
            Op::Assembly => Exactness::promised(as_written, SUMS),
        }
    }
    fn fresh(&self) -> Self {
        // The shipped sets: every shape the suite runs.
        Cuda::new(self.device()).expect("a second backend on an open device")
    }
    fn assembler(&self, problem: &BeamProblem) -> Option<DeviceAssembler> {
        let h = problem.mesh.element_size();
        Some(DeviceAssembler::new(self.device(), &problem.assembler, h, POISSON_RATIO).expect("device assembler"))
    }
    fn reference_stiffness(&self, asm: &DeviceAssembler) -> Vec<f64> {
        asm.reference_stiffness().expect("device reference stiffness")
    }
    fn assemble(&self, asm: &mut DeviceAssembler, modulus: &[f64], a: &mut ptap_cuda::CudaMatrix) {
        asm.assemble_matrix(Modulus::Host(modulus), &mut a.m)
            .expect("device assembly");
    }
}

/// The CUDA backend on a device opened with `options`, or `None` after the
/// visible `skipping: ...` line.
pub fn cuda_or_skip(options: DeviceOptions) -> Option<Cuda> {
    let dev = crate::cuda_device_or_skip(options)?;
    Some(Cuda::new(&dev).expect("the CUDA backend on an open device"))
}

/// Instantiates every body of the suite as a `#[test]` in module `$name`,
/// on the backend `$make()` returns (`None`: every test passes at once, the
/// factory having said why).
#[macro_export]
macro_rules! conformance {
    ($name:ident, $make:expr) => {
        mod $name {
            #[allow(unused_imports)]
            use super::*;
            $crate::conformance!(@bodies $make;
                vector_operations_are_equivalent_to_reference,
                spmv_and_residual_are_equivalent_to_reference,
                point_block_jacobi_is_equivalent_to_reference,
                every_product_variant_is_equivalent_to_two_pass,
                coarse_factor_and_solve_are_equivalent_to_cholesky,
                one_vcycle_is_equivalent_to_reference,
                cg_takes_the_reference_iterations_and_solution,
                f32_smoother_operators_are_equivalent_to_reference,
                f32_smoother_solve_is_equivalent_to_reference,
                assembly_is_equivalent_to_reference
            );
        }
    };
    (@bodies $make:expr; $($body:ident),*) => {
        $(
            #[test]
            fn $body() {
                if let Some(be) = ($make)() {
                    $crate::conformance::$body(&be);
                }
            }
        )*
    };
}

fn read<B: Backend>(be: &B, v: &B::Vector, n: usize) -> Vec<f64> {
    let mut out = vec![0.0; n];
    be.read(v, &mut out).unwrap();
    out
}

fn values(rng: &mut Rng, n: usize) -> Vec<f64> {
    (0..n).map(|_| rng.value()).collect()
}

/// Values spread over 16 orders of magnitude, so any change of summation
/// order shows in the bits.
fn widen(m: &mut BlockCsr, rng: &mut Rng) {
    for v in m.values_mut() {
        *v *= 10f64.powi(rng.below(17) as i32 - 8);
    }
}

/// The shapes of the shipped kernel sets: `(bf, bc)` of `bf x bf / bf x bc / bc x bc`.
fn shipped_sets() -> Vec<(usize, usize)> {
    KernelRegistry::shipped()
        .cuda_sets()
        .iter()
        .map(|s| (s.bf, s.bc))
        .collect()
}

/// The beam at `k` with a low coarsening limit, so 3x3 and 6x6 levels occur.
fn beam(k: usize) -> (BeamProblem, Hierarchy) {
    let problem = BeamProblem::build(k).unwrap();
    let mut opts = HierarchyOptions::default();
    opts.amg.coarse_eq_limit = 100;
    let h = Hierarchy::build(problem.a.clone(), &problem.near_null, 6, &opts, &mut |_| {}).unwrap();
    assert!(h.num_levels() >= 3, "k = {k}: both 3x3/3x6 and 6x6/6x6 products occur");
    (problem, h)
}

/// `y = A x`, one scalar row at a time over the stored blocks in order.
fn reference_spmv(a: &BlockCsr, x: &[f64]) -> Vec<f64> {
    let (br, bc) = a.block_shape();
    let p = a.pattern();
    let mut y = vec![0.0; a.scalar_rows()];
    for i in 0..a.nrows() {
        for r in 0..br {
            let mut s = 0.0;
            for k in p.row_range(i) {
                let j = p.col_idx()[k] as usize;
                for c in 0..bc {
                    s += a.block(k)[r * bc + c] * x[j * bc + c];
                }
            }
            y[i * br + r] = s;
        }
    }
    y
}

/// `y = x + alpha y` etc. on the host, `dot` as one sequential sum.
pub fn vector_operations_are_equivalent_to_reference<B: Conforming>(be: &B) {
    // Arrange: longer than the CPU's parallel chunks and many device blocks.
    let n = 10_007;
    let mut rng = Rng::new(17);
    let (x, y0) = (values(&mut rng, n), values(&mut rng, n));
    let dx = be.vector_from(&x).unwrap();
    let mut dy = be.vector_from(&y0).unwrap();
    let (alpha, beta) = (-0.7312, 1.3751);
    let moves = be.promise(Op::Moves);
    let elementwise = be.promise(Op::Elementwise);

    // Act + Assert: y += alpha x.
    be.axpy(alpha, &dx, &mut dy).unwrap();
    let want: Vec<f64> = y0.iter().zip(&x).map(|(y, x)| y + alpha * x).collect();
    elementwise.assert_matches(&read(be, &dy, n), &want, "axpy");
    // y = x + beta y.
    be.write(&y0, &mut dy).unwrap();
    be.xpby(&dx, beta, &mut dy).unwrap();
    let want: Vec<f64> = y0.iter().zip(&x).map(|(y, x)| x + beta * y).collect();
    elementwise.assert_matches(&read(be, &dy, n), &want, "xpby");
    // y = x, then y = value.
    be.copy(&dx, &mut dy).unwrap();
    moves.assert_matches(&read(be, &dy, n), &x, "copy");
    be.fill(&mut dy, -2.5).unwrap();
    moves.assert_matches(&read(be, &dy, n), &vec![-2.5; n], "fill");

    // Reductions, relative to the sum of magnitudes (cancellation is not an error).
    be.write(&y0, &mut dy).unwrap();
    let want: f64 = x.iter().zip(&y0).map(|(a, b)| a * b).sum();
    let scale: f64 = x.iter().zip(&y0).map(|(a, b)| (a * b).abs()).sum();
    let got = be.dot(&dx, &dy).unwrap();
    be.promise(Op::Reduction).assert_sum_matches(got, want, scale, "dot");
    assert_eq!(
        got.to_bits(),
        be.dot(&dx, &dy).unwrap().to_bits(),
        "dot is reproducible run to run"
    );
    let squares: f64 = x.iter().map(|a| a * a).sum();
    let got = be.norm2(&dx).unwrap();
    be.promise(Op::Reduction)
        .assert_sum_matches(got * got, squares, squares, "norm2 squared");
}

fn check_spmv<B: Conforming>(be: &B, m: &BlockCsr, dense: bool, what: &str) {
    let exact = be.promise(Op::RowSums);
    let (nr, nc) = (m.scalar_rows(), m.scalar_cols());
    let mut rng = Rng::new(nr as u64 * 31 + nc as u64);
    let (x, b) = (values(&mut rng, nc), values(&mut rng, nr));
    let want = if dense {
        m.to_dense().matvec(&x)
    } else {
        reference_spmv(m, &x)
    };
    let dm = be.matrix_ref(m).unwrap();
    let dx = be.vector_from(&x).unwrap();
    let db = be.vector_from(&b).unwrap();
    // Poisoned outputs: every entry must be written.
    let mut dy = be.vector_from(&vec![f64::NAN; nr]).unwrap();
    be.spmv(&dm, &dx, &mut dy).unwrap();
    let got = read(be, &dy, nr);
    exact.assert_matches(&got, &want, &format!("spmv {what}"));
    be.spmv(&dm, &dx, &mut dy).unwrap();
    Exactness::Bitwise.assert_matches(&read(be, &dy, nr), &got, &format!("spmv {what}: a second apply"));
    let mut dr = be.vector_from(&vec![f64::NAN; nr]).unwrap();
    be.residual(&dm, &dx, &db, &mut dr).unwrap();
    let want: Vec<f64> = b.iter().zip(&want).map(|(b, ax)| b - ax).collect();
    exact.assert_matches(&read(be, &dr, nr), &want, &format!("residual {what}"));
}

/// Every block shape of the shipped sets (`A`, `P`, `R = P^T`, `A_c`), long
/// rows that cross warps, short and empty rows.
pub fn spmv_and_residual_are_equivalent_to_reference<B: Conforming>(be: &B) {
    let mut rng = Rng::new(77);
    let mut shapes = Vec::new();
    for (bf, bc) in shipped_sets() {
        for s in [(bf, bf), (bf, bc), (bc, bf), (bc, bc)] {
            if !shapes.contains(&s) {
                shapes.push(s);
            }
        }
    }
    for (br, bc) in shapes {
        // Small enough for the dense reference.
        let m = random_block_csr(&mut rng, 7, 5, br, bc, 0.5, false);
        check_spmv(be, &m, true, &format!("{br}x{bc} 7x5 dense"));
        // Long rows (~100 blocks) cross several warps' ranges.
        let m = random_block_csr(&mut rng, 240, 240, br, bc, 0.4, true);
        check_spmv(be, &m, false, &format!("{br}x{bc} 240 rows density 0.4"));
        // Many short rows, some empty.
        let m = random_block_csr(&mut rng, 1500, 300, br, bc, 0.002, false);
        check_spmv(be, &m, false, &format!("{br}x{bc} 1500x300 with empty rows"));
    }
    // The beam's operators, prolongators and restrictions.
    let (_, h) = beam(2);
    for (l, lev) in h.levels().iter().enumerate() {
        check_spmv(be, &lev.a, false, &format!("beam A level {l}"));
        if let Some(t) = &lev.transfer {
            check_spmv(be, &t.p, false, &format!("beam P level {l}"));
            check_spmv(be, &t.r, false, &format!("beam R level {l}"));
        }
    }
}

/// Diagonal blocks made dominant, so every inverse is well conditioned.
fn dominant_diagonal(m: &mut BlockCsr) {
    let b = m.block_shape().0;
    for k in m.pattern().diagonal_positions() {
        let blk = m.block_mut(k);
        for r in 0..b {
            blk[r * b + r] += 2.0 * b as f64;
        }
    }
}

/// Inverses against `invert_in_place` on the same blocks; the update
/// `x += alpha D^-1 r + beta t` against the host on the backend's inverses.
pub fn point_block_jacobi_is_equivalent_to_reference<B: Conforming>(be: &B) {
    let mut rng = Rng::new(5);
    let mut sizes: Vec<usize> = shipped_sets().iter().flat_map(|&(bf, bc)| [bf, bc]).collect();
    sizes.sort_unstable();
    sizes.dedup();
    for b in sizes {
        // Arrange
        let mut a = random_block_csr(&mut rng, 300, 300, b, b, 0.02, true);
        dominant_diagonal(&mut a);
        let n = a.scalar_rows();
        let da = be.matrix_ref(&a).unwrap();
        let mut j = be.jacobi(&a).unwrap();
        // Act
        be.jacobi_invert(&da, &mut j, 0).unwrap();
        let got = be.jacobi_values(&j).unwrap();
        // Assert
        let mut want = vec![0.0; a.nrows() * b * b];
        for (i, &k) in a.pattern().diagonal_positions().iter().enumerate() {
            let blk = &mut want[i * b * b..(i + 1) * b * b];
            blk.copy_from_slice(a.block(k));
            invert_in_place(b, blk).unwrap();
        }
        be.promise(Op::BlockInverse)
            .assert_blocks_match(&got, &want, b * b, &format!("{b}x{b} Jacobi inverses"));

        let (r, t, x0) = (values(&mut rng, n), values(&mut rng, n), values(&mut rng, n));
        let (dr, dt) = (be.vector_from(&r).unwrap(), be.vector_from(&t).unwrap());
        for (alpha, beta) in [(0.9, 0.0), (1.7, -0.4)] {
            let mut dx = be.vector_from(&x0).unwrap();
            be.jacobi_update(&j, alpha, &dr, beta, &dt, &mut dx).unwrap();
            let mut want = x0.clone();
            for i in 0..a.nrows() {
                for q in 0..b {
                    let d = &got[(i * b + q) * b..(i * b + q + 1) * b];
                    let s: f64 = d.iter().zip(&r[i * b..(i + 1) * b]).map(|(d, r)| d * r).sum();
                    want[i * b + q] += alpha * s + beta * t[i * b + q];
                }
            }
            be.promise(Op::RowSums).assert_matches(
                &read(be, &dx, n),
                &want,
                &format!("{b}x{b} Jacobi update alpha {alpha} beta {beta}"),
            );
        }

        // A singular diagonal block is refused with the sentence that says so.
        let mut bad = a.clone();
        let k = bad.pattern().diagonal_positions()[a.nrows() / 2];
        bad.block_mut(k).fill(0.0);
        let dbad = be.matrix_ref(&bad).unwrap();
        let err = be.jacobi_invert(&dbad, &mut j, 3).unwrap_err().to_string();
        assert!(err.contains("singular") && err.contains("level 3"), "{b}x{b}: {err}");
    }
}

/// The CPU two-pass (V0) product, the reference of every variant.
fn two_pass(a: &BlockCsr, p: &BlockCsr) -> (Arc<TwoPassSchedule>, Vec<f64>) {
    let (bf, bc) = p.block_shape();
    let base = Arc::new(TwoPassSchedule::inspect(a.pattern_arc().clone(), p.pattern_arc().clone()).unwrap());
    let mut exec = TwoPassExecutor::new(base.clone(), bf, bc);
    let mut c = BlockCsr::zeros(base.c.clone(), bc, bc);
    exec.numeric(a, p, &mut c).unwrap();
    (base, c.values().to_vec())
}

/// Whether `a` has a symmetric block pattern and values symmetric to
/// rounding (the beam's assembly sums mirrored entries in different orders):
/// what the symmetric tensor pair serves, to the products' tolerance.
fn symmetric_to_rounding(a: &BlockCsr) -> bool {
    let t = a.transpose();
    let scale = a.values().iter().fold(0.0f64, |m, v| m.max(v.abs()));
    t.pattern() == a.pattern()
        && t.values()
            .iter()
            .zip(a.values())
            .all(|(x, y)| (x - y).abs() <= 1e-14 * scale)
}

/// `A + A^T` over the union of both patterns: exactly symmetric (each pair of
/// mirrored entries sums the same two numbers).
fn symmetrized(a: &BlockCsr) -> BlockCsr {
    let (b, n) = (a.block_shape().0, a.pattern().nrows());
    let t = a.transpose();
    let rows: Vec<Vec<u32>> = (0..n)
        .map(|i| {
            let mut r: Vec<u32> = a.pattern().row(i).iter().chain(t.pattern().row(i)).copied().collect();
            r.sort_unstable();
            r.dedup();
            r
        })
        .collect();
    let pattern = Arc::new(BlockPattern::from_rows(n, &rows).unwrap());
    let mut v = vec![0.0; pattern.nnzb() * b * b];
    for m in [a, &t] {
        for i in 0..n {
            for k in m.pattern().row_range(i) {
                let s = pattern.find(i, m.pattern().col_idx()[k] as usize).unwrap();
                for e in 0..b * b {
                    v[s * b * b + e] += m.values()[k * b * b + e];
                }
            }
        }
    }
    BlockCsr::new(pattern, b, b, v).unwrap()
}

/// Block `(J, I)` of `c` (over `pattern`, `b x b` blocks) is block `(I, J)` transposed, bit for bit.
fn assert_exactly_symmetric(pattern: &BlockPattern, c: &[f64], b: usize, what: &str) {
    for i in 0..pattern.nrows() {
        for k in pattern.row_range(i) {
            let t = pattern.find(pattern.col_idx()[k] as usize, i).unwrap();
            for r in 0..b {
                for q in 0..b {
                    assert_eq!(
                        c[k * b * b + r * b + q].to_bits(),
                        c[t * b * b + q * b + r].to_bits(),
                        "{what}: slot {k} ({r}, {q}) against its mirror"
                    );
                }
            }
        }
    }
}

fn check_products<B: Conforming>(be: &B, a: &BlockCsr, p: &BlockCsr, what: &str) {
    let (bf, bc) = p.block_shape();
    let (base, want) = two_pass(a, p);
    let da = be.matrix_ref(a).unwrap();
    let dp = be.matrix_ref(p).unwrap();
    // The symmetric tensor pair serves symmetric operators only (see its test below).
    let symmetric = symmetric_to_rounding(a);
    for v in be.variants() {
        if v == Variant::TensorPairSym && !symmetric {
            continue;
        }
        // Arrange: a poisoned output, so every slot must be written.
        let schedule = VariantSchedule::inspect(v, base.clone(), bf * bc);
        assert_eq!(schedule.variant(), v);
        let mut product = be
            .product(&schedule, bf, bc)
            .unwrap_or_else(|e| panic!("{v} {what}: refused: {e}"));
        let mut dc = be.matrix(BlockCsr::zeros(base.c.clone(), bc, bc), false).unwrap();
        be.set_values(&mut dc, &vec![f64::NAN; want.len()]).unwrap();
        // Act
        be.galerkin(&mut product, &da, &dp, &mut dc).unwrap();
        let got = be.values(&dc).unwrap();
        // Assert
        be.promise(Op::Product(v))
            .assert_matches(&got, &want, &format!("{v} {what}"));
        if v != Variant::OuterProductScatter {
            be.galerkin(&mut product, &da, &dp, &mut dc).unwrap();
            Exactness::Bitwise.assert_matches(&be.values(&dc).unwrap(), &got, &format!("{v} {what}: a second call"));
        }
        if v == Variant::TensorPairSym {
            assert_exactly_symmetric(&base.c, &got, bc, &format!("{v} {what}"));
        }
    }
}

/// Random products of every shipped shape (each set's fine and coarse
/// product), large sparse and small dense, then the beam's levels at k = 2.
pub fn every_product_variant_is_equivalent_to_two_pass<B: Conforming>(be: &B) {
    let mut shapes = Vec::new();
    for (bf, bc) in shipped_sets() {
        for s in [(bf, bc), (bc, bc)] {
            if !shapes.contains(&s) {
                shapes.push(s);
            }
        }
    }
    for (i, &(bf, bc)) in shapes.iter().enumerate() {
        // Large and sparse (longer than a warp), small and dense, one block,
        // and sizes drawn at random.
        let mut sizes = vec![(200, 40, 0.08, 0.1), (37, 9, 0.3, 0.35), (1, 1, 0.5, 1.0)];
        let mut rng = Rng::new(900 + i as u64);
        sizes.extend((0..3).map(|_| (1 + rng.below(60), 1 + rng.below(14), 0.3, 0.35)));
        for (j, &(nf, nc, da, dp)) in sizes.iter().enumerate() {
            let mut rng = Rng::new(1000 + 10 * i as u64 + j as u64);
            let mut a = random_block_csr(&mut rng, nf, nf, bf, bf, da, true);
            let mut p = random_block_csr(&mut rng, nf, nc, bf, bc, dp, false);
            widen(&mut a, &mut rng);
            widen(&mut p, &mut rng);
            check_products(be, &a, &p, &format!("random {bf}x{bf}/{bf}x{bc} {nf}x{nc}"));
            // Every variant again on a symmetric A, the symmetric tensor pair among them.
            let s = symmetrized(&a);
            check_products(be, &s, &p, &format!("random symmetric {bf}x{bf}/{bf}x{bc} {nf}x{nc}"));
        }
    }
    let (_, h) = beam(2);
    for l in 0..h.num_levels() - 1 {
        let lev = &h.levels()[l];
        // Symmetric by construction (to rounding): the symmetric tensor pair runs on every level.
        assert!(symmetric_to_rounding(&lev.a), "beam level {l}");
        check_products(
            be,
            &lev.a,
            &lev.transfer.as_ref().unwrap().p,
            &format!("beam k=2 level {l}"),
        );
    }
}

/// A random SPD matrix `M M^T + n I` in `b x b` blocks.
fn random_spd(rng: &mut Rng, nb: usize, b: usize) -> BlockCsr {
    let n = nb * b;
    let m = Dense {
        rows: n,
        cols: n,
        data: values(rng, n * n),
    };
    let mut s = m.matmul(&m.transpose());
    for i in 0..n {
        *s.at_mut(i, i) += n as f64;
    }
    BlockCsr::from_dense(&s, b, b, true).unwrap()
}

/// The factor of the coarsest operator and its solve against `Cholesky`;
/// a matrix that is not SPD is refused.
pub fn coarse_factor_and_solve_are_equivalent_to_cholesky<B: Conforming>(be: &B) {
    let mut rng = Rng::new(23);
    for (nb, b) in [(40, 6), (50, 3), (7, 1)] {
        // Arrange
        let a = random_spd(&mut rng, nb, b);
        let n = a.scalar_rows();
        let mut chol = Cholesky::with_order(n);
        chol.refactor(&a.to_dense().data).unwrap();
        let da = be.matrix_ref(&a).unwrap();
        let mut c = be.coarse(&a).unwrap();
        // Act
        be.coarse_factor(&da, &mut c, 4).unwrap();
        for rhs in 0..3 {
            let x = values(&mut rng, n);
            let mut dx = be.vector_from(&x).unwrap();
            be.coarse_solve(&c, &mut dx).unwrap();
            // Assert
            let mut want = x;
            chol.solve_in_place(&mut want);
            be.promise(Op::CoarseSolve).assert_matches(
                &read(be, &dx, n),
                &want,
                &format!("{n}x{n} coarse solve {rhs}"),
            );
        }
        // Not SPD: a negative diagonal entry.
        let mut bad = a.clone();
        let k = bad.pattern().diagonal_positions()[nb - 1];
        bad.block_mut(k)[0] = -1.0;
        let dbad = be.matrix_ref(&bad).unwrap();
        let err = be.coarse_factor(&dbad, &mut c, 4).unwrap_err().to_string();
        assert!(err.contains("cannot be factored") && err.contains("level 4"), "{err}");
    }
}

/// The CPU hierarchy `h` on `be` with `variant`'s products.
fn on<B: Conforming>(be: &B, h: &Hierarchy, variant: Variant) -> Hierarchy<B> {
    let setup = h.mesh_setup().with_variant(variant).unwrap();
    Hierarchy::new(be.fresh(), setup, &mut |_| {}).unwrap_or_else(|e| panic!("{variant}: {e}"))
}

/// `z = M^-1 r` for one V-cycle at k = 2 (3x3 and 6x6 levels), every variant
/// the backend runs, against the CPU two-pass hierarchy; with the coarse
/// operators the backend computed.
pub fn one_vcycle_is_equivalent_to_reference<B: Conforming>(be: &B) {
    let (problem, mut h) = beam(2);
    let n = problem.rhs.len();
    let mut want = vec![0.0; n];
    h.vcycle(&problem.rhs, &mut want).unwrap();
    for v in be.variants() {
        let mut bh = on(be, &h, v);
        for l in 1..h.num_levels() {
            let got = bh.operator_values(l).unwrap();
            be.promise(Op::Product(v))
                .assert_matches(&got, h.levels()[l].a.values(), &format!("{v}: A level {l}"));
        }
        let r = be.vector_from(&problem.rhs).unwrap();
        let mut z = be.vector(n).unwrap();
        bh.vcycle(&r, &mut z).unwrap();
        be.promise(Op::Solve(v))
            .assert_matches(&read(be, &z, n), &want, &format!("{v}: one V-cycle"));
    }
}

/// V-cycle-preconditioned CG on the beam at k = 2 for every variant the
/// backend runs: the CPU two-pass hierarchy's iterations, solution, residual
/// history and eigen-estimates.
pub fn cg_takes_the_reference_iterations_and_solution<B: Conforming>(be: &B) {
    // Arrange
    let (problem, mut h) = beam(2);
    let n = problem.rhs.len();
    let opts = CgOptions::default();
    let mut x_ref = vec![0.0; n];
    let mut ws = CgWorkspace::new(n, opts.max_iterations);
    let reference = h.solve(&problem.rhs, &mut x_ref, &opts, &mut ws).unwrap();
    assert!(reference.converged);
    for v in be.variants() {
        // Act
        let mut bh = on(be, &h, v);
        let mut x = vec![0.0; n];
        let mut bws = bh.workspace(opts.max_iterations).unwrap();
        let got = bh.solve(&problem.rhs, &mut x, &opts, &mut bws).unwrap();
        // Assert
        assert!(got.converged, "{v}: CG did not converge");
        assert_eq!(got.iterations, reference.iterations, "{v}: iteration counts differ");
        let exact = be.promise(Op::Solve(v));
        exact.assert_matches(&x, &x_ref, &format!("{v}: solution"));
        let (history, lambda) = match exact {
            Exactness::Bitwise => (Exactness::Bitwise, Exactness::Bitwise),
            Exactness::Within(_) => (Exactness::Within(HISTORY), Exactness::Within(LAMBDA)),
        };
        history.assert_blocks_match(bws.history(), ws.history(), 1, &format!("{v}: residual history"));
        lambda.assert_blocks_match(&bh.lambda_max(), &h.lambda_max(), 1, &format!("{v}: lambda_max"));
    }
}

/// `m` with every value rounded to the nearest `f32` (the reference of the
/// mixed-precision smoother: the `f64` kernels on the rounded values).
fn rounded_to_f32(m: &BlockCsr) -> BlockCsr {
    let mut lo = m.clone();
    lo.values_mut().iter_mut().for_each(|v| *v = *v as f32 as f64);
    lo
}

fn check_f32_spmv<B: Conforming>(be: &B, m: &BlockCsr, what: &str) {
    let exact = be.promise(Op::RowSums);
    let (nr, nc) = (m.scalar_rows(), m.scalar_cols());
    let mut rng = Rng::new(nr as u64 * 37 + nc as u64);
    let (x, b) = (values(&mut rng, nc), values(&mut rng, nr));
    let want = reference_spmv(&rounded_to_f32(m), &x);
    let dm = be.matrix_ref(m).unwrap();
    let mut lo = be.lowered(&dm).unwrap();
    be.lower(&dm, &mut lo, 0).unwrap();
    let dx = be.vector_from(&x).unwrap();
    let db = be.vector_from(&b).unwrap();
    let mut dy = be.vector_from(&vec![f64::NAN; nr]).unwrap();
    be.spmv_lowered(&dm, &lo, &dx, &mut dy).unwrap();
    let got = read(be, &dy, nr);
    exact.assert_matches(&got, &want, &format!("f32 spmv {what}"));
    be.spmv_lowered(&dm, &lo, &dx, &mut dy).unwrap();
    Exactness::Bitwise.assert_matches(&read(be, &dy, nr), &got, &format!("f32 spmv {what}: a second apply"));
    let mut dr = be.vector_from(&vec![f64::NAN; nr]).unwrap();
    be.residual_lowered(&dm, &lo, &dx, &db, &mut dr).unwrap();
    let want_r: Vec<f64> = b.iter().zip(&want).map(|(b, ax)| b - ax).collect();
    exact.assert_matches(&read(be, &dr, nr), &want_r, &format!("f32 residual {what}"));
    // The f64 SpMV of the same matrix is untouched by its f32 copy.
    be.spmv(&dm, &dx, &mut dy).unwrap();
    exact.assert_matches(
        &read(be, &dy, nr),
        &reference_spmv(m, &x),
        &format!("f64 spmv {what} beside its f32 copy"),
    );
}

/// The mixed-precision smoother's operators (square blocks, values rounded
/// to `f32`, vectors and sums `f64`) against the `f64` reference SpMV on the
/// rounded values: random operators of every square shape of the shipped
/// sets (values over 16 orders of magnitude, long and empty rows), the
/// beam's operators; a refresh converts new values into the same storage;
/// a value beyond `f32`'s range is refused with one sentence.
pub fn f32_smoother_operators_are_equivalent_to_reference<B: Conforming>(be: &B) {
    let mut rng = Rng::new(91);
    let mut sizes = Vec::new();
    for (bf, bc) in shipped_sets() {
        for b in [bf, bc] {
            if !sizes.contains(&b) {
                sizes.push(b);
            }
        }
    }
    for b in sizes {
        let mut m = random_block_csr(&mut rng, 240, 240, b, b, 0.4, true);
        widen(&mut m, &mut rng);
        check_f32_spmv(be, &m, &format!("{b}x{b} 240 rows density 0.4, wide values"));
        let m = random_block_csr(&mut rng, 1500, 1500, b, b, 0.002, false);
        check_f32_spmv(be, &m, &format!("{b}x{b} 1500 rows with empty rows"));
    }
    let (_, h) = beam(2);
    for (l, lev) in h.levels().iter().enumerate() {
        check_f32_spmv(be, &lev.a, &format!("beam A level {l}"));
    }
    // A refresh: new values into the same f32 storage.
    let a = &h.levels()[0].a;
    let mut dm = be.matrix_ref(a).unwrap();
    let mut lo = be.lowered(&dm).unwrap();
    be.lower(&dm, &mut lo, 0).unwrap();
    let scaled: Vec<f64> = a.values().iter().map(|v| v * 1.7).collect();
    be.set_values(&mut dm, &scaled).unwrap();
    be.lower(&dm, &mut lo, 0).unwrap();
    let mut want_m = a.clone();
    want_m.values_mut().copy_from_slice(&scaled);
    let x: Vec<f64> = (0..a.scalar_cols()).map(|i| (i as f64 * 0.3).cos()).collect();
    let dx = be.vector_from(&x).unwrap();
    let mut dy = be.vector(a.scalar_rows()).unwrap();
    be.spmv_lowered(&dm, &lo, &dx, &mut dy).unwrap();
    be.promise(Op::RowSums).assert_matches(
        &read(be, &dy, a.scalar_rows()),
        &reference_spmv(&rounded_to_f32(&want_m), &x),
        "f32 spmv after a refresh",
    );
    // Beyond f32's range: one sentence naming the level.
    let mut big = scaled;
    big[4] = 1e39;
    be.set_values(&mut dm, &big).unwrap();
    let e = be
        .lower(&dm, &mut lo, 3)
        .expect_err("a value beyond f32's range is refused");
    let e = e.to_string();
    assert!(e.contains("level 3") && e.contains("f32") && !e.contains('\n'), "{e}");
}

/// The whole solve with `f32` smoother operators on the beam (k = 2): the
/// backend against the CPU's `f32` solve (the same iterations; the solution
/// within [`SOLVE`], or bitwise where promised), and against the CPU's `f64`
/// solve: at most one iteration apart, the largest displacement within
/// 1e-6 relative (the `f32` rounding of the smoother's operators, 6e-8
/// relative per value, reaches the solution only through the preconditioner:
/// CG's own residual stays `f64`, so both solves meet the same `rtol`).
pub fn f32_smoother_solve_is_equivalent_to_reference<B: Conforming>(be: &B) {
    let (problem, mut h) = beam(2);
    let n = problem.rhs.len();
    let opts = CgOptions::default();
    let mut ws = CgWorkspace::new(n, opts.max_iterations);
    let mut x64 = vec![0.0; n];
    let r64 = h.solve(&problem.rhs, &mut x64, &opts, &mut ws).unwrap();
    let f32_setup = |v: Variant| {
        let mut s = h.mesh_setup().with_variant(v).unwrap();
        s.options.smoother_precision = SmootherPrecision::F32;
        s
    };
    let mut h32 = Hierarchy::new(Cpu::default(), f32_setup(Variant::TwoPass), &mut |_| {}).unwrap();
    let mut x32 = vec![0.0; n];
    let r32 = h32.solve(&problem.rhs, &mut x32, &opts, &mut ws).unwrap();
    assert!(r64.converged && r32.converged);
    let tip = |x: &[f64]| x.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    assert!(
        r32.iterations.abs_diff(r64.iterations) <= 1,
        "{} vs {} iterations",
        r32.iterations,
        r64.iterations
    );
    assert!(
        (tip(&x32) - tip(&x64)).abs() <= 1e-6 * tip(&x64),
        "tip {} vs {}",
        tip(&x32),
        tip(&x64)
    );
    assert_eq!(
        h32.lambda_max(),
        h.lambda_max(),
        "the eigen-estimates use the f64 values"
    );
    for v in be.variants() {
        let mut bh = Hierarchy::new(be.fresh(), f32_setup(v), &mut |_| {}).unwrap_or_else(|e| panic!("{v}: {e}"));
        let mut x = vec![0.0; n];
        let mut bws = bh.workspace(opts.max_iterations).unwrap();
        let got = bh.solve(&problem.rhs, &mut x, &opts, &mut bws).unwrap();
        assert!(got.converged, "{v}: CG did not converge");
        assert_eq!(
            got.iterations, r32.iterations,
            "{v}: iteration counts differ from the CPU's f32 solve"
        );
        be.promise(Op::Solve(v))
            .assert_matches(&x, &x32, &format!("{v}: f32 smoother solution"));
    }
}

/// A smooth, positive, spatially varying modulus sampled at element centroids.
fn varying_modulus(p: &BeamProblem) -> Vec<f64> {
    modulus_from_fn(&p.mesh, |c| {
        1.0 + 0.5 * (0.7 * c[0]).sin() + 0.3 * c[1] * c[2] + 0.1 * c[1] + 0.05 * c[2]
    })
}

/// The backend's assembler against the CPU's: the reference stiffness and,
/// per block, the operator of a varying modulus and of a second field
/// assembled over it (no stale sums), in 3D (k = 2, 4) and 2D (k = 4).
pub fn assembly_is_equivalent_to_reference<B: Conforming>(be: &B) {
    for (dim, k) in [(3, 2), (3, 4), (2, 4)] {
        let mut problem = BeamProblem::build_in(dim, k).unwrap();
        // The CPU assembles with the reference assembler itself.
        let Some(mut asm) = be.assembler(&problem) else { return };
        let exact = be.promise(Op::Assembly);
        let want = problem.assembler.reference_stiffness().blocks().to_vec();
        exact.assert_matches(
            &be.reference_stiffness(&asm),
            &want,
            &format!("{dim}D reference stiffness"),
        );

        let mut a = be.matrix(problem.assembler.zero_matrix(), false).unwrap();
        be.set_values(&mut a, &vec![f64::NAN; problem.a.values().len()])
            .unwrap();
        let first = varying_modulus(&problem);
        let second: Vec<f64> = first.iter().map(|e| 2.0 / e).collect();
        for (i, modulus) in [first, second].iter().enumerate() {
            be.assemble(&mut asm, modulus, &mut a);
            problem.reassemble(modulus).unwrap();
            exact.assert_blocks_match(
                &be.values(&a).unwrap(),
                problem.a.values(),
                dim * dim,
                &format!("{dim}D k={k} assembly {i}"),
            );
        }
    }
}
