"""The exceptions ptap raises. Each message is the Rust library's one sentence:
what was wrong and what to do.

``PtapError`` is the base of all of them::

    PtapError(Exception)
    ├── InputError(PtapError, ValueError)      a matrix, vector or option does not fit
    │   │                                      (lengths, NaN, non-symmetric or non-SPD
    │   │                                      operator, unknown variant or device, ...)
    │   └── PatternChangedError(InputError)    refresh() with another sparsity pattern
    ├── DeviceError(PtapError, RuntimeError)   device="cuda" and no usable GPU, or a GPU failure
    └── SolverError(PtapError, RuntimeError)   the hierarchy could not be built or factored
                                               (coarsening stalled, singular coarse operator)

A ``PtapError`` that is none of these is an internal error (a bug: a panic in
the Rust code is caught and raised as one, never let through); a solver it
interrupted refuses further use.
"""


class PtapError(Exception):
    """Base class of every error ptap raises."""


class InputError(PtapError, ValueError):
    """An input does not fit: shapes, lengths, NaN or infinity, a non-symmetric
    or non-SPD operator, an unknown option value."""


class PatternChangedError(InputError):
    """``Solver.refresh`` was given a matrix whose block pattern is not the one
    the solver was built for; build a new Solver for it."""


class DeviceError(PtapError, RuntimeError):
    """The GPU asked for is not usable (no driver, no device) or failed."""


class SolverError(PtapError, RuntimeError):
    """The AMG hierarchy could not be built or used (coarsening stalled, a
    coarse operator could not be factored)."""


__all__ = ["PtapError", "InputError", "PatternChangedError", "DeviceError", "SolverError"]
