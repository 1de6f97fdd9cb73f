//! Block-CSR matrices resident on the device.
use crate::{CudaError, Device};
use cudarc::driver::CudaSlice;
use ptap_sparse::{BlockCsr, BlockPattern};

/// A block-CSR matrix on the device: `u32` row pointers and block columns, the
/// block row of every stored block (the merge-path SpMV's segment keys), and
/// the row-major block values in pattern order.
pub struct DeviceBlockCsr {
    pub nrows: usize,
    pub ncols: usize,
    pub br: usize,
    pub bc: usize,
    pub nnzb: usize,
    /// Blocks in the longest row.
    pub max_row_blocks: usize,
    /// Whether some row stores no block (the SpMV then writes those rows
    /// before its launch: the kernel writes only rows that have blocks).
    pub has_empty_rows: bool,
    pub row_ptr: CudaSlice<u32>,
    pub col_idx: CudaSlice<u32>,
    pub block_row: CudaSlice<u32>,
    pub values: CudaSlice<f64>,
}

impl DeviceBlockCsr {
    /// Uploads pattern and values (counted under the device's current phase).
    pub fn upload(dev: &Device, m: &BlockCsr) -> Result<Self, CudaError> {
        let mut d = Self::upload_pattern(dev, m.pattern(), m.block_shape().0, m.block_shape().1)?;
        if !m.values().is_empty() {
            dev.upload_into(m.values(), &mut d.values)?;
        }
        Ok(d)
    }

    /// Uploads a pattern with zeroed values of `br x bc` blocks.
    pub fn upload_pattern(dev: &Device, p: &BlockPattern, br: usize, bc: usize) -> Result<Self, CudaError> {
        let nnzb = p.nnzb();
        if nnzb.saturating_mul(br * bc) > u32::MAX as usize / 2 {
            return Err(CudaError::TooLarge {
                what: "a matrix's values".into(),
                n: nnzb * br * bc,
            });
        }
        use rayon::prelude::*;
        // The longest and the shortest row, in one parallel pass over the row pointers.
        let (max_row_blocks, min_row_blocks) = p
            .row_ptr()
            .par_windows(2)
            .with_min_len(1 << 14)
            .map(|w| (w[1] - w[0], w[1] - w[0]))
            .reduce(|| (0, usize::MAX), |a, b| (a.0.max(b.0), a.1.min(b.1)));
        let row_ptr = dev.upload_u32("row pointers", p.row_ptr())?;
        // Built on the device from the row pointers: its bytes never cross the bus.
        let block_row = dev.zeros::<u32>(nnzb)?;
        crate::product::device_block_rows(dev, &row_ptr, p.nrows(), &block_row)?;
        Ok(Self {
            nrows: p.nrows(),
            ncols: p.ncols(),
            br,
            bc,
            nnzb,
            max_row_blocks,
            has_empty_rows: p.nrows() > 0 && min_row_blocks == 0,
            row_ptr,
            col_idx: dev.upload(p.col_idx())?,
            block_row,
            values: dev.zeros(nnzb * br * bc)?,
        })
    }

    /// Replaces the values (a host-to-device copy of the values only).
    pub fn set_values(&mut self, dev: &Device, values: &[f64]) -> Result<(), CudaError> {
        assert_eq!(values.len(), self.nnzb * self.br * self.bc, "values length");
        if !values.is_empty() {
            dev.upload_into(values, &mut self.values)?;
        }
        Ok(())
    }

    /// The values, copied to the host.
    pub fn download_values(&self, dev: &Device) -> Result<Vec<f64>, CudaError> {
        if self.nnzb == 0 {
            return Ok(Vec::new());
        }
        dev.download(&self.values)
    }

    pub fn scalar_rows(&self) -> usize {
        self.nrows * self.br
    }
    pub fn scalar_cols(&self) -> usize {
        self.ncols * self.bc
    }
    /// Bytes of values and indices on the device.
    pub fn bytes(&self) -> usize {
        self.nnzb * (self.br * self.bc * 8 + 8) + (self.nrows + 1) * 4
    }
}
