"""The Python Solver against the ptap binary: `ptap solve --a A --b b
--coords X` on the CPU must give the same iterations and the same solution,
bit for bit (both are the library's front door, ptap::Solver, with its
default options).

The binary is $PTAP_BIN, else target/release/ptap of this checkout; the test
skips, saying why, when neither exists or the binary has no `solve --a`
(the user-matrix CLI)."""

import json
import os
import re
import shutil
import struct
import subprocess
from pathlib import Path

import numpy as np
import pytest
import scipy.io

import ptap
from problems import elasticity, poisson2d

REPO = Path(__file__).resolve().parents[2]
PETSC_VEC_CLASSID = 1211214


def ptap_binary():
    """(path, None) for a binary that takes `solve --a`, else (None, why not)."""
    given = os.environ.get("PTAP_BIN")
    path = given or str(REPO / "target" / "release" / "ptap")
    found = shutil.which(path) if given else (path if os.access(path, os.X_OK) else None)
    if not found:
        where = f"PTAP_BIN={given}" if given else f"{path} (build it with `cargo build --release`, or set PTAP_BIN)"
        return None, f"no ptap binary at {where}"
    try:
        helptext = subprocess.run([found, "solve", "--help"], capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.TimeoutExpired) as e:
        return None, f"{found} solve --help failed: {e}"
    if not re.search(r"--a[ =<]", helptext):
        return None, f"{found} has no `solve --a` (the user-matrix CLI has not landed in this build)"
    if "--x-out" not in helptext:
        return None, f"{found} solve has --a but no --x-out to write the solution"
    return found, helptext


def read_vector(path):
    """A vector as the binary writes it: PETSc binary Vec or Matrix Market
    array, parsed exactly (Python's float() rounds correctly, and Rust writes
    the shortest representation that reads back to the same double)."""
    raw = Path(path).read_bytes()
    if len(raw) >= 8 and struct.unpack(">i", raw[:4])[0] == PETSC_VEC_CLASSID:
        n = struct.unpack(">i", raw[4:8])[0]
        return np.frombuffer(raw[8 : 8 + 8 * n], dtype=">f8").astype(np.float64)
    lines = [ln for ln in raw.decode().splitlines() if ln.strip() and not ln.startswith("%")]
    rows, cols = (int(t) for t in lines[0].split()[:2])
    assert cols == 1, f"{path} holds a {rows}x{cols} array, not a vector"
    return np.array([float(t) for t in lines[1 : 1 + rows]])


def find_key(report, key):
    """The first value of `key` anywhere in a JSON report."""
    if isinstance(report, dict):
        if key in report:
            return report[key]
        report = list(report.values())
    if isinstance(report, list):
        for v in report:
            found = find_key(v, key)
            if found is not None:
                return found
    return None


def bits(x):
    return np.ascontiguousarray(x, dtype=np.float64).view(np.uint64)


@pytest.fixture(scope="module")
def cli():
    exe, helptext = ptap_binary()
    if exe is None:
        pytest.skip(f"skipping the CLI comparison: {helptext}")
    return exe, helptext


def run_both(cli, tmp_path, a, b, coords):
    exe, helptext = cli
    a_path, b_path, x_path = tmp_path / "A.mtx", tmp_path / "b.mtx", tmp_path / "x.mtx"
    scipy.io.mmwrite(str(a_path), a)
    scipy.io.mmwrite(str(b_path), b.reshape(-1, 1))
    cmd = [exe, "solve", "--a", str(a_path), "--b", str(b_path), "--x-out", str(x_path)]
    if coords is not None:
        c_path = tmp_path / "coords.mtx"
        scipy.io.mmwrite(str(c_path), coords)
        cmd += ["--coords", str(c_path)]
    json_path = tmp_path / "report.json"
    if "--json" in helptext:
        cmd += ["--json", str(json_path)]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 0, f"{' '.join(cmd)} failed:\n{done.stdout}\n{done.stderr}"
    x_cli = read_vector(x_path)

    # Python solves exactly what the binary read: the files, read back.
    a_file = scipy.io.mmread(str(a_path)).tocsr()
    b_file = np.asarray(scipy.io.mmread(str(b_path))).ravel()
    c_file = None if coords is None else np.asarray(scipy.io.mmread(str(c_path)))
    solver = ptap.Solver(a_file, coords=c_file)
    x, info = solver.solve(b_file, return_info=True)

    iterations = find_key(json.loads(json_path.read_text()), "iterations") if json_path.exists() else None
    if iterations is None:
        m = re.search(r"(\d+)\s+iterations|iterations\D{0,3}(\d+)", done.stdout)
        iterations = int(next(g for g in m.groups() if g)) if m else None
    return x, info, x_cli, iterations


def test_elasticity_with_coordinates_is_bitwise_the_cli(cli, tmp_path):
    a, coords = elasticity((20, 8, 8))
    b = np.random.default_rng(42).standard_normal(a.shape[0])
    x, info, x_cli, iterations = run_both(cli, tmp_path, a, b, coords)
    assert info.converged
    if iterations is not None:
        assert iterations == info.iterations
    assert x_cli.shape == x.shape
    assert np.array_equal(bits(x_cli), bits(x)), f"max |diff| {np.abs(x_cli - x).max():e}"


def test_poisson_is_bitwise_the_cli(cli, tmp_path):
    a = poisson2d(60)
    b = np.ones(a.shape[0])
    x, info, x_cli, iterations = run_both(cli, tmp_path, a, b, None)
    if iterations is not None:
        assert iterations == info.iterations
    assert np.array_equal(bits(x_cli), bits(x)), f"max |diff| {np.abs(x_cli - x).max():e}"
