#!/usr/bin/env python3
"""Writes ptap's test operators from sources other than ptap's own beam.

    python tests/data/operators/generate.py            # tests/data/operators/<name>/
    python tests/data/operators/generate.py --example  # examples/data/elasticity3d_tet/
    python tests/data/operators/generate.py --example --cells 48 16 16 --qmin 0.1 --out DIR  # ~42k dofs

Deterministic: fixed seeds, no timestamps, the versions pinned in
requirements.txt (numpy, scipy, pyamg, scikit-fem). Every float is written as
Python's repr, the shortest decimal that reads back to the same double, so the
Matrix Market and PETSc binary copies of a matrix hold the same bits.

Each operator folder holds
    A.mtx                  Matrix Market coordinate (symmetric or general storage)
    A.petsc, A.petsc.info  PETSc binary Mat (big-endian, int32 indices), -matload_block_size
    b.mtx, b.petsc         right-hand side (Matrix Market array, PETSc binary Vec)
    x_ref.mtx              scipy.sparse.linalg.spsolve(A, b), refined once
    coords.mtx             node coordinates, n_nodes x dim, rows in dof-block order
    near_null.mtx          (gallery elasticity only) pyamg's rigid-body modes B
    A_array.mtx            (tiny operator only) A as a dense Matrix Market array
README.md says what each operator is.
"""
import argparse
import os
import sys

import numpy as np
import pyamg
import scipy
import scipy.sparse as sp
import scipy.sparse.linalg as spla
import skfem
from scipy.sparse.csgraph import reverse_cuthill_mckee
from scipy.spatial import Delaunay
from skfem import Basis, ElementTetP1, ElementTriP1, ElementVector, LinearForm, MeshTet, MeshTri, asm
from skfem.models.elasticity import lame_parameters, linear_elasticity

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", "..", ".."))

MAT_FILE_CLASSID = 1211216
VEC_FILE_CLASSID = 1211214

YOUNG, POISSON = 1.0, 0.3


def r(v):
    """The shortest decimal that reads back to the same double."""
    return repr(float(v))


# ---------------------------------------------------------------- writers


def write_mm_coordinate(path, a, symmetric, comment):
    """Matrix Market `coordinate real`, entries row by row, explicit zeros kept.

    `symmetric` writes the lower triangle only, after checking that the matrix
    (pattern and values) is bitwise symmetric, so a reader that mirrors it gets
    back exactly the matrix of the PETSc file.
    """
    a = sp.csr_matrix(a)
    a.sort_indices()
    n, m = a.shape
    if symmetric:
        s = abs(a - a.T)
        assert s.max() == 0.0, f"{path}: not bitwise symmetric"
        pat = sp.csr_matrix((np.ones_like(a.data), a.indices, a.indptr), shape=a.shape)
        assert (pat != pat.T).nnz == 0, f"{path}: pattern not symmetric"
    lines = []
    for i in range(n):
        for k in range(a.indptr[i], a.indptr[i + 1]):
            j = a.indices[k]
            if symmetric and j > i:
                break
            lines.append(f"{i + 1} {j + 1} {r(a.data[k])}\n")
    with open(path, "w") as f:
        f.write(f"%%MatrixMarket matrix coordinate real {'symmetric' if symmetric else 'general'}\n")
        for c in comment:
            f.write(f"% {c}\n")
        f.write(f"{n} {m} {len(lines)}\n")
        f.writelines(lines)


def write_mm_array(path, x, comment=()):
    """Matrix Market `array real general`, column-major; a 1-D x is one column."""
    x = np.asarray(x, dtype=float)
    if x.ndim == 1:
        x = x[:, None]
    with open(path, "w") as f:
        f.write("%%MatrixMarket matrix array real general\n")
        for c in comment:
            f.write(f"% {c}\n")
        f.write(f"{x.shape[0]} {x.shape[1]}\n")
        f.writelines(f"{r(v)}\n" for v in x.T.ravel())


def write_petsc_mat(path, a, block_size):
    """What PETSc's MatView writes to a binary viewer (AIJ, 32-bit indices, real
    double): classid, rows, cols, nnz, row lengths, column indices, values, all
    big-endian; the block size in `<path>.info`."""
    a = sp.csr_matrix(a)
    a.sort_indices()
    m, n = a.shape
    with open(path, "wb") as f:
        f.write(np.array([MAT_FILE_CLASSID, m, n, a.nnz], dtype=">i4").tobytes())
        f.write(np.diff(a.indptr).astype(">i4").tobytes())
        f.write(a.indices.astype(">i4").tobytes())
        f.write(a.data.astype(">f8").tobytes())
    with open(path + ".info", "w") as f:
        f.write(f"-matload_block_size {block_size}\n")


def write_petsc_vec(path, x):
    x = np.asarray(x, dtype=float)
    with open(path, "wb") as f:
        f.write(np.array([VEC_FILE_CLASSID, x.size], dtype=">i4").tobytes())
        f.write(x.astype(">f8").tobytes())


# ---------------------------------------------------------------- meshes


def jittered_delaunay(cells, lengths, jitter, qmin, seed):
    """An unstructured simplex mesh of the box [0, L]: the Delaunay simplices of
    a lattice of `cells` cells per axis whose points are moved by up to
    `jitter` cell widths per axis (not along the normal of a box face a point
    lies on, so face points stay on their face and corners stay put). Delaunay
    of such points makes slivers in 3D, so the vertices of every simplex of
    quality (`simplex_quality`) under `qmin` are jittered again, from their
    lattice point, until none is left ("sliver perturbation")."""
    rng = np.random.default_rng(seed)
    dim = len(cells)
    axes = [np.linspace(0.0, L, c + 1) for c, L in zip(cells, lengths)]
    grid = np.meshgrid(*axes, indexing="ij")
    lattice = np.stack([g.ravel() for g in grid], axis=1)
    h = np.array([L / c for c, L in zip(cells, lengths)])
    on_face = np.stack([(lattice[:, k] == 0.0) | (lattice[:, k] == lengths[k]) for k in range(dim)], axis=1)

    def jittered(idx):
        d = rng.uniform(-jitter, jitter, size=(idx.size, dim)) * h
        d[on_face[idx]] = 0.0
        return lattice[idx] + d

    p = jittered(np.arange(len(lattice)))
    for _ in range(100):
        t = delaunay_simplices(p, h)
        bad = simplex_quality(p, t) < qmin
        if not bad.any():
            assert abs(simplex_volume(p, t).sum() - np.prod(lengths)) < 1e-12 * np.prod(lengths)
            return p, t
        moved = np.unique(t[bad])
        p[moved] = jittered(moved)
    raise RuntimeError(f"slivers left after 100 rounds of perturbation; lower qmin ({qmin})")


def delaunay_simplices(p, h):
    """Delaunay simplices of the points, positively oriented, degenerate ones
    (flat hull simplices of coplanar face points, if qhull makes any) dropped."""
    t = Delaunay(p).simplices.copy()
    vol = simplex_volume(p, t, signed=True)
    keep = np.abs(vol) > 1e-10 * np.prod(h)
    t, vol = t[keep], vol[keep]
    neg = vol < 0
    t[neg, 0], t[neg, 1] = t[neg, 1].copy(), t[neg, 0].copy()
    return t


def simplex_volume(p, t, signed=False):
    dim = p.shape[1]
    e = np.stack([p[t[:, k]] - p[t[:, 0]] for k in range(1, dim + 1)], axis=1)
    vol = np.linalg.det(e) / (6.0 if dim == 3 else 2.0)
    return vol if signed else np.abs(vol)


def simplex_quality(p, t):
    """Volume over the volume of the regular simplex with the same
    root-mean-square edge length: 1 for a regular simplex, 0 for a flat one."""
    dim = p.shape[1]
    pairs = [(a, b) for a in range(dim + 1) for b in range(a + 1, dim + 1)]
    l2 = sum(((p[t[:, a]] - p[t[:, b]]) ** 2).sum(1) for a, b in pairs) / len(pairs)
    regular = np.sqrt(2.0) / 12.0 if dim == 3 else np.sqrt(3.0) / 4.0
    return simplex_volume(p, t) / (regular * l2 ** (dim / 2))


def node_graph(t, n):
    i = np.repeat(t, t.shape[1], axis=1).ravel()
    j = np.tile(t, (1, t.shape[1])).ravel()
    return sp.csr_matrix((np.ones(i.size), (i, j)), shape=(n, n))


def renumber(p, t, order):
    """Node `order[k]` becomes node k."""
    inv = np.empty_like(order)
    inv[order] = np.arange(order.size)
    return p[order], inv[t]


def tet_box_mesh(cells, lengths, jitter, qmin, seed):
    """Unstructured tetrahedra of a box (`jittered_delaunay`), nodes in reverse
    Cuthill-McKee order (what a mesh code hands a solver)."""
    p, t = jittered_delaunay(cells, lengths, jitter, qmin, seed)
    p, t = renumber(p, t, np.asarray(reverse_cuthill_mckee(node_graph(t, len(p)), symmetric_mode=True)))
    return MeshTet(p.T.copy(), t.T.copy())


def tri_box_mesh(cells, lengths, jitter, qmin, seed):
    """Unstructured triangles of a rectangle (`jittered_delaunay`), nodes in a
    seeded random order (no locality at all)."""
    p, t = jittered_delaunay(cells, lengths, jitter, qmin, seed)
    p, t = renumber(p, t, np.random.default_rng(seed + 1).permutation(len(p)))
    return MeshTri(p.T.copy(), t.T.copy())


def min_quality(mesh):
    return float(simplex_quality(mesh.p.T, mesh.t.T).min())


# ---------------------------------------------------------------- FEM


def elasticity(mesh, elem, force):
    """P1 linear elasticity (E = 1, nu = 0.3; in 2D plane strain) and the body
    force `force` per unit volume, in node-interleaved dof order
    (x0, y0[, z0], x1, ...)."""
    dim = mesh.p.shape[0]
    basis = Basis(mesh, ElementVector(elem))
    lam, mu = lame_parameters(YOUNG, POISSON)
    k = asm(linear_elasticity(lam, mu), basis)

    @LinearForm
    def body(v, w):
        return sum(force[c] * v.value[c] for c in range(dim))

    f = asm(body, basis)
    # scikit-fem numbers a vector element's dofs through basis.nodal_dofs
    # (dim x n_nodes); node-interleaved order is its transpose, raveled. For P1
    # in scikit-fem 12 this is the identity, but it is computed, not assumed.
    perm = basis.nodal_dofs.T.ravel()
    assert perm.size == basis.N and np.array_equal(np.sort(perm), np.arange(basis.N))
    k = sp.csr_matrix(k)[perm][:, perm]
    k.sort_indices()
    return bitwise_symmetric(k), f[perm], mesh.p.T.copy()


def bitwise_symmetric(k):
    """The assembled element matrices are symmetric only up to rounding: copy
    the lower triangle onto the upper one, so the matrix is bitwise symmetric,
    keeping the pattern as it is. (scikit-fem drops element entries that are
    exactly 0 before summing, and keeps sums that cancel to 0 as explicit
    zeros; both stay as they are.)"""
    k = sp.csr_matrix(k)
    k.sort_indices()
    kt = sp.csr_matrix(k.T)
    kt.sort_indices()
    assert np.array_equal(k.indptr, kt.indptr) and np.array_equal(k.indices, kt.indices), "pattern not symmetric"
    rows = np.repeat(np.arange(k.shape[0]), np.diff(k.indptr))
    return sp.csr_matrix((np.where(k.indices > rows, kt.data, k.data), k.indices, k.indptr), shape=k.shape)


def clamp(p, axis=0, value=0.0):
    """Nodes on the plane `x_axis = value` (whole nodes: every dof of each)."""
    return p[:, axis] == value


def node_dofs(nodes, dim):
    return (dim * np.asarray(nodes)[:, None] + np.arange(dim)[None, :]).ravel()


def eliminated(k, f, p, fixed):
    """The condensed system on the free nodes (u = 0 on the fixed ones)."""
    dim = p.shape[1]
    free = node_dofs(np.flatnonzero(~fixed), dim)
    a = k[free][:, free]
    a.sort_indices()
    # b_f = f_f - K_fc u_c with u_c = 0.
    return a, f[free].copy(), p[~fixed]


def identity_rows(k, f, p, fixed):
    """The full system with the fixed dofs' rows and columns zeroed, 1 on their
    diagonal and b_c = u_c = 0 (b_f = f_f - K_fc u_c = f_f); the zeroed entries
    are removed from the pattern, so fixed rows hold their diagonal only."""
    dim = p.shape[1]
    fix = node_dofs(np.flatnonzero(fixed), dim)
    u_c = np.zeros(fix.size)
    b = f.copy()
    b -= k[:, fix] @ u_c
    b[fix] = u_c
    keep = np.ones(k.shape[0])
    keep[fix] = 0.0
    d = sp.diags(keep)
    a = sp.csr_matrix(d @ k @ d + sp.diags(1.0 - keep))
    a.eliminate_zeros()
    a.sort_indices()
    return a, b


# ---------------------------------------------------------------- operators


def versions():
    return (
        f"numpy {np.__version__}, scipy {scipy.__version__}, pyamg {pyamg.__version__}, "
        f"scikit-fem {skfem.__version__}"
    )


def solve(a, b):
    """SuperLU through scipy.sparse.linalg.spsolve, plus one step of iterative
    refinement (a second spsolve on the residual)."""
    a = sp.csc_matrix(a)
    x = spla.spsolve(a, b)
    x = x + spla.spsolve(a, b - a @ x)
    res = np.linalg.norm(a @ x - b) / np.linalg.norm(b)
    assert res < 1e-10, res
    return x, res


def write_operator(out, name, a, b, coords, block_size, symmetric, source, near_null=None, array=False):
    d = os.path.join(out, name)
    os.makedirs(d, exist_ok=True)
    a = sp.csr_matrix(a)
    a.sort_indices()
    x, res = solve(a, b)
    tag = [f"{name}: {source}", f"tests/data/operators/generate.py; {versions()}"]
    write_mm_coordinate(os.path.join(d, "A.mtx"), a, symmetric, tag + [f"block size {block_size}"])
    write_petsc_mat(os.path.join(d, "A.petsc"), a, block_size)
    write_mm_array(os.path.join(d, "b.mtx"), b, [f"{name}: right-hand side"])
    write_petsc_vec(os.path.join(d, "b.petsc"), b)
    write_mm_array(os.path.join(d, "x_ref.mtx"), x, [f"{name}: scipy.sparse.linalg.spsolve(A, b), one step of iterative refinement"])
    write_mm_array(os.path.join(d, "coords.mtx"), coords, [f"{name}: node coordinates, one row per dof block"])
    if near_null is not None:
        write_mm_array(os.path.join(d, "near_null.mtx"), near_null, [f"{name}: near-null space, one column per mode"])
    if array:
        write_mm_array(os.path.join(d, "A_array.mtx"), a.toarray(), [f"{name}: A as a dense array"])
    n_nodes = coords.shape[0]
    assert n_nodes * block_size == a.shape[0], (name, n_nodes, block_size, a.shape)
    size = sum(os.path.getsize(os.path.join(d, f)) for f in os.listdir(d))
    print(
        f"{name:22s} n={a.shape[0]:6d} bs={block_size} nodes={n_nodes:5d} nnz={a.nnz:7d} "
        f"{'sym' if symmetric else 'gen'} spsolve-res={res:.1e} {size / 1024:7.1f} KiB"
    )
    return x


def gallery_poisson(out, n=49):
    """pyamg.gallery.poisson((n, n)): the 5-point Laplacian (4, -1) of the
    n x n interior points of a unit-spacing grid, Dirichlet boundary
    eliminated; row i*n + j is grid point (i, j), the first axis slowest."""
    a = pyamg.gallery.poisson((n, n), format="csr")
    h = 1.0 / (n + 1)
    i, j = np.meshgrid(np.arange(1, n + 1), np.arange(1, n + 1), indexing="ij")
    coords = np.stack([i.ravel() / (n + 1), j.ravel() / (n + 1)], axis=1)
    b = np.full(n * n, h * h)  # f = 1 on the unit square, scaled like the stencil
    write_operator(
        out, "pyamg_poisson2d", a, b, coords, 1, False,
        f"pyamg.gallery.poisson(({n}, {n})), 5-point Laplacian, Dirichlet boundary eliminated",
    )


def gallery_elasticity(out, n=16):
    """pyamg.gallery.linear_elasticity((n, n)): plane-strain Q1 on a unit-spacing
    grid of (n+2) x (n+2) points (E = 1e5, nu = 0.3, its defaults) whose whole
    boundary is clamped and eliminated: the n x n interior nodes remain, x
    fastest, 2 dofs each, stored as 2x2 BSR. Its B (rigid-body modes at the
    interior nodes, about the grid centre) is written as near_null.mtx."""
    a, B = pyamg.gallery.linear_elasticity((n, n))
    assert a.blocksize == (2, 2)
    a = a.tocsr()  # keeps the explicit zeros of the 2x2 blocks
    # Node coordinates: pyamg places the points at (ii - X/2, jj - Y/2) with
    # X = Y = n + 1, ii, jj in 0..n+1, x fastest, and keeps ii, jj in 1..n.
    ii, jj = np.meshgrid(np.arange(1, n + 1), np.arange(1, n + 1), indexing="xy")
    coords = np.stack([ii.ravel() - (n + 1) / 2.0, jj.ravel() - (n + 1) / 2.0], axis=1)
    # ... which its rotation mode confirms: B[:, 2] = (-y, x) per node.
    assert np.array_equal(B[0::2, 2], -coords[:, 1]) and np.array_equal(B[1::2, 2], coords[:, 0])
    b = np.zeros(2 * n * n)
    b[1::2] = -1.0  # unit downward force at every node
    write_operator(
        out, "pyamg_elasticity2d", a, b, coords, 2, True,
        f"pyamg.gallery.linear_elasticity(({n}, {n})), plane-strain Q1, E=1e5, nu=0.3, boundary eliminated",
        near_null=B,
    )


def tet3d(out, cells=(7, 3, 3), jitter=0.3, qmin=0.15, seed=3):
    """P1 elasticity on unstructured tetrahedra of the box [0, 2] x [0, 1] x
    [0, 1], clamped at x = 0, gravity (0, 0, -1): eliminated and identity-row
    forms of one assembled matrix."""
    mesh = tet_box_mesh(cells, (2.0, 1.0, 1.0), jitter, qmin, seed)
    k, f, p = elasticity(mesh, ElementTetP1(), (0.0, 0.0, -1.0))
    fixed = clamp(p)
    src = (
        f"scikit-fem P1 elasticity E=1 nu=0.3 on {mesh.t.shape[1]} Delaunay tets of a jittered {cells} lattice "
        f"(jitter {jitter}, seed {seed}, min quality {min_quality(mesh):.3f}), box 2x1x1, clamp x=0, "
        f"body force (0,0,-1), RCM node order"
    )
    a, b, c = eliminated(k, f, p, fixed)
    x_e = write_operator(out, "skfem_tet3d_eliminated", a, b, c, 3, True, src + ", clamped nodes eliminated")
    a, b = identity_rows(k, f, p, fixed)
    x_i = write_operator(out, "skfem_tet3d_identity", a, b, p, 3, True, src + ", clamped rows/cols identity")
    # The two forms are one problem: same displacements at the free nodes, 0 at the clamped ones.
    free = node_dofs(np.flatnonzero(~fixed), 3)
    assert np.allclose(x_i[free], x_e, rtol=0, atol=1e-9 * np.abs(x_e).max())
    assert (x_i[node_dofs(np.flatnonzero(fixed), 3)] == 0).all()


def tri2d(out, cells=(14, 7), jitter=0.3, qmin=0.3, seed=5):
    """P1 plane-strain elasticity on unstructured triangles of [0, 2] x [0, 1],
    clamped at x = 0, gravity (0, -1), eliminated, nodes in random order."""
    mesh = tri_box_mesh(cells, (2.0, 1.0), jitter, qmin, seed)
    k, f, p = elasticity(mesh, ElementTriP1(), (0.0, -1.0))
    a, b, c = eliminated(k, f, p, clamp(p))
    write_operator(
        out, "skfem_tri2d_eliminated", a, b, c, 2, False,
        f"scikit-fem P1 plane-strain elasticity E=1 nu=0.3 on {mesh.t.shape[1]} Delaunay triangles of a jittered "
        f"{cells} lattice (jitter {jitter}, seed {seed}, min quality {min_quality(mesh):.3f}), box 2x1, clamp x=0, "
        f"body force (0,-1), random node order, clamped nodes eliminated",
    )


def tiny(out):
    """A hand-checkable operator: P1 elasticity on the 6-tets-per-cube mesh of
    scikit-fem's MeshTet.init_tensor, 3 x 1 x 1 unit cubes, clamped at x = 0."""
    mesh = MeshTet.init_tensor(np.linspace(0.0, 3.0, 4), np.linspace(0.0, 1.0, 2), np.linspace(0.0, 1.0, 2))
    k, f, p = elasticity(mesh, ElementTetP1(), (0.0, 0.0, -1.0))
    a, b, c = eliminated(k, f, p, clamp(p))
    write_operator(
        out, "skfem_tet3d_tiny", a, b, c, 3, False,
        "scikit-fem P1 elasticity E=1 nu=0.3 on MeshTet.init_tensor of 3x1x1 unit cubes, clamp x=0, "
        "body force (0,0,-1), clamped nodes eliminated",
        array=True,
    )


def example(out, cells=(24, 8, 8), jitter=0.3, qmin=0.15, seed=7):
    """The quick start's operator: the eliminated tet3d problem on a 3 x 1 x 1
    beam, larger, in PETSc binary with its coordinates and reference solution."""
    name = "elasticity3d_tet"
    d = os.path.join(out, name)
    os.makedirs(d, exist_ok=True)
    lengths = (3.0, 1.0, 1.0)
    mesh = tet_box_mesh(cells, lengths, jitter, qmin, seed)
    k, f, p = elasticity(mesh, ElementTetP1(), (0.0, 0.0, -1.0))
    a, b, c = eliminated(k, f, p, clamp(p))
    a.sort_indices()
    x, res = solve(a, b)
    write_petsc_mat(os.path.join(d, "A.petsc"), a, 3)
    write_petsc_vec(os.path.join(d, "b.petsc"), b)
    write_petsc_vec(os.path.join(d, "x_ref.petsc"), x)
    src = (
        f"scikit-fem P1 elasticity E=1 nu=0.3 on {mesh.t.shape[1]} Delaunay tets of a jittered {cells} lattice "
        f"(jitter {jitter}, seed {seed}, min quality {min_quality(mesh):.3f}), box 3x1x1, clamp x=0, "
        f"body force (0,0,-1), RCM node order, clamped nodes eliminated"
    )
    write_mm_array(
        os.path.join(d, "coords.mtx"), c,
        [f"{name}: {src}", f"tests/data/operators/generate.py --example; {versions()}",
         "node coordinates, one row per 3x3 dof block"],
    )
    size = sum(os.path.getsize(os.path.join(d, f)) for f in os.listdir(d) if f != "README.md")
    print(
        f"{name}: n={a.shape[0]} nodes={c.shape[0]} tets={mesh.t.shape[1]} nnz={a.nnz} "
        f"min quality {min_quality(mesh):.3f} spsolve-res={res:.1e} {size / 1024:.1f} KiB "
        f"max |u| {np.abs(x).max():.6g}"
    )


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--example", action="store_true", help="write examples/data/elasticity3d_tet/ instead")
    ap.add_argument(
        "--cells", type=int, nargs=3, metavar=("NX", "NY", "NZ"), default=(24, 8, 8),
        help="with --example: lattice cells of the 3x1x1 beam (default 24 8 8; 48 16 16 gives ~42k dofs)",
    )
    ap.add_argument(
        "--qmin", type=float, default=0.15,
        help="with --example: re-jitter tetrahedra of quality under this (default 0.15; larger meshes: 0.1)",
    )
    ap.add_argument("--out", help="output folder (default: this script's folder, or examples/data/)")
    args = ap.parse_args()
    if args.example:
        example(args.out or os.path.join(ROOT, "examples", "data"), cells=tuple(args.cells), qmin=args.qmin)
        return
    out = args.out or HERE
    gallery_poisson(out)
    gallery_elasticity(out)
    tet3d(out)
    tri2d(out)
    tiny(out)


if __name__ == "__main__":
    sys.exit(main())
