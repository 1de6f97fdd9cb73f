//! The inspector's one entry point: the two-pass patterns of `P^T A P`, the
//! variant (given, or the traffic model's pick on a machine), and that
//! variant's schedule. The hierarchy, the command line and every backend call
//! [`inspect`] (or [`inspect_with_base`] when they already hold the patterns).
use crate::model::{predict_variants, select, ExactCounts, MachineParams, ModelInput, Prediction};
use crate::two_pass::TwoPassSchedule;
use crate::variant::Variant;
use crate::variants::{row_work, PanelTiledSchedule, VariantSchedule, PANEL_BUDGET_BYTES};
use crate::ScheduleError;
use ptap_sparse::BlockPattern;
use std::sync::Arc;

/// Block sizes of a product: `A` has `bf x bf` blocks, `P` has `bf x bc`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockShape {
    pub bf: usize,
    pub bc: usize,
}

impl BlockShape {
    pub fn new(bf: usize, bc: usize) -> Self {
        Self { bf, bc }
    }
}

/// What the model is fed about a product.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ModelCounts {
    /// [`ModelInput::new`] on the two-pass statistics: the paper's
    /// approximations, free once the patterns exist (the hierarchy's choice).
    #[default]
    Stats,
    /// [`ModelInput::counted`]: the inspector's exact multiply, record and
    /// V2c-halo counts (costs a V2c inspection).
    Exact,
}

/// How [`inspect`] chooses the variant.
#[derive(Clone, Debug, PartialEq)]
pub enum ProductPolicy {
    /// This variant, whatever the model would say.
    Fixed(Variant),
    /// The traffic model's pick among `candidates` on `machine` (ties go to the
    /// earlier candidate, see [`select`]; an empty list gives V0). `machine`
    /// should be measured ([`MachineParams::measure_cpu`], [`MachineParams::gpu`])
    /// or read from a file, not a preset.
    Model {
        machine: MachineParams,
        candidates: Vec<Variant>,
        counts: ModelCounts,
    },
}

impl ProductPolicy {
    /// The model's pick among `candidates` on `machine`, from the two-pass statistics.
    pub fn model(machine: MachineParams, candidates: &[Variant]) -> Self {
        Self::Model {
            machine,
            candidates: candidates.to_vec(),
            counts: ModelCounts::Stats,
        }
    }

    /// The same policy with the model fed the inspector's exact counts
    /// (no effect on [`ProductPolicy::Fixed`]).
    pub fn with_exact_counts(mut self) -> Self {
        if let Self::Model { counts, .. } = &mut self {
            *counts = ModelCounts::Exact;
        }
        self
    }
}

/// Why a variant was picked: what the model saw and predicted.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelPick {
    pub input: ModelInput,
    /// One per candidate, in the candidates' order.
    pub predictions: Vec<Prediction>,
}

/// The variant a policy picks for a product, without inspecting it.
#[derive(Clone, Debug, PartialEq)]
pub struct Pick {
    pub variant: Variant,
    /// `Some` when the model picked.
    pub model: Option<ModelPick>,
}

/// What the inspector produced for one product.
#[derive(Clone, Debug)]
pub struct Inspected {
    /// The two-pass patterns and statistics every variant shares.
    pub base: Arc<TwoPassSchedule>,
    /// The chosen variant's schedule (its `base()` is `base`).
    pub schedule: VariantSchedule,
    /// `Some` when the model picked the variant.
    pub model: Option<ModelPick>,
}

impl Inspected {
    pub fn variant(&self) -> Variant {
        self.schedule.variant()
    }
}

/// Inspects `P^T A P` for the patterns of `A` (`bf x bf` blocks) and `P`
/// (`bf x bc`): the two-pass patterns, then the variant `policy` gives, then its
/// schedule. Same result as [`TwoPassSchedule::inspect`] followed by
/// [`select`] and [`VariantSchedule::inspect`].
pub fn inspect(
    a: Arc<BlockPattern>,
    p: Arc<BlockPattern>,
    shape: BlockShape,
    policy: &ProductPolicy,
) -> Result<Inspected, ScheduleError> {
    let base = Arc::new(TwoPassSchedule::inspect(a, p)?);
    inspect_with_base(base, shape, policy)
}

/// [`inspect`] for a caller that already holds the two-pass patterns (a
/// loaded schedule bundle, or a backend that wants another variant than the
/// one the mesh setup picked).
pub fn inspect_with_base(
    base: Arc<TwoPassSchedule>,
    shape: BlockShape,
    policy: &ProductPolicy,
) -> Result<Inspected, ScheduleError> {
    let Pick { variant, model } = pick(&base, shape, policy)?;
    let schedule = VariantSchedule::try_inspect(variant, base.clone(), shape.bf * shape.bc)?;
    Ok(Inspected { base, schedule, model })
}

/// The variant `policy` gives for the product `base` describes (the first
/// half of [`inspect_with_base`]; `ptap model` stops here).
pub fn pick(base: &Arc<TwoPassSchedule>, shape: BlockShape, policy: &ProductPolicy) -> Result<Pick, ScheduleError> {
    match policy {
        ProductPolicy::Fixed(v) => Ok(Pick {
            variant: *v,
            model: None,
        }),
        ProductPolicy::Model {
            machine,
            candidates,
            counts,
        } => {
            machine.validate()?;
            let input = match counts {
                ModelCounts::Stats => ModelInput::new(base.stats, shape.bf, shape.bc),
                ModelCounts::Exact => ModelInput::counted(base, shape.bf, shape.bc),
            };
            let variant = select(&input, machine, candidates);
            let predictions = predict_variants(&input, machine, candidates);
            Ok(Pick {
                variant,
                model: Some(ModelPick { input, predictions }),
            })
        }
    }
}

impl ModelInput {
    /// The model of the product `base` describes with the inspector's exact
    /// counts: V0's block multiplies per stage, V1's `R A` and `(R A) P`
    /// products, V2c's halo and largest panel (from a V2c inspection at
    /// [`PANEL_BUDGET_BYTES`]), V3's records at 12 B (three `u32`). This
    /// crate's V3 materializes `W` between its two record streams, and the
    /// input says so.
    pub fn counted(base: &Arc<TwoPassSchedule>, bf: usize, bc: usize) -> Self {
        let ap: usize = row_work(&base.a, &base.p).iter().sum();
        let rw: usize = row_work(&base.r, &base.w).iter().sum();
        let (pp, ap_pat) = (&base.p, &base.a);
        let v1_ra: usize = (0..pp.nrows()).map(|j| pp.row(j).len() * ap_pat.row(j).len()).sum();
        let v1_rap: usize = (0..pp.nrows())
            .map(|j| pp.row(j).len() * ap_pat.row(j).iter().map(|&l| pp.row(l as usize).len()).sum::<usize>())
            .sum();
        let panel = PanelTiledSchedule::inspect(base.clone(), PANEL_BUDGET_BYTES / (8 * bf * bc).max(1));
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
        Self::new(base.stats, bf, bc)
            .with_exact(exact)
            .with_v3_materializes_w(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::file::ScheduleRecord;

    /// A random square pattern with its diagonal and a random `P` with at
    /// least one block per row (xorshift, so the test is reproducible).
    fn random_patterns(n: usize, m: usize, seed: u64) -> (Arc<BlockPattern>, Arc<BlockPattern>) {
        let mut s = seed;
        let mut next = move || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            s
        };
        let mut a_rows = Vec::new();
        let mut p_rows = Vec::new();
        for i in 0..n {
            let mut row: Vec<u32> = (0..4).map(|_| (next() % n as u64) as u32).collect();
            row.push(i as u32);
            row.sort_unstable();
            row.dedup();
            a_rows.push(row);
            let mut prow: Vec<u32> = (0..1 + next() % 3).map(|_| (next() % m as u64) as u32).collect();
            prow.sort_unstable();
            prow.dedup();
            p_rows.push(prow);
        }
        // A symmetric A (the symmetric tensor pair refuses any other).
        for i in 0..n {
            for j in a_rows[i].clone() {
                a_rows[j as usize].push(i as u32);
            }
        }
        for row in &mut a_rows {
            row.sort_unstable();
            row.dedup();
        }
        let a = BlockPattern::from_rows(n, &a_rows).unwrap();
        let p = BlockPattern::from_rows(m, &p_rows).unwrap();
        (Arc::new(a), Arc::new(p))
    }

    /// A schedule as the file format stores it: every array, element by element.
    fn bytes(s: &VariantSchedule, shape: BlockShape) -> ScheduleRecord {
        s.to_record(0, shape.bf, shape.bc)
    }

    #[test]
    fn fixed_gives_todays_two_step_schedule_for_every_variant() {
        let (a, p) = random_patterns(300, 40, 0x9e37_79b9_7f4a_7c15);
        let shape = BlockShape::new(3, 6);
        let base = Arc::new(TwoPassSchedule::inspect(a.clone(), p.clone()).unwrap());
        for v in Variant::ALL {
            let today = VariantSchedule::inspect(v, base.clone(), shape.bf * shape.bc);
            let got = inspect(a.clone(), p.clone(), shape, &ProductPolicy::Fixed(v)).unwrap();
            assert_eq!(got.variant(), v);
            assert!(got.model.is_none());
            assert!(Arc::ptr_eq(got.schedule.base(), &got.base));
            assert_eq!(got.base.stats, base.stats, "{v}");
            assert_eq!(bytes(&got.schedule, shape), bytes(&today, shape), "{v}");
            let reused = inspect_with_base(base.clone(), shape, &ProductPolicy::Fixed(v)).unwrap();
            assert!(Arc::ptr_eq(&reused.base, &base));
            assert_eq!(bytes(&reused.schedule, shape), bytes(&today, shape), "{v}");
        }
    }

    #[test]
    fn model_picks_what_select_picks() {
        let (a, p) = random_patterns(400, 30, 0x1234_5678_9abc_def1);
        let shape = BlockShape::new(3, 6);
        let base = Arc::new(TwoPassSchedule::inspect(a.clone(), p.clone()).unwrap());
        let cands = [Variant::ColumnSplit, Variant::SlotTiled, Variant::TwoPass];
        for machine in [MachineParams::a100(), MachineParams::h200(), MachineParams::cpu(12e9)] {
            for (candidates, counts) in [
                (&Variant::ALL[..], ModelCounts::Stats),
                (&cands[..], ModelCounts::Exact),
            ] {
                let input = match counts {
                    ModelCounts::Stats => ModelInput::new(base.stats, shape.bf, shape.bc),
                    ModelCounts::Exact => ModelInput::counted(&base, shape.bf, shape.bc),
                };
                let want = select(&input, &machine, candidates);
                let mut policy = ProductPolicy::model(machine.clone(), candidates);
                if counts == ModelCounts::Exact {
                    policy = policy.with_exact_counts();
                }
                let got = inspect(a.clone(), p.clone(), shape, &policy).unwrap();
                assert_eq!(got.variant(), want, "{} {counts:?}", machine.name);
                let m = got.model.unwrap();
                assert_eq!(m.input, input);
                assert_eq!(m.predictions.len(), candidates.len());
                let today = VariantSchedule::inspect(want, base.clone(), shape.bf * shape.bc);
                assert_eq!(bytes(&got.schedule, shape), bytes(&today, shape));
            }
        }
        // An empty candidate list gives V0; a bad machine is an error, not a pick.
        let empty = ProductPolicy::model(MachineParams::a100(), &[]);
        assert_eq!(pick(&base, shape, &empty).unwrap().variant, Variant::TwoPass);
        let bad = ProductPolicy::model(MachineParams::a100().with_dram_bandwidth(f64::NAN), &Variant::ALL);
        let e = inspect(a, p, shape, &bad).unwrap_err().to_string();
        assert!(e.contains("dram_bandwidth"), "{e}");
    }

    #[test]
    fn shapes_are_checked() {
        let (a, _) = random_patterns(20, 5, 7);
        let (_, p) = random_patterns(30, 5, 9);
        let e = inspect(a, p, BlockShape::new(3, 6), &ProductPolicy::Fixed(Variant::TwoPass)).unwrap_err();
        assert!(matches!(e, ScheduleError::Shapes { p_rows: 30, .. }), "{e}");
    }
}
