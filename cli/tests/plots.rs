//! `--plot FILE.svg` of `ptap bench` and `ptap run`: the file is a
//! well-formed SVG document naming what was measured, and a path that cannot
//! be written is refused in one sentence before any work.
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn ptap(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ptap"))
        .args(args)
        .output()
        .expect("the ptap binary runs")
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ptap-plots-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn ok(args: &[&str]) {
    let out = ptap(args);
    assert!(
        out.status.success(),
        "{args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The file as text, after checking it is one `<svg>` element of well-formed XML.
fn svg(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    assert!(text.starts_with("<svg"), "{}", &text[..text.len().min(200)]);
    let doc = roxmltree::Document::parse(&text).expect("the plot is well-formed XML");
    assert_eq!(doc.root_element().tag_name().name(), "svg");
    assert!(doc.descendants().any(|n| n.has_tag_name("rect")), "the plot has bars");
    text
}

/// Whether some `<text>` of the SVG reads exactly `want`.
fn has_text(svg: &str, want: &str) -> bool {
    svg.contains(&format!(">\n{want}\n</text>"))
}

#[test]
fn bench_plot_names_every_level_and_every_variant_it_ran() {
    let dir = scratch("bench");
    let (plot, json) = (dir.join("bench.svg"), dir.join("bench.json"));
    ok(&[
        "bench",
        "--k",
        "2",
        "--repeat",
        "1",
        "--quiet",
        "--plot",
        plot.to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
    ]);
    let text = svg(&plot);
    let report: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let rows = report["results"].as_array().unwrap();
    assert_eq!(
        rows.len(),
        ptap_schedules::Variant::ALL.len(),
        "k = 2: one level, every variant"
    );
    for r in rows {
        let level = format!("level {}", r["level"]);
        assert!(has_text(&text, &level), "{level}");
        let name = format!("{} {}", r["label"].as_str().unwrap(), r["variant"].as_str().unwrap());
        assert!(has_text(&text, &name), "{name}");
    }
    assert!(has_text(&text, "V0 stream floor"));
    assert!(text.contains(">\nfloor "), "the level's floor is labelled");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn run_plot_names_the_four_phases_and_every_step() {
    let dir = scratch("run");
    let plot = dir.join("run.svg");
    ok(&[
        "run",
        "--k",
        "2",
        "--steps",
        "2",
        "--quiet",
        "--plot",
        plot.to_str().unwrap(),
    ]);
    let text = svg(&plot);
    for phase in ["assembly", "mesh setup", "matrix setup", "solve"] {
        assert!(has_text(&text, phase), "{phase}");
    }
    for step in ["1", "2", "cold"] {
        assert!(has_text(&text, step), "step label {step}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// A refusal before any work: non-zero exit, one `error:` line naming `path`,
/// and nothing written there.
fn refused(args: &[&str], path: &Path, why: &str) {
    let out = ptap(args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{args:?} must fail");
    assert!(!err.contains("panicked"), "{args:?}: {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: one line expected: {err}");
    assert!(
        err.starts_with(&format!("error: cannot write the plot to {}: ", path.display())),
        "{args:?}: {err}"
    );
    assert!(err.contains(why), "{args:?}: wanted {why:?} in {err}");
    assert!(
        String::from_utf8_lossy(&out.stdout).is_empty(),
        "{args:?} did work first"
    );
}

#[test]
fn a_plot_path_that_cannot_be_written_is_refused_before_any_work() {
    let dir = scratch("refused");
    let missing = dir.join("no-such-folder").join("p.svg");
    for (path, why) in [(dir.as_path(), "it is a directory"), (&missing, "does not exist")] {
        let p = path.to_str().unwrap();
        refused(&["bench", "--k", "2", "--plot", p], path, why);
        refused(&["run", "--k", "2", "--steps", "2", "--plot", p], path, why);
    }
    assert!(!dir.join("no-such-folder").exists());
    std::fs::remove_dir_all(&dir).ok();
}
