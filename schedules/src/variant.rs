//! The Galerkin-product variants of the paper's section `sec:variants`.
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// One way to compute `A_c = P^T A P`. Names say what a variant does; the
/// paper's labels are in the docs and accepted on the command line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Variant {
    /// V0: `W = A P` materialized, `R = P^T` explicit, `A_c = R W`.
    TwoPass,
    /// V1: the owner of coarse row `I` walks `R -> A -> P` and accumulates into
    /// `A_c` directly; no `W`.
    FusedRowWise,
    /// V2a: V1 visiting coarse rows in reverse Cuthill-McKee order of `A_c`'s graph.
    FusedReordered,
    /// V2b: every contribution bucketed by output slot in V0's order; each slot
    /// accumulates its run with no search and no atomics. Bitwise V0.
    SlotTiled,
    /// V2c: tiles of coarse rows that also compute (stage) the `W` rows they need.
    PanelTiled,
    /// V3: one record per block multiply in V0's traversal order, swept tile by tile.
    FlatStream,
    /// V4: `MTM` applied twice (`W' = A^T P`, `A_c = P^T W'`), no `R`, parallel over
    /// fine rows with atomic scatter. Not deterministic.
    OuterProductScatter,
    /// The GPU's default executor: V2b's slots assigned to `b_c` lanes (one output
    /// column each), run-length-sorted within windows. Bitwise V0.
    ColumnSplit,
    /// Row by row (Gustavson): each output row's slots in chunks held on chip,
    /// swept segment by segment (one `X` block times a run of one `Y` row's
    /// blocks, positions from the schedule). Bitwise V0.
    RowGustavson,
    /// Column split's schedule with each lane owning a small tile of the output
    /// block and reading its operands straight into registers (no staging in
    /// shared memory). Bitwise V0.
    LaneTiled,
    /// Column split's schedule with the inner index split over lanes: each lane
    /// sums one `k` of every contribution and the `K` partials are added at the
    /// end. Deterministic, not bitwise V0 (equal to rounding).
    KSplit,
    /// Column split's schedule executed by FP64 tensor-core MMA on the device
    /// (one warp per slot, the blocks as `8 x 8 x 4` fragments). Deterministic,
    /// not bitwise V0 (the unit sums four products at once; equal to rounding).
    TensorCore,
    /// The tensor core with the `A P` stage's slots paired: slots `(i, K)` and
    /// `(i + 1, K)` of `W` (rows `2r`, `2r + 1`) share every `P[l, K]` both rows
    /// reach, so one `B` fragment (and one MMA where the `A` blocks fit half of
    /// the accumulator) serves both; the merged entries are the inspector's.
    /// Deterministic, not bitwise V0 (equal to rounding, as the tensor core).
    TensorPair,
    /// The tensor pair over half the work of a symmetric `A`: `A_c = X + X^T`
    /// with `X = P^T (L + D/2) P` (`L` the strictly lower blocks, `D` the
    /// diagonal ones), the sum written to both slots of each transposed pair,
    /// so the result is exactly symmetric. Device only (the host runs V0 for
    /// it); refused for a structurally non-symmetric `A`. Deterministic, not
    /// bitwise V0 (equal to rounding).
    TensorPairSym,
}

impl Variant {
    pub const ALL: [Variant; 14] = [
        Variant::TwoPass,
        Variant::FusedRowWise,
        Variant::FusedReordered,
        Variant::SlotTiled,
        Variant::PanelTiled,
        Variant::FlatStream,
        Variant::OuterProductScatter,
        Variant::ColumnSplit,
        Variant::RowGustavson,
        Variant::LaneTiled,
        Variant::KSplit,
        Variant::TensorCore,
        Variant::TensorPair,
        Variant::TensorPairSym,
    ];

    /// The paper's label.
    pub fn label(self) -> &'static str {
        match self {
            Variant::TwoPass => "V0",
            Variant::FusedRowWise => "V1",
            Variant::FusedReordered => "V2a",
            Variant::SlotTiled => "V2b",
            Variant::PanelTiled => "V2c",
            Variant::FlatStream => "V3",
            Variant::OuterProductScatter => "V4",
            Variant::ColumnSplit => "colsplit",
            Variant::RowGustavson => "gustavson",
            Variant::LaneTiled => "lanetile",
            Variant::KSplit => "ksplit",
            Variant::TensorCore => "dmma",
            Variant::TensorPair => "dmma2",
            Variant::TensorPairSym => "dmma2s",
        }
    }

    /// The name used in files and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Variant::TwoPass => "two-pass",
            Variant::FusedRowWise => "fused",
            Variant::FusedReordered => "fused-rcm",
            Variant::SlotTiled => "slot-tiled",
            Variant::PanelTiled => "panel-tiled",
            Variant::FlatStream => "flat-stream",
            Variant::OuterProductScatter => "outer-product",
            Variant::ColumnSplit => "column-split",
            Variant::RowGustavson => "row-gustavson",
            Variant::LaneTiled => "lane-tiled",
            Variant::KSplit => "k-split",
            Variant::TensorCore => "tensor-core",
            Variant::TensorPair => "tensor-pair",
            Variant::TensorPairSym => "tensor-pair-sym",
        }
    }

    /// Whether the result is promised byte-identical to V0's (on the CPU).
    pub fn bitwise_v0(self) -> bool {
        matches!(
            self,
            Variant::TwoPass
                | Variant::SlotTiled
                | Variant::PanelTiled
                | Variant::FlatStream
                | Variant::ColumnSplit
                | Variant::RowGustavson
                | Variant::LaneTiled
        )
    }
}

impl fmt::Display for Variant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.name(), self.label())
    }
}

impl FromStr for Variant {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let s = s.to_ascii_lowercase();
        Variant::ALL
            .into_iter()
            .find(|v| v.name() == s || v.label().to_ascii_lowercase() == s)
            .ok_or_else(|| {
                let names: Vec<_> = Variant::ALL
                    .iter()
                    .map(|v| format!("{} ({})", v.name(), v.label()))
                    .collect();
                format!("unknown variant '{s}'; choose one of: {}, or auto", names.join(", "))
            })
    }
}
