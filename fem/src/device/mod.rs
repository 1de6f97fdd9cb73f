//! FEM assembly on the device: the inspector's element-to-block map and
//! per-row element incidence (schedules, uploaded once), the Q2 reference
//! stiffness integrated on the device, and the row-owner gather that
//! refreshes a device-resident operator from a per-element modulus field.
//!
//! A refresh moves at most the modulus field across the bus (`8 n_elements`
//! bytes, counted under the device's current phase, none when the field is
//! already on the device); the operator's values are written on the device
//! and never leave it.
use self::kernels::{self as gpu_fem, GATHER_WARPS, KREF_THREADS};
use crate::{Assembler, FemError};
use cudarc::driver::{CudaSlice, LaunchConfig};
use ptap_cuda::{grid_for, to_u32, Arg, CudaError, Device, DeviceBlockCsr, Kernel};
use std::sync::Arc;

pub mod kernels;
use thiserror::Error;

/// Errors of the device assembly.
#[derive(Debug, Error)]
pub enum AssemblyError {
    #[error(transparent)]
    Cuda(#[from] CudaError),
    #[error(transparent)]
    Fem(#[from] FemError),
    #[error("the device reference stiffness differs from the assembler's by {rel:e} (relative); the element size or Poisson ratio given to DeviceAssembler::new is not the assembler's")]
    ReferenceMismatch { rel: f64 },
    #[error("the operator values on the device have {got} entries, expected {expected} (this assembler's pattern and {dim}x{dim} blocks)")]
    ValuesLength { got: usize, expected: usize, dim: usize },
}

/// Where a refresh's modulus field lives: one value per element.
#[derive(Clone, Copy)]
pub enum Modulus<'a> {
    /// On the host: checked (finite, positive), then uploaded (counted).
    Host(&'a [f64]),
    /// Already on the device (length checked; values are the caller's responsibility).
    Device(&'a CudaSlice<f64>),
}

/// The device FEM executor of one [`Assembler`]: maps and reference stiffness
/// on the device, refreshed values written straight into a device operator.
pub struct DeviceAssembler {
    dev: Arc<Device>,
    dim: usize,
    npe: usize,
    n_elements: usize,
    nrows: usize,
    nnzb: usize,
    stage_len: usize,
    gather: Arc<Kernel>,
    kref: CudaSlice<f64>,
    emap: CudaSlice<u32>,
    inc_ptr: CudaSlice<u32>,
    inc: CudaSlice<u32>,
    row_ptr: CudaSlice<u32>,
    /// The row pointers on the host (a row range's first block and length).
    host_row_ptr: Vec<usize>,
    /// Staging for host-given modulus fields (reused, never reallocated).
    modulus: CudaSlice<f64>,
}

impl DeviceAssembler {
    /// Uploads the inspector's maps (element map, incidence, row pointers)
    /// and integrates the reference stiffness on the device for element edges
    /// `h` (`mesh.element_size()`) and Poisson ratio `nu`. The device's
    /// `K_ref` is checked once against the assembler's (one small download)
    /// so that a wrong `h` or `nu` is refused, not silently assembled.
    pub fn new(dev: &Arc<Device>, asm: &Assembler, h: [f64; 3], nu: f64) -> Result<Self, AssemblyError> {
        let (dim, npe) = (asm.dim(), asm.nodes_per_element());
        let pattern = asm.pattern();
        let bb = dim * dim;
        if pattern.nnzb().saturating_mul(bb) > u32::MAX as usize / 2 {
            return Err(CudaError::TooLarge {
                what: "the assembled operator's values".into(),
                n: pattern.nnzb() * bb,
            }
            .into());
        }
        let kernels = dev.module(&gpu_fem::fem_module(dim))?;
        let kref_kernel = kernels[&gpu_fem::kref_name(dim)].clone();
        let gather = kernels[&gpu_fem::gather_name(dim)].clone();

        let kref = dev.zeros::<f64>(npe * npe * bb)?;
        dev.launch(
            &kref_kernel,
            grid_for((npe * npe) as u64, KREF_THREADS as u32),
            &[
                Arg::F64Mut(&kref),
                Arg::Scalar(h[0]),
                Arg::Scalar(h[1]),
                Arg::Scalar(h[2]),
                Arg::Scalar(nu),
            ],
        )?;
        let got = dev.download(&kref)?;
        let want = asm.reference_stiffness().blocks();
        let scale = want.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        let diff = got.iter().zip(want).fold(0.0f64, |m, (g, w)| m.max((g - w).abs()));
        let rel = if scale > 0.0 { diff / scale } else { diff };
        if !(rel <= 1e-10) {
            return Err(AssemblyError::ReferenceMismatch { rel });
        }

        let (inc_ptr, inc) = asm.incidence();
        let max_row_blocks = (0..pattern.nrows())
            .map(|r| pattern.row_range(r).len())
            .max()
            .unwrap_or(0);
        Ok(Self {
            dev: dev.clone(),
            dim,
            npe,
            n_elements: asm.n_elements(),
            nrows: pattern.nrows(),
            nnzb: pattern.nnzb(),
            stage_len: max_row_blocks * bb,
            gather,
            kref,
            emap: dev.upload(asm.element_map())?,
            inc_ptr: dev.upload(&to_u32("incidence pointers", inc_ptr)?)?,
            inc: dev.upload(inc)?,
            row_ptr: dev.upload(&to_u32("row pointers", pattern.row_ptr())?)?,
            host_row_ptr: pattern.row_ptr().to_vec(),
            modulus: dev.zeros::<f64>(asm.n_elements())?,
        })
    }

    /// Spatial dimension = block size.
    pub fn dim(&self) -> usize {
        self.dim
    }
    pub fn n_elements(&self) -> usize {
        self.n_elements
    }
    /// Scalars of the operator's value array, `nnzb * dim^2`.
    pub fn values_len(&self) -> usize {
        self.nnzb * self.dim * self.dim
    }

    /// The device's unit-modulus element stiffness (`npe^2` blocks of
    /// `dim x dim`, `ElementStiffness::blocks` layout), copied to the host (counted).
    pub fn reference_stiffness(&self) -> Result<Vec<f64>, CudaError> {
        self.dev.download(&self.kref)
    }

    /// Overwrites `a_values` (the operator's values over the assembler's
    /// pattern, on the device) with `sum_e E_e K_ref`. Deterministic, and
    /// bitwise equal to [`Assembler::assemble`] when compiled with `--fmad=false`.
    /// Only a host-given modulus crosses the bus; nothing comes back.
    pub fn assemble(&mut self, modulus: Modulus<'_>, a_values: &mut CudaSlice<f64>) -> Result<(), AssemblyError> {
        self.assemble_rows(modulus, 0..self.nrows, a_values)
    }

    /// [`DeviceAssembler::assemble`] of block rows `rows` only: `a_values`
    /// holds those rows' values (from the range's first block on), each the
    /// same bits as in a whole assembly. A rank's slab of a bigger box writes
    /// its rows straight into its own operator this way.
    pub fn assemble_rows(
        &mut self,
        modulus: Modulus<'_>,
        rows: std::ops::Range<usize>,
        a_values: &mut CudaSlice<f64>,
    ) -> Result<(), AssemblyError> {
        if rows.start > rows.end || rows.end > self.nrows {
            return Err(FemError::BadRows {
                start: rows.start,
                end: rows.end,
                n: self.nrows,
            }
            .into());
        }
        let bb = self.dim * self.dim;
        let len = (self.host_row_ptr[rows.end] - self.host_row_ptr[rows.start]) * bb;
        if a_values.len() != len.max(1) {
            return Err(AssemblyError::ValuesLength {
                got: a_values.len(),
                expected: len,
                dim: self.dim,
            });
        }
        let field = match modulus {
            Modulus::Host(m) => {
                check_modulus(m, self.n_elements)?;
                if !m.is_empty() {
                    self.dev.upload_into(m, &mut self.modulus)?;
                }
                &self.modulus
            }
            Modulus::Device(m) => {
                if m.len() != self.n_elements.max(1) {
                    return Err(FemError::ModulusLength {
                        got: m.len(),
                        expected: self.n_elements,
                    }
                    .into());
                }
                m
            }
        };
        if rows.is_empty() {
            return Ok(());
        }
        let cfg = LaunchConfig {
            grid_dim: (rows.len().div_ceil(GATHER_WARPS) as u32, 1, 1),
            block_dim: (32 * GATHER_WARPS as u32, 1, 1),
            shared_mem_bytes: (GATHER_WARPS * self.stage_len * 8) as u32,
        };
        self.dev.launch(
            &self.gather,
            cfg,
            &[
                Arg::F64(&self.kref),
                Arg::F64(field),
                Arg::U32s(&self.emap),
                Arg::U32s(&self.inc_ptr),
                Arg::U32s(&self.inc),
                Arg::U32s(&self.row_ptr),
                Arg::F64Mut(a_values),
                Arg::U32(rows.start as u32),
                Arg::U32(rows.end as u32),
                Arg::U32(self.stage_len as u32),
            ],
        )?;
        Ok(())
    }

    /// [`DeviceAssembler::assemble`] into a device matrix over this assembler's
    /// pattern (`dim x dim` blocks).
    pub fn assemble_matrix(&mut self, modulus: Modulus<'_>, a: &mut DeviceBlockCsr) -> Result<(), AssemblyError> {
        if (a.br, a.bc, a.nrows, a.nnzb) != (self.dim, self.dim, self.nrows, self.nnzb) {
            return Err(AssemblyError::ValuesLength {
                got: a.nnzb * a.br * a.bc,
                expected: self.values_len(),
                dim: self.dim,
            });
        }
        self.assemble(modulus, &mut a.values)
    }

    /// Bytes one refresh moves at least in device memory: the values written
    /// once, the map rows of free nodes and the incidence read once, the row
    /// pointers, and the modulus field (`K_ref` is cache-resident and not counted).
    pub fn stream_bytes(&self) -> f64 {
        // Every incidence entry reads its element's map row of `npe` blocks.
        let entries = self.inc.len();
        let values = self.values_len() * 8;
        let map = entries * self.npe * 4;
        let incidence = entries * 4 + (self.nrows + 1) * 4;
        let rows = (self.nrows + 1) * 4;
        (values + map + incidence + rows + self.n_elements * 8) as f64
    }

    /// Bytes of the maps held on the device (element map, incidence, row pointers, `K_ref`, modulus staging).
    pub fn bytes(&self) -> usize {
        self.emap.num_bytes()
            + self.inc_ptr.num_bytes()
            + self.inc.num_bytes()
            + self.row_ptr.num_bytes()
            + self.kref.num_bytes()
            + self.modulus.num_bytes()
    }
}

/// A rank's slab of the beam ([`crate::BeamSlab`]) assembled on its GPU:
/// the sub-box's maps on the device, and each refresh writes the slab's rows
/// (owned rows, their columns in the whole beam's order, which is a rank's
/// local matrix order) straight into a device value array. A refresh uploads
/// the slab's part of the modulus field (`8` bytes per sub-box element) and
/// nothing else; with `--fmad=false` the values are [`crate::BeamSlab`]'s bit for bit.
pub struct DeviceSlabAssembler {
    /// `None` for a slab without rows.
    asm: Option<DeviceAssembler>,
    rows: std::ops::Range<usize>,
    elements: std::ops::Range<usize>,
    n_elements: usize,
    values_len: usize,
}

impl DeviceSlabAssembler {
    /// The device side of `slab` (uploads its sub-box's maps; setup).
    pub fn new(dev: &Arc<Device>, slab: &crate::BeamSlab, nu: f64) -> Result<Self, AssemblyError> {
        let values_len = slab.values().len();
        let n_elements = slab.mesh.n_elements();
        Ok(match slab.sub_box() {
            Some((asm, rows, elements)) => Self {
                asm: Some(DeviceAssembler::new(dev, asm, slab.mesh.element_size(), nu)?),
                rows,
                elements,
                n_elements,
                values_len,
            },
            None => Self {
                asm: None,
                rows: 0..0,
                elements: 0..0,
                n_elements,
                values_len,
            },
        })
    }

    /// Scalars of the slab's values (its rows' blocks times 9).
    pub fn values_len(&self) -> usize {
        self.values_len
    }
    /// Elements of the sub-box (those a refresh reads).
    pub fn elements(&self) -> usize {
        self.elements.len()
    }

    /// Overwrites `values` (the slab's rows, on the device) for the whole
    /// beam's per-element `modulus` (its sub-box part is checked and uploaded).
    pub fn assemble(&mut self, modulus: &[f64], values: &mut CudaSlice<f64>) -> Result<(), AssemblyError> {
        if modulus.len() != self.n_elements {
            return Err(FemError::ModulusLength {
                got: modulus.len(),
                expected: self.n_elements,
            }
            .into());
        }
        match &mut self.asm {
            Some(asm) => asm.assemble_rows(
                Modulus::Host(&modulus[self.elements.clone()]),
                self.rows.clone(),
                values,
            ),
            None => Ok(()),
        }
    }

    /// Bytes of the sub-box's maps on the device.
    pub fn bytes(&self) -> usize {
        self.asm.as_ref().map_or(0, DeviceAssembler::bytes)
    }
}

/// The CPU's rule (`Assembler::check_modulus`): one finite positive value per element.
fn check_modulus(m: &[f64], n_elements: usize) -> Result<(), FemError> {
    if m.len() != n_elements {
        return Err(FemError::ModulusLength {
            got: m.len(),
            expected: n_elements,
        });
    }
    if let Some((element, &value)) = m.iter().enumerate().find(|(_, v)| !(v.is_finite() && **v > 0.0)) {
        return Err(FemError::BadModulus { element, value });
    }
    Ok(())
}
