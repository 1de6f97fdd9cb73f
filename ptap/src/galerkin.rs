//! The Galerkin product `C = P^T A P` by itself: inspect, then one numeric pass.
use crate::Error;
use ptap_runtime::KernelRegistry;
use ptap_schedules::{inspect, BlockShape, ProductPolicy, Variant};
use ptap_sparse::BlockCsr;

/// `P^T A P` for a square-block `A` (`n x n` blocks of `b x b`) and `P` (`n x
/// m` blocks of `b x c`), by `variant` (every variant gives the same pattern;
/// values agree to rounding, bitwise for the order-preserving ones). The
/// result has `c x c` blocks. Shapes without generated kernels run the
/// size-generic two-pass loop (`Variant::TwoPass`) or are an error naming the
/// `kernels!` line to add.
pub fn galerkin(a: &BlockCsr, p: &BlockCsr, variant: Variant, kernels: &KernelRegistry) -> Result<BlockCsr, Error> {
    let (b, ba) = a.block_shape();
    let (bp, c) = p.block_shape();
    if b != ba || a.nrows() != a.ncols() {
        return Err(Error::input(format!(
            "A is {}x{} with {b}x{ba} blocks; the Galerkin product needs a square A with square blocks",
            a.scalar_rows(),
            a.scalar_cols()
        )));
    }
    if bp != b || p.nrows() != a.ncols() {
        return Err(Error::input(format!(
            "P has {} scalar rows in {bp}-row blocks but A has {} scalar columns in {b}-column blocks; P's rows must match A's columns, block for block",
            p.scalar_rows(),
            a.scalar_cols()
        )));
    }
    a.check_finite("A")?;
    p.check_finite("P")?;
    let inspected = inspect(
        a.pattern_arc().clone(),
        p.pattern_arc().clone(),
        BlockShape::new(b, c),
        &ProductPolicy::Fixed(variant),
    )?;
    let mut out = BlockCsr::zeros(inspected.base.c.clone(), c, c);
    let mut exec = kernels.executor_for(&inspected.schedule, b, c)?;
    exec.numeric(a, p, &mut out)?;
    Ok(out)
}
