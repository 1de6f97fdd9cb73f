"""ptap.galerkin against SciPy's P.T @ A @ P, for every variant."""

import numpy as np
import pytest
import scipy.sparse as sp

import ptap
from problems import random_block

# (A's block, P's block columns): the shapes with shipped kernels and the scalar case.
SHAPES = [(1, 1), (2, 3), (3, 6)]


def rel_err(c, ref):
    c, ref = c.toarray(), ref.toarray()
    return np.abs(c - ref).max() / np.abs(ref).max()


@pytest.mark.parametrize("variant", ptap.VARIANTS)
@pytest.mark.parametrize("b,c", SHAPES)
def test_every_variant_matches_scipy(variant, b, c):
    rng = np.random.default_rng(1000 * b + c)
    a = random_block(rng, 40, 40, b, b, 0.1, diagonal=True)
    if variant == "tensor-pair-sym":
        # It computes X + X^T from A's lower triangle: it needs a symmetric A.
        a = sp.bsr_matrix(a + a.T, blocksize=(b, b))
    p = random_block(rng, 40, 12, b, c, 0.15)
    out = ptap.galerkin(a, p, variant=variant)
    ref = p.T @ a @ p
    if variant == "tensor-pair-sym":
        assert (abs(out - out.T) > 0).nnz == 0
    assert isinstance(out, sp.bsr_matrix)
    assert out.blocksize == (c, c)
    assert out.shape == ref.shape == (12 * c, 12 * c)
    assert rel_err(out, ref) <= 1e-13


def test_the_symmetric_pair_refuses_a_structurally_non_symmetric_a_in_one_sentence():
    a = sp.bsr_matrix(np.array([[4.0, 1.0], [0.0, 4.0]]), blocksize=(1, 1))
    p = sp.bsr_matrix(np.ones((2, 1)), blocksize=(1, 1))
    with pytest.raises(ptap.SolverError, match=r"structurally symmetric A.*use the tensor pair"):
        ptap.galerkin(a, p, variant="tensor-pair-sym")
    assert ptap.galerkin(a, p, variant="tensor-pair").toarray()[0, 0] == 9.0


@pytest.mark.parametrize("b,c", SHAPES)
def test_order_preserving_variants_are_bitwise_two_pass(b, c):
    rng = np.random.default_rng(7 + b)
    a = random_block(rng, 50, 50, b, b, 0.08, diagonal=True)
    p = random_block(rng, 50, 10, b, c, 0.2)
    v0 = ptap.galerkin(a, p, "two-pass")
    assert {"two-pass", "slot-tiled", "column-split"} <= set(ptap.BITWISE_VARIANTS)
    assert "outer-product" not in ptap.BITWISE_VARIANTS
    for v in ptap.BITWISE_VARIANTS:
        other = ptap.galerkin(a, p, v)
        assert np.array_equal(other.indptr, v0.indptr) and np.array_equal(other.indices, v0.indices)
        assert np.array_equal(other.data.view(np.int64), v0.data.view(np.int64)), v


def test_paper_labels_are_accepted():
    rng = np.random.default_rng(3)
    a = random_block(rng, 20, 20, 3, 3, 0.2, diagonal=True)
    p = random_block(rng, 20, 5, 3, 6, 0.3)
    assert ptap.VARIANT_LABELS["slot-tiled"] == "V2b"
    assert rel_err(ptap.galerkin(a, p, "V2b"), ptap.galerkin(a, p, "slot-tiled")) == 0.0


def test_scalar_csr_with_int32_and_int64_indices_and_float32_values():
    rng = np.random.default_rng(11)
    a = sp.random(300, 300, density=0.02, random_state=rng, format="csr") + sp.identity(300, format="csr")
    p = sp.random(300, 40, density=0.05, random_state=rng, format="csr")
    ref = p.T @ a @ p
    for dtype in (np.int32, np.int64):
        a2, p2 = a.copy(), p.copy()
        a2.indices, a2.indptr = a2.indices.astype(dtype), a2.indptr.astype(dtype)
        p2.indices, p2.indptr = p2.indices.astype(dtype), p2.indptr.astype(dtype)
        out = ptap.galerkin(a2, p2, block_size=1, p_block=(1, 1))
        assert out.blocksize == (1, 1)
        assert rel_err(out, ref) <= 1e-13
    # float32 values are converted (with a copy): compare with the float64 product of the same values.
    a32, p32 = a.astype(np.float32), p.astype(np.float32)
    ref32 = p32.astype(np.float64).T @ a32.astype(np.float64) @ p32.astype(np.float64)
    assert rel_err(ptap.galerkin(a32, p32), ref32) <= 1e-13


def test_csr_is_grouped_and_other_formats_are_converted():
    rng = np.random.default_rng(5)
    a = random_block(rng, 30, 30, 3, 3, 0.15, diagonal=True)
    p = random_block(rng, 30, 8, 3, 6, 0.25)
    ref = p.T @ a @ p
    # CSR with given block sizes, CSR with inferred ones, COO and CSC (converted with .tocsr()).
    out = ptap.galerkin(a.tocsr(), p.tocsr(), block_size=3, p_block=(3, 6))
    assert out.blocksize == (6, 6) and rel_err(out, ref) <= 1e-13
    out = ptap.galerkin(a.tocsr(), p.tocsr())
    assert out.blocksize == (6, 6) and rel_err(out, ref) <= 1e-13
    out = ptap.galerkin(a.tocoo(), p.tocsc(), block_size=3)
    assert rel_err(out, ref) <= 1e-13
    # A BSR regrouped into another block size: the same scalar product.
    out = ptap.galerkin(a.tocsr(), p.tocsr(), block_size=1, p_block=(1, 2))
    assert out.blocksize == (2, 2) and rel_err(out, ref) <= 1e-13


def test_unsorted_and_duplicate_entries_are_summed():
    rng = np.random.default_rng(8)
    a = random_block(rng, 25, 25, 2, 2, 0.2, diagonal=True).tocsr()
    p = random_block(rng, 25, 6, 2, 3, 0.3).tocsr()
    ref = p.T @ a @ p
    # Split every value of A into two duplicates, rows reversed.
    coo = a.tocoo()
    half = coo.data / 2
    rows = np.concatenate([coo.row, coo.row])[::-1]
    cols = np.concatenate([coo.col, coo.col])[::-1]
    vals = np.concatenate([half, coo.data - half])[::-1]
    order = np.argsort(rows, kind="stable")
    indptr = np.searchsorted(rows[order], np.arange(a.shape[0] + 1))
    messy = sp.csr_matrix((vals[order], cols[order], indptr), shape=a.shape)
    assert not messy.has_canonical_format
    assert rel_err(ptap.galerkin(messy, p, block_size=2, p_block=(2, 3)), ref) <= 1e-13
    # A BSR with its block columns out of order.
    bsr = a.tobsr(blocksize=(2, 2))
    perm = np.concatenate([rng.permutation(np.arange(bsr.indptr[i], bsr.indptr[i + 1])) for i in range(25)])
    shuffled = sp.bsr_matrix((bsr.data[perm], bsr.indices[perm], bsr.indptr), shape=a.shape)
    assert rel_err(ptap.galerkin(shuffled, p.tobsr(blocksize=(2, 3))), ref) <= 1e-13


def test_shape_without_kernels_runs_two_pass_and_names_the_kernels_line_otherwise():
    rng = np.random.default_rng(9)
    a = random_block(rng, 20, 20, 4, 4, 0.2, diagonal=True)
    p = random_block(rng, 20, 5, 4, 2, 0.3)
    assert rel_err(ptap.galerkin(a, p, "two-pass"), p.T @ a @ p) <= 1e-13
    with pytest.raises(ptap.InputError, match=r"kernels!\(4x4 / 4x2 / 2x2\)"):
        ptap.galerkin(a, p, "slot-tiled")


def test_errors_are_sentences():
    rng = np.random.default_rng(10)
    a = random_block(rng, 10, 10, 3, 3, 0.3, diagonal=True)
    p = random_block(rng, 10, 4, 3, 6, 0.3)
    with pytest.raises(ptap.InputError, match="unknown variant 'nope'; choose one of: two-pass"):
        ptap.galerkin(a, p, "nope")
    with pytest.raises(ptap.InputError, match="fixed variant"):
        ptap.galerkin(a, p, "auto")
    with pytest.raises(ptap.InputError, match="P's rows must match A's columns"):
        ptap.galerkin(a, random_block(rng, 9, 4, 3, 6, 0.3))
    bad = a.copy()
    bad.data[0, 0, 0] = np.nan
    with pytest.raises(ptap.InputError, match="NaN"):
        ptap.galerkin(bad, p)
    with pytest.raises(TypeError, match="scipy.sparse"):
        ptap.galerkin(a.toarray(), p)
    # Every ptap error is a ValueError too where it is about the input.
    with pytest.raises(ValueError):
        ptap.galerkin(a, p, "nope")
