//! Every exported function's way in: arguments checked, panics caught, and a failure's
//! sentence kept for `salias_last_error()`.

use std::cell::RefCell;
use std::ffi::{CStr, CString, c_char};
use std::panic::{AssertUnwindSafe, catch_unwind};

use salias::{Error, PublishError, ReceiveError};

use crate::codes::{self, SALIAS_ERROR_INVALID_ARGUMENT, SALIAS_ERROR_PANIC, salias_code};

thread_local! {
    /// The sentence of this thread's last failure.
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

/// Why a call failed: its code, and the sentence `salias_last_error()` returns. Boxed, so
/// that a hot path's `Result<_, Failure>` is two words returned in registers.
pub struct Failure(Box<Why>);

/// What a [`Failure`] holds.
pub struct Why {
    /// The result code (`SALIAS_ERROR_…`, or `SALIAS_TIMED_OUT` from a receive).
    pub code: salias_code,
    /// What was wrong and how to fix it.
    pub message: String,
}

impl std::ops::Deref for Failure {
    type Target = Why;
    fn deref(&self) -> &Why {
        &self.0
    }
}

impl std::ops::DerefMut for Failure {
    fn deref_mut(&mut self) -> &mut Why {
        &mut self.0
    }
}

impl Failure {
    /// A failure with `code` and its sentence.
    #[cold]
    pub fn new(code: salias_code, message: impl Into<String>) -> Failure {
        Failure(Box::new(Why {
            code,
            message: message.into(),
        }))
    }

    /// An invalid argument (`SALIAS_ERROR_INVALID_ARGUMENT`).
    pub fn argument(message: impl Into<String>) -> Failure {
        Failure::new(SALIAS_ERROR_INVALID_ARGUMENT, message)
    }
}

impl From<Error> for Failure {
    fn from(error: Error) -> Failure {
        Failure::new(codes::of_error(&error), error.to_string())
    }
}

impl From<PublishError> for Failure {
    fn from(error: PublishError) -> Failure {
        Failure::new(codes::of_publish(error), error.to_string())
    }
}

impl From<ReceiveError> for Failure {
    fn from(error: ReceiveError) -> Failure {
        Failure::new(codes::of_receive(error), error.to_string())
    }
}

pub(crate) type Outcome = Result<salias_code, Failure>;

/// Runs an exported function's body: its code, or the failure's code with the sentence
/// kept for this thread; a panic is caught (unwinding into C is undefined behaviour) and
/// reported as `SALIAS_ERROR_PANIC`.
#[inline(always)]
pub(crate) fn call(function: &'static str, body: impl FnOnce() -> Outcome) -> salias_code {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(code)) => code,
        Ok(Err(failure)) => failed(function, failure),
        Err(payload) => panicked(function, payload),
    }
}

#[cold]
#[inline(never)]
fn failed(function: &'static str, failure: Failure) -> salias_code {
    set_last_error(format!("{function}: {}", failure.message));
    failure.code
}

#[cold]
#[inline(never)]
fn panicked(function: &'static str, payload: Box<dyn std::any::Any + Send>) -> salias_code {
    let what = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".to_owned());
    set_last_error(format!(
        "{function} panicked inside salias ({what}); this is a bug: please report it. The handle may be unusable"
    ));
    SALIAS_ERROR_PANIC
}

fn set_last_error(message: String) {
    // A sentence never holds a NUL; if one did, it is cut there rather than lost.
    let message = CString::new(message).unwrap_or_else(|error| {
        let end = error.nul_position();
        let mut bytes = error.into_vec();
        bytes.truncate(end);
        CString::new(bytes).unwrap_or_default()
    });
    LAST_ERROR.with(|last| *last.borrow_mut() = message);
}

/// A NUL-terminated UTF-8 string argument.
///
/// # Safety
/// `text` is null or points to a NUL-terminated string that stays valid for `'a`.
pub(crate) unsafe fn string<'a>(text: *const c_char, what: &str) -> Result<&'a str, Failure> {
    if text.is_null() {
        return Err(Failure::argument(format!("{what} is a null pointer")));
    }
    // SAFETY: not null, and the caller promises a NUL-terminated string valid for 'a.
    let text = unsafe { CStr::from_ptr(text) };
    text.to_str()
        .map_err(|_| Failure::argument(format!("{what} is not UTF-8: {}", text.to_string_lossy())))
}

/// The place an out-parameter points to.
///
/// # Safety
/// `place` is null or points to a writable, aligned `T` the caller owns for `'a` (the
/// header's contract for every out-parameter).
pub(crate) unsafe fn out<'a, T>(place: *mut T, what: &str) -> Result<&'a mut T, Failure> {
    // SAFETY: the caller's contract.
    unsafe { place.as_mut() }.ok_or_else(|| Failure::argument(format!("{what} is a null pointer")))
}

/// The sentence saying why this thread's last failing call failed: valid until the next
/// failing call on this thread; an empty string, never null, before any failure.
#[unsafe(no_mangle)]
pub extern "C" fn salias_last_error() -> *const c_char {
    LAST_ERROR.with(|last| last.borrow().as_ptr())
}

/// Copies the sentence of this thread's last failure into `buffer` (`len` bytes, always
/// NUL-terminated when `len > 0`, cut if too long) and returns its full length without the
/// NUL, as `snprintf` does.
///
/// # Safety
/// `buffer` is null with `len` 0, or points to `len` writable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn salias_last_error_copy(buffer: *mut c_char, len: usize) -> usize {
    LAST_ERROR.with(|last| {
        let last = last.borrow();
        let bytes = last.as_bytes();
        if !buffer.is_null() && len > 0 {
            let copied = bytes.len().min(len - 1);
            // SAFETY: the caller gives `len` writable bytes at `buffer`; `copied + 1 <= len`.
            unsafe {
                std::ptr::copy_nonoverlapping(bytes.as_ptr(), buffer.cast::<u8>(), copied);
                buffer.add(copied).write(0);
            }
        }
        bytes.len()
    })
}
