//! Where a driver runs (`Target`, and the rule for the product variant
//! `--variant` names, both the front door crate `ptap`'s), and the beam
//! hierarchy the CPU-side drivers measure on.
use anyhow::{Context, Result};
use ptap_amg::AmgOptions;
use ptap_fem::BeamProblem;
use ptap_runtime::{Hierarchy, HierarchyOptions};
use ptap_schedules::Variant;

pub use ptap::{product_options, DeviceChoice, Target};

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
