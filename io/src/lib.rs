//! Matrix Market and PETSc binary files (being written).
