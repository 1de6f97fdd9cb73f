"""Test operators built here, with NumPy and SciPy only: the 2D Poisson
matrix, Q1 linear elasticity in 2D and 3D (clamped at x = 0) with its nodal
coordinates, and random block matrices for the Galerkin product."""

import itertools

import numpy as np
import scipy.sparse as sp


def poisson2d(n):
    """The 5-point Laplacian on an n x n grid (Dirichlet), CSR, n^2 rows."""
    t = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(n, n))
    e = sp.identity(n)
    return (sp.kron(t, e) + sp.kron(e, t)).tocsr()


def _q1_stiffness(dim, h, nu):
    """The stiffness of one Q1 element of unit Young's modulus, edge h, on the
    reference cube [0, h]^dim (2x2(x2) Gauss points); plane strain in 2D.
    Local nodes are ordered as itertools.product((0, 1), repeat=dim), dofs
    node-major."""
    lam = nu / ((1 + nu) * (1 - 2 * nu))
    mu = 1 / (2 * (1 + nu))
    nstrain = 3 if dim == 2 else 6
    d = np.zeros((nstrain, nstrain))
    d[:dim, :dim] = lam
    d[np.arange(dim), np.arange(dim)] += 2 * mu
    d[np.arange(dim, nstrain), np.arange(dim, nstrain)] = mu
    shear = [(0, 1)] if dim == 2 else [(1, 2), (0, 2), (0, 1)]
    corners = list(itertools.product((0, 1), repeat=dim))
    g = 0.5 + np.array([-1.0, 1.0]) / (2 * np.sqrt(3.0))
    ke = np.zeros((dim * len(corners), dim * len(corners)))
    for q in itertools.product(g, repeat=dim):
        bmat = np.zeros((nstrain, dim * len(corners)))
        for a, c in enumerate(corners):
            # d N_a / d x_i on the reference cube, scaled by 1/h.
            grad = np.empty(dim)
            for i in range(dim):
                val = 1.0
                for j in range(dim):
                    f = q[j] if c[j] else 1 - q[j]
                    df = 1.0 if c[j] else -1.0
                    val *= df if j == i else f
                grad[i] = val / h
            for i in range(dim):
                bmat[i, a * dim + i] = grad[i]
            for s, (i, j) in enumerate(shear):
                bmat[dim + s, a * dim + i] = grad[j]
                bmat[dim + s, a * dim + j] = grad[i]
        ke += bmat.T @ d @ bmat * (h**dim) / (2**dim)
    return 0.5 * (ke + ke.T)


def elasticity(cells, modulus=None, nu=0.3, h=None):
    """Q1 linear elasticity on a grid of `cells` (2 or 3 counts) of unit
    cubes (or edge h), clamped on the x = 0 face: (A as CSR, coords as
    nodes x dim). `modulus` is one Young's modulus per cell (default 1);
    nodes are numbered lexicographically, x slowest, clamped nodes removed,
    dofs node-major (so A has complete dim x dim blocks)."""
    dim = len(cells)
    h = 1.0 if h is None else h
    npts = [c + 1 for c in cells]
    nnodes = int(np.prod(npts))
    ncells = int(np.prod(cells))
    modulus = np.ones(ncells) if modulus is None else np.asarray(modulus, dtype=float)
    ke = _q1_stiffness(dim, h, nu)
    node_id = np.arange(nnodes).reshape(npts)
    corners = list(itertools.product((0, 1), repeat=dim))
    cell_nodes = np.stack(
        [node_id[tuple(slice(c[i], c[i] + cells[i]) for i in range(dim))].reshape(-1) for c in corners], axis=1
    )
    dofs = (cell_nodes[:, :, None] * dim + np.arange(dim)).reshape(ncells, -1)
    nd = dofs.shape[1]
    rows = np.repeat(dofs, nd, axis=1).reshape(-1)
    cols = np.tile(dofs, (1, nd)).reshape(-1)
    vals = (modulus[:, None, None] * ke[None, :, :]).reshape(-1)
    a = sp.coo_matrix((vals, (rows, cols)), shape=(nnodes * dim, nnodes * dim)).tocsr()
    grid = np.stack(np.meshgrid(*[np.arange(p) * h for p in npts], indexing="ij"), axis=-1).reshape(-1, dim)
    free_nodes = np.flatnonzero(grid[:, 0] > 0)
    free = (free_nodes[:, None] * dim + np.arange(dim)).reshape(-1)
    a = a[free][:, free].tocsr()
    a.sort_indices()
    return a, grid[free_nodes].copy()


def rigid_body_modes(coords):
    """The rigid-body modes of nodes at `coords` (nodes x dim), n*dim x (3 | 6)."""
    nodes, dim = coords.shape
    if dim == 2:
        b = np.zeros((nodes, 2, 3))
        b[:, 0, 0] = 1
        b[:, 1, 1] = 1
        b[:, 0, 2] = -coords[:, 1]
        b[:, 1, 2] = coords[:, 0]
    else:
        b = np.zeros((nodes, 3, 6))
        for i in range(3):
            b[:, i, i] = 1
        x, y, z = coords.T
        b[:, 0, 3], b[:, 1, 3] = -y, x
        b[:, 1, 4], b[:, 2, 4] = -z, y
        b[:, 0, 5], b[:, 2, 5] = z, -x
    return b.reshape(nodes * dim, -1)


def random_block(rng, nbr, nbc, br, bc, density, diagonal=False):
    """A random BSR matrix: nbr x nbc blocks of br x bc, about `density` of
    them stored (every block row has at least one), normal values."""
    mask = rng.random((nbr, nbc)) < density
    mask[np.arange(nbr), rng.integers(0, nbc, nbr)] = True
    if diagonal:
        k = min(nbr, nbc)
        mask[np.arange(k), np.arange(k)] = True
    pattern = sp.csr_matrix(mask.astype(float))
    pattern.sort_indices()
    nnzb = pattern.nnz
    data = rng.standard_normal((nnzb, br, bc))
    return sp.bsr_matrix((data, pattern.indices, pattern.indptr), shape=(nbr * br, nbc * bc))
