//! The traffic model of the paper (sections `sec:space` and `sec:model`,
//! table `tab:model`): per Galerkin product and variant, the DRAM stream floor,
//! the request volume, the `W` footprint, the schedule footprint and the flops,
//! from the measured `n_P` and `w` of the product; a roofline over machine
//! parameters turns them into a predicted time, and [`select`] picks the
//! variant with the least.
//!
//! # Counting rules
//!
//! Every quantity is in bytes of dense FP64 blocks: `B_A = 8 b_f^2`,
//! `B_P = B_W = 8 b_f b_c`, `B_C = 8 b_c^2`. With `m1` the block multiplies of
//! V0's `A P` stage (`~ n_P Z_A`) and `m2` those of its `R W` stage
//! (`~ n_P Z_W`), the paper's two rules are applied to each variant:
//!
//! * **Stream rule** ([`ModelRow::dram_floor_bytes`]): a pass that touches every
//!   block of an operand once costs its byte size in DRAM; an intermediate that
//!   is written and read back costs double. A per-contribution schedule that the
//!   numeric sweeps on every refresh (V2b, column-split, V3) is a stream too and
//!   is counted; the index arrays of the CSR patterns (4 B per block, against
//!   72-288 B of values) are left out of every floor, as in the paper.
//! * **Touch rule** ([`ModelRow::read_requests_bytes`] and friends): every block
//!   touch of a sparse traversal is a request to whatever tier holds the block.
//!   Operand reads of the traversal are charged to the L2 tier (the GPU's L2, a
//!   CPU's L2/L3): they are the redundancy the paper measures (V1's "read
//!   requests"). Read-modify-writes of an accumulator that lives on chip
//!   (registers, shared memory, L1: V0's row accumulator, V3's slot) and
//!   re-touches of an operand a tile already holds are charged to the on-chip
//!   tier. Atomic read-modify-writes into global memory (V4) are charged to the
//!   L2 tier, scaled by the machine's [`MachineParams::atomic_penalty`].
//!   `R`'s own `Z_P` touches (one per block of `R`, under 0.5 % of any request
//!   volume here) are left out of every variant, as the paper's V1 row does.
//!
//! # Time
//!
//! [`predict`] is a roofline: the time of a variant is the largest of
//! `DRAM bytes / DRAM bandwidth`, `(reads + penalty x atomics) / L2 bandwidth`,
//! `on-chip bytes / on-chip bandwidth` and `flops / FP64 peak`, and the
//! [`Bound`] says which term it was. The DRAM bytes are the floor, less the
//! write-and-read of a materialized `W` when `W` fits in half the last-level
//! cache (then it is produced and consumed there). Like the paper's model it is
//! meant for ratios, orderings and crossovers, not absolute times: the measured
//! L2 bytes exceed the block-touch count by about ten (`sec:measured`), and the
//! search and lane-utilization effects that separate V0 from V2b and V2b from
//! the column-split executor on a GPU (`sec:perf-rap`) are not bytes; the
//! model sees those variants as near ties, which [`select`] resolves by
//! total resource use and then by the caller's order of preference.
use crate::two_pass::ProductStats;
use crate::variant::Variant;
use serde::{Deserialize, Serialize};
use std::fmt;
use thiserror::Error;

/// Bytes of one FP64 scalar.
pub const SCALAR_BYTES: f64 = 8.0;
/// Bytes of one block index (`u32`) in a pattern or schedule.
pub const INDEX_BYTES: f64 = 4.0;
/// Bytes of one row/slot pointer (`usize` / `u64`).
pub const POINTER_BYTES: f64 = 8.0;
/// Bytes per V3 record that the paper's table assumes ("8 B/entry"). This
/// crate's [`crate::variants::FlatRecords`] store three `u32` (12 B); pass that
/// through [`ExactCounts::v3_bytes_per_record`].
pub const PAPER_V3_BYTES_PER_RECORD: f64 = 8.0;
/// The halo factor at which the paper tabulates the V2c floor (the large-tile limit).
pub const PAPER_TABLE_HALO: f64 = 0.25;
/// Relative tolerance within which [`select`] treats predicted times as tied.
pub const TIE_RTOL: f64 = 0.01;

/// Counts the inspector can supply exactly; where one is absent the model uses
/// the paper's approximation, named on each field.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ExactCounts {
    /// Block multiplies of V0's `A P` stage (`sum_i sum_{k in A(i)} |P(k)|`);
    /// default `n_P Z_A`, or [`ProductStats::block_multiplies`] split in the
    /// approximations' proportion when that total is known.
    pub v0_ap_multiplies: Option<usize>,
    /// Block multiplies of V0's `R W` stage (`sum_k |P(k)| |W(k)|`); default
    /// `n_P Z_W` (same rule as above).
    pub v0_rw_multiplies: Option<usize>,
    /// `R A` products of the fused walk, one per `A`-block touch
    /// (`sum_k n_P(k) |A(k)|`); default `n_P Z_A`.
    pub v1_ra_multiplies: Option<usize>,
    /// `(R A) P` products of the fused walk, one per `P`-block touch; default
    /// `n_P m1` (`~ n_P^2 Z_A`). [`crate::variants::FusedSchedule`]'s
    /// `block_multiplies` is the sum of this and `v1_ra_multiplies`. Used only
    /// together with `v1_ra_multiplies`.
    pub v1_rap_multiplies: Option<usize>,
    /// V2c's measured halo factor `h` ([`crate::variants::PanelTiledSchedule`]'s
    /// `halo_factor`); default `n_P - 1`, exact for tiles of one coarse row.
    pub halo: Option<f64>,
    /// V2c's largest staged panel, in `W` blocks; default `(1+h) Z_W / m_C`
    /// (one coarse row's panel).
    pub v2c_panel_blocks: Option<usize>,
    /// V3 records; default `m1 + m2` (one per block multiply).
    pub v3_records: Option<usize>,
    /// Bytes per V3 record; default [`PAPER_V3_BYTES_PER_RECORD`].
    pub v3_bytes_per_record: Option<f64>,
}

/// One Galerkin product as the model sees it: the hierarchy statistics of
/// `tab:hier`, the block sizes, and whatever the inspector counted exactly.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct ModelInput {
    pub stats: ProductStats,
    /// Fine block size `b_f` (rows of `P`'s blocks; `A`'s blocks are `b_f x b_f`).
    pub bf: usize,
    /// Coarse block size `b_c` (columns of `P`'s blocks).
    pub bc: usize,
    pub exact: ExactCounts,
    /// Whether V3 writes `W` to memory and reads it back. The paper's V3 does
    /// not (its schedule stream replaces the `W` write-and-read, `sec:variants`),
    /// and that is the default; an executor that sweeps the `A P` records into a
    /// full `W` before the `R W` records (this crate's
    /// [`crate::variants::FlatStreamSchedule`] does) should set it.
    pub v3_materializes_w: bool,
}

fn ratio(x: f64, y: f64) -> f64 {
    if y > 0.0 {
        x / y
    } else {
        0.0
    }
}

impl ModelInput {
    /// The model of a product whose statistics the inspector measured.
    pub fn new(stats: ProductStats, bf: usize, bc: usize) -> Self {
        Self {
            stats,
            bf,
            bc,
            exact: ExactCounts::default(),
            v3_materializes_w: false,
        }
    }

    /// From the raw counts of `tab:hier` (the per-row averages are derived;
    /// the block-multiply total is left unknown).
    #[allow(clippy::too_many_arguments)]
    pub fn from_counts(
        m_f: usize,
        z_a: usize,
        z_p: usize,
        z_w: usize,
        m_c: usize,
        z_c: usize,
        bf: usize,
        bc: usize,
    ) -> Self {
        let (f, c) = (m_f as f64, m_c as f64);
        let stats = ProductStats {
            m_f,
            z_a,
            n_a: ratio(z_a as f64, f),
            z_p,
            n_p: ratio(z_p as f64, f),
            z_w,
            w: ratio(z_w as f64, z_p as f64),
            m_c,
            z_c,
            n_c: ratio(z_c as f64, c),
            block_multiplies: 0,
        };
        Self::new(stats, bf, bc)
    }

    pub fn with_exact(mut self, exact: ExactCounts) -> Self {
        self.exact = exact;
        self
    }

    /// Sets V2c's halo factor `h`.
    pub fn with_halo(mut self, h: f64) -> Self {
        self.exact.halo = Some(h);
        self
    }

    pub fn with_v3_materializes_w(mut self, yes: bool) -> Self {
        self.v3_materializes_w = yes;
        self
    }

    /// `B_A = 8 b_f^2`.
    pub fn b_a(&self) -> f64 {
        SCALAR_BYTES * (self.bf * self.bf) as f64
    }
    /// `B_P = 8 b_f b_c` (also `B_W`).
    pub fn b_p(&self) -> f64 {
        SCALAR_BYTES * (self.bf * self.bc) as f64
    }
    /// `B_W = B_P`.
    pub fn b_w(&self) -> f64 {
        self.b_p()
    }
    /// `B_C = 8 b_c^2`.
    pub fn b_c(&self) -> f64 {
        SCALAR_BYTES * (self.bc * self.bc) as f64
    }

    /// `n_P = Z_P / m_F`.
    pub fn n_p(&self) -> f64 {
        if self.stats.n_p > 0.0 {
            self.stats.n_p
        } else {
            ratio(self.stats.z_p as f64, self.stats.m_f as f64)
        }
    }

    /// V0's block multiplies `(m1, m2)` of the `A P` and `R W` stages.
    pub fn v0_multiplies(&self) -> (f64, f64) {
        let n = self.n_p();
        let (ap, rw) = (n * self.stats.z_a as f64, n * self.stats.z_w as f64);
        let total = self.stats.block_multiplies as f64;
        match (self.exact.v0_ap_multiplies, self.exact.v0_rw_multiplies) {
            (Some(a), Some(r)) => (a as f64, r as f64),
            (Some(a), None) if total >= a as f64 && total > 0.0 => (a as f64, total - a as f64),
            (Some(a), None) => (a as f64, rw),
            (None, Some(r)) if total >= r as f64 && total > 0.0 => (total - r as f64, r as f64),
            (None, Some(r)) => (ap, r as f64),
            (None, None) if total > 0.0 && ap + rw > 0.0 => {
                let s = total / (ap + rw);
                (ap * s, rw * s)
            }
            (None, None) => (ap, rw),
        }
    }

    /// The fused walk's `(R A, (R A) P)` products, i.e. its `A` and `P` touches.
    pub fn v1_multiplies(&self) -> (f64, f64) {
        match (self.exact.v1_ra_multiplies, self.exact.v1_rap_multiplies) {
            (Some(ra), Some(rap)) => (ra as f64, rap as f64),
            _ => {
                let n = self.n_p();
                (n * self.stats.z_a as f64, n * self.v0_multiplies().0)
            }
        }
    }

    /// V2c's halo factor `h` (measured, or `n_P - 1`).
    pub fn halo(&self) -> f64 {
        self.exact.halo.unwrap_or_else(|| (self.n_p() - 1.0).max(0.0))
    }

    /// V3's record count and bytes per record.
    pub fn v3_records(&self) -> (f64, f64) {
        let (m1, m2) = self.v0_multiplies();
        let n = self.exact.v3_records.map_or(m1 + m2, |r| r as f64);
        (n, self.exact.v3_bytes_per_record.unwrap_or(PAPER_V3_BYTES_PER_RECORD))
    }

    /// Flops of one `A P` block multiply (`2 b_f^2 b_c`).
    fn flops_ap(&self) -> f64 {
        2.0 * (self.bf * self.bf * self.bc) as f64
    }
    /// Flops of one `R W` block multiply (`2 b_c^2 b_f`).
    fn flops_rw(&self) -> f64 {
        2.0 * (self.bc * self.bc * self.bf) as f64
    }
    /// V0's flops: `m1 2 b_f^2 b_c + m2 2 b_c^2 b_f`.
    pub fn v0_flops(&self) -> f64 {
        let (m1, m2) = self.v0_multiplies();
        m1 * self.flops_ap() + m2 * self.flops_rw()
    }
    /// V1's flops: the paper's `n_P x` V0's, or, with both exact V1 counts,
    /// `RA 2 b_c b_f^2 + RAP 2 b_c^2 b_f` (this crate's `(R A) P` walk).
    pub fn v1_flops(&self) -> f64 {
        match (self.exact.v1_ra_multiplies, self.exact.v1_rap_multiplies) {
            (Some(ra), Some(rap)) => ra as f64 * self.flops_ap() + rap as f64 * self.flops_rw(),
            _ => self.n_p() * self.v0_flops(),
        }
    }

    /// The `A_c` side of V4's atomics, `2 m2 B_C`: the paper's "V4 write requests" row.
    pub fn v4_ac_write_requests(&self) -> f64 {
        2.0 * self.v0_multiplies().1 * self.b_c()
    }

    fn pattern_bytes(rows: f64, nnz: f64) -> f64 {
        POINTER_BYTES * (rows + 1.0) + INDEX_BYTES * nnz
    }
}

/// The model of one variant on one product (machine independent).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct ModelRow {
    pub variant: Variant,
    /// Stream-rule floor: bytes every refresh must move to or from DRAM.
    pub dram_floor_bytes: f64,
    /// The part of the floor that is a materialized `W` written and read back
    /// (`2 B_W Z_W`), which leaves DRAM when `W` fits in cache.
    pub w_stream_bytes: f64,
    /// Touch-rule operand reads served by the L2 tier.
    pub read_requests_bytes: f64,
    /// Atomic read-modify-writes in global memory (read plus write, so twice
    /// the block), served by the L2 tier.
    pub atomic_requests_bytes: f64,
    /// `read_requests_bytes + atomic_requests_bytes`: the request volume.
    pub requests_bytes: f64,
    /// Touches served on chip: accumulator read-modify-writes, re-touches of an
    /// operand a tile holds, staged-panel traffic.
    pub onchip_bytes: f64,
    /// Bytes of `W` held in memory: `B_W Z_W` where `W` is materialized, V2c's
    /// per-tile panel, 0 for the fused variants.
    pub w_footprint_bytes: f64,
    /// Bytes of the symbolic data the numeric replays (patterns, contribution
    /// lists, records).
    pub schedule_bytes: f64,
    pub flops: f64,
}

impl ModelRow {
    /// Evaluates the model for one variant. How each variant's terms follow
    /// from the two rules:
    ///
    /// * **V0** (two-pass): floor `B_A Z_A + 2 B_P Z_P + 2 B_W Z_W + B_C Z_C`
    ///   (paper). Reads: `A` once per block, a `P` row per `A` block (`m1 B_P`),
    ///   a `W` row per `R` block (`m2 B_W`). On chip: the row accumulator's
    ///   read-modify-write per multiply (`2 m1 B_W + 2 m2 B_C`). Schedule: the
    ///   patterns of `W`, `R`, `A_c` and `R`'s gather map.
    /// * **V1** (fused): floor `B_A Z_A + 2 B_P Z_P + B_C Z_C` (paper). Reads
    ///   (paper): `n_P Z_A B_A + n_P^2 Z_A B_P`, i.e. the walk's `A` and `P`
    ///   touches. On chip: the `A_c` row accumulator per `(R A) P` product
    ///   (`2 RAP B_C`). Flops `n_P x` V0's (paper). Schedule: `R`'s and `A_c`'s
    ///   patterns.
    /// * **V2a** (fused, reordered): V1's floor and touches (reordering changes
    ///   which tier serves a touch, never the count), plus the row order.
    /// * **V2b** (slot-tiled): V0's two stages with the traversal replaced by a
    ///   contribution list (two indices per multiply, a pointer per slot) that
    ///   the numeric streams: floor = V0's + the list. Reads: V0's first
    ///   touches; a run re-touches its row operand (`A` or `P^T` block), which
    ///   the tile holds, so `m1 B_A + m2 B_P` go on chip. Accumulation is in
    ///   registers: no read-modify-write.
    /// * **Column split**: V2b's schedule plus the slot permutation (an index
    ///   per slot); same touches. **Lane tiled**, **k-split** and **tensor core** run the same
    ///   schedule and move the same bytes (they differ in how a device's L1
    ///   serves the touches, which this model does not count). **Tensor pair**
    ///   reads its merged entries instead of the runs: 16 bytes per entry of
    ///   the `A P` stage (1.6 contributions at k = 16) and 8 per contribution
    ///   of `P^T W`, within a few percent of the runs' bytes; counted as theirs.
    /// * **Row Gustavson**: V0's streams plus a position byte per
    ///   contribution and a segment header (two indices and a count) per `X`
    ///   block at least; the `X` block is read once per segment, the output
    ///   chunk accumulates on chip (V0's read-modify-write, in shared memory).
    /// * **V2c** (panel-tiled): floor `(1+h)(B_A Z_A + B_P Z_P) + B_P Z_P +
    ///   B_C Z_C` (paper). Reads: `A P` over the `(1+h) m_F` staged rows,
    ///   `(1+h)(Z_A B_A + m1 B_P)`. On chip: the panel's accumulation
    ///   (`2 (1+h) m1 B_W`), its reads by `R W` (`m2 B_W`), and `A_c`'s
    ///   accumulator (`2 m2 B_C`). Flops: `(1+h)` times the `A P` stage.
    /// * **V3** (flat stream): the paper's schedule stream replaces the `W`
    ///   write-and-read: floor = V1's + records x bytes per record (V0's + the
    ///   records when [`ModelInput::v3_materializes_w`]). Reads: V0's (records
    ///   follow V0's traversal); on chip: the slot's read-modify-write per
    ///   record and the re-touched row operand.
    /// * **V4** (outer-product scatter): floor = V0's (paper). Reads: every
    ///   operand block once, coalesced (`Z_A B_A + 2 Z_P B_P + Z_W B_W`).
    ///   Atomics: both scatters, `2 m1 B_W` into `W'` and `2 m2 B_C` into `A_c`
    ///   (the paper's "V4 write requests" row is the `A_c` side,
    ///   [`ModelInput::v4_ac_write_requests`]). Schedule: `W'`'s and `A_c`'s
    ///   patterns.
    pub fn new(input: &ModelInput, variant: Variant) -> Self {
        let s = &input.stats;
        let (z_a, z_p, z_w, z_c) = (s.z_a as f64, s.z_p as f64, s.z_w as f64, s.z_c as f64);
        let (m_f, m_c) = (s.m_f as f64, s.m_c as f64);
        let (b_a, b_p, b_w, b_c) = (input.b_a(), input.b_p(), input.b_w(), input.b_c());
        let (m1, m2) = input.v0_multiplies();
        let h = input.halo();

        let floor_v0 = b_a * z_a + 2.0 * b_p * z_p + 2.0 * b_w * z_w + b_c * z_c;
        let floor_v1 = b_a * z_a + 2.0 * b_p * z_p + b_c * z_c;
        let w_stream = 2.0 * b_w * z_w;
        let w_bytes = b_w * z_w;
        let reads_v0 = b_a * z_a + m1 * b_p + m2 * b_w;
        let acc_v0 = 2.0 * m1 * b_w + 2.0 * m2 * b_c;
        let retouch = m1 * b_a + m2 * b_p;
        let flops_v0 = input.v0_flops();
        let r_and_c = ModelInput::pattern_bytes(m_c, z_p) + ModelInput::pattern_bytes(m_c, z_c) + INDEX_BYTES * z_p;
        let slot_list = 2.0 * INDEX_BYTES * (m1 + m2) + POINTER_BYTES * (z_w + z_c + 2.0);

        let mut row = ModelRow {
            variant,
            dram_floor_bytes: floor_v0,
            w_stream_bytes: w_stream,
            read_requests_bytes: reads_v0,
            atomic_requests_bytes: 0.0,
            requests_bytes: 0.0,
            onchip_bytes: acc_v0,
            w_footprint_bytes: w_bytes,
            schedule_bytes: ModelInput::pattern_bytes(m_f, z_w) + r_and_c,
            flops: flops_v0,
        };
        match variant {
            Variant::TwoPass => {}
            Variant::FusedRowWise | Variant::FusedReordered => {
                let (ra, rap) = input.v1_multiplies();
                row.dram_floor_bytes = floor_v1;
                row.w_stream_bytes = 0.0;
                row.read_requests_bytes = ra * b_a + rap * b_p;
                row.onchip_bytes = 2.0 * rap * b_c;
                row.w_footprint_bytes = 0.0;
                row.schedule_bytes = r_and_c;
                if variant == Variant::FusedReordered {
                    row.schedule_bytes += INDEX_BYTES * m_c;
                }
                row.flops = input.v1_flops();
            }
            Variant::SlotTiled
            | Variant::ColumnSplit
            | Variant::LaneTiled
            | Variant::KSplit
            | Variant::TensorCore
            | Variant::TensorPair
            | Variant::TensorPairSym => {
                row.schedule_bytes = slot_list;
                if variant != Variant::SlotTiled {
                    row.schedule_bytes += INDEX_BYTES * (z_w + z_c);
                }
                row.dram_floor_bytes = floor_v0 + row.schedule_bytes;
                row.onchip_bytes = retouch;
            }
            Variant::RowGustavson => {
                // A position byte per contribution; per segment (at least one per
                // `X` block) its two block indices and count.
                row.schedule_bytes = (m1 + m2) + (2.0 * INDEX_BYTES + 1.0) * (z_a + z_p);
                row.dram_floor_bytes = floor_v0 + row.schedule_bytes;
                row.read_requests_bytes = b_a * z_a + m1 * b_p + b_p * z_p + m2 * b_w;
            }
            Variant::PanelTiled => {
                row.dram_floor_bytes = (1.0 + h) * (b_a * z_a + b_p * z_p) + b_p * z_p + b_c * z_c;
                row.w_stream_bytes = 0.0;
                row.read_requests_bytes = (1.0 + h) * (b_a * z_a + m1 * b_p);
                row.onchip_bytes = 2.0 * (1.0 + h) * m1 * b_w + m2 * b_w + 2.0 * m2 * b_c;
                let panel = input
                    .exact
                    .v2c_panel_blocks
                    .map_or((1.0 + h) * ratio(z_w, m_c), |b| b as f64);
                row.w_footprint_bytes = panel * b_w;
                let staged = (1.0 + h) * m_f;
                row.schedule_bytes = (INDEX_BYTES + POINTER_BYTES) * staged + INDEX_BYTES * z_p + r_and_c;
                row.flops = (1.0 + h) * m1 * input.flops_ap() + m2 * input.flops_rw();
            }
            Variant::FlatStream => {
                let (records, per) = input.v3_records();
                row.schedule_bytes = records * per;
                if input.v3_materializes_w {
                    row.dram_floor_bytes = floor_v0 + row.schedule_bytes;
                } else {
                    row.dram_floor_bytes = floor_v1 + row.schedule_bytes;
                    row.w_stream_bytes = 0.0;
                    row.w_footprint_bytes = 0.0;
                }
                row.onchip_bytes = acc_v0 + retouch;
            }
            Variant::OuterProductScatter => {
                row.read_requests_bytes = b_a * z_a + 2.0 * b_p * z_p + b_w * z_w;
                row.atomic_requests_bytes = 2.0 * m1 * b_w + 2.0 * m2 * b_c;
                row.onchip_bytes = 0.0;
                row.schedule_bytes = ModelInput::pattern_bytes(m_f, z_w) + ModelInput::pattern_bytes(m_c, z_c);
            }
        }
        row.requests_bytes = row.read_requests_bytes + row.atomic_requests_bytes;
        row
    }

    /// V1 as if each fine row were walked `n` times instead of `n_P`: `A`
    /// touches scale with `n / n_P`, `P` touches, on-chip accumulation and
    /// flops with `(n / n_P)^2`; the floor is kept. Used by [`fused_crossover_np`].
    fn fused_at(input: &ModelInput, n: f64) -> Self {
        let mut row = Self::new(input, Variant::FusedRowWise);
        let r = ratio(n, input.n_p());
        let (ra, rap) = input.v1_multiplies();
        row.read_requests_bytes = r * ra * input.b_a() + r * r * rap * input.b_p();
        row.requests_bytes = row.read_requests_bytes;
        row.onchip_bytes *= r * r;
        row.flops *= r * r;
        row
    }
}

/// The rows of every variant, in [`Variant::ALL`] order.
pub fn model_rows(input: &ModelInput) -> Vec<ModelRow> {
    Variant::ALL.iter().map(|&v| ModelRow::new(input, v)).collect()
}

/// A machine as the model sees it; bandwidths in B/s, capacities in bytes,
/// flops in FP64 flop/s. Measured: [`MachineParams::measure_cpu`] (this host),
/// [`MachineParams::gpu`] (from a device backend's numbers), or read with
/// [`MachineParams::from_json_file`]. Presets, for the paper's tables:
/// [`MachineParams::a100`], [`MachineParams::h200`], [`MachineParams::cpu`].
/// Every field is public and [`MachineOverrides`] changes some of them from JSON.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MachineParams {
    pub name: String,
    /// DRAM bandwidth, read plus write.
    pub dram_bandwidth: f64,
    /// Bandwidth of the tier that serves the redundant touches: a GPU's L2, a
    /// CPU's private L2 / shared L3 aggregate over its cores.
    pub l2_bandwidth: f64,
    /// Capacity of the last cache before DRAM (a GPU's L2, a CPU's L3).
    pub l2_bytes: f64,
    /// On-chip bandwidth: shared memory / L1 / registers.
    pub onchip_bandwidth: f64,
    /// FP64 peak (FMA, not tensor core).
    pub fp64_flops: f64,
    /// Cost of a global atomic read-modify-write relative to a plain one of
    /// the same bytes (multiplies the atomic bytes in the L2 term).
    pub atomic_penalty: f64,
}

/// Partial changes to a [`MachineParams`], e.g. read from a JSON file.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MachineOverrides {
    pub name: Option<String>,
    pub dram_bandwidth: Option<f64>,
    pub l2_bandwidth: Option<f64>,
    pub l2_bytes: Option<f64>,
    pub onchip_bandwidth: Option<f64>,
    pub fp64_flops: Option<f64>,
    pub atomic_penalty: Option<f64>,
}

/// A machine parameter that cannot drive the model.
#[derive(Debug, Error, PartialEq)]
pub enum ModelError {
    #[error("machine parameter {field} is {value}; it must be a positive finite number")]
    BadParameter { field: &'static str, value: f64 },
    #[error("unknown machine preset '{0}'; choose one of: a100, h200, cpu")]
    UnknownPreset(String),
}

impl MachineParams {
    /// NVIDIA A100-SXM4-40GB, the paper's `tab:machines`: 1555 GB/s DRAM,
    /// ~5 TB/s L2, 40 MB L2, 9.7 TF/s FP64 FMA. On chip: 108 SMs x 128 B/clk x
    /// 1.41 GHz = 19.5 TB/s shared memory (the paper's 1 : 3.2 : 12.5). Atomic
    /// penalty 1: FP64 `atomicAdd` resolves in L2, and its read and write are
    /// already both charged (an assumption, not a measurement).
    pub fn a100() -> Self {
        Self {
            name: "NVIDIA A100-SXM4-40GB".into(),
            dram_bandwidth: 1555e9,
            l2_bandwidth: 5.0e12,
            l2_bytes: 40.0 * 1024.0 * 1024.0,
            onchip_bandwidth: 108.0 * 128.0 * 1.41e9,
            fp64_flops: 9.7e12,
            atomic_penalty: 1.0,
        }
    }

    /// NVIDIA H200 (SXM, 132 SMs at 1.98 GHz). Measured on our device: copy
    /// bandwidth ~4250 GB/s counting read and write, 60 MB L2 (the CUDA device
    /// properties). Public figures: FP64 34 TF/s (FMA, NVIDIA's H200 datasheet);
    /// L2 bandwidth 10 TB/s (the low end of published Hopper microbenchmark
    /// estimates, ~10-12 TB/s); shared memory 132 x 128 B/clk x 1.98 GHz =
    /// 33.5 TB/s. Atomic penalty as for the A100.
    pub fn h200() -> Self {
        Self {
            name: "NVIDIA H200".into(),
            dram_bandwidth: 4250e9,
            l2_bandwidth: 10.0e12,
            l2_bytes: 60.0 * 1024.0 * 1024.0,
            onchip_bandwidth: 132.0 * 128.0 * 1.98e9,
            fp64_flops: 34e12,
            atomic_penalty: 1.0,
        }
    }

    /// A 2-core x86 host with a 30 MB L3 and the given measured DRAM bandwidth
    /// (B/s, read plus write): [`MachineParams::cpu_host`] at those figures.
    /// A preset for reproducing tables; a variant pick on this machine should
    /// use [`MachineParams::measure_cpu`].
    pub fn cpu(measured_bandwidth: f64) -> Self {
        Self::cpu_host("2-core x86 host", measured_bandwidth, 30.0 * 1024.0 * 1024.0, 2)
    }

    /// A preset by name (`a100`, `h200`, `cpu`); `cpu_bandwidth` is the
    /// measured DRAM bandwidth the `cpu` preset needs.
    pub fn preset(name: &str, cpu_bandwidth: f64) -> Result<Self, ModelError> {
        match name.to_ascii_lowercase().as_str() {
            "a100" => Ok(Self::a100()),
            "h200" => Ok(Self::h200()),
            "cpu" => Ok(Self::cpu(cpu_bandwidth)),
            _ => Err(ModelError::UnknownPreset(name.into())),
        }
    }

    /// This machine with the given fields replaced.
    pub fn with_overrides(mut self, o: &MachineOverrides) -> Self {
        if let Some(n) = &o.name {
            self.name = n.clone();
        }
        let set = |dst: &mut f64, src: Option<f64>| {
            if let Some(v) = src {
                *dst = v;
            }
        };
        set(&mut self.dram_bandwidth, o.dram_bandwidth);
        set(&mut self.l2_bandwidth, o.l2_bandwidth);
        set(&mut self.l2_bytes, o.l2_bytes);
        set(&mut self.onchip_bandwidth, o.onchip_bandwidth);
        set(&mut self.fp64_flops, o.fp64_flops);
        set(&mut self.atomic_penalty, o.atomic_penalty);
        self
    }

    pub fn with_dram_bandwidth(mut self, bytes_per_s: f64) -> Self {
        self.dram_bandwidth = bytes_per_s;
        self
    }

    /// Checks every number is positive and finite.
    pub fn validate(&self) -> Result<(), ModelError> {
        let fields = [
            ("dram_bandwidth", self.dram_bandwidth),
            ("l2_bandwidth", self.l2_bandwidth),
            ("l2_bytes", self.l2_bytes),
            ("onchip_bandwidth", self.onchip_bandwidth),
            ("fp64_flops", self.fp64_flops),
            ("atomic_penalty", self.atomic_penalty),
        ];
        for (field, value) in fields {
            if !(value > 0.0) || !value.is_finite() {
                return Err(ModelError::BadParameter { field, value });
            }
        }
        Ok(())
    }
}

/// The roofline term that sets a predicted time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Bound {
    #[serde(rename = "DRAM")]
    Dram,
    #[serde(rename = "L2 requests")]
    L2Requests,
    #[serde(rename = "on-chip")]
    OnChip,
    #[serde(rename = "flops")]
    Flops,
}

impl fmt::Display for Bound {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Bound::Dram => "DRAM",
            Bound::L2Requests => "L2 requests",
            Bound::OnChip => "on-chip",
            Bound::Flops => "flops",
        })
    }
}

/// One variant's predicted time on one machine.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Prediction {
    pub variant: Variant,
    /// `max(dram_s, l2_s, onchip_s, flops_s)`.
    pub time_s: f64,
    pub bound: Bound,
    /// DRAM bytes charged: the floor, less `W`'s write-and-read when `W` fits
    /// in half of [`MachineParams::l2_bytes`].
    pub dram_bytes: f64,
    pub dram_s: f64,
    /// `(reads + atomic_penalty x atomics) / l2_bandwidth`.
    pub l2_s: f64,
    pub onchip_s: f64,
    pub flops_s: f64,
    pub row: ModelRow,
}

impl Prediction {
    /// The roofline of one row (see the module docs).
    pub fn of(row: ModelRow, machine: &MachineParams) -> Self {
        let w_cached = row.w_stream_bytes > 0.0 && row.w_footprint_bytes <= 0.5 * machine.l2_bytes;
        let dram_bytes = row.dram_floor_bytes - if w_cached { row.w_stream_bytes } else { 0.0 };
        let dram_s = dram_bytes / machine.dram_bandwidth;
        let l2_s =
            (row.read_requests_bytes + machine.atomic_penalty * row.atomic_requests_bytes) / machine.l2_bandwidth;
        let onchip_s = row.onchip_bytes / machine.onchip_bandwidth;
        let flops_s = row.flops / machine.fp64_flops;
        let mut time_s = dram_s;
        let mut bound = Bound::Dram;
        for (t, b) in [
            (l2_s, Bound::L2Requests),
            (onchip_s, Bound::OnChip),
            (flops_s, Bound::Flops),
        ] {
            if t > time_s {
                time_s = t;
                bound = b;
            }
        }
        Self {
            variant: row.variant,
            time_s,
            bound,
            dram_bytes,
            dram_s,
            l2_s,
            onchip_s,
            flops_s,
            row,
        }
    }

    /// Sum of the four terms: the pressure on all resources together, which
    /// breaks ties of the roofline time.
    pub fn total_s(&self) -> f64 {
        self.dram_s + self.l2_s + self.onchip_s + self.flops_s
    }
}

/// Predicted time of every variant ([`Variant::ALL`] order).
pub fn predict(input: &ModelInput, machine: &MachineParams) -> Vec<Prediction> {
    predict_variants(input, machine, &Variant::ALL)
}

/// Predicted time of the given variants, in their order.
pub fn predict_variants(input: &ModelInput, machine: &MachineParams, variants: &[Variant]) -> Vec<Prediction> {
    variants
        .iter()
        .map(|&v| Prediction::of(ModelRow::new(input, v), machine))
        .collect()
}

/// The best of some predictions: the least time; among those within
/// [`TIE_RTOL`] of it, the variants bitwise identical to V0 if any; among
/// those, the least total resource use ([`Prediction::total_s`], again within
/// [`TIE_RTOL`]); then the first in the slice. `None` for an empty slice.
pub fn best_of(predictions: &[Prediction]) -> Option<Variant> {
    let t_min = predictions.iter().map(|p| p.time_s).fold(f64::INFINITY, f64::min);
    let mut tied: Vec<&Prediction> = predictions
        .iter()
        .filter(|p| p.time_s <= t_min * (1.0 + TIE_RTOL))
        .collect();
    if tied.iter().any(|p| p.variant.bitwise_v0()) {
        tied.retain(|p| p.variant.bitwise_v0());
    }
    let s_min = tied.iter().map(|p| p.total_s()).fold(f64::INFINITY, f64::min);
    tied.into_iter()
        .find(|p| p.total_s() <= s_min * (1.0 + TIE_RTOL))
        .map(|p| p.variant)
}

/// The variant of `candidates` the model predicts fastest on `machine` (ties as
/// in [`best_of`], so list candidates in order of preference). An empty list
/// gives V0.
pub fn select(input: &ModelInput, machine: &MachineParams, candidates: &[Variant]) -> Variant {
    best_of(&predict_variants(input, machine, candidates)).unwrap_or(Variant::TwoPass)
}

/// The crossover `n_P*` of `sec:model`: the redundancy at which V1 would cost
/// what V0 costs on this product. V0's predicted time is kept at the measured
/// `n_P`; V1 is re-evaluated as if each fine row were walked `n` times (`A`
/// touches `n Z_A`, `P` touches `~ n^2 Z_A`, flops `~ n^2 / n_P` of V0's, the
/// floor kept), and `n` is found by bisection (V1's time rises with `n`, and
/// at `n -> 0` it is its floor, below V0's). V1 is predicted faster below
/// `n_P*`, slower above. NaN for a product with no `P` or `A` blocks.
pub fn fused_crossover_np(input: &ModelInput, machine: &MachineParams) -> f64 {
    if !(input.n_p() > 0.0) || input.stats.z_a == 0 {
        return f64::NAN;
    }
    let t0 = Prediction::of(ModelRow::new(input, Variant::TwoPass), machine).time_s;
    let t1 = |n: f64| Prediction::of(ModelRow::fused_at(input, n), machine).time_s;
    if t1(0.0) >= t0 {
        return 0.0;
    }
    let mut hi = input.n_p().max(1.0);
    while t1(hi) < t0 {
        hi *= 2.0;
        if hi > 1e9 {
            return f64::INFINITY;
        }
    }
    let mut lo = 0.0;
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if t1(mid) < t0 {
            lo = mid;
        } else {
            hi = mid;
        }
        if hi - lo <= 1e-12 * hi {
            break;
        }
    }
    0.5 * (lo + hi)
}

/// Three significant digits (`4.28`, `0.0598`, `76.6`, `1086`).
fn sig3(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        return format!("{x}");
    }
    let digits = (2 - x.abs().log10().floor() as i32).max(0) as usize;
    format!("{x:.digits$}")
}

/// The paper's `tab:model` for the given products (one column per level, GB
/// unless marked), followed by the halo used for V2c, the crossover `n_P*`,
/// the predicted time of each variant present in the predictions and the
/// predicted best among them, on `machine`.
pub fn render_table(levels: &[(String, ModelInput, Vec<Prediction>)], machine: &MachineParams) -> String {
    const GB: f64 = 1e9;
    let label_w = 36;
    let col_w = 15;
    let mut out = String::new();
    let mut line = |label: &str, cells: Vec<String>| {
        out.push_str(&format!("{label:<label_w$}"));
        for c in cells {
            out.push_str(&format!("{c:>col_w$}"));
        }
        out.push('\n');
    };
    line(
        &format!("model on {} (GB)", machine.name),
        levels.iter().map(|(n, _, _)| n.clone()).collect(),
    );
    let rows: Vec<Vec<ModelRow>> = levels.iter().map(|(_, input, _)| model_rows(input)).collect();
    let get = |li: usize, v: Variant| {
        rows[li]
            .iter()
            .find(|r| r.variant == v)
            .copied()
            .expect("every variant has a row")
    };
    let per_level = |f: &dyn Fn(usize, &ModelInput) -> String| -> Vec<String> {
        levels
            .iter()
            .enumerate()
            .map(|(i, (_, input, _))| f(i, input))
            .collect()
    };
    line(
        "V0 stream (floor)",
        per_level(&|i, _| sig3(get(i, Variant::TwoPass).dram_floor_bytes / GB)),
    );
    line(
        "V1 floor (no W)",
        per_level(&|i, _| sig3(get(i, Variant::FusedRowWise).dram_floor_bytes / GB)),
    );
    line(
        "V2c floor",
        per_level(&|i, _| sig3(get(i, Variant::PanelTiled).dram_floor_bytes / GB)),
    );
    line(
        "V4 floor",
        per_level(&|i, _| sig3(get(i, Variant::OuterProductScatter).dram_floor_bytes / GB)),
    );
    line(
        "V1 read requests",
        per_level(&|i, _| sig3(get(i, Variant::FusedRowWise).read_requests_bytes / GB)),
    );
    line(
        "V4 write requests (A_c RMW)",
        per_level(&|_, input| sig3(input.v4_ac_write_requests() / GB)),
    );
    line(
        "W footprint",
        per_level(&|i, _| sig3(get(i, Variant::TwoPass).w_footprint_bytes / GB)),
    );
    line(
        "V3 schedule footprint",
        per_level(&|i, _| sig3(get(i, Variant::FlatStream).schedule_bytes / GB)),
    );
    line(
        "flops V0 / V1 (GF)",
        per_level(&|i, _| {
            format!(
                "{} / {}",
                sig3(get(i, Variant::TwoPass).flops / GB),
                sig3(get(i, Variant::FusedRowWise).flops / GB)
            )
        }),
    );
    line("n_P", per_level(&|_, input| sig3(input.n_p())));
    line("V2c halo h", per_level(&|_, input| sig3(input.halo())));
    line(
        "crossover n_P*",
        per_level(&|_, input| sig3(fused_crossover_np(input, machine))),
    );
    let mut shown: Vec<Variant> = Vec::new();
    for (_, _, preds) in levels {
        for p in preds {
            if !shown.contains(&p.variant) {
                shown.push(p.variant);
            }
        }
    }
    for v in shown {
        let cells = levels
            .iter()
            .map(|(_, _, preds)| {
                preds.iter().find(|p| p.variant == v).map_or_else(
                    || "-".to_string(),
                    |p| format!("{} {}", sig3(p.time_s * 1e3), short_bound(p.bound)),
                )
            })
            .collect();
        line(&format!("predicted ms {} ({})", v.label(), v.name()), cells);
    }
    line(
        "predicted best",
        levels
            .iter()
            .map(|(_, _, preds)| best_of(preds).map_or_else(|| "-".to_string(), |v| v.label().to_string()))
            .collect(),
    );
    out
}

fn short_bound(b: Bound) -> &'static str {
    match b {
        Bound::Dram => "[D]",
        Bound::L2Requests => "[L2]",
        Bound::OnChip => "[SM]",
        Bound::Flops => "[F]",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The paper's `tab:hier`, with V2c's halo at the table's 0.25.
    fn paper_levels() -> Vec<(&'static str, ModelInput)> {
        vec![
            (
                "l0",
                ModelInput::from_counts(348_480, 21_230_000, 1_660_000, 7_270_000, 7_243, 627_000, 3, 6),
            ),
            (
                "l1",
                ModelInput::from_counts(7_243, 627_000, 51_600, 376_000, 1_125, 127_000, 6, 6),
            ),
            (
                "l2",
                ModelInput::from_counts(1_125, 127_000, 8_970, 29_400, 98, 3_770, 6, 6),
            ),
        ]
        .into_iter()
        .map(|(n, i)| (n, i.with_halo(PAPER_TABLE_HALO)))
        .collect()
    }

    /// `got` (GB) agrees with the table's printed `want`: it rounds to it (half
    /// a unit of the last printed digit) or lies within 2.5 %.
    fn assert_table(what: &str, level: &str, got: f64, want: &str) {
        let w: f64 = want.parse().unwrap();
        let decimals = want.split('.').nth(1).map_or(0, |d| d.len()) as i32;
        let half_ulp = 0.5 * 10f64.powi(-decimals) * (1.0 + 1e-9);
        let ok = (got - w).abs() <= half_ulp || (got - w).abs() <= 0.025 * w.abs();
        assert!(ok, "{what} {level}: model {got:.5}, paper {want}");
    }

    #[test]
    fn model_reproduces_tab_model() {
        let paper = [
            ("V0 floor", ["4.28", "0.46", "0.060"]),
            ("V1 floor", ["2.19", "0.25", "0.043"]),
            ("V2c floor", ["2.63", "0.30", "0.053"]),
            ("V4 floor", ["4.28", "0.46", "0.060"]),
            ("V1 read requests", ["76.6", "10.4", "2.6"]),
            ("V4 write requests", ["19.9", "1.54", "0.14"]),
            ("W footprint", ["1.05", "0.108", "0.008"]),
            ("V3 schedule", ["1.09", "0.057", "0.010"]),
            ("flops V0", ["18.4", "3.1", "0.5"]),
            ("flops V1", ["87.5", "22.0", "4.3"]),
        ];
        for (li, (level, input)) in paper_levels().iter().enumerate() {
            let row = |v| ModelRow::new(input, v);
            let got = [
                row(Variant::TwoPass).dram_floor_bytes,
                row(Variant::FusedRowWise).dram_floor_bytes,
                row(Variant::PanelTiled).dram_floor_bytes,
                row(Variant::OuterProductScatter).dram_floor_bytes,
                row(Variant::FusedRowWise).read_requests_bytes,
                input.v4_ac_write_requests(),
                row(Variant::TwoPass).w_footprint_bytes,
                row(Variant::FlatStream).schedule_bytes,
                row(Variant::TwoPass).flops,
                row(Variant::FusedRowWise).flops,
            ];
            for ((what, want), g) in paper.iter().zip(got) {
                assert_table(what, level, g / 1e9, want[li]);
            }
        }
    }

    #[test]
    fn hand_computed_terms_on_l0() {
        // l0 by hand: n_P = 1.66e6 / 348480, m1 = n_P Z_A, m2 = n_P Z_W.
        let (_, l0) = &paper_levels()[0];
        let n = 1.66e6 / 348_480.0;
        let (m1, m2) = (n * 21.23e6, n * 7.27e6);
        let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * b.abs();
        let v0 = ModelRow::new(l0, Variant::TwoPass);
        assert!(close(v0.read_requests_bytes, 72.0 * 21.23e6 + 144.0 * (m1 + m2)));
        assert!(close(v0.onchip_bytes, 2.0 * 144.0 * m1 + 2.0 * 288.0 * m2));
        let v4 = ModelRow::new(l0, Variant::OuterProductScatter);
        assert!(close(v4.atomic_requests_bytes, 2.0 * 144.0 * m1 + 2.0 * 288.0 * m2));
        assert!(close(l0.v4_ac_write_requests(), 2.0 * 288.0 * m2));
        let v2b = ModelRow::new(l0, Variant::SlotTiled);
        let list = 8.0 * (m1 + m2) + 8.0 * (7.27e6 + 627e3 + 2.0);
        assert!(close(v2b.dram_floor_bytes, v0.dram_floor_bytes + list));
        let v3 = ModelRow::new(l0, Variant::FlatStream);
        let v1 = ModelRow::new(l0, Variant::FusedRowWise);
        assert!(close(v3.dram_floor_bytes, v1.dram_floor_bytes + 8.0 * (m1 + m2)));
        let v3w = ModelRow::new(&l0.with_v3_materializes_w(true), Variant::FlatStream);
        assert!(close(v3w.dram_floor_bytes, v0.dram_floor_bytes + 8.0 * (m1 + m2)));
        // Default halo is n_P - 1 (tiles of one coarse row).
        let mut unmeasured = *l0;
        unmeasured.exact.halo = None;
        assert!(close(unmeasured.halo(), n - 1.0));
    }

    #[test]
    fn exact_counts_replace_the_approximations() {
        let (_, l1) = &paper_levels()[1];
        let exact = ExactCounts {
            v0_ap_multiplies: Some(4_000_000),
            v0_rw_multiplies: Some(2_000_000),
            v1_ra_multiplies: Some(5_000_000),
            v1_rap_multiplies: Some(30_000_000),
            v3_records: Some(6_000_000),
            v3_bytes_per_record: Some(12.0),
            ..Default::default()
        };
        let input = l1.with_exact(exact);
        assert_eq!(input.v0_multiplies(), (4e6, 2e6));
        let v1 = ModelRow::new(&input, Variant::FusedRowWise);
        assert_eq!(v1.read_requests_bytes, 5e6 * 288.0 + 30e6 * 288.0);
        assert_eq!(v1.flops, 5e6 * 432.0 + 30e6 * 432.0);
        assert_eq!(ModelRow::new(&input, Variant::FlatStream).schedule_bytes, 72e6);
        // A known total is split in the approximations' proportion.
        let mut total = *l1;
        total.stats.block_multiplies = 7_000_000;
        let (a, r) = total.v0_multiplies();
        assert!((a + r - 7e6).abs() < 1e-6 && (a / r - 627.0 / 376.0).abs() < 1e-9);
    }

    #[test]
    fn v1_is_not_selected_on_the_paper_hierarchy() {
        for machine in [MachineParams::a100(), MachineParams::h200(), MachineParams::cpu(12e9)] {
            for (level, input) in paper_levels() {
                let preds = predict(&input, &machine);
                let t = |v| preds.iter().find(|p| p.variant == v).unwrap().time_s;
                let best = select(&input, &machine, &Variant::ALL);
                assert_ne!(best, Variant::FusedRowWise, "{level} on {}", machine.name);
                assert_ne!(
                    select(&input, &machine, &[Variant::TwoPass, Variant::FusedRowWise]),
                    Variant::FusedRowWise
                );
                // Slower by a factor of order n_P.
                let slowdown = t(Variant::FusedRowWise) / t(Variant::TwoPass);
                let n = input.n_p();
                assert!(
                    slowdown > 0.5 * n && slowdown < 1.5 * n,
                    "{level} on {}: V1/V0 = {slowdown}, n_P = {n}",
                    machine.name
                );
            }
        }
    }

    #[test]
    fn v1_wins_at_unsmoothed_aggregation() {
        // n_P = 1: one P block per fine row; W = A P~ about half of A's blocks.
        let m_f = 348_480;
        let input = ModelInput::from_counts(m_f, 21_230_000, m_f, 10_615_000, m_f / 27, 348_000, 3, 6);
        for machine in [MachineParams::a100(), MachineParams::h200(), MachineParams::cpu(12e9)] {
            let preds = predict(&input, &machine);
            let t = |v| preds.iter().find(|p| p.variant == v).unwrap().time_s;
            assert!(t(Variant::FusedRowWise) < t(Variant::TwoPass), "{}", machine.name);
            assert_eq!(
                select(&input, &machine, &[Variant::TwoPass, Variant::FusedRowWise]),
                Variant::FusedRowWise
            );
            assert!(fused_crossover_np(&input, &machine) > 1.0);
        }
    }

    #[test]
    fn crossover_lies_in_the_papers_band() {
        let a100 = MachineParams::a100();
        let mut got = Vec::new();
        for (level, input) in paper_levels() {
            let n_star = fused_crossover_np(&input, &a100);
            assert!((1.5..4.0).contains(&n_star), "{level}: n_P* = {n_star}");
            assert!(n_star < input.n_p(), "{level}: measured n_P sits above the crossover");
            // At the crossover V1 costs what V0 does.
            let t0 = Prediction::of(ModelRow::new(&input, Variant::TwoPass), &a100).time_s;
            let t1 = Prediction::of(ModelRow::fused_at(&input, n_star), &a100).time_s;
            assert!((t1 - t0).abs() <= 1e-9 * t0);
            // And at n = n_P the scaled row is V1's own.
            assert_eq!(
                ModelRow::fused_at(&input, input.n_p()),
                ModelRow::new(&input, Variant::FusedRowWise)
            );
            got.push(n_star);
        }
        // The fine level reproduces the paper's 2.2-2.5.
        assert!((2.2..2.5).contains(&got[0]), "l0: n_P* = {}", got[0]);
    }

    #[test]
    fn halo_decides_v2c() {
        let a100 = MachineParams::a100();
        let (_, l0) = &paper_levels()[0];
        let v0 = ModelRow::new(l0, Variant::TwoPass).dram_floor_bytes;
        // Large tiles (h = 0.25): the lowest floor; single-aggregate tiles (h = 3.6): above V0's.
        assert!(ModelRow::new(l0, Variant::PanelTiled).dram_floor_bytes < v0);
        let measured = l0.with_halo(3.6);
        assert!(ModelRow::new(&measured, Variant::PanelTiled).dram_floor_bytes > v0);
        let preds = predict(&measured, &a100);
        let t = |v| preds.iter().find(|p| p.variant == v).unwrap().time_s;
        assert!(t(Variant::PanelTiled) > t(Variant::TwoPass));
        assert_ne!(select(&measured, &a100, &Variant::ALL), Variant::PanelTiled);
    }

    #[test]
    fn ties_prefer_bitwise_then_less_total_then_order() {
        let a100 = MachineParams::a100();
        let (_, l0) = &paper_levels()[0];
        // V0 and the slot-tiled executors tie on L2 requests; V2b does no
        // accumulator read-modify-writes, so it uses less in total.
        let cands = [Variant::TwoPass, Variant::SlotTiled];
        assert_eq!(select(l0, &a100, &cands), Variant::SlotTiled);
        let cands = [Variant::ColumnSplit, Variant::SlotTiled, Variant::TwoPass];
        assert_eq!(select(l0, &a100, &cands), Variant::ColumnSplit);
        assert_eq!(select(l0, &a100, &[]), Variant::TwoPass);
        let p = predict(l0, &a100);
        assert!(p
            .iter()
            .all(|p| p.time_s >= p.dram_s && p.time_s >= p.l2_s && p.time_s >= p.flops_s));
    }

    #[test]
    fn w_in_cache_leaves_dram() {
        let (_, l2) = &paper_levels()[2];
        let a100 = MachineParams::a100();
        let p = Prediction::of(ModelRow::new(l2, Variant::TwoPass), &a100);
        assert_eq!(p.dram_bytes, p.row.dram_floor_bytes - p.row.w_stream_bytes);
        let (_, l0) = &paper_levels()[0];
        let p = Prediction::of(ModelRow::new(l0, Variant::TwoPass), &a100);
        assert_eq!(p.dram_bytes, p.row.dram_floor_bytes);
    }

    #[test]
    fn machine_params_round_trip_through_json() {
        for m in [MachineParams::a100(), MachineParams::h200(), MachineParams::cpu(11.5e9)] {
            m.validate().unwrap();
            let json = serde_json::to_string(&m).unwrap();
            let back: MachineParams = serde_json::from_str(&json).unwrap();
            assert_eq!(back, m);
        }
        let o: MachineOverrides = serde_json::from_str(r#"{"dram_bandwidth": 2.0e12, "name": "A100 80GB"}"#).unwrap();
        let m = MachineParams::a100().with_overrides(&o);
        assert_eq!(
            (m.name.as_str(), m.dram_bandwidth, m.fp64_flops),
            ("A100 80GB", 2.0e12, 9.7e12)
        );
        assert!(serde_json::from_str::<MachineOverrides>(r#"{"dram_bw": 1}"#).is_err());
        let bad = MachineParams::a100().with_dram_bandwidth(0.0);
        assert_eq!(
            bad.validate(),
            Err(ModelError::BadParameter {
                field: "dram_bandwidth",
                value: 0.0
            })
        );
        assert_eq!(MachineParams::preset("H200", 0.0).unwrap(), MachineParams::h200());
        assert!(MachineParams::preset("tpu", 0.0).is_err());
        // Predictions serialize with the bound as the paper names it.
        let (_, l1) = &paper_levels()[1];
        let json = serde_json::to_value(predict(l1, &MachineParams::a100())).unwrap();
        assert_eq!(json[0]["bound"], "L2 requests");
        assert_eq!(json[0]["variant"], "TwoPass");
        assert_eq!(json[1]["bound"], "flops");
    }

    #[test]
    fn default_halo_keeps_v2c_out_on_every_preset() {
        // Without a measured halo V2c is modelled with single-coarse-row tiles
        // (h = n_P - 1), where the paper measures it losing to V0.
        for machine in [MachineParams::a100(), MachineParams::h200(), MachineParams::cpu(12e9)] {
            let levels: Vec<(String, ModelInput, Vec<Prediction>)> = paper_levels()
                .into_iter()
                .map(|(n, mut i)| {
                    i.exact.halo = None;
                    (n.to_string(), i, predict(&i, &machine))
                })
                .collect();
            for (level, input, preds) in &levels {
                let best = best_of(preds).unwrap();
                assert!(best.bitwise_v0(), "{level} on {}: {best}", machine.name);
                assert_ne!(best, Variant::PanelTiled, "{level} on {}", machine.name);
                assert_eq!(select(input, &machine, &Variant::ALL), best);
            }
            println!("{}", render_table(&levels, &machine));
        }
    }

    #[test]
    fn table_renders_every_row() {
        let a100 = MachineParams::a100();
        let levels: Vec<(String, ModelInput, Vec<Prediction>)> = paper_levels()
            .into_iter()
            .map(|(n, i)| (n.to_string(), i, predict(&i, &a100)))
            .collect();
        let table = render_table(&levels, &a100);
        for label in [
            "V0 stream (floor)",
            "V1 read requests",
            "V3 schedule footprint",
            "predicted best",
            "crossover n_P*",
        ] {
            assert!(table.contains(label), "{label} missing from\n{table}");
        }
        let v0_line = table.lines().find(|l| l.starts_with("V0 stream")).unwrap();
        assert!(
            v0_line.contains("4.28") && v0_line.contains("0.463") && v0_line.contains("0.0598"),
            "{v0_line}"
        );
        let flops = table.lines().find(|l| l.starts_with("flops")).unwrap();
        assert!(flops.contains("18.4 / 87.7"), "{flops}");
        println!("{table}");
    }
}
