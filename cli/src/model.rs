//! `ptap model`: the traffic model of the paper's section `sec:model` per
//! Galerkin product of a hierarchy, with the predicted best variant.
use anyhow::{bail, Context, Result};
use clap::Args;
use ptap_fem::BeamProblem;
use ptap_io::BlockSpec;
use ptap_runtime::{Hierarchy, HierarchyOptions};
use ptap_schedules::model::{predict, render_table, select, ExactCounts, MachineParams, ModelInput, Prediction};
use ptap_schedules::variants::{row_work, PanelTiledSchedule, PANEL_BUDGET_BYTES};
use ptap_schedules::{TwoPassSchedule, Variant};
use ptap_sparse::BlockCsr;
use serde::Serialize;
use std::path::PathBuf;
use std::sync::Arc;

#[derive(Args, Debug)]
pub struct ModelArgs {
    #[command(flatten)]
    operands: crate::schedule_cmd::Operands,
    /// Machine parameters: a preset (cpu, a100, h200) or a JSON file of MachineParams.
    /// `cpu` measures this machine's copy bandwidth first.
    #[arg(long, default_value = "cpu")]
    machine: String,
    /// Write the inputs and predictions as JSON.
    #[arg(long, value_name = "PATH")]
    json: Option<PathBuf>,
}

#[derive(Serialize)]
struct LevelModel {
    product: String,
    input: ModelInput,
    predictions: Vec<Prediction>,
    predicted_best: Variant,
}

/// The inspector's exact counts for the model (block multiplies, V3 records, V2c halo).
pub fn model_input(a: &BlockCsr, p: &BlockCsr) -> Result<ModelInput> {
    let (bf, bc) = p.block_shape();
    let base = Arc::new(TwoPassSchedule::inspect(
        a.pattern_arc().clone(),
        p.pattern_arc().clone(),
    )?);
    let ap: usize = row_work(&base.a, &base.p).iter().sum();
    let rw: usize = row_work(&base.r, &base.w).iter().sum();
    let (pp, ap_pat) = (&base.p, &base.a);
    let v1_ra: usize = (0..pp.nrows()).map(|j| pp.row(j).len() * ap_pat.row(j).len()).sum();
    let v1_rap: usize = (0..pp.nrows())
        .map(|j| pp.row(j).len() * ap_pat.row(j).iter().map(|&l| pp.row(l as usize).len()).sum::<usize>())
        .sum();
    let panel = PanelTiledSchedule::inspect(base.clone(), PANEL_BUDGET_BYTES / (8 * bf * bc));
    let exact = ExactCounts {
        v0_ap_multiplies: Some(ap),
        v0_rw_multiplies: Some(rw),
        v1_ra_multiplies: Some(v1_ra),
        v1_rap_multiplies: Some(v1_rap),
        halo: Some(panel.halo_factor),
        v2c_panel_blocks: Some(panel.max_panel_blocks),
        v3_records: Some(ap + rw),
        v3_bytes_per_record: Some(12.0),
    };
    // ptap's V3 materializes W between its two record streams.
    Ok(ModelInput::new(base.stats, bf, bc)
        .with_exact(exact)
        .with_v3_materializes_w(true))
}

pub fn machine_from(arg: &str) -> Result<MachineParams> {
    if arg.ends_with(".json") {
        let text =
            std::fs::read_to_string(arg).with_context(|| format!("cannot read machine parameters from {arg}"))?;
        let m: MachineParams =
            serde_json::from_str(&text).with_context(|| format!("{arg} is not a JSON object of machine parameters"))?;
        m.validate().map_err(|e| anyhow::anyhow!("{arg}: {e}"))?;
        return Ok(m);
    }
    let bw = if arg.eq_ignore_ascii_case("cpu") {
        crate::bench::measure_copy_bandwidth()
    } else {
        0.0
    };
    MachineParams::preset(arg, bw).map_err(|e| anyhow::anyhow!("--machine {arg}: {e}"))
}

pub fn run(args: &ModelArgs) -> Result<()> {
    let machine = machine_from(&args.machine)?;
    let products: Vec<(String, BlockCsr, BlockCsr)> = match (&args.operands.beam, &args.operands.a, &args.operands.p) {
        (Some(k), _, _) => {
            let problem = BeamProblem::build(*k).with_context(|| format!("building the beam at k = {k}"))?;
            let h = Hierarchy::build(
                problem.a,
                &problem.near_null,
                6,
                &HierarchyOptions::default(),
                &mut |_| {},
            )?;
            (0..h.num_levels() - 1)
                .map(|l| {
                    let lev = &h.levels()[l];
                    (format!("l{l}"), lev.a.clone(), lev.transfer.as_ref().unwrap().p.clone())
                })
                .collect()
        }
        (None, Some(a), Some(p)) => {
            let am = ptap_io::read_matrix(a, BlockSpec::Infer)?;
            let pm = ptap_io::read_matrix(p, BlockSpec::Infer)?;
            vec![("A,P".to_string(), am, pm)]
        }
        _ => bail!("give either --beam K or both --a FILE and --p FILE"),
    };
    let mut levels = Vec::new();
    let mut rendered = Vec::new();
    for (name, a, p) in &products {
        let input = model_input(a, p)?;
        let predictions = predict(&input, &machine);
        let best = select(&input, &machine, &Variant::ALL);
        rendered.push((name.clone(), input, predictions.clone()));
        levels.push(LevelModel {
            product: name.clone(),
            input,
            predictions,
            predicted_best: best,
        });
    }
    print!("{}", render_table(&rendered, &machine));
    for l in &levels {
        println!("{}: predicted best {}", l.product, l.predicted_best);
    }
    if let Some(path) = &args.json {
        #[derive(Serialize)]
        struct Out<'a> {
            machine: &'a MachineParams,
            levels: &'a [LevelModel],
        }
        let text = serde_json::to_string_pretty(&Out {
            machine: &machine,
            levels: &levels,
        })?;
        std::fs::write(path, text + "\n")
            .with_context(|| format!("cannot write the JSON report to {}", path.display()))?;
    }
    Ok(())
}
