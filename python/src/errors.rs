//! salias's failures as Python exceptions: one class per error kind, defined in
//! `salias/_errors.py` (where a class can also derive from `TimeoutError` or `ValueError`),
//! chosen here by the C ABI's result code and raised with salias's own sentence.

use std::ffi::CStr;

use pyo3::prelude::*;
use salias_c::dynamic::Failure;
use salias_c::salias_code;

/// The exception for `failure`: the class `salias._errors` names for its code.
pub(crate) fn raise(py: Python<'_>, failure: Failure) -> PyErr {
    raise_code(py, failure.code, &failure.message)
}

/// The exception for result code `code` with `message`.
#[cold]
pub(crate) fn raise_code(py: Python<'_>, code: salias_code, message: &str) -> PyErr {
    // SAFETY: `salias_code_name` returns a static NUL-terminated string for every code.
    let name = unsafe { CStr::from_ptr(salias_c::salias_code_name(code)) }.to_string_lossy();
    let made = py
        .import("salias._errors")
        .and_then(|errors| errors.getattr("error_for")?.call1((code, name.as_ref(), message)));
    match made {
        Ok(exception) => PyErr::from_value(exception),
        Err(error) => error,
    }
}

/// An exception of class `class` of `salias._errors`, for failures that have no code in
/// the C ABI (they happen in the Python binding itself).
#[cold]
pub(crate) fn named(py: Python<'_>, class: &str, message: String) -> PyErr {
    let made = py
        .import("salias._errors")
        .and_then(|errors| errors.getattr(class)?.call1((message,)));
    match made {
        Ok(exception) => PyErr::from_value(exception),
        Err(error) => error,
    }
}

/// `Result<T, Failure>` in Python's terms.
pub(crate) trait OrRaise<T> {
    fn or_raise(self, py: Python<'_>) -> PyResult<T>;
}

impl<T> OrRaise<T> for Result<T, Failure> {
    #[inline(always)]
    fn or_raise(self, py: Python<'_>) -> PyResult<T> {
        self.map_err(|failure| raise(py, failure))
    }
}

impl<T> OrRaise<T> for Result<T, salias::Error> {
    #[inline(always)]
    fn or_raise(self, py: Python<'_>) -> PyResult<T> {
        self.map_err(|error| raise(py, Failure::from(error)))
    }
}
