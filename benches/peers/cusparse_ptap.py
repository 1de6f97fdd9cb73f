#!/usr/bin/env python3
"""cuSPARSE peer for ptap's device Galerkin product: P^T (A P) on the scalar
expansion of the same matrices, through CuPy (cupyx.scipy.sparse, which calls
cuSPARSE SpGEMM).

Input: the directory written by `ptap bench --device cuda --k K --dump DIR`
(per level `A{l}` and `P{l}` as scalar CSR: .indptr int64, .indices int32,
.data float64, little-endian, and a .json with the shape).

Timings per level, GPU-fenced with CUDA events, best of `--repeat`:
  cold   the first `P.T @ (A @ P)` of the process for that level (includes
         cuSPARSE's symbolic phase, workspace allocation and the transpose);
  warm   the same call repeated (CuPy re-runs symbolic + numeric every call:
         cupyx exposes no SpGEMM-reuse API, so "with reuse" is only the
         memory-pool reuse of the warm call);
  numeric_rt  with R = P^T formed once outside the timing: `R @ (A @ P)`.

Validity: C's nonzero count is checked against the next level's dumped A
(the same pattern) before anything is timed; an empty or short product is
never reported. At k = 16 the unsplit product comes back empty (a 32-bit
overflow inside the CuPy/cuSPARSE SpGEMM path: CuPy's SpGEMM takes int32
indices only), so the script then splits both products by row blocks,
`W = vstack(A[rows] @ P)`, `C = vstack(R[rows] @ W)`, doubling the number of
blocks until C is complete; the split is recorded per level.

Usage: python3 cusparse_ptap.py DIR [--repeat 5] [--json OUT]
"""
import argparse
import json
import os
import sys
import time

import numpy as np
import cupy as cp
import cupyx.scipy.sparse as csp


def load(d, name):
    meta = json.load(open(os.path.join(d, name + ".json")))
    indptr = np.fromfile(os.path.join(d, name + ".indptr"), dtype="<i8")
    indices = np.fromfile(os.path.join(d, name + ".indices"), dtype="<i4")
    data = np.fromfile(os.path.join(d, name + ".data"), dtype="<f8")
    m = csp.csr_matrix(
        (cp.asarray(data), cp.asarray(indices), cp.asarray(indptr.astype(np.int32))),
        shape=(meta["rows"], meta["cols"]),
    )
    return m, meta


def expected_nnz(d, l):
    path = os.path.join(d, f"A{l + 1}.json")
    return json.load(open(path))["nnz"] if os.path.exists(path) else None


def row_blocks(n, split):
    b = np.linspace(0, n, split + 1).astype(np.int64)
    return [(int(b[i]), int(b[i + 1])) for i in range(split) if b[i + 1] > b[i]]


def galerkin(a, p, r, split):
    """R (A P), with both products split into `split` row blocks when > 1."""
    if split <= 1:
        return r @ (a @ p)
    w = csp.vstack([a[i:j] @ p for i, j in row_blocks(a.shape[0], split)]).tocsr()
    return csp.vstack([r[i:j] @ w for i, j in row_blocks(r.shape[0], split)]).tocsr()


def valid(c, want):
    return c.nnz > 0 and (want is None or int(c.nnz) == want)


def timed(f):
    start, end = cp.cuda.Event(), cp.cuda.Event()
    start.record()
    out = f()
    end.record()
    end.synchronize()
    return out, cp.cuda.get_elapsed_time(start, end) * 1e-3


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--json")
    args = ap.parse_args()
    levels = sorted(
        int(f[1:-5]) for f in os.listdir(args.dir) if f.startswith("P") and f.endswith(".json")
    )
    dev = cp.cuda.Device()
    name = cp.cuda.runtime.getDeviceProperties(dev.id)["name"].decode()
    print(f"cuSPARSE via CuPy {cp.__version__} on {name}")
    rows = []
    for l in levels:
        a, ma = load(args.dir, f"A{l}")
        p, mp = load(args.dir, f"P{l}")
        want = expected_nnz(args.dir, l)
        cp.cuda.Device().synchronize()
        split = 1
        while True:
            try:
                c_cold, cold = timed(lambda: galerkin(a, p, p.T.tocsr(), split))
                ok = valid(c_cold, want)
            except Exception as e:  # noqa: BLE001 (an overflow may also raise)
                print(f"l{l}: split {split}: {type(e).__name__}: {e}")
                c_cold, ok = None, False
            if ok:
                break
            if c_cold is not None:
                print(f"l{l}: split {split}: C has {int(c_cold.nnz)} nonzeros, want {want}; splitting further")
            del c_cold
            cp.get_default_memory_pool().free_all_blocks()
            split *= 2
            if split > 256:
                raise SystemExit(f"l{l}: no valid product even with 256 row blocks")
        warm = min(timed(lambda: galerkin(a, p, p.T.tocsr(), split))[1] for _ in range(args.repeat))
        r = p.T.tocsr()
        cp.cuda.Device().synchronize()
        c_rt, numeric_rt = None, float("inf")
        for _ in range(args.repeat):
            c_rt, t = timed(lambda: galerkin(a, p, r, split))
            numeric_rt = min(numeric_rt, t)
        if not valid(c_rt, want):
            raise SystemExit(f"l{l}: R (A P) has {int(c_rt.nnz)} nonzeros, want {want}")
        row = {
            "level": l,
            "a_rows": ma["rows"],
            "a_nnz": ma["nnz"],
            "p_cols": mp["cols"],
            "p_nnz": mp["nnz"],
            "c_nnz": int(c_cold.nnz),
            "c_nnz_expected": want,
            "row_block_split": split,
            "cold_s": cold,
            "warm_s": warm,
            "numeric_rt_s": numeric_rt,
            "c_frobenius": float(cp.sqrt((c_rt.data ** 2).sum())),
        }
        rows.append(row)
        print(
            f"l{l}: A {ma['rows']} rows {ma['nnz']} nnz, P {mp['cols']} cols, C {int(c_cold.nnz)} nnz, split {split}; "
            f"cold {1e3 * cold:.2f} ms, warm {1e3 * warm:.2f} ms, R (A P) with R formed once {1e3 * numeric_rt:.2f} ms"
        )
        del a, p, r, c_cold, c_rt
        cp.get_default_memory_pool().free_all_blocks()
    total = {k: sum(r[k] for r in rows) for k in ("cold_s", "warm_s", "numeric_rt_s")}
    print(
        f"all levels: cold {1e3 * total['cold_s']:.2f} ms, warm {1e3 * total['warm_s']:.2f} ms, "
        f"R (A P) {1e3 * total['numeric_rt_s']:.2f} ms"
    )
    if args.json:
        json.dump({"device": name, "cupy": cp.__version__, "levels": rows, "total": total}, open(args.json, "w"), indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
