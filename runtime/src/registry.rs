//! Which generated kernels serve which block shapes.
//!
//! A [`KernelRegistry`] is a plain value: the shipped sets are in
//! [`KernelRegistry::shipped`], and a crate that declares its own set with
//! `ptap_kernels::kernels!` registers the set's type on a copy:
//!
//! ```ignore
//! ptap_kernels::kernels!(pub mod four_field { 4x4 / 4x10 / 10x10 });
//! let kernels = KernelRegistry::shipped().clone().with::<four_field::Set>();
//! let mut product = kernels.executor_for(&schedule, 4, 10)?;
//! ```
//!
//! Registering monomorphizes every executor, the SpMV and the point-block
//! Jacobi over the set's kernel types in the registering crate; the registry
//! keeps one function pointer per entry point, called once per product or
//! vector operation, never per block.
use crate::block_ops::update_with;
use crate::executor::{two_pass_numeric, TwoPassExecutor, TwoPassNumeric};
use crate::variants::{executor_with, GalerkinProduct};
use crate::RuntimeError;
use ptap_kernels::{elasticity_2d, elasticity_3d, scalar};
use ptap_schedules::{TwoPassSchedule, VariantSchedule};
use ptap_sparse::kernels::{BlockKernels, KernelSet, ProductKernels, SingularBlock, SquareBlockKernels};
use ptap_sparse::spmv::{residual_with, spmv_beta_with};
use ptap_sparse::BlockCsr;
use std::sync::{Arc, OnceLock};

/// `y = A x + beta y`.
pub type SpmvFn = fn(&BlockCsr, &[f64], f64, &mut [f64]);
/// `r = b - A x`.
pub type ResidualFn = fn(&BlockCsr, &[f64], &[f64], &mut [f64]);
/// `x += alpha D^-1 r + beta t` over all block rows.
pub type JacobiUpdateFn = fn(&[f64], f64, &[f64], f64, &[f64], &mut [f64]);

/// The Galerkin products of one `(bf, bc)`.
#[derive(Clone, Copy, Debug)]
pub struct ProductEntry {
    pub bf: usize,
    pub bc: usize,
    /// The declaration that registered it, e.g. `"3x3 / 3x6 / 6x6"`.
    pub declaration: &'static str,
    make: fn(&VariantSchedule) -> Box<dyn GalerkinProduct>,
    pub(crate) two_pass: TwoPassNumeric,
}

/// SpMV and residual of `r x c` blocks.
#[derive(Clone, Copy, Debug)]
pub struct BlockEntry {
    pub r: usize,
    pub c: usize,
    pub spmv_beta: SpmvFn,
    pub residual: ResidualFn,
}

/// Point-block Jacobi of `b x b` diagonal blocks.
#[derive(Clone, Copy, Debug)]
pub struct JacobiEntry {
    pub b: usize,
    pub invert: fn(&mut [f64]) -> Result<(), SingularBlock>,
    pub update: JacobiUpdateFn,
}

/// The CUDA module a registered set's `kernels!` expansion emitted: the
/// product stages of `(bf, bc)` and `(bc, bc)`, the SpMV of its four block
/// shapes and the Jacobi of `bf` and `bc` blocks, as the device backend loads it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CudaSetEntry {
    pub bf: usize,
    pub bc: usize,
    /// `"3x3 / 3x6 / 6x6"`.
    pub declaration: &'static str,
    /// File stem and module name, `"ptap_3x3_3x6_6x6"`.
    pub module: &'static str,
    pub source: &'static str,
    pub entries: &'static [&'static str],
}

impl CudaSetEntry {
    /// Whether the set's module has the Galerkin product `(bf, bc)`.
    pub fn serves_product(&self, bf: usize, bc: usize) -> bool {
        (bf, bc) == (self.bf, self.bc) || (bf, bc) == (self.bc, self.bc)
    }
    /// Whether the set's module has the SpMV of `r x c` blocks (`A`, `P`, `R`, `A_c`).
    pub fn serves_block(&self, r: usize, c: usize) -> bool {
        let (f, k) = (self.bf, self.bc);
        [(f, f), (f, k), (k, f), (k, k)].contains(&(r, c))
    }
    /// Whether the set's module has the point-block Jacobi of `b x b` blocks.
    pub fn serves_square(&self, b: usize) -> bool {
        b == self.bf || b == self.bc
    }
}

/// Generated kernels by block shape. The first set registered for a shape serves it.
#[derive(Clone, Debug, Default)]
pub struct KernelRegistry {
    products: Vec<ProductEntry>,
    blocks: Vec<BlockEntry>,
    jacobi: Vec<JacobiEntry>,
    declarations: Vec<&'static str>,
    cuda: Vec<CudaSetEntry>,
}

impl KernelRegistry {
    /// No kernels: every product but two-pass is refused, SpMV and Jacobi run size-generic loops.
    pub fn new() -> Self {
        Self::default()
    }

    /// The sets `ptap-kernels` ships: `1x1 / 1x1 / 1x1`, `2x2 / 2x3 / 3x3`, `3x3 / 3x6 / 6x6`.
    pub fn shipped() -> &'static KernelRegistry {
        static SHIPPED: OnceLock<KernelRegistry> = OnceLock::new();
        SHIPPED.get_or_init(|| {
            KernelRegistry::new()
                .with::<scalar::Set>()
                .with::<elasticity_2d::Set>()
                .with::<elasticity_3d::Set>()
        })
    }

    /// `self` with the set `S` registered.
    pub fn with<S: KernelSet>(mut self) -> Self {
        self.register::<S>();
        self
    }

    /// Registers the products `(bf, bc)` and `(bc, bc)`, the SpMV of the four
    /// block shapes and the Jacobi of `bf` and `bc` blocks of the set `S`.
    pub fn register<S: KernelSet>(&mut self) -> &mut Self {
        self.declarations.push(S::DECLARATION);
        self.add_product::<S::FineProduct>(S::DECLARATION);
        self.add_product::<S::CoarseProduct>(S::DECLARATION);
        self.add_block::<S::Fine>();
        self.add_block::<S::Prolongator>();
        self.add_block::<S::Restriction>();
        self.add_block::<S::Coarse>();
        self.add_jacobi::<S::Fine>();
        self.add_jacobi::<S::Coarse>();
        self.cuda.push(CudaSetEntry {
            bf: S::BF,
            bc: S::BC,
            declaration: S::DECLARATION,
            module: S::CUDA_MODULE,
            source: S::CUDA_SOURCE,
            entries: S::CUDA_ENTRIES,
        });
        self
    }

    fn add_product<K: ProductKernels>(&mut self, declaration: &'static str) {
        if self.product(K::BF, K::BC).is_none() {
            self.products.push(ProductEntry {
                bf: K::BF,
                bc: K::BC,
                declaration,
                make: executor_with::<K>,
                two_pass: two_pass_numeric::<K>,
            });
        }
    }

    fn add_block<K: BlockKernels>(&mut self) {
        if self.block(K::R, K::C).is_none() {
            self.blocks.push(BlockEntry {
                r: K::R,
                c: K::C,
                spmv_beta: spmv_beta_with::<K>,
                residual: residual_with::<K>,
            });
        }
    }

    fn add_jacobi<K: SquareBlockKernels>(&mut self) {
        if self.jacobi(K::R).is_none() {
            self.jacobi.push(JacobiEntry {
                b: K::R,
                invert: K::invert,
                update: update_with::<K>,
            });
        }
    }

    /// The declarations registered, in order.
    pub fn declarations(&self) -> &[&'static str] {
        &self.declarations
    }

    pub fn product(&self, bf: usize, bc: usize) -> Option<&ProductEntry> {
        self.products.iter().find(|e| (e.bf, e.bc) == (bf, bc))
    }

    pub fn block(&self, r: usize, c: usize) -> Option<&BlockEntry> {
        self.blocks.iter().find(|e| (e.r, e.c) == (r, c))
    }

    pub fn jacobi(&self, b: usize) -> Option<&JacobiEntry> {
        self.jacobi.iter().find(|e| e.b == b)
    }

    /// The CUDA modules of the registered sets, in registration order.
    pub fn cuda_sets(&self) -> &[CudaSetEntry] {
        &self.cuda
    }

    /// The first registered set whose CUDA module has the product `(bf, bc)`.
    pub fn cuda_for_product(&self, bf: usize, bc: usize) -> Option<&CudaSetEntry> {
        self.cuda.iter().find(|e| e.serves_product(bf, bc))
    }

    /// The first registered set whose CUDA module has the SpMV of `r x c` blocks.
    pub fn cuda_for_block(&self, r: usize, c: usize) -> Option<&CudaSetEntry> {
        self.cuda.iter().find(|e| e.serves_block(r, c))
    }

    /// The first registered set whose CUDA module has the Jacobi of `b x b` blocks.
    pub fn cuda_for_square(&self, b: usize) -> Option<&CudaSetEntry> {
        self.cuda.iter().find(|e| e.serves_square(b))
    }

    /// The executor of `schedule`'s variant for `bf x bf` fine and `bc x bc`
    /// coarse blocks. Without registered kernels for `(bf, bc)` the two-pass
    /// variant runs the size-generic SpGEMM and every other variant is refused
    /// with the declaration to add.
    pub fn executor_for(
        &self,
        schedule: &VariantSchedule,
        bf: usize,
        bc: usize,
    ) -> Result<Box<dyn GalerkinProduct>, RuntimeError> {
        if let Some(e) = self.product(bf, bc) {
            return Ok((e.make)(schedule));
        }
        match schedule {
            VariantSchedule::TwoPass(s) => Ok(Box::new(TwoPassExecutor::generic(s.clone(), bf, bc))),
            _ => Err(RuntimeError::UnsupportedShape {
                variant: schedule.variant().name(),
                bf,
                bc,
            }),
        }
    }

    /// `y = A x + beta y` with `A`'s registered block kernels (else the size-generic loop, same bits).
    pub fn spmv_beta(&self, a: &BlockCsr, x: &[f64], beta: f64, y: &mut [f64]) {
        let (r, c) = a.block_shape();
        match self.block(r, c) {
            Some(e) => (e.spmv_beta)(a, x, beta, y),
            None => ptap_sparse::spmv::spmv_beta(a, x, beta, y),
        }
    }

    /// `y = A x`.
    pub fn spmv(&self, a: &BlockCsr, x: &[f64], y: &mut [f64]) {
        self.spmv_beta(a, x, 0.0, y)
    }

    /// `r = b - A x` with `A`'s registered block kernels (else the size-generic loop, same bits).
    pub fn residual(&self, a: &BlockCsr, x: &[f64], b: &[f64], r: &mut [f64]) {
        let (br, bc) = a.block_shape();
        match self.block(br, bc) {
            Some(e) => (e.residual)(a, x, b, r),
            None => ptap_sparse::spmv::residual(a, x, b, r),
        }
    }
}

impl TwoPassExecutor {
    /// Buffers for `bf x bf` fine blocks and `bf x bc` prolongator blocks, with
    /// the shipped kernels of `(bf, bc)` ([`KernelRegistry::shipped`]) or, for any
    /// other shape, the size-generic SpGEMM.
    pub fn new(schedule: Arc<TwoPassSchedule>, bf: usize, bc: usize) -> Self {
        let numeric = KernelRegistry::shipped().product(bf, bc).map(|k| k.two_pass);
        Self::build(schedule, bf, bc, numeric)
    }
}

/// Builds the executor for `schedule` with `bf x bf` fine and `bc x bc` coarse
/// blocks from the shipped kernels ([`KernelRegistry::shipped`]); see
/// [`KernelRegistry::executor_for`] for declared shapes.
pub fn executor_for(
    schedule: &VariantSchedule,
    bf: usize,
    bc: usize,
) -> Result<Box<dyn GalerkinProduct>, RuntimeError> {
    KernelRegistry::shipped().executor_for(schedule, bf, bc)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ptap_sparse::BlockPattern;
    use std::sync::Arc;

    /// splitmix64: reproducible values without a dev-dependency.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d1_33d0_49bb_1133);
            z ^ (z >> 31)
        }

        /// Mixed signs and magnitudes (so any change of summation order changes
        /// rounding), with some `+0.0` and `-0.0` (so signed zeros are checked too).
        fn value(&mut self) -> f64 {
            let u = self.next();
            match u % 16 {
                0 => 0.0,
                1 => -0.0,
                _ => {
                    let mantissa = (u >> 11) as f64 / (1u64 << 53) as f64 - 0.5;
                    mantissa * 2f64.powi((u >> 4) as i32 % 41 - 20)
                }
            }
        }

        fn vector(&mut self, n: usize) -> Vec<f64> {
            (0..n).map(|_| self.value()).collect()
        }
    }

    /// `nrows x ncols` blocks of `r x c`, 0 to 8 blocks a row (some rows empty).
    fn random_matrix(rng: &mut Rng, r: usize, c: usize, nrows: usize, ncols: usize) -> BlockCsr {
        let rows: Vec<Vec<u32>> = (0..nrows)
            .map(|_| {
                let mut cols: Vec<u32> = (0..rng.next() % 9)
                    .map(|_| (rng.next() % ncols as u64) as u32)
                    .collect();
                cols.sort_unstable();
                cols.dedup();
                cols
            })
            .collect();
        let pattern = Arc::new(BlockPattern::from_rows(ncols, &rows).unwrap());
        let values = rng.vector(pattern.nnzb() * r * c);
        BlockCsr::new(pattern, r, c, values).unwrap()
    }

    fn bits(v: &[f64]) -> Vec<u64> {
        v.iter().map(|x| x.to_bits()).collect()
    }

    #[test]
    fn generated_spmv_and_residual_give_the_bits_of_the_size_generic_loops() {
        let k = KernelRegistry::shipped();
        let mut rng = Rng(0x5eed);
        for (r, c) in [(1, 1), (2, 2), (2, 3), (3, 2), (3, 3), (3, 6), (6, 3), (6, 6)] {
            assert!(k.block(r, c).is_some(), "{r}x{c} has no generated kernels");
            for (nrows, ncols) in [(700, 500), (3, 40)] {
                let a = random_matrix(&mut rng, r, c, nrows, ncols);
                let x = rng.vector(a.scalar_cols());
                let y0 = rng.vector(a.scalar_rows());
                for beta in [0.0, 1.0] {
                    let (mut generated, mut generic) = (y0.clone(), y0.clone());
                    k.spmv_beta(&a, &x, beta, &mut generated);
                    ptap_sparse::spmv::spmv_beta(&a, &x, beta, &mut generic);
                    assert_eq!(bits(&generated), bits(&generic), "{r}x{c} spmv beta = {beta}");
                }
                let b = rng.vector(a.scalar_rows());
                let (mut generated, mut generic) = (vec![f64::NAN; b.len()], vec![f64::NAN; b.len()]);
                k.residual(&a, &x, &b, &mut generated);
                ptap_sparse::spmv::residual(&a, &x, &b, &mut generic);
                assert_eq!(bits(&generated), bits(&generic), "{r}x{c} residual");
            }
        }
    }

    #[test]
    fn shipped_registry_serves_every_product_and_block_of_the_shipped_sets() {
        let k = KernelRegistry::shipped();
        assert_eq!(
            k.declarations(),
            ["1x1 / 1x1 / 1x1", "2x2 / 2x3 / 3x3", "3x3 / 3x6 / 6x6"]
        );
        for (bf, bc) in [(1, 1), (2, 3), (3, 3), (3, 6), (6, 6)] {
            assert!(k.product(bf, bc).is_some(), "{bf}x{bc}");
        }
        assert!(k.product(4, 10).is_none());
        assert_eq!(k.product(3, 3).unwrap().declaration, "2x2 / 2x3 / 3x3");
        for (r, c) in [(1, 1), (2, 2), (2, 3), (3, 2), (3, 3), (3, 6), (6, 3), (6, 6)] {
            assert!(k.block(r, c).is_some(), "{r}x{c}");
        }
        for b in [1, 2, 3, 6] {
            assert!(k.jacobi(b).is_some(), "{b}");
        }
    }

    #[test]
    fn shipped_registry_names_the_cuda_module_of_every_shape() {
        let k = KernelRegistry::shipped();
        let modules: Vec<&str> = k.cuda_sets().iter().map(|e| e.module).collect();
        assert_eq!(modules, ["ptap_1x1_1x1_1x1", "ptap_2x2_2x3_3x3", "ptap_3x3_3x6_6x6"]);
        // The first registered set serves a shape two sets share (3x3 blocks).
        assert_eq!(k.cuda_for_product(3, 3).unwrap().module, "ptap_2x2_2x3_3x3");
        assert_eq!(k.cuda_for_product(6, 6).unwrap().module, "ptap_3x3_3x6_6x6");
        assert_eq!(k.cuda_for_block(6, 3).unwrap().module, "ptap_3x3_3x6_6x6");
        assert_eq!(k.cuda_for_block(3, 3).unwrap().module, "ptap_2x2_2x3_3x3");
        assert_eq!(k.cuda_for_square(1).unwrap().module, "ptap_1x1_1x1_1x1");
        assert!(k.cuda_for_product(4, 10).is_none() && k.cuda_for_block(4, 10).is_none());
        assert!(k.cuda_for_square(10).is_none());
        let set = k.cuda_for_product(3, 6).unwrap();
        assert_eq!(set.declaration, "3x3 / 3x6 / 6x6");
        assert!(!set.entries.is_empty());
        assert!(set.entries.iter().all(|e| set.source.contains(&format!("void {e}("))));
    }
}
