//! Publishers: offer (refused on backpressure), send (waits for room), batches of bytes
//! or of a numpy array's rows.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use pyo3::prelude::*;
use salias_c::dynamic::PublisherOps;
use salias_c::{SALIAS_OK, SALIAS_TIMED_OUT};

use pyo3::intern;
use pyo3::types::PyBytes;

use crate::buffers::{Exported, with_bytes};
use crate::channel::closed;
use crate::errors::{self, OrRaise};
use crate::types::MessageType;

/// How long a blocking call waits without the GIL before it looks for a signal: what
/// bounds the delay of Ctrl-C.
pub(crate) const SIGNAL_CHECK: Duration = Duration::from_millis(50);

/// A publisher slot of a channel, held until `close()` or collection.
#[pyclass(module = "salias._salias", name = "Publisher")]
pub(crate) struct Publisher {
    /// `Mutex` for `Sync` only: every use is through `&mut self`, which PyO3's borrow
    /// flag makes exclusive, so it is never locked.
    ops: Mutex<Option<Box<dyn PublisherOps>>>,
    /// A typed channel's message type.
    #[pyo3(get)]
    message_type: Option<MessageType>,
}

impl Publisher {
    pub(crate) fn new(ops: Box<dyn PublisherOps>, message_type: Option<MessageType>) -> Self {
        Publisher {
            ops: Mutex::new(Some(ops)),
            message_type,
        }
    }

    #[inline(always)]
    fn ops(&mut self, py: Python<'_>) -> PyResult<&mut dyn PublisherOps> {
        match self.ops.get_mut().unwrap_or_else(|poisoned| poisoned.into_inner()) {
            Some(ops) => Ok(ops.as_mut()),
            None => Err(closed(py, "publisher")),
        }
    }
}

#[pymethods]
impl Publisher {
    /// Publishes `data` (bytes or any C-contiguous byte buffer) if the ring has room:
    /// `True`, or `False` on backpressure with nothing written. A typed channel's message
    /// must be exactly its type's size.
    fn offer(&mut self, py: Python<'_>, data: &Bound<'_, PyAny>) -> PyResult<bool> {
        let ops = self.ops(py)?;
        with_bytes(data, |bytes| {
            let code = ops.offer(bytes).or_raise(py)?;
            Ok(code == SALIAS_OK)
        })
    }

    /// Publishes `data`, waiting for room as long as `timeout` seconds (`None`: as long
    /// as it takes); raises `TimedOut` if there is none by then. The GIL is released while
    /// waiting, and Ctrl-C interrupts the wait.
    #[pyo3(signature = (data, timeout = None))]
    fn send(&mut self, py: Python<'_>, data: &Bound<'_, PyAny>, timeout: Option<f64>) -> PyResult<()> {
        let deadline = deadline(py, timeout)?;
        let ops = self.ops(py)?;
        with_bytes(data, |bytes| {
            if ops.offer(bytes).or_raise(py)? == SALIAS_OK {
                return Ok(());
            }
            loop {
                let slice = next_slice(deadline);
                // The bytes are copied while this thread still holds the buffer exported.
                let code = send_without_gil(py, ops, bytes, slice).or_raise(py)?;
                if code == SALIAS_OK {
                    return Ok(());
                }
                py.check_signals()?;
                if deadline.is_some_and(|deadline| Instant::now() >= deadline) {
                    return Err(errors::raise_code(
                        py,
                        SALIAS_TIMED_OUT,
                        "no room in the ring before the timeout; nothing was written",
                    ));
                }
            }
        })
    }

    /// Publishes as many of `messages` as fit, in order, as one batch: how many were
    /// published (0 on backpressure). `messages` is a sequence of bytes-like objects, or
    /// on a typed channel a numpy array of its dtype (`salias.dtype`) whose rows are the
    /// messages — from row `start` on, so that a partly published array can be resumed.
    #[pyo3(signature = (messages, start = 0))]
    fn offer_batch(&mut self, py: Python<'_>, messages: &Bound<'_, PyAny>, start: usize) -> PyResult<usize> {
        if messages.hasattr(intern!(py, "dtype"))? {
            let row_size = rows_of(py, messages, self.message_type.as_ref())?;
            let exported = Exported::of(messages, false)?;
            let rows: Vec<&[u8]> = exported.bytes().chunks_exact(row_size).skip(start).collect();
            return self.ops(py)?.offer_batch(&rows).or_raise(py);
        }
        let messages: Vec<Bound<'_, PyAny>> = messages.extract()?;
        let exported = (messages.iter().skip(start))
            .map(|message| match message.cast::<PyBytes>() {
                Ok(bytes) => Ok(Held::Bytes(bytes.as_bytes())),
                Err(_) => Exported::of(message, false).map(Held::Buffer),
            })
            .collect::<PyResult<Vec<_>>>()?;
        let slices: Vec<&[u8]> = exported.iter().map(Held::bytes).collect();
        self.ops(py)?.offer_batch(&slices).or_raise(py)
    }

    /// The readiness descriptor: readable while a refused offer may now find room (for
    /// `select`, `selectors` and asyncio's `add_writer`-style loops: watch it for reading).
    fn fileno(&mut self, py: Python<'_>) -> PyResult<i32> {
        self.ops(py)?.readiness_fd().or_raise(py)
    }

    /// Messages published through this slot.
    #[getter]
    fn published(&mut self, py: Python<'_>) -> PyResult<u64> {
        self.ops(py)?.published().or_raise(py)
    }

    /// The slot this publisher holds.
    #[getter]
    fn slot(&mut self, py: Python<'_>) -> PyResult<usize> {
        self.ops(py)?.slot().or_raise(py)
    }

    /// Subscribers now attached: `(tethered, lossy)`.
    #[getter]
    fn subscribers(&mut self, py: Python<'_>) -> PyResult<(u32, u32)> {
        let count = self.ops(py)?.subscribers().or_raise(py)?;
        Ok((count.tethered, count.lossy))
    }

    /// Gives the slot back; later use raises `Closed`.
    fn close(&mut self) {
        drop(
            self.ops
                .get_mut()
                .unwrap_or_else(|poisoned| poisoned.into_inner())
                .take(),
        );
    }
}

/// A message's bytes, kept exported while a batch is offered.
enum Held<'a> {
    Bytes(&'a [u8]),
    Buffer(Exported),
}

impl Held<'_> {
    fn bytes(&self) -> &[u8] {
        match self {
            Held::Bytes(bytes) => bytes,
            Held::Buffer(exported) => exported.bytes(),
        }
    }
}

/// The row size of `array` if it is a numpy array of the channel's type, checked by
/// `salias._numpy.row_size` (which says what differs otherwise).
pub(crate) fn rows_of(py: Python<'_>, array: &Bound<'_, PyAny>, message_type: Option<&MessageType>) -> PyResult<usize> {
    let Some(message_type) = message_type else {
        return Err(errors::named(
            py,
            "InvalidArgument",
            "a numpy array's rows are messages of a typed channel only; this channel is raw (offer bytes, or a list of them)".to_owned(),
        ));
    };
    py.import(intern!(py, "salias._numpy"))?
        .getattr(intern!(py, "row_size"))?
        .call1((array, message_type.clone()))?
        .extract()
}

fn send_without_gil(
    py: Python<'_>,
    ops: &mut dyn PublisherOps,
    bytes: &[u8],
    slice: Duration,
) -> Result<i32, salias_c::dynamic::Failure> {
    // The bytes' owner is kept alive and exported by the caller; other Python threads may
    // run meanwhile but cannot free it.
    py.detach(|| ops.send(bytes, Some(slice)))
}

/// When a wait of `timeout` seconds from now ends (`None`: never).
pub(crate) fn deadline(py: Python<'_>, timeout: Option<f64>) -> PyResult<Option<Instant>> {
    let Some(seconds) = timeout else { return Ok(None) };
    let timeout = Duration::try_from_secs_f64(seconds).map_err(|_| {
        errors::named(
            py,
            "InvalidArgument",
            format!("timeout is {seconds}; give a number of seconds ≥ 0, or None to wait as long as it takes"),
        )
    })?;
    Ok(Some(Instant::now() + timeout))
}

/// How long the next wait without the GIL may last.
pub(crate) fn next_slice(deadline: Option<Instant>) -> Duration {
    match deadline {
        None => SIGNAL_CHECK,
        Some(deadline) => deadline.saturating_duration_since(Instant::now()).min(SIGNAL_CHECK),
    }
}
