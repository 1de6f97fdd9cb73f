//! `ptap model`: the traffic model of the paper's section `sec:model` per
//! Galerkin product of a hierarchy, with the predicted best variant.
use crate::common::Operands;
use anyhow::{bail, Result};
use clap::Args;
use ptap_io::BlockSpec;
use ptap_schedules::inspect::{pick, Pick};
use ptap_schedules::model::{render_table, MachineParams, ModelInput, Prediction};
use ptap_schedules::{BlockShape, ProductPolicy, TwoPassSchedule, Variant};
use ptap_sparse::BlockCsr;
use serde::Serialize;
use std::path::PathBuf;
use std::sync::Arc;

#[derive(Args, Debug)]
pub struct ModelArgs {
    #[command(flatten)]
    operands: Operands,
    /// Machine parameters: `cpu` (this machine, measured: copy bandwidth,
    /// last-level cache, threads), a JSON file of MachineParams (FILE.json), or
    /// the paper's presets `a100`, `h200`.
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

/// The machine `--machine` names: `cpu` measured here, a `.json` file read,
/// or a preset (`a100`, `h200`) for the paper's tables.
pub fn machine_from(arg: &str) -> Result<MachineParams> {
    if arg.ends_with(".json") || std::path::Path::new(arg).is_file() {
        return Ok(MachineParams::from_json_file(arg)?);
    }
    if arg.eq_ignore_ascii_case("cpu") {
        return Ok(MachineParams::measure_cpu());
    }
    MachineParams::preset(arg, 0.0).map_err(|e| anyhow::anyhow!("--machine {arg}: {e}, or a FILE.json"))
}

pub fn run(args: &ModelArgs) -> Result<()> {
    // A named machine is resolved (a file read, a preset) before any work; the
    // measured `cpu` after the operands are checked (their headers, the beam's
    // memory), so a bad input is refused before anything is measured or built.
    let named = (!args.machine.eq_ignore_ascii_case("cpu"))
        .then(|| machine_from(&args.machine))
        .transpose()?;
    let products: Vec<(String, BlockCsr, BlockCsr)> = match (&args.operands.beam, &args.operands.a, &args.operands.p) {
        (Some(k), _, _) => {
            let k = crate::common::validate_k(*k as i64)?;
            let h = ptap_drivers::target::beam_hierarchy(k, Some(Variant::TwoPass))?;
            (0..h.num_levels() - 1)
                .map(|l| {
                    let lev = &h.levels()[l];
                    (format!("l{l}"), lev.a.clone(), lev.transfer.as_ref().unwrap().p.clone())
                })
                .collect()
        }
        (None, Some(a), Some(p)) => {
            ptap_io::check_operand_headers(a, p)?;
            let am = ptap_io::read_matrix(a, BlockSpec::Infer)?;
            let pm = ptap_io::read_matrix(p, BlockSpec::Infer)?;
            vec![("A,P".to_string(), am, pm)]
        }
        _ => bail!("give either --beam K or both --a FILE and --p FILE"),
    };
    let machine = match named {
        Some(m) => m,
        None => machine_from(&args.machine)?,
    };
    let policy = ProductPolicy::model(machine.clone(), &Variant::ALL).with_exact_counts();
    let mut levels = Vec::new();
    let mut rendered = Vec::new();
    for (name, a, p) in &products {
        // The inspector's own pick, fed its exact counts (block multiplies, V3 records, V2c halo).
        let base = Arc::new(TwoPassSchedule::inspect(
            a.pattern_arc().clone(),
            p.pattern_arc().clone(),
        )?);
        let (bf, bc) = p.block_shape();
        let Pick { variant: best, model } = pick(&base, BlockShape::new(bf, bc), &policy)?;
        let model = model.expect("a model policy reports its inputs");
        let (input, predictions) = (model.input, model.predictions);
        rendered.push((name.clone(), input, predictions.clone()));
        levels.push(LevelModel {
            product: name.clone(),
            input,
            predictions,
            predicted_best: best,
        });
    }
    out!("{}", render_table(&rendered, &machine));
    for l in &levels {
        outln!("{}: predicted best {}", l.product, l.predicted_best);
    }
    if let Some(path) = &args.json {
        #[derive(Serialize)]
        struct Out<'a> {
            machine: &'a MachineParams,
            levels: &'a [LevelModel],
        }
        crate::common::write_json(
            path,
            &Out {
                machine: &machine,
                levels: &levels,
            },
        )?;
    }
    Ok(())
}
