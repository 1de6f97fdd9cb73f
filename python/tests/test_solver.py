"""ptap.Solver against scipy.sparse.linalg.spsolve, refresh loops, the
hierarchy report, and the errors it raises."""

import threading
import time

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as spla

import ptap
from problems import elasticity, poisson2d, rigid_body_modes


def rel(x, ref):
    return np.linalg.norm(x - ref) / np.linalg.norm(ref)


def bits(x):
    return np.ascontiguousarray(x, dtype=np.float64).view(np.uint64)


@pytest.fixture(scope="module")
def poisson():
    return poisson2d(80)


@pytest.fixture(scope="module")
def beam3d():
    return elasticity((20, 8, 8))


@pytest.fixture(scope="module")
def beam2d():
    return elasticity((60, 30))


def test_poisson_matches_spsolve(poisson):
    a = poisson
    b = np.random.default_rng(0).standard_normal(a.shape[0])
    solver = ptap.Solver(a)
    x, info = solver.solve(b, return_info=True)
    assert info.converged and info.relative_residual <= 1e-8
    assert info is solver.last_info
    assert len(info.residual_history) == info.iterations + 1
    assert rel(x, spla.spsolve(a.tocsc(), b)) <= 1e-6
    assert solver.block_size == 1 and solver.shape == a.shape and solver.device == "cpu"


@pytest.mark.parametrize("which", ["beam3d", "beam2d"])
def test_elasticity_with_coordinates_matches_spsolve(which, request):
    a, coords = request.getfixturevalue(which)
    dim = coords.shape[1]
    b = np.random.default_rng(1).standard_normal(a.shape[0])
    solver = ptap.Solver(a, coords=coords)
    x = solver.solve(b)
    info = solver.last_info
    assert info.converged and info.relative_residual <= 1e-8
    assert rel(x, spla.spsolve(a.tocsc(), b)) <= 1e-6
    h = solver.hierarchy
    assert solver.block_size == dim == h["block_size"]
    assert h["modes"] == (3 if dim == 2 else 6)
    assert len(h["levels"]) >= 2
    # 3x3 fine blocks and 6x6 coarse ones in 3D; 2x2 and 3x3 in 2D.
    assert [lvl["block_size"] for lvl in h["levels"][:2]] == ([3, 6] if dim == 3 else [2, 3])


def test_coordinates_imply_the_block_size_as_the_cli_does(beam2d):
    """Without its exact zeros the pattern no longer shows 2x2 blocks; the
    coordinates (one node per block row) still do, as for `ptap solve --coords`."""
    a, coords = beam2d
    a = a.copy()
    a.eliminate_zeros()
    assert ptap.infer_block_shape(a) == (1, 1)
    solver = ptap.Solver(a, coords=coords)
    assert solver.block_size == 2 and solver.hierarchy["modes"] == 3
    b = np.ones(a.shape[0])
    assert rel(solver.solve(b), spla.spsolve(a.tocsc(), b)) <= 1e-6
    # A block size given wins: scalar blocks take the constant from coordinates
    # that are one per block row, so here they do not fit.
    with pytest.raises(ptap.InputError, match="the coordinates give"):
        ptap.Solver(a, coords=coords, block_size=1)


def test_given_modes_bsr_input_and_a_starting_guess(beam3d):
    a, coords = beam3d
    b = np.random.default_rng(2).standard_normal(a.shape[0])
    ref = spla.spsolve(a.tocsc(), b)
    bsr = a.tobsr(blocksize=(3, 3))
    solver = ptap.Solver(bsr, near_null=rigid_body_modes(coords))
    assert rel(solver.solve(b), ref) <= 1e-6
    # From a starting guess close to the answer CG needs fewer iterations.
    cold = solver.last_info.iterations
    x = solver.solve(b, x0=ref * (1 + 1e-6))
    assert rel(x, ref) <= 1e-6 and solver.last_info.iterations < cold
    # CSR with the block size given gives the same solver, bit for bit.
    same = ptap.Solver(a, near_null=rigid_body_modes(coords), block_size=3)
    assert np.array_equal(bits(same.solve(b)), bits(solver.solve(b)))


def test_index_and_value_dtypes_are_accepted(poisson):
    b = np.ones(poisson.shape[0])
    x64 = ptap.Solver(poisson).solve(b)
    a32 = poisson.copy()
    a32.indices, a32.indptr = a32.indices.astype(np.int32), a32.indptr.astype(np.int32)
    assert np.array_equal(bits(ptap.Solver(a32).solve(b)), bits(x64))
    # float32 values (exact small integers here) are converted; COO is converted to CSR.
    assert np.array_equal(bits(ptap.Solver(poisson.astype(np.float32)).solve(b)), bits(x64))
    assert np.array_equal(bits(ptap.Solver(poisson.tocoo()).solve(b.astype(np.float32))), bits(x64))


def test_hierarchy_report(beam3d):
    a, coords = beam3d
    h = ptap.Solver(a, coords=coords, variant="slot-tiled").hierarchy
    assert h["device"] == "cpu" and h["cpu_fallback"] is None
    assert h["scalar_rows"] == a.shape[0]
    lvl0 = h["levels"][0]
    assert lvl0["block_rows"] == a.shape[0] // 3 and lvl0["blocks"] > 0 and lvl0["variant"] == "slot-tiled"
    assert h["levels"][-1]["variant"] is None  # the coarsest level builds nothing
    assert h["variants"] == ["slot-tiled"] * (len(h["levels"]) - 1)
    assert 1.0 < h["operator_complexity"] < 3.0
    assert set(h["timings"]) >= {"mesh_setup_s", "matrix_setup_s"}


@pytest.mark.parametrize("variant", ptap.VARIANTS)
def test_every_variant_solves(beam3d, variant):
    a, coords = beam3d
    b = np.ones(a.shape[0])
    x = ptap.Solver(a, coords=coords, variant=variant).solve(b)
    assert rel(x, spla.spsolve(a.tocsc(), b)) <= 1e-6


def test_refresh_loop_scaled_values(beam3d):
    """Scaling A by s scales x by 1/s in the same iterations; by powers of 4
    (exact in binary, square roots included) bit for bit."""
    a, coords = beam3d
    b = np.random.default_rng(3).standard_normal(a.shape[0])
    solver = ptap.Solver(a, coords=coords)
    x0, info0 = solver.solve(b, return_info=True)
    for s in [4.0, 0.25, 16.0, 3.7, 0.9, 1e3]:
        solver.refresh(s * a)
        x, info = solver.solve(b, return_info=True)
        assert info.iterations == info0.iterations, s
        assert rel(s * x, x0) <= 1e-10, s
        if s in (4.0, 0.25, 16.0):
            assert np.array_equal(bits(s * x), bits(x0)), s
    solver.refresh(a)
    assert np.array_equal(bits(solver.solve(b)), bits(x0))


def test_refresh_with_new_values_matches_a_new_solver_and_spsolve(beam3d):
    """A time loop: the modulus field changes, the pattern does not."""
    cells = (20, 8, 8)
    _, coords = beam3d
    rng = np.random.default_rng(4)
    a0, _ = elasticity(cells, modulus=np.ones(np.prod(cells)))
    solver = ptap.Solver(a0, coords=coords)
    b = rng.standard_normal(a0.shape[0])
    first = solver.solve(b)
    for step in range(3):
        a, _ = elasticity(cells, modulus=rng.uniform(0.5, 2.0, np.prod(cells)))
        solver.refresh(a)
        x = solver.solve(b)
        assert solver.last_info.converged, step
        assert rel(x, spla.spsolve(a.tocsc(), b)) <= 1e-6, step
    # The aggregates stay those of the first values (a new Solver would
    # aggregate anew); refreshing back gives the first solve bit for bit.
    solver.refresh(a0)
    assert np.array_equal(bits(solver.solve(b)), bits(first))


def test_refresh_keeps_blocks_whose_scalars_are_partly_dropped(beam3d):
    """A block is stored when any of its scalars is: a CSR that no longer
    stores some zeros of a block keeps the block pattern."""
    a, coords = beam3d
    solver = ptap.Solver(a, coords=coords)
    base = a.copy()
    base.eliminate_zeros()  # the assembly stores exact zeros too
    changed = base.tolil()
    i, j = 0, base.indices[base.indptr[0] + 4]
    assert j // 3 != 0
    changed[i, j] = changed[j, i] = 0.0
    changed = changed.tocsr()
    changed.eliminate_zeros()
    assert changed.nnz == base.nnz - 2
    solver.refresh(changed)
    b = np.ones(a.shape[0])
    assert rel(solver.solve(b), spla.spsolve(changed.tocsc(), b)) <= 1e-6
    # The same values as a BSR (its own 3x3 blocks): the same solve.
    x = solver.last_info
    solver.refresh(changed.tobsr(blocksize=(3, 3)))
    assert solver.solve(b, return_info=True)[1].iterations == x.iterations


def test_refresh_another_pattern_raises(beam3d, poisson):
    a, coords = beam3d
    solver = ptap.Solver(a, coords=coords)
    sentence = "the new operator's block pattern differs from the one the solver was built for"
    # Another pattern of the same size: a block dropped (and its mirror).
    dropped = a.tobsr(blocksize=(3, 3))
    j = dropped.indices[dropped.indptr[0] + 1]  # block (0, j), j > 0, and its mirror (j, 0)
    dropped.data[dropped.indptr[0] + 1] = 0
    dropped.data[dropped.indptr[j]] = 0  # (j, 0): the first block of row j
    assert dropped.indices[dropped.indptr[j]] == 0
    dropped.eliminate_zeros()
    assert dropped.nnz == a.nnz - 18
    with pytest.raises(ptap.PatternChangedError, match=sentence) as e:
        solver.refresh(dropped)
    assert "build a new solver for it" in str(e.value)
    # Other sizes and block shapes.
    with pytest.raises(ptap.PatternChangedError, match=sentence):
        solver.refresh(poisson)
    with pytest.raises(ptap.PatternChangedError, match=r"1x1 blocks instead of 3x3"):
        solver.refresh(a.tobsr(blocksize=(1, 1)))
    # It is a ValueError too, and the solver still works with its old values.
    with pytest.raises(ValueError):
        solver.refresh(dropped)
    assert solver.solve(np.ones(a.shape[0])) is not None and solver.last_info.converged


def test_errors_raise_the_rust_sentence(poisson, beam3d):
    a = poisson
    n = a.shape[0]
    solver = ptap.Solver(a)
    with pytest.raises(
        ptap.InputError,
        match=r"^the right-hand side has length 7, expected %d \(the fine operator's scalar rows\)$" % n,
    ):
        solver.solve(np.ones(7))
    nan_b = np.ones(n)
    nan_b[3] = np.nan
    with pytest.raises(ptap.InputError, match=r"contains NaN or infinity \(right-hand side\)"):
        solver.solve(nan_b)
    with pytest.raises(ptap.InputError, match="has length 3, expected %d" % n):
        solver.solve(np.ones(n), x0=np.zeros(3))
    nan_a = a.copy()
    nan_a.data[10] = np.inf
    with pytest.raises(ptap.InputError, match="NaN or infinity"):
        ptap.Solver(nan_a)
    with pytest.raises(ptap.InputError, match="NaN or infinity"):
        solver.refresh(nan_a)
    nonsym = a.tolil()
    nonsym[0, 1] = -0.5
    with pytest.raises(
        ptap.InputError,
        match=r"^the operator is not symmetric: entry \(0, 1\) is -5e-1 but \(1, 0\) is -1e0; CG needs a symmetric positive definite operator$",
    ):
        ptap.Solver(nonsym.tocsr())
    with pytest.raises(ptap.InputError, match="not symmetric: block"):
        ptap.Solver(sp.triu(a).tocsr())
    with pytest.raises(ptap.InputError, match="not both"):
        ptap.Solver(a, near_null=np.ones((n, 1)), coords=np.zeros((n, 2)))
    big, coords = beam3d
    with pytest.raises(ptap.InputError, match=r"the coordinates give 10 nodes in 3D but the operator has"):
        ptap.Solver(big, coords=coords[:10])
    with pytest.raises(ptap.InputError, match=r"the near-null space has 5 values"):
        ptap.Solver(a, near_null=np.ones(5))
    with pytest.raises(ptap.InputError, match="the device must be cpu, cuda or auto"):
        ptap.Solver(a, device="tpu")
    with pytest.raises(ptap.InputError, match="unknown variant"):
        ptap.Solver(a, variant="nope")
    with pytest.raises(ptap.InputError, match="rtol"):
        ptap.Solver(a, rtol=0.0)
    with pytest.raises(ptap.InputError, match="square matrix"):
        ptap.Solver(sp.random(30, 20, density=0.2, format="csr"))
    with pytest.raises(TypeError):
        ptap.Solver(a.toarray())
    # Symmetric but not positive definite: typed errors, not a hang or a crash.
    with pytest.raises(
        ptap.InputError,
        match=r"^the operator on level 0 has a non-positive diagonal entry \(-4e0\) in scalar row 0: it is not symmetric positive definite$",
    ):
        ptap.Solver(-a)
    with pytest.raises(ptap.SolverError, match="cannot be factored: matrix is singular or not positive definite"):
        ptap.Solver((a - 0.05 * sp.identity(n)).tocsr())


def test_not_converging_is_reported_not_raised(poisson):
    solver = ptap.Solver(poisson, max_iterations=2)
    x, info = solver.solve(np.ones(poisson.shape[0]), return_info=True)
    assert not info.converged and info.iterations == 2 and info.relative_residual > 1e-8


def test_device_choice():
    a = poisson2d(20)
    auto = ptap.Solver(a, device="auto")
    assert auto.device == "cpu" or auto.cpu_fallback is None
    if auto.device != "cpu":
        pytest.skip("a GPU is usable here; device='cuda' does not fail")
    assert auto.cpu_fallback and auto.hierarchy["cpu_fallback"] == auto.cpu_fallback
    with pytest.raises(ptap.DeviceError) as e:
        ptap.Solver(a, device="cuda")
    assert isinstance(e.value, RuntimeError) and str(e.value) == auto.cpu_fallback


def test_the_gil_is_released_while_building_and_solving():
    """Another Python thread runs while a solver is built and used."""
    a = poisson2d(300)
    done = threading.Event()
    ticks = []

    def work():
        try:
            s = ptap.Solver(a)
            s.solve(np.ones(a.shape[0]))
        finally:
            done.set()

    t = threading.Thread(target=work)
    t.start()
    start = time.perf_counter()
    while not done.is_set():
        ticks.append(time.perf_counter() - start)
        time.sleep(0.001)
    t.join()
    elapsed = time.perf_counter() - start
    # Holding the GIL for the whole call would leave this loop one or two ticks.
    assert len(ticks) >= 10, (len(ticks), elapsed)


def test_threads_share_a_solver_safely(beam3d):
    a, coords = beam3d
    solver = ptap.Solver(a, coords=coords)
    b = np.ones(a.shape[0])
    ref = solver.solve(b)
    out = [None] * 4

    def work(i):
        out[i] = solver.solve(b)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for x in out:
        assert np.array_equal(bits(x), bits(ref))


def test_a_repeated_refresh_scatters_into_the_same_bits_as_the_first(beam3d):
    """The first refresh of a structure groups the CSR into blocks (sorting,
    summing duplicates); later ones with the same arrays only scatter the
    values through the map the first built. Unsorted rows with duplicate
    entries give the same bits both ways."""
    a, coords = beam3d
    a = a.tocsr()
    # Every entry split in two halves stored apart, rows reversed: unsorted, duplicated.
    rows = np.repeat(np.arange(a.shape[0]), np.diff(a.indptr))
    order = np.lexsort((-a.indices, rows))
    indptr = np.concatenate([[0], np.cumsum(2 * np.diff(a.indptr))])
    indices = np.empty(2 * a.nnz, dtype=a.indices.dtype)
    data = np.empty(2 * a.nnz)
    for r in range(a.shape[0]):
        seg = order[a.indptr[r]:a.indptr[r + 1]]
        n = len(seg)
        s = indptr[r]
        indices[s:s + n] = a.indices[seg]
        indices[s + n:s + 2 * n] = a.indices[seg][::-1]
        data[s:s + n] = 0.75 * a.data[seg]
        data[s + n:s + 2 * n] = 0.25 * a.data[seg][::-1]
    b = np.random.default_rng(9).standard_normal(a.shape[0])
    fast = ptap.Solver(a, coords=coords)
    slow = ptap.Solver(a, coords=coords)
    for s in [2.0, 3.0]:
        m = sp.csr_matrix((s * data, indices, indptr), shape=a.shape)
        assert not m.has_sorted_indices
        fast.refresh(m)  # the first: grouped; the second: scattered
    slow.refresh(sp.csr_matrix((3.0 * data, indices, indptr), shape=a.shape))
    assert np.array_equal(bits(fast.solve(b)), bits(slow.solve(b)))
    x = fast.solve(b)
    assert rel(3.0 * x, ptap.Solver(a, coords=coords).solve(b)) <= 1e-10
    # NaN through the fast path is refused with the same sentence.
    bad = sp.csr_matrix((np.where(np.arange(data.size) == 7, np.nan, data), indices, indptr), shape=a.shape)
    with pytest.raises(ptap.InputError, match="NaN"):
        fast.refresh(bad)
