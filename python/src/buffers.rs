//! Python objects as bytes: `bytes` directly, anything else through the buffer protocol
//! as plain contiguous bytes (whatever its format: a structured numpy array, an
//! `array.array`, a memoryview).

use std::ffi::c_int;
use std::mem::MaybeUninit;

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::errors;

/// An exported buffer, released on drop (with the GIL held, as every holder here is).
pub(crate) struct Exported {
    view: Box<ffi::Py_buffer>,
}

impl Exported {
    /// The contiguous bytes of `data`, writable if `writable`, or the error saying what to
    /// pass instead.
    pub(crate) fn of(data: &Bound<'_, PyAny>, writable: bool) -> PyResult<Exported> {
        let mut view = Box::new(MaybeUninit::<ffi::Py_buffer>::zeroed());
        // PyBUF_SIMPLE: contiguous bytes, no format (or the exporter refuses).
        let flags: c_int = if writable {
            ffi::PyBUF_WRITABLE
        } else {
            ffi::PyBUF_SIMPLE
        };
        // SAFETY: `view` is writable storage for a `Py_buffer`, which the call fills on
        // success; `data` is a live object and this thread holds the GIL.
        let status = unsafe { ffi::PyObject_GetBuffer(data.as_ptr(), view.as_mut_ptr(), flags) };
        if status != 0 {
            let cause = PyErr::fetch(data.py());
            let what = if writable { "a writable" } else { "a" };
            let error = errors::named(
                data.py(),
                "InvalidArgument",
                format!(
                    "expected {what} C-contiguous buffer (bytes, bytearray, memoryview, numpy array), got {}: {cause}",
                    type_name(data)
                ),
            );
            return Err(error);
        }
        // SAFETY: filled by the successful call above.
        let view = unsafe { Box::from_raw(Box::into_raw(view).cast::<ffi::Py_buffer>()) };
        Ok(Exported { view })
    }

    /// The bytes.
    pub(crate) fn bytes(&self) -> &[u8] {
        match self.len() {
            0 => &[],
            // SAFETY: a PyBUF_SIMPLE export is `len` contiguous bytes at `buf`, valid while
            // exported (until `self` drops); Python code cannot resize an exported object,
            // and this thread holds the GIL for every use of the slice.
            len => unsafe { std::slice::from_raw_parts(self.view.buf.cast::<u8>(), len) },
        }
    }

    /// Where a writable export's bytes start.
    pub(crate) fn as_mut_ptr(&self) -> *mut u8 {
        self.view.buf.cast()
    }

    /// Its length in bytes.
    pub(crate) fn len(&self) -> usize {
        self.view.len as usize
    }
}

impl Drop for Exported {
    fn drop(&mut self) {
        // SAFETY: exported by `of` and released once, here; every `Exported` is dropped
        // by code that holds the GIL.
        unsafe { ffi::PyBuffer_Release(&mut *self.view) };
    }
}

/// Calls `f` with the bytes of `data`: a `bytes` object's own, or any C-contiguous
/// buffer's.
#[inline(always)]
pub(crate) fn with_bytes<T>(data: &Bound<'_, PyAny>, f: impl FnOnce(&[u8]) -> PyResult<T>) -> PyResult<T> {
    if let Ok(bytes) = data.cast::<PyBytes>() {
        return f(bytes.as_bytes());
    }
    let exported = Exported::of(data, false)?;
    f(exported.bytes())
}

fn type_name(data: &Bound<'_, PyAny>) -> String {
    (data.get_type().name())
        .map(|name| name.to_string())
        .unwrap_or_else(|_| "this object".to_owned())
}
