//! `ptap._ptap`: the native half of the `ptap` Python package.
//!
//! The Python layer (`python/ptap/__init__.py`) turns SciPy matrices and
//! NumPy arrays into plain arrays (int64 indices, float64 values) and calls
//! this module; this module turns them into [`ptap::BlockCsr`]s and calls the
//! front door ([`ptap::Solver`], [`ptap::galerkin`]). Every long call runs
//! with the GIL released. Errors become the Python exceptions of
//! `ptap.errors`, whose message is the Rust error's sentence; a panic is
//! caught before it reaches the FFI boundary and raised as `ptap.PtapError`,
//! and a solver it interrupted refuses further use.
use numpy::{IntoPyArray, PyArray1, PyReadonlyArray1, PyReadonlyArray2};
use ptap::{BlockCsr, BlockPattern, DeviceChoice, KernelRegistry, NearNull, ScalarCsr, Solver, SolverOptions, Variant};
use ptap_runtime::{RuntimeError, SmootherPrecision};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyType;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Mutex};

/// What went wrong in a native call.
enum Failure {
    Ptap(ptap::Error),
    /// A panic, caught: its message.
    Panic(String),
    /// A solver whose earlier call panicked.
    Poisoned,
}

impl From<ptap::Error> for Failure {
    fn from(e: ptap::Error) -> Self {
        Failure::Ptap(e)
    }
}

fn input(what: impl Into<String>) -> Failure {
    Failure::Ptap(ptap::Error::Input { what: what.into() })
}

/// The `ptap.errors` class a front-door error raises. Errors not named here
/// (variants added later included) are `SolverError`.
fn class_of(e: &ptap::Error) -> &'static str {
    use ptap::Error as E;
    use ptap_amg::AmgError as A;
    use RuntimeError as R;
    match e {
        E::Input { .. } | E::Sparse(_) | E::Io(_) => "InputError",
        E::PatternChanged { .. } => "PatternChangedError",
        E::Cuda(_) | E::DeviceKernels { .. } => "DeviceError",
        E::Amg(A::EigenBreakdown { .. }) | E::Runtime(R::Amg(A::EigenBreakdown { .. })) => "SolverError",
        E::Amg(_) | E::Runtime(R::Amg(_)) => "InputError",
        E::Runtime(
            R::VectorLength { .. }
            | R::ValuesLength { .. }
            | R::NotFinite { .. }
            | R::InvalidOption { .. }
            | R::UnsupportedShape { .. }
            | R::NotSpd { .. }
            | R::Sparse(_),
        ) => "InputError",
        _ => "SolverError",
    }
}

/// Raises `failure` as the matching `ptap.errors` exception (ValueError or
/// RuntimeError when the Python package is not importable, as when this
/// module is loaded by itself).
fn raise(py: Python<'_>, failure: Failure) -> PyErr {
    let (class, message) = match failure {
        Failure::Ptap(e) => (class_of(&e), e.to_string()),
        Failure::Panic(m) => (
            "PtapError",
            format!("internal error in ptap ({m}); please report it with the input that caused it"),
        ),
        Failure::Poisoned => (
            "PtapError",
            "this solver was interrupted by an internal error and cannot be used; build a new one".to_string(),
        ),
    };
    let found = py
        .import("ptap.errors")
        .and_then(|m| m.getattr(class))
        .and_then(|c| c.cast_into::<PyType>().map_err(PyErr::from));
    match found {
        Ok(ty) => PyErr::from_type(ty, message),
        Err(_) if class == "InputError" || class == "PatternChangedError" => PyValueError::new_err(message),
        Err(_) => PyRuntimeError::new_err(message),
    }
}

/// Runs `f`, turning a panic into [`Failure::Panic`].
fn guarded<T>(f: impl FnOnce() -> Result<T, Failure>) -> Result<T, Failure> {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|payload| {
        let m = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic without a message".into());
        Err(Failure::Panic(m))
    })
}

/// A sparse matrix as the Python layer hands it over:
/// `(format, rows, cols, indptr, indices, data, block)`, where `format` is
/// `"csr"` (scalar CSR; `block` the `(br, bc)` to group into, or `None` to
/// infer) or `"bsr"` (block CSR, `data` the blocks row-major in order,
/// `block` their shape). Indices arrive as int64 and are checked here.
struct RawMatrix {
    bsr: bool,
    rows: usize,
    cols: usize,
    indptr: Vec<usize>,
    indices: Vec<u32>,
    data: Vec<f64>,
    block: Option<(usize, usize)>,
}

type RawTuple<'py> = (
    String,
    usize,
    usize,
    PyReadonlyArray1<'py, i64>,
    PyReadonlyArray1<'py, i64>,
    PyReadonlyArray1<'py, f64>,
    Option<(usize, usize)>,
);

impl RawMatrix {
    /// Copies the arrays (with the GIL held, so no Python thread changes them
    /// under us once it is released).
    fn extract(obj: &Bound<'_, PyAny>, what: &str) -> Result<Self, Failure> {
        let (format, rows, cols, indptr, indices, data, block): RawTuple<'_> = obj
            .extract()
            .map_err(|e| input(format!("{what}: the native layer got malformed arrays ({e})")))?;
        let bsr = match format.as_str() {
            "csr" => false,
            "bsr" => true,
            other => return Err(input(format!("{what}: unknown sparse format {other:?}"))),
        };
        let contiguous = |e: numpy::AsSliceError| input(format!("{what}: {e}"));
        let indptr = indptr
            .as_slice()
            .map_err(contiguous)?
            .iter()
            .enumerate()
            .map(|(k, &v)| {
                usize::try_from(v)
                    .map_err(|_| input(format!("{what}: indptr[{k}] is {v}; row pointers must be non-negative")))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let indices = indices
            .as_slice()
            .map_err(contiguous)?
            .iter()
            .enumerate()
            .map(|(k, &v)| {
                u32::try_from(v).map_err(|_| {
                    input(format!(
                        "{what}: column index {v} at position {k} is negative or beyond 32 bits; use blocks or fewer columns"
                    ))
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let data = data.as_slice().map_err(contiguous)?.to_vec();
        Ok(RawMatrix {
            bsr,
            rows,
            cols,
            indptr,
            indices,
            data,
            block,
        })
    }

    /// The block matrix (no GIL needed).
    fn into_block_csr(self, what: &str) -> Result<BlockCsr, Failure> {
        if !self.bsr {
            return Ok(BlockCsr::from_scalar_csr(
                self.rows,
                self.cols,
                &self.indptr,
                &self.indices,
                &self.data,
                self.block,
            )
            .map_err(ptap::Error::from)?);
        }
        let (br, bc) = self
            .block
            .ok_or_else(|| input(format!("{what}: a BSR matrix needs its block shape")))?;
        if br == 0 || bc == 0 || self.rows % br != 0 || self.cols % bc != 0 {
            return Err(input(format!(
                "{what} is {}x{} with {br}x{bc} blocks, which do not tile it",
                self.rows, self.cols
            )));
        }
        let pattern =
            BlockPattern::new(self.rows / br, self.cols / bc, self.indptr, self.indices).map_err(ptap::Error::from)?;
        Ok(BlockCsr::new(Arc::new(pattern), br, bc, self.data).map_err(ptap::Error::from)?)
    }

    /// The scalar shape.
    fn shape(&self) -> (usize, usize) {
        (self.rows, self.cols)
    }
}

/// Where each entry of a refresh's `data` lands in the solver's block values,
/// for one matrix structure (`indptr`, `indices`, format): built once, at the
/// first refresh, by searching the block pattern; every later refresh with the
/// same structure only compares the two index arrays and scatters, with no
/// sorting, grouping or allocation. Contributions to one value are summed in
/// `data` order, as `BlockCsr::from_scalar_csr` sums duplicates, so both paths
/// give the same bits.
struct ValueMap {
    bsr: bool,
    indptr: Vec<usize>,
    indices: Vec<u32>,
    /// Block-values index of each `data` entry (CSR), and whether it is the
    /// first contribution to it.
    slot: Vec<usize>,
    first: Vec<bool>,
    /// The block values the solver refreshes from (untouched slots stay 0).
    values: Vec<f64>,
}

impl ValueMap {
    /// The map of `raw`'s structure onto `a` (the block matrix built from it).
    fn new(raw_bsr: bool, indptr: Vec<usize>, indices: Vec<u32>, a: &BlockCsr) -> Self {
        let (b, area) = (a.block_shape().0, a.block_len());
        let p = a.pattern();
        let mut slot = Vec::new();
        let mut first = Vec::new();
        if !raw_bsr {
            let mut seen = vec![false; a.values().len()];
            slot.reserve(indices.len());
            first.reserve(indices.len());
            for r in 0..indptr.len() - 1 {
                let (i, row) = (r / b, p.row(r / b));
                for &c in &indices[indptr[r]..indptr[r + 1]] {
                    let c = c as usize;
                    let pos = row
                        .binary_search(&((c / b) as u32))
                        .expect("every entry's block is in the pattern built from these arrays");
                    let s = (p.row_ptr()[i] + pos) * area + (r % b) * b + c % b;
                    first.push(!seen[s]);
                    seen[s] = true;
                    slot.push(s);
                }
            }
        }
        ValueMap {
            bsr: raw_bsr,
            indptr,
            indices,
            slot,
            first,
            values: a.values().to_vec(),
        }
    }

    /// Whether `raw` has the structure this map was built for.
    fn fits(&self, raw: &RawMatrix) -> bool {
        raw.bsr == self.bsr && raw.indptr == self.indptr && raw.indices == self.indices
    }

    /// `raw`'s values in block order.
    fn scatter(&mut self, data: &[f64]) -> &[f64] {
        if self.bsr {
            self.values.copy_from_slice(data);
        } else {
            for ((&s, &f), &v) in self.slot.iter().zip(&self.first).zip(data) {
                if f {
                    self.values[s] = v;
                } else {
                    self.values[s] += v;
                }
            }
        }
        &self.values
    }
}

/// The arrays of a block matrix for `scipy.sparse.bsr_matrix`:
/// `(indptr, indices, data, block_rows, block_cols, br, bc)`.
type BlockArrays<'py> = (
    Bound<'py, PyArray1<i64>>,
    Bound<'py, PyArray1<i64>>,
    Bound<'py, PyArray1<f64>>,
    usize,
    usize,
    usize,
    usize,
);

fn block_arrays(py: Python<'_>, m: BlockCsr) -> BlockArrays<'_> {
    let (br, bc) = m.block_shape();
    let (nr, nc) = (m.nrows(), m.ncols());
    let indptr: Vec<i64> = m.pattern().row_ptr().iter().map(|&v| v as i64).collect();
    let indices: Vec<i64> = m.pattern().col_idx().iter().map(|&v| v as i64).collect();
    let values = m.values().to_vec();
    (
        indptr.into_pyarray(py),
        indices.into_pyarray(py),
        values.into_pyarray(py),
        nr,
        nc,
        br,
        bc,
    )
}

/// A row-major copy of a 2-D float64 array with its shape.
fn rows_of(a: &PyReadonlyArray2<'_, f64>) -> (Vec<f64>, usize, usize) {
    let view = a.as_array();
    let (r, c) = view.dim();
    (view.iter().copied().collect(), r, c)
}

/// The native solver behind `ptap.Solver`.
#[pyclass(module = "ptap._ptap", frozen)]
struct NativeSolver {
    /// `None` once a call panicked.
    state: Mutex<Option<Solver>>,
    /// The refresh fast path, once a refresh has built it.
    value_map: Mutex<Option<ValueMap>>,
    n: usize,
    block: usize,
    device: String,
    cpu_fallback: Option<String>,
}

/// One solve's outcome: `(x, iterations, converged, relative_residual, solve_s, residual_history)`.
type SolveTuple<'py> = (
    Bound<'py, PyArray1<f64>>,
    usize,
    bool,
    f64,
    f64,
    Bound<'py, PyArray1<f64>>,
);

impl NativeSolver {
    fn with_solver<T: Send>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&mut Solver) -> Result<T, Failure> + Send,
    ) -> PyResult<T> {
        py.detach(|| {
            // A panic never happens while the lock is held outside `guarded`,
            // so the lock is never poisoned; recover it anyway.
            let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
            let Some(solver) = state.as_mut() else {
                return Err(Failure::Poisoned);
            };
            let out = guarded(|| f(solver));
            if matches!(out, Err(Failure::Panic(_))) {
                *state = None;
            }
            out
        })
        .map_err(|f| raise(py, f))
    }
}

#[pymethods]
impl NativeSolver {
    /// `a` as `RawMatrix`; at most one of `near_null` (rows x modes) and
    /// `coords` (nodes x dim); neither means translations.
    #[new]
    #[pyo3(signature = (a, near_null, coords, device, pf, variant, rtol, max_iterations, check_symmetry, smoother_precision))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        a: &Bound<'_, PyAny>,
        near_null: Option<PyReadonlyArray2<'_, f64>>,
        coords: Option<PyReadonlyArray2<'_, f64>>,
        device: &str,
        pf: f64,
        variant: Option<String>,
        rtol: f64,
        max_iterations: usize,
        check_symmetry: bool,
        smoother_precision: &str,
    ) -> PyResult<Self> {
        let prepared = (|| {
            let raw = RawMatrix::extract(a, "A")?;
            let nn = match (near_null, coords) {
                (Some(_), Some(_)) => {
                    return Err(input(
                        "give either near_null (the modes) or coords (nodal coordinates), not both",
                    ))
                }
                (Some(m), None) => {
                    let (values, _, modes) = rows_of(&m);
                    NearNull::Modes { values, modes }
                }
                (None, Some(c)) => {
                    let (coords, _, dim) = rows_of(&c);
                    NearNull::Coordinates { coords, dim }
                }
                (None, None) => NearNull::Translations,
            };
            let device: DeviceChoice = device.parse()?;
            let precision: SmootherPrecision = smoother_precision.parse().map_err(input)?;
            Ok((raw, nn, device, precision))
        })();
        let (raw, nn, device, precision) = prepared.map_err(|f| raise(py, f))?;
        let built = py.detach(|| {
            guarded(|| {
                let a = raw.into_block_csr("A")?;
                let mut options = SolverOptions {
                    device,
                    check_symmetry,
                    variant,
                    ..SolverOptions::default()
                };
                options.cg.rtol = rtol;
                options.cg.max_iterations = max_iterations;
                options.hierarchy.amg.pf = pf;
                options.hierarchy.smoother_precision = precision;
                let block = a.block_shape().0;
                let solver = Solver::builder(a).near_null(nn).options(options).build()?;
                Ok((solver, block))
            })
        });
        let (solver, block) = built.map_err(|f| raise(py, f))?;
        Ok(NativeSolver {
            n: solver.scalar_rows(),
            device: solver.device().to_string(),
            cpu_fallback: solver.cpu_fallback().map(str::to_string),
            state: Mutex::new(Some(solver)),
            value_map: Mutex::new(None),
            block,
        })
    }

    /// Solves from `x0` (zeros when `None`).
    #[pyo3(signature = (b, x0=None))]
    fn solve<'py>(
        &self,
        py: Python<'py>,
        b: PyReadonlyArray1<'py, f64>,
        x0: Option<PyReadonlyArray1<'py, f64>>,
    ) -> PyResult<SolveTuple<'py>> {
        let b = b.as_array().to_vec();
        let mut x = match x0 {
            Some(x0) => x0.as_array().to_vec(),
            None => vec![0.0; self.n],
        };
        let (x, info) = self.with_solver(py, move |s| {
            let info = s.solve(&b, &mut x)?;
            Ok((x, info))
        })?;
        Ok((
            x.into_pyarray(py),
            info.iterations,
            info.converged,
            info.relative_residual,
            info.solve_s,
            info.residual_history.into_pyarray(py),
        ))
    }

    /// New values from a matrix of the same block pattern (a CSR is grouped
    /// into the solver's block size). Returns the matrix setup's seconds.
    fn refresh(&self, py: Python<'_>, a: &Bound<'_, PyAny>) -> PyResult<f64> {
        let mut raw = RawMatrix::extract(a, "the new A").map_err(|f| raise(py, f))?;
        let (n, block) = (self.n, self.block);
        if raw.shape() != (n, n) {
            let detail = format!("{}x{} scalar rows and columns instead of {n}x{n}", raw.rows, raw.cols);
            return Err(raise(py, ptap::Error::PatternChanged { detail }.into()));
        }
        if !raw.bsr {
            raw.block = Some((block, block));
        }
        let map = &self.value_map;
        self.with_solver(py, move |s| {
            let mut map = map.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(m) = map.as_mut().filter(|m| m.fits(&raw)) {
                // `Solver::refresh` refuses NaN and infinity.
                return Ok(s.refresh(m.scatter(&raw.data))?);
            }
            // First refresh of this structure: group into blocks, check the
            // pattern, and keep the map for the next ones.
            let (bsr, indptr, indices) = (raw.bsr, raw.indptr.clone(), raw.indices.clone());
            let a = raw.into_block_csr("the new A")?;
            let t = s.refresh_matrix(&a)?;
            *map = Some(ValueMap::new(bsr, indptr, indices, &a));
            Ok(t)
        })
    }

    /// `Solver::info()` as JSON.
    fn hierarchy_json(&self, py: Python<'_>) -> PyResult<String> {
        self.with_solver(py, |s| {
            serde_json::to_string(&s.info())
                .map_err(|e| Failure::Panic(format!("the hierarchy report does not serialize: {e}")))
        })
    }

    #[getter]
    fn scalar_rows(&self) -> usize {
        self.n
    }

    #[getter]
    fn block_size(&self) -> usize {
        self.block
    }

    #[getter]
    fn device(&self) -> String {
        self.device.clone()
    }

    #[getter]
    fn cpu_fallback(&self) -> Option<String> {
        self.cpu_fallback.clone()
    }
}

/// `P^T A P` of two `RawMatrix`es by `variant`; the block arrays of the result.
#[pyfunction]
fn galerkin<'py>(
    py: Python<'py>,
    a: &Bound<'py, PyAny>,
    p: &Bound<'py, PyAny>,
    variant: &str,
) -> PyResult<BlockArrays<'py>> {
    let prepared = (|| {
        let variant: Variant = if variant.eq_ignore_ascii_case("auto") {
            return Err(input(
                "galerkin runs one fixed variant; `auto` (the traffic model's pick per level) is a Solver option",
            ));
        } else {
            variant.parse().map_err(input)?
        };
        Ok((RawMatrix::extract(a, "A")?, RawMatrix::extract(p, "P")?, variant))
    })();
    let (a, mut p, variant) = prepared.map_err(|f| raise(py, f))?;
    let product = py.detach(|| {
        guarded(|| {
            let a = a.into_block_csr("A")?;
            let b = a.block_shape().0;
            if !p.bsr && p.block.is_none() {
                // P's block rows must be A's block columns: its inferred shape
                // when that agrees, else one column per block (any column
                // blocking gives the same scalar product).
                let csr =
                    ScalarCsr::from_csr(p.rows, p.cols, &p.indptr, &p.indices, &p.data).map_err(ptap::Error::from)?;
                let (br, bc) = csr.inferred_block_shape();
                p.block = Some(if br == b { (br, bc) } else { (b, 1) });
            }
            let p = p.into_block_csr("P")?;
            Ok(ptap::galerkin(&a, &p, variant, KernelRegistry::shipped())?)
        })
    });
    let c = product.map_err(|f| raise(py, f))?;
    Ok(block_arrays(py, c))
}

/// The block shape scalar CSR arrays would be grouped into when none is given.
#[pyfunction]
fn infer_block_shape(py: Python<'_>, a: &Bound<'_, PyAny>) -> PyResult<(usize, usize)> {
    let raw = RawMatrix::extract(a, "A").map_err(|f| raise(py, f))?;
    py.detach(|| {
        guarded(|| {
            let csr = ScalarCsr::from_csr(raw.rows, raw.cols, &raw.indptr, &raw.indices, &raw.data)
                .map_err(ptap::Error::from)?;
            Ok(csr.inferred_block_shape())
        })
    })
    .map_err(|f| raise(py, f))
}

/// The Galerkin-product variants: `(name, paper label, bitwise equal to
/// two-pass on the CPU)` each, in `Variant::ALL`'s order.
#[pyfunction]
fn variants() -> Vec<(&'static str, &'static str, bool)> {
    Variant::ALL
        .iter()
        .map(|v| (v.name(), v.label(), v.bitwise_v0()))
        .collect()
}

#[pymodule]
fn _ptap(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<NativeSolver>()?;
    m.add_function(wrap_pyfunction!(galerkin, m)?)?;
    m.add_function(wrap_pyfunction!(infer_block_shape, m)?)?;
    m.add_function(wrap_pyfunction!(variants, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
