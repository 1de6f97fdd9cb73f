#!/usr/bin/env python3
"""The markdown table of benches/weak-scaling.sh from its runs' JSON.

Hot steps are steps 2.. of each run; every figure of the GPU ranks is the
mean over the hot steps of the per-step maximum (or mean) over ranks.
Efficiencies are weak-scaling ones: the 1-GPU rank run's time over the
N-GPU run's (the work per GPU is the same).
"""
import argparse
import json
import os
import sys

PAPER_8_A100 = {"assembly": 0.363, "matrix_setup": 0.146, "solve": 0.298}
PHASES = ["assembly", "matrix_setup", "solve"]
TRANSFER_PHASES = ["assembly", "fine values upload", "matrix setup", "solve", "rhs upload", "solution download"]


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def hot(run):
    return run["steps"][1:] or run["steps"][:1]


def mean(v):
    v = list(v)
    return sum(v) / len(v) if v else float("nan")


def per_iteration(run, key="max_s"):
    return mean(s["solve_per_iteration"][key] for s in hot(run))


def products(run, key="max_s"):
    levels = len(hot(run)[0]["galerkin_per_level"])
    return [mean(s["galerkin_per_level"][l][key] for s in hot(run)) for l in range(levels)]


def ms(x):
    return f"{1e3 * x:.3f}"


def pct(a, b):
    return f"{100.0 * a / b:.1f}%" if b and a == a and b == b else "-"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--k", type=int, default=16)
    ap.add_argument("--big-k", type=int, default=32)
    ap.add_argument("--gpus", type=int, default=1)
    ap.add_argument("--failed", default="")
    a = ap.parse_args()
    d = a.dir
    single = load(os.path.join(d, f"single-k{a.k}.json"))
    counts = []
    n = 1
    while n <= a.gpus:
        counts.append(n)
        n *= 2
    ranks = [(n, load(os.path.join(d, f"ranks-np{n}-k{a.k}.json"))) for n in counts]
    ranks = [(n, r) for n, r in ranks if r]
    big = load(os.path.join(d, f"ranks-np{a.gpus}-k{a.big_k}.json")) if a.big_k else None
    out = []
    p = out.append
    if ranks:
        p(f"Device: {ranks[0][1]['device']}; k = {a.k}, `--length N` on N GPUs, "
          f"{ranks[0][1]['block_rows'] // ranks[0][0]} block rows per GPU; hot steps 2-{len(ranks[0][1]['steps'])}.")
        p("")
    base = dict(ranks).get(1)
    head = ["", *(f"{n} GPU{'s' if n > 1 else ''}" for n, _ in ranks)]
    if single:
        head.append("1 GPU, single process")
    p("| " + " | ".join(head) + " |")
    p("|" + "---|" * len(head))

    def row(name, cells, ref=None):
        p("| " + " | ".join([name, *cells, *([ref] if single else [])]) + " |")

    row("unknowns", [f"{r['unknowns']:,}" for _, r in ranks], f"{single['dofs']:,}" if single else "")
    row("iterations (cold; hot)", [f"{r['steps'][0]['iterations']}; {','.join(str(s['iterations']) for s in hot(r))}"
                                   for _, r in ranks],
        f"{single['steps'][0]['iterations']}; {','.join(str(s['iterations']) for s in single['steps'][1:])}"
        if single else "")
    for ph in PHASES:
        sp = None
        if single:
            sp = ms(single["hot_mean"][ph + "_s"])
        row(f"{ph.replace('_', ' ')} (ms, max / mean over ranks)",
            [f"{ms(r['hot_mean'][ph]['max_s'])} / {ms(r['hot_mean'][ph]['mean_s'])}" for _, r in ranks], sp)
    row("hot step (ms, sum of the phases' max)",
        [ms(sum(r["hot_mean"][ph]["max_s"] for ph in PHASES)) for _, r in ranks],
        ms(sum(single["hot_mean"][ph + "_s"] for ph in PHASES)) if single else None)
    sp_it = None
    if single:
        sp_it = mean(s["phases"]["solve_s"] / max(1, s["iterations"]) for s in single["steps"][1:])
    row("solve per iteration (ms, max / mean)",
        [f"{ms(per_iteration(r))} / {ms(per_iteration(r, 'mean_s'))}" for _, r in ranks],
        ms(sp_it) if single else None)
    if base:
        row("per-iteration solve efficiency", [pct(per_iteration(base), per_iteration(r)) for _, r in ranks],
            f"1 rank over single process: {per_iteration(base) / sp_it:.3f}x" if single else None)
        row("matrix setup efficiency",
            [pct(base["hot_mean"]["matrix_setup"]["max_s"], r["hot_mean"]["matrix_setup"]["max_s"]) for _, r in ranks],
            "-")
    levels = len(products(ranks[0][1])) if ranks else 0
    for l in range(levels):
        row(f"Galerkin product level {l} (ms, max; efficiency)",
            [f"{ms(products(r)[l])}; {pct(products(base)[l], products(r)[l]) if base else '-'}" for _, r in ranks],
            "-")
    for l in range(levels):
        cells = []
        for _, r in ranks:
            b = r["levels"][l].get("balance") if l < len(r["levels"]) else None
            cells.append("-" if not b else
                         f"{b['time_max_over_mean']:.3f} (product {ms(b['product_max_s'])} / {ms(b['product_mean_s'])}, "
                         f"SpMV {ms(b['spmv_max_s'])} / {ms(b['spmv_mean_s'])})")
        row(f"level {l} time max / mean over ranks (ms max / mean)", cells, "-")
    row("device memory per GPU (GB, max)",
        [f"{max(r['device_memory_used_bytes']) / 1e9:.2f}" for _, r in ranks],
        f"{single['peak_device_bytes'] / 1e9:.2f} (peak)" if single and single.get("peak_device_bytes") else "-")
    row("cold: assembly / mesh setup / upload / matrix setup / solve (s, max)",
        [" / ".join(f"{r['steps'][0]['phases'][ph]['max_s']:.3f}"
                    for ph in ["assembly", "mesh_setup", "upload", "matrix_setup", "solve"]) for _, r in ranks],
        " / ".join(f"{single['cold'][ph]:.3f}" for ph in
                   ["assembly_s", "mesh_setup_s", "device_upload_s", "matrix_setup_s", "solve_s"]) if single else None)
    row("cold upload: backend / operators / transfers / NCCL warm-up (s, max)",
        [" / ".join(f"{r['cold_upload_parts'][k]['max_s']:.3f}"
                    for k in ["backend_s", "operators_s", "transfers_s", "nccl_warm_up_s"])
         if r.get("cold_upload_parts") else "-" for _, r in ranks], "-")
    p("")
    if ranks:
        p("Host<->device bytes per hot step, largest over ranks (up B / copies, down B / copies):")
        p("")
        p("| phase | " + " | ".join(f"{n} GPU{'s' if n > 1 else ''}" for n, _ in ranks) + " |")
        p("|---|" + "---|" * len(ranks))
        for ph in TRANSFER_PHASES:
            cells = []
            for _, r in ranks:
                t = (r.get("transfers_per_hot_step_max_over_ranks") or {}).get(ph)
                cells.append("-" if not t else
                             f"{t['h2d_bytes']:,.0f} / {t['h2d_copies']:.0f}, {t['d2h_bytes']:,.0f} / {t['d2h_copies']:.0f}"
                             + (" (scalars only)" if t["scalars_only"] else ""))
            p(f"| {ph} | " + " | ".join(cells) + " |")
        p("")
    if big:
        hm = big["hot_mean"]
        p(f"k = {a.big_k} ({big['unknowns']:,} unknowns) on {big['ranks']} GPU(s), hot steps (ms, max / mean over "
          f"ranks), against the paper's 8 A100s:")
        p("")
        p("| | assembly | matrix setup | solve | hot step | iterations | solve per iteration |")
        p("|---|---|---|---|---|---|---|")
        p("| ptap, " + f"{big['ranks']} GPU(s) | " + " | ".join(
            f"{ms(hm[ph]['max_s'])} / {ms(hm[ph]['mean_s'])}" for ph in PHASES)
          + f" | {ms(sum(hm[ph]['max_s'] for ph in PHASES))} | "
          + ",".join(str(s["iterations"]) for s in big["steps"]) + f" | {ms(per_iteration(big))} |")
        p("| paper, 8 A100 | " + " | ".join(ms(PAPER_8_A100[ph]) for ph in PHASES)
          + f" | {ms(sum(PAPER_8_A100.values()))} | 19 | - |")
        p("")
        levels_big = len(big["levels"])
        ratios = []
        for l in range(levels_big):
            b = big["levels"][l].get("balance")
            if b:
                ratios.append(f"level {l} {b['time_max_over_mean']:.3f}")
        p(f"Per-level time max / mean over ranks: {', '.join(ratios) or '-'}; products per level (ms, max): "
          + ", ".join(ms(x) for x in products(big)) + "; cold: "
          + ", ".join(f"{ph.replace('_', ' ')} {big['steps'][0]['phases'][ph]['max_s']:.2f} s"
                      for ph in ["assembly", "mesh_setup", "upload", "matrix_setup", "solve"])
          + f"; device memory {max(big['device_memory_used_bytes']) / 1e9:.2f} GB per GPU.")
        p("")
    if a.failed.strip():
        p(f"Not in the table (failed or timed out): {a.failed}.")
    sys.stdout.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
