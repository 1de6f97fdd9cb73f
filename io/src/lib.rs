//! Matrix Market and PETSc binary files in and out, for block matrices,
//! vectors and near-null spaces.
//!
//! This crate is how ptap exchanges data with other codes: an operator `A` or a
//! prolongator `P` assembled elsewhere comes in as a [`BlockCsr`] with the block
//! shape given or inferred, hierarchies and solutions go out for inspection,
//! and a near-null space (rigid-body modes) can be taken from a file. [`fsio`]
//! is how every ptap file is opened and replaced (regular files only, atomic
//! writes), schedule files included.
//!
//! - **Matrix Market** text ([`read_matrix_market`], [`write_matrix_market`];
//!   [`read_mm_vector`], [`write_mm_vector`]; [`read_mm_dense`],
//!   [`write_mm_dense`]): `coordinate real|integer general|symmetric` matrices,
//!   `array` vectors and multi-column arrays. The writer records the block
//!   shape in a `%ptap block <br> <bc>` comment and prints values as the
//!   shortest decimal that reads back to the same bits, so round trips are
//!   exact.
//! - **PETSc binary** ([`read_petsc_mat`], [`write_petsc_mat`],
//!   [`read_petsc_vec`], [`read_petsc_vecs`], [`write_petsc_vec`],
//!   [`write_petsc_vecs`]): `MatView`/`VecView` files (big-endian, 32-bit
//!   indices, real double), the block size in the `<file>.info` options file.
//! - [`detect_format`], [`read_matrix`], [`read_vector`], [`read_near_null`]
//!   and [`read_coordinates`] take either format by content, so a command line
//!   needs one flag per input; [`write_vector`] picks it by extension.
//!
//! Conventions shared by every reader: scalar entries are grouped into
//! `br x bc` blocks and a block is stored when any of its scalars is in the
//! file (its other scalars become explicit zeros); duplicate entries are summed
//! in file order; NaN and infinite values are refused; the block shape, when
//! not given, comes from the file's own record or from [`infer_block_shape`].
//! Errors are [`IoError`]s whose messages name the file (and for text, the
//! 1-based line) and say what to do.

mod error;
pub mod fsio;
mod mm;
mod petsc;
mod scalar;

pub use error::IoError;
pub use mm::{
    read_matrix_market, read_mm_dense, read_mm_vector, write_matrix_market, write_mm_dense, write_mm_vector,
    SYMMETRY_TOLERANCE,
};
pub use petsc::{
    info_path, read_petsc_mat, read_petsc_mat_rows, read_petsc_vec, read_petsc_vec_range, read_petsc_vecs,
    write_petsc_mat, write_petsc_vec, write_petsc_vecs, PetscRows, MAT_FILE_CLASSID, VEC_FILE_CLASSID,
};
pub use ptap_sparse::infer_block_shape;
pub use ptap_sparse::BlockCsr;

use std::io::Read;
use std::path::Path;

/// How a reader chooses the block shape of a matrix.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BlockSpec {
    /// `br x bc` blocks; an error if they do not divide the scalar dimensions.
    Given(usize, usize),
    /// The shape the file records (`%ptap block` in Matrix Market,
    /// `-matload_block_size` or `#ptap block` in a PETSc `.info` file), else
    /// [`infer_block_shape`] of the scalar pattern.
    Infer,
}

/// The two file formats this crate reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileFormat {
    /// Text starting with `%%MatrixMarket`.
    MatrixMarket,
    /// Big-endian binary starting with PETSc's Mat or Vec class id.
    PetscBinary,
}

/// Up to `N` leading bytes of a file.
fn head<const N: usize>(path: &Path) -> Result<([u8; N], usize), IoError> {
    let (mut f, _) = mm::open(path)?;
    let mut buf = [0u8; N];
    let mut n = 0;
    while n < N {
        match f.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(IoError::os("read", path, e)),
        }
    }
    Ok((buf, n))
}

/// Tells Matrix Market from PETSc binary by the first bytes: the
/// `%%MatrixMarket` banner (any case), or the Mat or Vec class id (also in the
/// 64-bit-index layout, which the readers then refuse with a clear message).
pub fn detect_format(path: impl AsRef<Path>) -> Result<FileFormat, IoError> {
    let path = path.as_ref();
    let (b, n) = head::<16>(path)?;
    let banner = b"%%MatrixMarket";
    if n >= banner.len() && b[..banner.len()].eq_ignore_ascii_case(banner) {
        return Ok(FileFormat::MatrixMarket);
    }
    match petsc::first_class(&b[..n]) {
        Some(MAT_FILE_CLASSID | VEC_FILE_CLASSID) => Ok(FileFormat::PetscBinary),
        _ => Err(IoError::UnknownFormat {
            path: path.to_path_buf(),
        }),
    }
}

/// What a matrix file's header claims, read without the data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MatrixHeader {
    /// Scalar rows and columns.
    pub rows: usize,
    pub cols: usize,
    /// Entries the file stores (a `symmetric` Matrix Market file: one triangle).
    pub entries: usize,
}

/// Reads just the header of a matrix file in either format and checks its
/// claims against the file's size (a coordinate entry takes at least 6 bytes,
/// a PETSc Mat's arrays must fit, and rows and columns are bounded by the
/// entries), so that nothing is allocated for a header that lies.
pub fn read_matrix_header(path: impl AsRef<Path>) -> Result<MatrixHeader, IoError> {
    let path = path.as_ref();
    let (rows, cols, entries) = match detect_format(path)? {
        FileFormat::MatrixMarket => mm::read_mm_header(path)?,
        FileFormat::PetscBinary => petsc::read_mat_header(path)?,
    };
    Ok(MatrixHeader { rows, cols, entries })
}

/// Checks from the headers alone that `P^T A P` makes sense for the files
/// `a` and `p`: `A` square and `P` with as many rows as `A`. Call it before
/// reading either matrix, so a wrong pair costs two headers, not two matrices.
pub fn check_operand_headers(a: impl AsRef<Path>, p: impl AsRef<Path>) -> Result<(), IoError> {
    let (a, p) = (a.as_ref(), p.as_ref());
    let ha = read_matrix_header(a)?;
    let hp = read_matrix_header(p)?;
    if ha.rows != ha.cols {
        return Err(IoError::Shape {
            path: a.to_path_buf(),
            what: format!("A is {}x{}, not square; P^T A P needs a square A", ha.rows, ha.cols),
        });
    }
    if hp.rows != ha.rows {
        return Err(IoError::Shape {
            path: p.to_path_buf(),
            what: format!(
                "P has {} rows but A ({}) has {}; pass the prolongator of this A",
                hp.rows,
                a.display(),
                ha.rows
            ),
        });
    }
    Ok(())
}

/// Reads a matrix from either format ([`detect_format`] decides), with the
/// block shape chosen by `block`.
pub fn read_matrix(path: impl AsRef<Path>, block: BlockSpec) -> Result<BlockCsr, IoError> {
    let path = path.as_ref();
    match detect_format(path)? {
        FileFormat::MatrixMarket => read_matrix_market(path, block),
        FileFormat::PetscBinary => read_petsc_mat(path, block),
    }
}

/// Reads a near-null space as `(rows, modes, values)` with `values` row-major
/// `rows x modes` (the layout of `ptap_fem::rigid_body_modes`), from:
/// - a Matrix Market file: a dense array (`array`, or `coordinate` with absent
///   entries zero), one column per mode;
/// - a PETSc binary file of Vecs stored one after another, one Vec per mode
///   (all of one length);
/// - a PETSc binary Mat, one column per mode.
///
/// The format is detected by content. At least one mode and one row are required.
pub fn read_near_null(path: impl AsRef<Path>) -> Result<(usize, usize, Vec<f64>), IoError> {
    let path = path.as_ref();
    let (rows, modes, data) = match detect_format(path)? {
        FileFormat::MatrixMarket => read_mm_dense(path)?,
        FileFormat::PetscBinary => {
            let (b, n) = head::<8>(path)?;
            if petsc::first_class(&b[..n]) == Some(MAT_FILE_CLASSID) {
                let m = read_petsc_mat(path, BlockSpec::Given(1, 1))?;
                if m.ncols() > m.nrows() {
                    return Err(IoError::Shape {
                        path: path.to_path_buf(),
                        what: format!(
                            "the Mat is {}x{}, more modes (columns) than rows; save the near-null space with one \
                             column per mode",
                            m.nrows(),
                            m.ncols()
                        ),
                    });
                }
                let d = m.to_dense();
                (d.rows, d.cols, d.data)
            } else {
                let vecs = read_petsc_vecs(path)?;
                let rows = vecs[0].len();
                if let Some((k, v)) = vecs.iter().enumerate().find(|(_, v)| v.len() != rows) {
                    return Err(IoError::Shape {
                        path: path.to_path_buf(),
                        what: format!(
                            "Vec {} has {} entries but Vec 1 has {rows}; every near-null mode needs one entry per \
                             row, so save modes of equal length",
                            k + 1,
                            v.len()
                        ),
                    });
                }
                let modes = vecs.len();
                let mut data = vec![0.0; rows * modes];
                for (j, v) in vecs.iter().enumerate() {
                    for (i, &x) in v.iter().enumerate() {
                        data[i * modes + j] = x;
                    }
                }
                (rows, modes, data)
            }
        }
    };
    if rows == 0 || modes == 0 {
        return Err(IoError::Shape {
            path: path.to_path_buf(),
            what: format!("the near-null space is {rows}x{modes}; it needs at least one row and one mode (column)"),
        });
    }
    Ok((rows, modes, data))
}

/// Reads a vector from either format: a Matrix Market matrix with one column
/// (or one row; `array` or `coordinate`, absent entries zero) or a PETSc binary
/// Vec. The format is detected by content.
pub fn read_vector(path: impl AsRef<Path>) -> Result<Vec<f64>, IoError> {
    let path = path.as_ref();
    match detect_format(path)? {
        FileFormat::MatrixMarket => read_mm_vector(path),
        FileFormat::PetscBinary => read_petsc_vec(path),
    }
}

/// Writes a vector as PETSc binary when `path` ends in `.petsc` or `.bin`,
/// else as a Matrix Market `array` (values round-trip bitwise either way).
pub fn write_vector(path: impl AsRef<Path>, v: &[f64]) -> Result<(), IoError> {
    let path = path.as_ref();
    match path.extension().and_then(|e| e.to_str()) {
        Some("petsc" | "bin") => write_petsc_vec(path, v),
        _ => write_mm_vector(path, v),
    }
}

/// Reads nodal coordinates as `(nodes, dim, values)`, `values` row-major
/// `nodes x dim` with `dim` 2 or 3: a Matrix Market dense array with one
/// column per direction, a PETSc binary Mat of that shape, or a PETSc binary
/// Vec of interleaved `x0 y0 z0 x1 ...` whose dimension is the
/// `-vecload_block_size <dim>` line of `<file>.info` (PETSc's convention for
/// coordinate Vecs).
pub fn read_coordinates(path: impl AsRef<Path>) -> Result<(usize, usize, Vec<f64>), IoError> {
    let path = path.as_ref();
    let is_vec = detect_format(path)? == FileFormat::PetscBinary && {
        let (b, n) = head::<8>(path)?;
        petsc::first_class(&b[..n]) == Some(VEC_FILE_CLASSID)
    };
    let (nodes, dim, data) = if is_vec {
        let v = read_petsc_vec(path)?;
        let dim = petsc::info_vec_block_size(path)?.ok_or_else(|| IoError::Shape {
            path: path.to_path_buf(),
            what: format!(
                "a Vec of {} coordinates gives no dimension; write `-vecload_block_size 3` (or 2) into {}, or save the \
                 coordinates as a Matrix Market array with one column per direction",
                v.len(),
                info_path(path).display()
            ),
        })?;
        if dim == 0 || v.len() % dim != 0 {
            return Err(IoError::Shape {
                path: path.to_path_buf(),
                what: format!("{} coordinates do not split into nodes of {dim}", v.len()),
            });
        }
        (v.len() / dim, dim, v)
    } else {
        read_near_null(path)?
    };
    if dim != 2 && dim != 3 {
        return Err(IoError::Shape {
            path: path.to_path_buf(),
            what: format!("the coordinates have {dim} columns; give one column per direction, 2 or 3"),
        });
    }
    Ok((nodes, dim, data))
}
