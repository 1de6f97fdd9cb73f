"""ptap: block smoothed-aggregation AMG whose setup recurs cheaply.

Python bindings of the Rust library ``ptap`` (its front door, ``ptap::Solver``
and ``ptap::galerkin``), for SciPy sparse matrices and NumPy arrays.

* :class:`Solver`: AMG-preconditioned CG for a symmetric positive definite
  (block) operator. Build it once, then every time step or Newton step
  :meth:`Solver.refresh` the values (same pattern: no inspection, no
  allocation) and :meth:`Solver.solve`.
* :func:`galerkin`: the Galerkin product ``P^T A P`` by any product variant.

Example::

    import numpy as np, scipy.sparse as sp, ptap

    n = 100                                   # 2D Poisson, 100 x 100 grid
    T = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(n, n))
    A = (sp.kron(T, sp.eye(n)) + sp.kron(sp.eye(n), T)).tocsr()
    solver = ptap.Solver(A)                   # near-null space: the constant
    x = solver.solve(np.ones(A.shape[0]))
    print(solver.last_info.iterations, solver.hierarchy["operator_complexity"])
    solver.refresh(2.0 * A)                   # same pattern, new values
    x2 = solver.solve(np.ones(A.shape[0]))    # == x / 2 to the tolerance

Errors raise the exceptions of :mod:`ptap.errors` (all ``PtapError``; input
errors are also ``ValueError``), whose message is the Rust error's sentence.
Long calls (building, refreshing, solving, ``galerkin``) release the GIL.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Optional, Tuple

import numpy as np
import scipy.sparse as sp

from . import errors
from ._ptap import NativeSolver as _NativeSolver
from ._ptap import __version__
from ._ptap import galerkin as _galerkin
from ._ptap import infer_block_shape as _infer_block_shape
from ._ptap import variants as _variants
from .errors import DeviceError, InputError, PatternChangedError, PtapError, SolverError

#: The Galerkin-product variant names (``galerkin(variant=...)``,
#: ``Solver(variant=...)``; the paper's labels, :data:`VARIANT_LABELS`, are
#: accepted too).
VARIANTS: Tuple[str, ...] = tuple(name for name, _, _ in _variants())
#: The paper's label of each variant (``two-pass``: ``V0``, ...).
VARIANT_LABELS: dict = {name: label for name, label, _ in _variants()}
#: The variants whose products are bitwise equal to two-pass's on the CPU
#: (the others reorder sums, or, ``outer-product``, scatter with atomics).
BITWISE_VARIANTS: Tuple[str, ...] = tuple(name for name, _, bitwise in _variants() if bitwise)

__all__ = [
    "Solver",
    "SolveInfo",
    "galerkin",
    "infer_block_shape",
    "VARIANTS",
    "VARIANT_LABELS",
    "BITWISE_VARIANTS",
    "PtapError",
    "InputError",
    "PatternChangedError",
    "DeviceError",
    "SolverError",
    "errors",
    "__version__",
]


def _sparse(A: Any, what: str):
    """``A`` as a CSR or BSR matrix with float64 values (other sparse formats
    are converted with ``.tocsr()``)."""
    if not sp.issparse(A):
        raise TypeError(
            f"{what} must be a scipy.sparse matrix or array (CSR or BSR; other formats are converted "
            f"with .tocsr()), got {type(A).__name__}"
        )
    if A.format not in ("csr", "bsr"):
        A = A.tocsr()
    if np.iscomplexobj(A.data):
        raise TypeError(f"{what} has complex values; ptap solves real operators (float64)")
    return A


def _index_array(a: np.ndarray, what: str) -> np.ndarray:
    if not np.issubdtype(a.dtype, np.integer):
        raise TypeError(f"{what}'s index arrays must be integers, got {a.dtype}")
    return np.ascontiguousarray(a, dtype=np.int64)


def _raw(A: Any, block: Optional[Tuple[int, int]], what: str) -> tuple:
    """The tuple the native layer reads: ``(format, rows, cols, indptr,
    indices, data, block)``. A BSR matrix keeps its blocks unless ``block``
    asks for another shape (then it is regrouped from CSR); a CSR matrix is
    grouped into ``block``, or the inferred shape when ``block`` is None."""
    A = _sparse(A, what)
    rows, cols = (int(s) for s in A.shape)
    if A.format == "bsr" and block is not None and tuple(A.blocksize) != tuple(block):
        A = A.tocsr()
    if A.format == "bsr":
        if not A.has_canonical_format:
            A = A.copy()
            A.sum_duplicates()
        br, bc = (int(s) for s in A.blocksize)
        nnzb = int(A.indptr[-1])
        data = np.ascontiguousarray(A.data[:nnzb], dtype=np.float64).reshape(-1)
        return ("bsr", rows, cols, _index_array(A.indptr, what), _index_array(A.indices[:nnzb], what), data, (br, bc))
    nnz = int(A.indptr[-1])
    data = np.ascontiguousarray(A.data[:nnz], dtype=np.float64)
    return ("csr", rows, cols, _index_array(A.indptr, what), _index_array(A.indices[:nnz], what), data, block)


def _square_block(block_size: Optional[int], what: str) -> Optional[Tuple[int, int]]:
    if block_size is None:
        return None
    b = int(block_size)
    if b != block_size or b < 1:
        raise InputError(f"{what} must be a positive integer, got {block_size!r}")
    return (b, b)


def _dense(a: Any, what: str, rows_name: str) -> np.ndarray:
    arr = np.asarray(a)
    if np.iscomplexobj(arr):
        raise TypeError(f"{what} has complex values; ptap works in float64")
    arr = np.asarray(arr, dtype=np.float64)
    if arr.ndim == 1:
        arr = arr.reshape(-1, 1)
    if arr.ndim != 2:
        raise InputError(f"{what} must be a 2-D array ({rows_name}), got {arr.ndim} dimensions")
    return arr


def _vector(v: Any, what: str) -> np.ndarray:
    arr = np.asarray(v)
    if np.iscomplexobj(arr):
        raise TypeError(f"{what} has complex values; ptap works in float64")
    arr = np.asarray(arr, dtype=np.float64)
    if arr.ndim == 2 and arr.shape[1] == 1:
        arr = arr[:, 0]
    if arr.ndim != 1:
        raise InputError(f"{what} must be a vector (1-D array), got shape {arr.shape}")
    return np.ascontiguousarray(arr)


@dataclass(frozen=True)
class SolveInfo:
    """One solve's outcome. A CG that did not converge is reported
    (``converged=False``), not raised."""

    #: CG iterations.
    iterations: int
    #: Whether ``relative_residual <= rtol`` was reached within ``max_iterations``.
    converged: bool
    #: ``||b - A x|| / ||b||`` as CG tracked it.
    relative_residual: float
    #: Relative residual per iteration, starting with the initial one.
    residual_history: np.ndarray
    #: Seconds the solve took.
    solve_s: float


class Solver:
    """AMG-preconditioned CG for a symmetric positive definite operator.

    Parameters
    ----------
    A : scipy.sparse matrix or array, square
        CSR or BSR (a BSR's ``blocksize`` is its block size); any other sparse
        format is converted with ``A.tocsr()``. Any integer index dtype;
        values are float64 (others are converted with a copy). Duplicates are
        summed, unsorted rows are fine.
    near_null : array (n, m), optional
        The near-null space, ``m`` modes over the ``n`` scalar rows (for
        elasticity, the rigid-body modes).
    coords : array (nodes, dim), optional
        Nodal coordinates, one node per block row in the operator's order,
        ``dim`` 2 or 3: the rigid-body modes are built from them when the block
        size is ``dim`` (3 in 2D, 6 in 3D), the constant when it is 1.
        Give at most one of ``near_null`` and ``coords``; with neither the
        near-null space is the block size's translations (the constant for a
        scalar operator).
    block_size : int, optional
        Group ``A`` into ``block_size x block_size`` blocks (a BSR ``A`` of
        another block size is regrouped). Default, as ``ptap solve`` does: one
        node per block row when ``coords`` are given and that makes 1 or
        ``dim`` rows per node, else a BSR's blocksize, else inferred from the
        CSR pattern (complete nodal blocks of an assembled finite-element
        matrix are found).
    device : "cpu", "cuda" or "auto"
        ``cuda`` raises :class:`DeviceError` without a usable GPU; ``auto``
        falls back to the CPU (``cpu_fallback`` says why).
    pf : float
        Prolongator filter threshold on level 0 (default 0.07, the fastest
        measured hot step; the paper runs 0.03; 0 keeps every block).
    variant : str, optional
        Galerkin-product variant on every level (one of :data:`VARIANTS`), or
        ``"auto"`` (the traffic model's pick per level for this machine);
        default: two-pass on the CPU, column split on a GPU.
    rtol, max_iterations :
        CG's relative tolerance and iteration cap.
    check_symmetry : bool
        Refuse an operator that is not symmetric (CG needs SPD).
    smoother_precision : "f64" or "f32"
        Values the V-cycle's smoothers and residuals apply (default
        ``"f64"``): ``"f32"`` keeps a copy of each smoothed level's operator
        rounded to f32 (vectors and sums stay f64; CG's own ``A p`` and the
        Galerkin products use the f64 values). On a GPU it halves the value
        bytes the smoother reads.

    Raises
    ------
    InputError
        The operator, near-null space or an option does not fit (the message
        says what and what to do); ``TypeError`` for arguments of the wrong kind.
    DeviceError, SolverError
        See :mod:`ptap.errors`.
    """

    def __init__(
        self,
        A: Any,
        near_null: Any = None,
        coords: Any = None,
        block_size: Optional[int] = None,
        device: str = "cpu",
        pf: float = 0.07,
        variant: Optional[str] = None,
        rtol: float = 1e-8,
        max_iterations: int = 500,
        check_symmetry: bool = True,
        smoother_precision: str = "f64",
    ) -> None:
        if near_null is not None and coords is not None:
            raise InputError("give either near_null (the modes) or coords (nodal coordinates), not both")
        nn = None if near_null is None else _dense(near_null, "near_null", "scalar rows x modes")
        xy = None if coords is None else _dense(coords, "coords", "nodes x dim")
        block = _square_block(block_size, "block_size")
        if block is None and xy is not None and xy.shape[0] > 0 and sp.issparse(A):
            # As `ptap solve --coords` does: one node per block row, when that
            # makes 1 or dim unknowns per node.
            nodes, dim = xy.shape
            rows = int(A.shape[0])
            if rows % nodes == 0 and rows // nodes in (1, dim):
                block = (rows // nodes,) * 2
        raw = _raw(A, block, "A")
        if not isinstance(device, str):
            raise TypeError(f"device must be 'cpu', 'cuda' or 'auto', got {device!r}")
        if variant is not None and not isinstance(variant, str):
            raise TypeError(f"variant must be a variant name or 'auto', got {variant!r}")
        if not isinstance(smoother_precision, str):
            raise TypeError(f"smoother_precision must be 'f64' or 'f32', got {smoother_precision!r}")
        if int(max_iterations) != max_iterations or max_iterations < 1:
            raise InputError(f"max_iterations must be a positive integer, got {max_iterations!r}")
        self._native = _NativeSolver(
            raw,
            nn,
            xy,
            device,
            float(pf),
            variant,
            float(rtol),
            int(max_iterations),
            bool(check_symmetry),
            smoother_precision,
        )
        self._last_info: Optional[SolveInfo] = None

    @property
    def shape(self) -> Tuple[int, int]:
        """The operator's scalar shape ``(n, n)``."""
        n = self._native.scalar_rows
        return (n, n)

    @property
    def block_size(self) -> int:
        """The fine operator's block size."""
        return self._native.block_size

    @property
    def device(self) -> str:
        """Where it runs: ``"cpu"`` or the GPU's name."""
        return self._native.device

    @property
    def cpu_fallback(self) -> Optional[str]:
        """With ``device="auto"`` and no usable GPU: why; else None."""
        return self._native.cpu_fallback

    @property
    def last_info(self) -> Optional[SolveInfo]:
        """The :class:`SolveInfo` of the last successful :meth:`solve` (None before)."""
        return self._last_info

    @property
    def hierarchy(self) -> dict:
        """What the solver built (``ptap::Solver::info()``): ``device``,
        ``scalar_rows``, ``block_size``, ``modes``, ``levels`` (per level:
        ``block_rows``, ``blocks``, ``block_size``, ``scalar_rows``, the
        ``variant`` of the product that builds the next level, ...),
        ``operator_complexity``, ``variants``, ``timings``; plus
        ``cpu_fallback``."""
        info = json.loads(self._native.hierarchy_json())
        info["cpu_fallback"] = self.cpu_fallback
        return info

    def solve(self, b: Any, x0: Any = None, return_info: bool = False):
        """Solves ``A x = b`` by AMG-preconditioned CG from ``x0`` (zeros by default).

        Returns ``x`` (a new float64 array), or ``(x, info)`` with
        ``return_info=True``; :attr:`last_info` holds the :class:`SolveInfo`
        either way. Not converging within ``max_iterations`` is reported in
        the info, not raised. A ``b`` or ``x0`` of the wrong length, or with NaN
        or infinity, raises :class:`InputError`.
        """
        bv = _vector(b, "b")
        xv = None if x0 is None else _vector(x0, "x0")
        x, iterations, converged, rel, solve_s, history = self._native.solve(bv, xv)
        info = SolveInfo(
            iterations=iterations,
            converged=converged,
            relative_residual=rel,
            residual_history=history,
            solve_s=solve_s,
        )
        self._last_info = info
        return (x, info) if return_info else x

    def refresh(self, A: Any) -> float:
        """New values for the operator: ``A`` must have the block pattern the
        solver was built for (a CSR is grouped into the solver's block size; a
        block is stored when any of its scalars is). Only the numeric work is
        redone: Galerkin products from the inspected schedules, smoothers,
        coarse factor; nothing is inspected or allocated. Another pattern
        raises :class:`PatternChangedError`. Returns the matrix setup's seconds.
        """
        return self._native.refresh(_raw(A, None, "the new A"))

    def __repr__(self) -> str:
        n = self._native.scalar_rows
        b = self._native.block_size
        return f"<ptap.Solver {n}x{n}, {b}x{b} blocks, on {self.device}>"


def galerkin(
    A: Any,
    P: Any,
    variant: str = "two-pass",
    block_size: Optional[int] = None,
    p_block: Optional[Tuple[int, int]] = None,
) -> sp.bsr_matrix:
    """The Galerkin product ``P^T A P`` as a ``scipy.sparse.bsr_matrix``.

    ``A`` (square, ``b x b`` blocks) and ``P`` (``b x c`` blocks) are CSR or BSR
    (other formats are converted with ``.tocsr()``). ``A``'s block size is its
    BSR blocksize, or ``block_size``, or inferred from a CSR pattern; ``P``'s
    block shape is its BSR blocksize, or ``p_block``, or for a CSR ``P`` the
    inferred shape when its rows match ``b``, else ``(b, 1)`` (any column
    blocking gives the same scalar product). The result has ``c x c`` blocks.

    ``variant`` is one of :data:`VARIANTS` (or a paper label, ``V0`` ...
    ``V4``); every variant gives the same pattern and values equal to
    rounding, bitwise equal to two-pass's for :data:`BITWISE_VARIANTS`.
    ``tensor-pair-sym`` computes ``X + X^T`` from ``A``'s lower triangle, so it
    needs a symmetric ``A`` and refuses a structurally non-symmetric one.
    """
    if not isinstance(variant, str):
        raise TypeError(f"variant must be one of {', '.join(VARIANTS)}, got {variant!r}")
    if p_block is not None:
        p_block = tuple(int(s) for s in p_block)
        if len(p_block) != 2 or min(p_block) < 1:
            raise InputError(f"p_block must be a pair of positive integers (rows, cols), got {p_block!r}")
    a = _raw(A, _square_block(block_size, "block_size"), "A")
    p = _raw(P, p_block, "P")
    indptr, indices, data, nbr, nbc, br, bc = _galerkin(a, p, variant)
    return sp.bsr_matrix((data.reshape(-1, br, bc), indices, indptr), shape=(nbr * br, nbc * bc))


def infer_block_shape(A: Any) -> Tuple[int, int]:
    """The block shape a CSR matrix would be grouped into when no block size
    is given (complete blocks of up to 6x6; 1x1 when none fits)."""
    A = _sparse(A, "A")
    if A.format == "bsr":
        A = A.tocsr()
    return tuple(_infer_block_shape(_raw(A, None, "A")))
