//! A time loop over ptap, as a time-stepping or Newton code would write it.
//!
//! Build the AMG hierarchy once (or load it from a schedule cache), then on
//! every step hand ptap the new operator values and a right-hand side:
//! `refresh` replays the numeric Galerkin products from the schedules and
//! refreshes smoothers and the coarse factor; `solve` runs CG + AMG. Nothing is
//! aggregated, searched or allocated inside the loop.
//!
//! Run: `cargo run --release -p ptap-cli --example time_loop -- [K] [STEPS] [CACHE]`
//! (defaults 4, 5, no cache). Replace the beam by your own assembly: all the
//! loop needs is the fine operator's values in the same block pattern.
use ptap_fem::{modulus_from_fn, BeamProblem};
use ptap_runtime::bundle::hierarchy_bundle;
use ptap_runtime::solver::CgWorkspace;
use ptap_runtime::{CgOptions, Hierarchy, HierarchyOptions};
use ptap_schedules::file::{write_bundle, MappedBundle};
use std::path::PathBuf;
use std::sync::Arc;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let k: usize = args.next().map_or(Ok(4), |s| s.parse())?;
    let steps: usize = args.next().map_or(Ok(5), |s| s.parse())?;
    let cache: Option<PathBuf> = args.next().map(PathBuf::from);

    // Your problem: the fine operator A (block CSR), its near-null space
    // (row-major, dofs x modes) and a right-hand side.
    let mut problem = BeamProblem::build(k)?;
    let options = HierarchyOptions::default();

    // Once: the hierarchy, from the schedule cache when one was written for this
    // pattern and these options (the fingerprints are checked), else built.
    let cached = cache
        .as_ref()
        .filter(|p| p.exists())
        .map(|p| -> Result<Hierarchy, Box<dyn std::error::Error>> {
            let bundle = Arc::new(MappedBundle::open(p)?);
            Ok(Hierarchy::from_bundle(
                problem.a.clone(),
                problem.modes,
                &bundle,
                &options,
                &mut |_| {},
            )?)
        });
    let mut h = match cached {
        Some(Ok(h)) => h,
        other => {
            if let Some(Err(e)) = other {
                eprintln!("schedule cache unusable ({e}); rebuilding");
            }
            let h = Hierarchy::build(
                problem.a.clone(),
                &problem.near_null,
                problem.modes,
                &options,
                &mut |_| {},
            )?;
            if let Some(p) = &cache {
                write_bundle(p, &hierarchy_bundle(&h, "time_loop example"))?;
            }
            h
        }
    };

    // Every step: new values, refresh, solve. The workspace is reused.
    let n = problem.a.scalar_rows();
    let mut x = vec![0.0; n];
    let mut ws = CgWorkspace::new(n, 500);
    let cg = CgOptions {
        rtol: 1e-8,
        max_iterations: 500,
    };
    for step in 1..=steps {
        // Your code changes the operator here; the beam stiffens progressively.
        let stiffness = 1.0 + step as f64 / steps as f64;
        let modulus = modulus_from_fn(&problem.mesh, |c| 1.0 + stiffness * (c[0] / 10.0));
        problem.reassemble(&modulus)?;
        let setup_s = h.refresh(problem.a.values())?;
        let report = h.solve(&problem.rhs, &mut x, &cg, &mut ws)?; // x: warm start from the last step
        let tip = x.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        println!(
            "step {step}: matrix setup {:.4} s, {} CG iterations, max |u| = {tip:.6}",
            setup_s, report.iterations
        );
    }
    Ok(())
}
