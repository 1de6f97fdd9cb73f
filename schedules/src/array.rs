//! The storage of a schedule's arrays: owned by the inspector that built them,
//! or borrowed from a memory-mapped schedule file (a zero-copy load).
//!
//! Executors only read schedules, through `&[T]` ([`std::ops::Deref`]); they
//! cannot tell the two apart. A borrowed array keeps its file's mapping alive,
//! so a loaded schedule outlives the [`MappedBundle`] handle it came from.
use crate::file::MappedBundle;
use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

/// A read-only array of plain integers or floats.
pub struct SharedArray<T: 'static> {
    repr: Repr<T>,
}

enum Repr<T: 'static> {
    Owned(Vec<T>),
    Mapped {
        /// Keeps the mapping (or heap buffer) `ptr` points into alive.
        _keep: Arc<MappedBundle>,
        ptr: *const T,
        len: usize,
    },
}

// SAFETY: a mapped array is an immutable view into memory owned by the
// `Arc<MappedBundle>` it holds (a read-only mapping or a heap buffer that is
// never mutated after validation); sharing or sending it is as safe as sharing
// `&[T]` with `T: Sync`.
unsafe impl<T: Sync> Send for SharedArray<T> {}
unsafe impl<T: Sync> Sync for SharedArray<T> {}

impl<T> SharedArray<T> {
    /// A view of `slice`, which must lie inside `bundle`'s backing memory
    /// (e.g. a [`crate::file::RecordView`] array of that bundle).
    pub fn mapped(bundle: &Arc<MappedBundle>, slice: &[T]) -> Self {
        assert!(
            bundle.contains(slice.as_ptr().cast(), std::mem::size_of_val(slice)),
            "a mapped schedule array must point into its bundle"
        );
        Self {
            repr: Repr::Mapped {
                _keep: bundle.clone(),
                ptr: slice.as_ptr(),
                len: slice.len(),
            },
        }
    }

    /// Whether the elements live in a schedule file's mapping.
    pub fn is_mapped(&self) -> bool {
        matches!(self.repr, Repr::Mapped { .. })
    }
}

impl<T> Deref for SharedArray<T> {
    type Target = [T];
    #[inline]
    fn deref(&self) -> &[T] {
        match &self.repr {
            Repr::Owned(v) => v,
            // SAFETY: `ptr..ptr+len` was a valid, aligned `&[T]` into the
            // bundle's memory when constructed (checked in `mapped`), and the
            // `Arc` keeps that memory alive and unchanged.
            Repr::Mapped { ptr, len, .. } => unsafe { std::slice::from_raw_parts(*ptr, *len) },
        }
    }
}

impl<T> From<Vec<T>> for SharedArray<T> {
    fn from(v: Vec<T>) -> Self {
        Self { repr: Repr::Owned(v) }
    }
}

impl<T> Default for SharedArray<T> {
    fn default() -> Self {
        Vec::new().into()
    }
}

impl<T: Clone> Clone for SharedArray<T> {
    fn clone(&self) -> Self {
        match &self.repr {
            Repr::Owned(v) => v.clone().into(),
            Repr::Mapped { _keep, ptr, len } => Self {
                repr: Repr::Mapped {
                    _keep: _keep.clone(),
                    ptr: *ptr,
                    len: *len,
                },
            },
        }
    }
}

impl<T: PartialEq> PartialEq for SharedArray<T> {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl<T: fmt::Debug> fmt::Debug for SharedArray<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = if self.is_mapped() { "mapped" } else { "owned" };
        write!(f, "SharedArray({kind}, {} elements)", self.len())
    }
}
