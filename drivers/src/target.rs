//! Where a driver runs and what that decides: the backend (`Target`), the
//! Galerkin-product variant `--variant` names for it (one rule for every
//! driver), and the beam hierarchy the CPU-side drivers measure on.
use anyhow::{anyhow, Context, Result};
use ptap_amg::AmgOptions;
use ptap_cuda::{Device, DEVICE_VARIANTS};
use ptap_fem::BeamProblem;
use ptap_runtime::{Hierarchy, HierarchyOptions};
use ptap_schedules::Variant;
use std::sync::Arc;

/// Where the hierarchy lives.
#[derive(Clone)]
pub enum Target {
    Cpu,
    Cuda(Arc<Device>),
}

impl Target {
    /// The product a backend runs when none is asked for: two-pass on the
    /// CPU, column split (the paper's CUDA default) on a GPU.
    pub fn default_variant(&self) -> Variant {
        match self {
            Target::Cpu => Variant::TwoPass,
            Target::Cuda(_) => Variant::ColumnSplit,
        }
    }
}

/// Sets `opts`'s product choice for `target` from `--variant` (`None` = the
/// target's default; `auto` = the traffic model's pick per level for the
/// machine at hand, measured: the host by default, a GPU through
/// `Device::machine_params`, among the variants it runs). Returns the name the
/// reports print.
pub fn product_options(opts: &mut HierarchyOptions, target: &Target, variant: Option<&str>) -> Result<String> {
    match variant {
        Some(v) if v.eq_ignore_ascii_case("auto") => {
            opts.variant = None;
            if let Target::Cuda(dev) = target {
                opts.machine = Some(dev.machine_params()?);
                opts.candidates = DEVICE_VARIANTS.to_vec();
            }
            Ok("auto".into())
        }
        Some(v) => {
            let parsed: Variant = v.parse().map_err(|e: String| anyhow!("--variant: {e}"))?;
            opts.variant = Some(parsed);
            Ok(parsed.name().into())
        }
        None => {
            let v = target.default_variant();
            opts.variant = Some(v);
            Ok(v.name().into())
        }
    }
}

/// The beam hierarchy at `k` on the CPU with every level's product `variant`
/// (`None`: per level from the model of this host, measured).
pub fn beam_hierarchy(k: usize, variant: Option<Variant>) -> Result<Hierarchy> {
    beam_hierarchy_with(k, variant, &AmgOptions::default())
}

/// [`beam_hierarchy`] with the mesh setup's options `amg` (aggregation, filter, ...).
pub fn beam_hierarchy_with(k: usize, variant: Option<Variant>, amg: &AmgOptions) -> Result<Hierarchy> {
    let problem = BeamProblem::build(k).with_context(|| format!("building the beam at k = {k}"))?;
    let opts = HierarchyOptions {
        variant,
        amg: amg.clone(),
        ..HierarchyOptions::default()
    };
    Hierarchy::build(problem.a, &problem.near_null, problem.modes, &opts, &mut |_| {})
        .context("setting up the AMG hierarchy")
}
