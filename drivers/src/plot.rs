//! SVG charts of the drivers' reports (`ptap bench --plot`, `ptap run --plot`),
//! drawn with `plotters` into a string and written atomically
//! (`ptap_io::fsio::write_atomic`).
//!
//! - [`Ladder`]: the variant ladder per level against the stream floor (the
//!   paper's figure): each Galerkin-product variant's measured numeric time
//!   on each level as a bar, labelled with its ratio to the floor, and the
//!   level's V0 stream floor (the bytes V0 must move over the copy bandwidth
//!   measured in the same run) as a line across the level's bars; log time
//!   axis. Built from the CPU bench report or the device one alike.
//! - [`phases_svg`]: the time loop's phases per step (assembly, mesh setup,
//!   upload to the backend where it took time, matrix setup, solve) as stacked
//!   bars, every step on one panel and the hot steps alone on a second, so
//!   their scale shows beside the cold step's.
use crate::bench::BenchReport;
use crate::bench_cuda::CudaBenchReport;
use crate::time_loop::{Phases, TimeLoopReport};
use anyhow::{anyhow, Result};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::io;
use std::path::Path;

/// One bar of the ladder: one variant's numeric time on one level.
#[derive(Clone, Debug, PartialEq)]
pub struct LadderBar {
    /// The variant's name (`two-pass`, `column-split`, ...).
    pub variant: String,
    /// The paper's label (`V0`, `V3`, `colsplit`, ...).
    pub label: String,
    /// Best numeric `P^T A P` time, seconds.
    pub numeric_s: f64,
}

/// One level of the ladder: its bars in the order they ran, and its floor.
#[derive(Clone, Debug, PartialEq)]
pub struct LadderLevel {
    pub level: usize,
    /// V0's DRAM stream floor at the measured copy bandwidth, seconds.
    pub floor_s: f64,
    pub bars: Vec<LadderBar>,
}

/// What the bench chart shows: the figures common to the CPU and the device
/// bench reports.
#[derive(Clone, Debug, PartialEq)]
pub struct Ladder {
    pub title: String,
    pub levels: Vec<LadderLevel>,
}

/// Rows `(level, variant, label, numeric_s, v0_floor_bytes)`, level by level,
/// grouped into levels with floors at `bw` bytes per second.
fn ladder_levels<'a>(rows: impl Iterator<Item = (usize, &'a str, &'a str, f64, f64)>, bw: f64) -> Vec<LadderLevel> {
    let mut levels: Vec<LadderLevel> = Vec::new();
    for (level, variant, label, numeric_s, floor_bytes) in rows {
        if levels.last().is_none_or(|l| l.level != level) {
            levels.push(LadderLevel {
                level,
                floor_s: floor_bytes / bw,
                bars: Vec::new(),
            });
        }
        let last = levels.last_mut().expect("pushed above");
        last.bars.push(LadderBar {
            variant: variant.to_string(),
            label: label.to_string(),
            numeric_s,
        });
    }
    levels
}

impl From<&BenchReport> for Ladder {
    fn from(r: &BenchReport) -> Self {
        let bw = r.copy_bandwidth_bytes_per_s;
        Ladder {
            title: format!(
                "ptap bench, beam k = {}: CPU, {} threads, copy {:.1} GB/s",
                r.k,
                r.threads,
                bw / 1e9
            ),
            levels: ladder_levels(
                r.results
                    .iter()
                    .map(|x| (x.level, x.variant, x.label, x.numeric_s, x.v0_floor_bytes)),
                bw,
            ),
        }
    }
}

impl From<&CudaBenchReport> for Ladder {
    fn from(r: &CudaBenchReport) -> Self {
        let bw = r.copy_bandwidth_bytes_per_s;
        Ladder {
            title: format!(
                "ptap bench --device cuda, beam k = {}: {} ({}), copy {:.0} GB/s",
                r.k,
                r.device,
                r.arch,
                bw / 1e9
            ),
            levels: ladder_levels(
                r.products
                    .iter()
                    .map(|x| (x.level, x.variant, x.label, x.numeric_s, x.v0_floor_bytes)),
                bw,
            ),
        }
    }
}

/// Width of the legend panel right of every chart, pixels.
const LEGEND_W: u32 = 260;
const HEIGHT: u32 = 640;
const FONT: &str = "sans-serif";

/// A colour per variant, the same in every chart (Tableau 10), so a variant
/// keeps its colour between a CPU and a device chart.
pub fn variant_color(variant: &str) -> RGBColor {
    match variant {
        "two-pass" => RGBColor(0x4e, 0x79, 0xa7),
        "fused" => RGBColor(0xf2, 0x8e, 0x2b),
        "fused-rcm" => RGBColor(0xe1, 0x57, 0x59),
        "slot-tiled" => RGBColor(0x76, 0xb7, 0xb2),
        "panel-tiled" => RGBColor(0x59, 0xa1, 0x4f),
        "flat-stream" => RGBColor(0xed, 0xc9, 0x48),
        "outer-product" | "outer-product-scatter" => RGBColor(0xb0, 0x7a, 0xa1),
        "column-split" => RGBColor(0xff, 0x9d, 0xa7),
        _ => RGBColor(0x9c, 0x75, 0x5f),
    }
}

/// The phases of a time-loop step the chart stacks, bottom to top, with
/// their colours. `upload to the backend` is drawn only where it took time.
pub const PHASES: [(&str, RGBColor); 5] = [
    ("assembly", RGBColor(0x4e, 0x79, 0xa7)),
    ("mesh setup", RGBColor(0xf2, 0x8e, 0x2b)),
    ("upload to the backend", RGBColor(0xba, 0xb0, 0xac)),
    ("matrix setup", RGBColor(0x59, 0xa1, 0x4f)),
    ("solve", RGBColor(0xe1, 0x57, 0x59)),
];

fn phase_values(p: &Phases) -> [f64; 5] {
    [
        p.assembly_s,
        p.mesh_setup_s,
        p.device_upload_s,
        p.matrix_setup_s,
        p.solve_s,
    ]
}

/// A time in seconds for an axis or a label, to three significant digits
/// in the unit that suits it.
fn fmt_time(s: f64) -> String {
    let (v, unit) = if s == 0.0 {
        return "0".into();
    } else if s.abs() >= 1.0 {
        (s, "s")
    } else if s.abs() >= 1e-3 {
        (s * 1e3, "ms")
    } else {
        (s * 1e6, "us")
    };
    let digits = if v.abs() >= 100.0 {
        0
    } else if v.abs() >= 10.0 {
        1
    } else {
        2
    };
    format!("{v:.digits$} {unit}")
}

fn text(size: u32) -> TextStyle<'static> {
    (FONT, size).into_font().color(&BLACK)
}

/// The legend panel: a swatch and a name per entry, then notes.
fn legend(area: &DrawingArea<SVGBackend<'_>, Shift>, entries: &[(String, Swatch)], notes: &[String]) -> Result<()> {
    let mut y = 60;
    for (name, swatch) in entries {
        match *swatch {
            Swatch::Fill(c) => area.draw(&Rectangle::new([(10, y - 7), (28, y + 7)], c.filled()))?,
            Swatch::Line(c) => area.draw(&PathElement::new(vec![(8, y), (30, y)], c.stroke_width(3)))?,
        }
        area.draw(&Text::new(
            name.clone(),
            (36, y),
            text(14).pos(Pos::new(HPos::Left, VPos::Center)),
        ))?;
        y += 24;
    }
    y += 12;
    for note in notes {
        area.draw(&Text::new(
            note.clone(),
            (10, y),
            text(12).pos(Pos::new(HPos::Left, VPos::Center)),
        ))?;
        y += 18;
    }
    Ok(())
}

#[derive(Clone, Copy)]
enum Swatch {
    Fill(RGBColor),
    Line(RGBColor),
}

impl Ladder {
    /// The distinct variants `(label, name)` in the order they first ran.
    pub fn variants(&self) -> Vec<(&str, &str)> {
        let mut seen: Vec<(&str, &str)> = Vec::new();
        for b in self.levels.iter().flat_map(|l| &l.bars) {
            if !seen.iter().any(|(_, v)| *v == b.variant) {
                seen.push((&b.label, &b.variant));
            }
        }
        seen
    }

    /// The chart as an SVG document.
    pub fn svg(&self) -> Result<String> {
        // Bar slots: one per bar, one empty between levels.
        let slots: usize = self.levels.iter().map(|l| l.bars.len() + 1).sum::<usize>().max(1);
        let width = (LEGEND_W + 140 + 34 * slots as u32).clamp(960, 2400);
        let mut svg = String::new();
        {
            let root = SVGBackend::with_string(&mut svg, (width, HEIGHT)).into_drawing_area();
            root.fill(&WHITE)?;
            let (plot, side) = root.split_horizontally(width - LEGEND_W);
            self.draw(&plot, slots)?;
            let mut entries: Vec<(String, Swatch)> = self
                .variants()
                .into_iter()
                .map(|(label, name)| (format!("{label} {name}"), Swatch::Fill(variant_color(name))))
                .collect();
            entries.push(("V0 stream floor".into(), Swatch::Line(BLACK)));
            let notes = [
                "bars: best numeric P^T A P per level".into(),
                "line: the bytes V0 must move over DRAM".into(),
                "at the copy bandwidth measured".into(),
                "in the same run".into(),
                "above a bar: its time / the floor".into(),
            ];
            legend(&side, &entries, &notes)?;
            root.present()?;
        }
        Ok(svg)
    }

    fn draw(&self, area: &DrawingArea<SVGBackend<'_>, Shift>, slots: usize) -> Result<()> {
        let times = self
            .levels
            .iter()
            .flat_map(|l| l.bars.iter().map(|b| b.numeric_s).chain([l.floor_s]))
            .filter(|t| t.is_finite() && *t > 0.0);
        let (lo, hi) = times.fold((f64::INFINITY, 0.0f64), |(lo, hi), t| (lo.min(t), hi.max(t)));
        if hi == 0.0 {
            area.titled(&self.title, (FONT, 18))?.draw(&Text::new(
                "no Galerkin product was timed (the hierarchy has one level)",
                (20, 40),
                text(16),
            ))?;
            return Ok(());
        }
        // x counts tenths of a bar slot (plotters formats integer axes with
        // custom key points): a level's bars fill its slots, one empty slot
        // follows it.
        let mut starts = Vec::with_capacity(self.levels.len());
        let mut at = 0i32;
        for l in &self.levels {
            starts.push(at);
            at += 10 * (l.bars.len() as i32 + 1);
        }
        let centres: Vec<i32> = self
            .levels
            .iter()
            .zip(&starts)
            .map(|(l, s)| s + 5 * l.bars.len() as i32)
            .collect();
        let names: Vec<String> = self.levels.iter().map(|l| format!("level {}", l.level)).collect();
        let (y0, y1) = (lo / 3.0, hi * 6.0);
        let mut chart = ChartBuilder::on(area)
            .caption(&self.title, (FONT, 18))
            .margin(12)
            .x_label_area_size(36)
            .y_label_area_size(80)
            .build_cartesian_2d(
                (-5..10 * slots as i32 - 5).with_key_points(centres.clone()),
                (y0..y1).log_scale(),
            )?;
        let level_of = |x: &i32| {
            centres
                .iter()
                .position(|c| c == x)
                .map_or_else(String::new, |i| names[i].clone())
        };
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_label_formatter(&level_of)
            .x_label_style(text(15))
            .y_label_formatter(&|t| fmt_time(*t))
            .y_desc("numeric time per product (log)")
            .draw()?;
        for (l, &start) in self.levels.iter().zip(&starts) {
            for (i, b) in l.bars.iter().enumerate() {
                if !(b.numeric_s.is_finite() && b.numeric_s > 0.0) {
                    continue;
                }
                let x = start + 10 * i as i32;
                let c = variant_color(&b.variant);
                chart.draw_series([Rectangle::new([(x + 1, y0), (x + 9, b.numeric_s)], c.filled())])?;
                let ratio = b.numeric_s / l.floor_s;
                if ratio.is_finite() {
                    let label = if ratio >= 100.0 {
                        format!("{ratio:.0}x")
                    } else {
                        format!("{ratio:.1}x")
                    };
                    chart.draw_series([Text::new(
                        label,
                        (x + 5, b.numeric_s * 1.08),
                        text(11).pos(Pos::new(HPos::Center, VPos::Bottom)),
                    )])?;
                }
            }
            if l.floor_s.is_finite() && l.floor_s > 0.0 {
                let x1 = start + 10 * l.bars.len() as i32;
                chart.draw_series([PathElement::new(
                    vec![(start, l.floor_s), (x1, l.floor_s)],
                    BLACK.stroke_width(3),
                )])?;
                chart.draw_series([Text::new(
                    format!("floor {}", fmt_time(l.floor_s)),
                    (start + 1, l.floor_s / 1.12),
                    text(12).pos(Pos::new(HPos::Left, VPos::Top)),
                )])?;
            }
        }
        Ok(())
    }
}

/// The bench chart of either report as an SVG document.
pub fn ladder_svg(ladder: impl Into<Ladder>) -> Result<String> {
    ladder.into().svg()
}

/// Most bars one phases panel draws; more steps than this are binned (each
/// bar the mean of consecutive hot steps).
pub const MAX_STEP_BARS: usize = 300;

/// One stacked bar: steps `first..=last` (their mean).
struct StepBar {
    first: usize,
    last: usize,
    cold: bool,
    phases: [f64; 5],
}

impl StepBar {
    fn name(&self) -> String {
        if self.first == self.last {
            self.first.to_string()
        } else {
            format!("{}-{}", self.first, self.last)
        }
    }
}

/// `steps` as at most [`MAX_STEP_BARS`] bars: the cold step alone, hot steps
/// binned in runs of equal length where there are too many.
fn step_bars(steps: &[crate::time_loop::Step]) -> Vec<StepBar> {
    let mut bars = Vec::new();
    let (cold, hot): (Vec<_>, Vec<_>) = steps.iter().partition(|s| s.cold);
    for s in cold {
        bars.push(StepBar {
            first: s.step,
            last: s.step,
            cold: true,
            phases: phase_values(&s.phases),
        });
    }
    let room = MAX_STEP_BARS - bars.len().min(MAX_STEP_BARS - 1);
    let per = hot.len().div_ceil(room).max(1);
    for run in hot.chunks(per) {
        let mut sum = [0.0; 5];
        for s in run {
            for (acc, v) in sum.iter_mut().zip(phase_values(&s.phases)) {
                *acc += v;
            }
        }
        bars.push(StepBar {
            first: run[0].step,
            last: run[run.len() - 1].step,
            cold: false,
            phases: sum.map(|v| v / run.len() as f64),
        });
    }
    bars
}

/// One panel of stacked bars, `shown[p]` telling which phases are drawn.
fn phases_panel(
    area: &DrawingArea<SVGBackend<'_>, Shift>,
    caption: &str,
    bars: &[StepBar],
    shown: &[bool; 5],
) -> Result<()> {
    let top = bars
        .iter()
        .map(|b| {
            b.phases
                .iter()
                .zip(shown)
                .filter(|(_, s)| **s)
                .map(|(v, _)| *v)
                .sum::<f64>()
        })
        .filter(|t| t.is_finite())
        .fold(0.0f64, f64::max);
    let top = if top > 0.0 { top * 1.15 } else { 1.0 };
    let n = bars.len() as i32;
    // x counts tenths of a bar slot (see the ladder); at most 20 labelled bars.
    let every = (n as usize).div_ceil(20).max(1);
    let keys: Vec<i32> = (0..n).step_by(every).map(|i| 10 * i).collect();
    let mut chart = ChartBuilder::on(area)
        .caption(caption, (FONT, 16))
        .margin(12)
        .x_label_area_size(34)
        .y_label_area_size(80)
        .build_cartesian_2d((-6..10 * n - 4).with_key_points(keys), 0.0..top)?;
    let name_of = |x: &i32| {
        if x % 10 == 0 && (0..n).contains(&(x / 10)) {
            bars[(x / 10) as usize].name()
        } else {
            String::new()
        }
    };
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_label_formatter(&name_of)
        .x_desc("step")
        .y_label_formatter(&|t| fmt_time(*t))
        .y_desc("time per step")
        .draw()?;
    for (i, b) in bars.iter().enumerate() {
        let x = 10 * i as i32;
        let mut base = 0.0;
        for (p, (&v, &on)) in b.phases.iter().zip(shown).enumerate() {
            // Phases that took no time (a hot step's mesh setup) draw nothing.
            if !(on && v.is_finite() && v > 0.0) {
                continue;
            }
            chart.draw_series([Rectangle::new([(x - 4, base), (x + 4, base + v)], PHASES[p].1.filled())])?;
            base += v;
        }
        if b.cold {
            chart.draw_series([Text::new(
                "cold",
                (x, base),
                text(12).pos(Pos::new(HPos::Center, VPos::Bottom)),
            )])?;
        }
    }
    Ok(())
}

/// The time loop's phases per step as an SVG document.
pub fn phases_svg(r: &TimeLoopReport) -> Result<String> {
    let bars = step_bars(&r.steps);
    let mut shown = [true; 5];
    // The upload is drawn where it took time (the cold step).
    shown[2] = bars.iter().any(|b| b.phases[2] > 0.0);
    let hot: Vec<StepBar> = step_bars(&r.steps).into_iter().filter(|b| !b.cold).collect();
    let slots = bars.len().min(MAX_STEP_BARS) as u32;
    let width = (LEGEND_W + 140 + 22 * slots).clamp(960, 1800);
    let height = if hot.is_empty() { HEIGHT } else { 2 * HEIGHT - 80 };
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (width, height)).into_drawing_area();
        root.fill(&WHITE)?;
        let (plot, side) = root.split_horizontally(width - LEGEND_W);
        let plot = plot.titled(
            &format!(
                "ptap run, beam k = {}: {} dofs, {} levels, {} on the {} ({} threads)",
                r.k, r.dofs, r.levels, r.variant, r.device, r.threads
            ),
            (FONT, 18),
        )?;
        let binned = if bars.len() < r.steps.len() {
            " (hot bars: means of consecutive steps)"
        } else {
            ""
        };
        if hot.is_empty() {
            phases_panel(&plot, &format!("phases of the one step{binned}"), &bars, &shown)?;
        } else {
            let (upper, lower) = plot.split_vertically(plot.dim_in_pixel().1 / 2);
            phases_panel(
                &upper,
                &format!("every step: step 1 cold, later steps hot{binned}"),
                &bars,
                &shown,
            )?;
            phases_panel(
                &lower,
                "hot steps only (values refreshed, schedules replayed)",
                &hot,
                &shown,
            )?;
        }
        let entries: Vec<(String, Swatch)> = PHASES
            .iter()
            .zip(shown)
            .filter(|(_, on)| *on)
            .rev()
            .map(|((name, c), _)| (name.to_string(), Swatch::Fill(*c)))
            .collect();
        let total = |p: &Phases| phase_values(p).iter().sum::<f64>();
        let mut notes = vec![format!("cold step: {}", fmt_time(total(&r.cold)))];
        if let Some(h) = &r.hot_mean {
            notes.push(format!("hot mean: {}", fmt_time(total(h))));
            notes.push(format!("hot matrix setup: {}", fmt_time(h.matrix_setup_s)));
            notes.push(format!("of which numeric PtAP: {}", fmt_time(h.galerkin_numeric_s)));
        }
        legend(&side, &entries, &notes)?;
        root.present()?;
    }
    Ok(svg)
}

/// Refuses, before any work, a plot path that [`write_svg`] could not
/// replace: a directory, FIFO, device or link in the way, or a folder that
/// is missing or is not a folder. The sentence is [`write_svg`]'s.
pub fn check_path(path: &Path) -> Result<()> {
    let folder = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    ptap_io::fsio::check_replaceable(path)
        .and_then(|()| match std::fs::metadata(folder) {
            Ok(m) if m.is_dir() => Ok(()),
            Ok(_) => Err(io::Error::new(
                io::ErrorKind::NotADirectory,
                format!("{} is not a folder", folder.display()),
            )),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Err(io::Error::new(
                io::ErrorKind::NotFound,
                format!("its folder {} does not exist", folder.display()),
            )),
            Err(e) => Err(e),
        })
        .map_err(|e| unwritable(path, e))
}

fn unwritable(path: &Path, e: io::Error) -> anyhow::Error {
    anyhow!("cannot write the plot to {}: {e}", path.display())
}

/// Writes `svg` to `path` atomically, never replacing anything but a
/// regular file.
pub fn write_svg(path: &Path, svg: &str) -> Result<()> {
    ptap_io::fsio::write_atomic(path, |w| w.write_all(svg.as_bytes())).map_err(|e| unwritable(path, e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::VariantResult;
    use crate::bench_cuda::{ProductResult, SolveResult};
    use crate::time_loop::Step;

    fn cpu_row(level: usize, variant: &'static str, label: &'static str, numeric_s: f64) -> VariantResult {
        VariantResult {
            level,
            variant,
            label,
            inspect_s: 0.01,
            numeric_s,
            speedup_vs_v0: 1.0,
            v0_floor_bytes: 4e6 / (level + 1) as f64,
            ratio_to_floor: 1.0,
            bitwise_v0: true,
            max_rel_diff_vs_v0: 0.0,
            buffer_bytes: 0,
            schedule_file_bytes: 0,
            load_s: 0.0,
        }
    }

    fn device_row(level: usize, variant: &'static str, label: &'static str, numeric_s: f64) -> ProductResult {
        ProductResult {
            level,
            variant,
            label,
            numeric_s,
            v0_floor_bytes: 8e7 / (level + 1) as f64,
            ratio_to_floor: 1.0,
            speedup_vs_v0: f64::NAN,
            rel_frobenius_vs_cpu_v0: 0.0,
            deterministic: true,
            buffer_bytes: 0,
        }
    }

    /// Every `<rect>` of the document by its fill colour, the document parsed as XML.
    fn rects_by_fill(svg: &str) -> std::collections::HashMap<String, usize> {
        let doc = roxmltree::Document::parse(svg).expect("the SVG is well-formed XML");
        assert_eq!(doc.root_element().tag_name().name(), "svg");
        let mut count = std::collections::HashMap::new();
        for n in doc.descendants().filter(|n| n.has_tag_name("rect")) {
            *count.entry(n.attribute("fill").unwrap_or("").to_string()).or_insert(0) += 1;
        }
        count
    }

    fn hex(c: RGBColor) -> String {
        format!("#{:02X}{:02X}{:02X}", c.0, c.1, c.2)
    }

    /// One bar per (level, variant) run, plus the variant's legend swatch.
    fn assert_one_bar_per_level_and_variant(ladder: &Ladder, svg: &str) {
        let rects = rects_by_fill(svg);
        for (label, name) in ladder.variants() {
            let levels = ladder
                .levels
                .iter()
                .filter(|l| l.bars.iter().any(|b| b.variant == name))
                .count();
            let fill = hex(variant_color(name));
            assert_eq!(rects.get(&fill).copied(), Some(levels + 1), "{label} {name} ({fill})");
            assert!(svg.contains(&format!("{label} {name}")), "legend entry of {name}");
        }
        for l in &ladder.levels {
            assert!(
                svg.contains(&format!("level {}", l.level)),
                "label of level {}",
                l.level
            );
        }
        assert!(svg.contains("V0 stream floor"));
    }

    #[test]
    fn the_cpu_ladder_has_one_bar_per_level_and_variant_and_a_floor_per_level() {
        let variants = [("two-pass", "V0"), ("flat-stream", "V3"), ("column-split", "colsplit")];
        let mut results = Vec::new();
        for level in 0..3 {
            for (i, (v, l)) in variants.iter().enumerate() {
                results.push(cpu_row(level, v, l, 1e-3 * (i + 1) as f64 / (level + 1) as f64));
            }
        }
        let report = BenchReport {
            k: 4,
            threads: 2,
            aggregation: "natural",
            pf: 0.0,
            pf_scale: 0.5,
            copy_bandwidth_bytes_per_s: 2e10,
            results,
            whole_hierarchy: Vec::new(),
        };
        let ladder = Ladder::from(&report);
        assert_eq!(ladder.levels.len(), 3);
        assert!(ladder.levels.iter().all(|l| l.bars.len() == 3));
        assert_eq!(ladder.levels[0].floor_s, 4e6 / 2e10);
        let svg = ladder.svg().unwrap();
        assert!(svg.starts_with("<svg"));
        assert_one_bar_per_level_and_variant(&ladder, &svg);
        // The floor of each level is drawn and labelled.
        assert!(svg.contains(&format!("floor {}", fmt_time(4e6 / 2e10))), "{svg}");
        assert_eq!(svg.matches(">\nfloor ").count(), 3);
    }

    /// A device report as `ptap bench --device cuda` writes it; level 1 ran
    /// fewer variants than level 0.
    fn dev_report() -> CudaBenchReport {
        let products = vec![
            device_row(0, "two-pass", "V0", 2e-3),
            device_row(0, "slot-tiled", "V2b", 1.5e-3),
            device_row(0, "column-split", "colsplit", 1e-3),
            device_row(1, "two-pass", "V0", 4e-4),
            device_row(1, "column-split", "colsplit", 3e-4),
        ];
        CudaBenchReport {
            k: 8,
            aggregation: "natural",
            smoother_precision: "f64",
            pf: 0.0,
            pf_scale: 0.5,
            device: "NVIDIA H200".into(),
            arch: "sm_90".into(),
            fmad: true,
            programmatic_launch: true,
            copy_bandwidth_bytes_per_s: 4e12,
            memcpy_dtod_bytes_per_s: 4e12,
            copy_kernel_bytes_per_s: 3.9e12,
            kernels_compiled: 3,
            kernels_from_cache: 0,
            compile_s: 1.0,
            products,
            best_per_level: vec![(0, "column-split", 1e-3), (1, "column-split", 3e-4)],
            total_best_s: 1.3e-3,
            total_v0_floor_s: 3e-5,
            total_column_split_s: 1.3e-3,
            total_two_pass_s: 2.4e-3,
            spmv: Vec::new(),
            solve: SolveResult {
                iterations: 20,
                converged: true,
                relative_residual: 1e-9,
                max_displacement: 1.0,
                coarse_rows: 100,
                product_variant: "column-split",
                matrix_setup_s: 1e-2,
                galerkin_numeric_s: 1e-3,
                matrix_setup: Default::default(),
                solve_s: 1e-2,
                s_per_iteration: 5e-4,
                assembly_s: 2e-3,
                hot_step_s: 2.2e-2,
                s_per_iteration_eager: 6e-4,
                vcycle_s: 4e-4,
                vcycle_eager_s: 5e-4,
                vcycle_levels: Vec::new(),
                mirrored_spmv: false,
                iteration_floor_bytes: 1e9,
                iteration_floor_s: 2.5e-4,
                iteration_floor_parts: Vec::new(),
                ratio_to_floor: 2.0,
            },
            transfers: Default::default(),
        }
    }

    #[test]
    fn a_device_report_draws_the_same_figure_from_its_own_rows() {
        let report = dev_report();
        let ladder = Ladder::from(&report);
        assert_eq!(
            ladder.levels.iter().map(|l| l.bars.len()).collect::<Vec<_>>(),
            vec![3, 2]
        );
        assert_eq!(ladder.levels[1].floor_s, 4e7 / 4e12);
        assert!(ladder.title.contains("NVIDIA H200") && ladder.title.contains("--device cuda"));
        let svg = ladder_svg(&report).unwrap();
        assert_one_bar_per_level_and_variant(&ladder, &svg);
        // V2b ran on level 0 only: one bar and its swatch.
        assert_eq!(rects_by_fill(&svg)[&hex(variant_color("slot-tiled"))], 2);
        // Its ratio to the floor is printed over its bar.
        let ratio = 1.5e-3 / (8e7 / 4e12);
        assert!(svg.contains(&format!("{ratio:.1}x")), "{ratio}");
    }

    #[test]
    fn a_ladder_without_products_still_draws_a_document() {
        let ladder = Ladder {
            title: "k = 1".into(),
            levels: Vec::new(),
        };
        let svg = ladder.svg().unwrap();
        roxmltree::Document::parse(&svg).unwrap();
        assert!(svg.contains("no Galerkin product was timed"));
    }

    fn report(n: usize) -> TimeLoopReport {
        let phases = |s: usize| Phases {
            assembly_s: 0.1,
            mesh_setup_s: if s == 1 { 0.5 } else { 0.0 },
            device_upload_s: 0.0,
            matrix_setup_s: 0.2,
            galerkin_numeric_s: 0.05,
            solve_s: 0.3 + 1e-3 * s as f64,
            ..Phases::default()
        };
        let steps: Vec<Step> = (1..=n)
            .map(|s| Step {
                step: s,
                cold: s == 1,
                iterations: 10,
                converged: true,
                relative_residual: 1e-9,
                max_displacement: 1.0,
                phases: phases(s),
                matrix: Default::default(),
            })
            .collect();
        TimeLoopReport {
            k: 2,
            dofs: 1500,
            device: "cpu",
            threads: 2,
            variant: "two-pass".into(),
            aggregation: "natural",
            smoother_precision: "f64",
            pf: 0.0,
            hierarchy_reused: true,
            levels: 2,
            schedule_cache: None,
            cold: steps[0].phases,
            setup: Default::default(),
            hot_mean: (n > 1).then(|| phases(2)),
            steps,
            device_variants: None,
            transfers: None,
            peak_device_bytes: None,
            peak_rss_bytes: None,
            start: Default::default(),
        }
    }

    #[test]
    fn the_phases_chart_stacks_each_phase_of_each_step() {
        let svg = phases_svg(&report(4)).unwrap();
        let rects = rects_by_fill(&svg);
        let count = |name: &str| rects.get(&hex(PHASES.iter().find(|p| p.0 == name).unwrap().1)).copied();
        // Upper panel: 4 steps; lower panel: the 3 hot ones; plus the legend swatch.
        assert_eq!(count("assembly"), Some(4 + 3 + 1));
        assert_eq!(count("matrix setup"), Some(4 + 3 + 1));
        assert_eq!(count("solve"), Some(4 + 3 + 1));
        // Mesh setup only in the cold step; no upload took time, so none is drawn.
        assert_eq!(count("mesh setup"), Some(1 + 1));
        assert_eq!(count("upload to the backend"), None);
        for name in ["assembly", "mesh setup", "matrix setup", "solve", "cold"] {
            assert!(svg.contains(&format!(">\n{name}\n<")), "{name}");
        }
    }

    #[test]
    fn many_steps_are_binned_into_a_bounded_number_of_bars() {
        let svg = phases_svg(&report(1000)).unwrap();
        let solve = rects_by_fill(&svg)[&hex(PHASES[4].1)];
        assert!(solve <= 2 * MAX_STEP_BARS + 1, "{solve} bars");
        assert!(svg.contains("means of consecutive steps"));
        let bars = step_bars(&report(1000).steps);
        assert_eq!(bars.len(), 1 + 999usize.div_ceil(999usize.div_ceil(MAX_STEP_BARS - 1)));
        assert_eq!((bars[1].first, bars.last().unwrap().last), (2, 1000));
        // One step: one panel, no hot bars.
        let one = phases_svg(&report(1)).unwrap();
        assert_eq!(rects_by_fill(&one)[&hex(PHASES[4].1)], 2);
    }

    #[test]
    fn plot_paths_that_cannot_be_written_are_refused_in_one_sentence() {
        let dir = std::env::temp_dir().join(format!("ptap-plot-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let err = check_path(&dir).unwrap_err().to_string();
        assert!(
            err.starts_with("cannot write the plot to ") && err.contains("a directory"),
            "{err}"
        );
        let missing = dir.join("no-such-folder").join("x.svg");
        let err = check_path(&missing).unwrap_err().to_string();
        assert!(
            err.contains("does not exist") && err.contains("no-such-folder"),
            "{err}"
        );
        assert!(write_svg(&missing, "<svg/>").is_err());
        let good = dir.join("x.svg");
        check_path(&good).unwrap();
        write_svg(&good, "<svg/>").unwrap();
        assert_eq!(std::fs::read_to_string(&good).unwrap(), "<svg/>");
        std::fs::remove_dir_all(&dir).ok();
    }
}
