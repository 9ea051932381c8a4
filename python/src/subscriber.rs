//! Subscribers: copying receives (`bytes`), zero-copy `Message` views that cannot outlive
//! their frame, and batches drained into a numpy array's rows without a Python object per
//! message.

use std::ffi::c_int;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Instant;

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList};
use salias_c::dynamic::{Failure, SubscriberOps, View};
use salias_c::{SALIAS_ERROR_BUSY, SALIAS_TIMED_OUT};

use pyo3::intern;

use crate::buffers::Exported;
use crate::channel::closed;
use crate::errors::{self, OrRaise};
use crate::publisher::{deadline, next_slice, rows_of};
use crate::types::MessageType;

/// A subscriber slot of a channel, held until `close()` or collection.
#[pyclass(module = "salias._salias", name = "Subscriber")]
pub(crate) struct Subscriber {
    /// As `Publisher::ops`: only ever used through `&mut self`.
    ops: Mutex<Option<Box<dyn SubscriberOps>>>,
    /// A typed channel's message type.
    #[pyo3(get)]
    message_type: Option<MessageType>,
    /// A `Message` view holds this subscriber's current frame.
    holding: bool,
}

/// A received message's place and numbers, without its pointer's `!Send`.
#[derive(Clone, Copy)]
struct Frame {
    address: usize,
    len: usize,
    publisher_slot: usize,
    sequence: u64,
    gap_before: u64,
}

impl From<View> for Frame {
    fn from(view: View) -> Frame {
        Frame {
            address: view.data as usize,
            len: view.len,
            publisher_slot: view.publisher_slot,
            sequence: view.sequence,
            gap_before: view.gap_before,
        }
    }
}

impl Frame {
    /// The payload.
    ///
    /// # Safety
    /// The subscriber must still hold the frame (not released it), or be inside the drain
    /// callback that produced it.
    unsafe fn bytes<'a>(self) -> &'a [u8] {
        // SAFETY: the caller's contract: the frame is held, so the payload stays in place
        // and no publisher reuses it.
        unsafe { std::slice::from_raw_parts(self.address as *const u8, self.len) }
    }
}

impl Subscriber {
    pub(crate) fn new(ops: Box<dyn SubscriberOps>, message_type: Option<MessageType>) -> Self {
        Subscriber {
            ops: Mutex::new(Some(ops)),
            message_type,
            holding: false,
        }
    }

    #[inline(always)]
    fn ops(&mut self, py: Python<'_>) -> PyResult<&mut dyn SubscriberOps> {
        match self.ops.get_mut().unwrap_or_else(|poisoned| poisoned.into_inner()) {
            Some(ops) => Ok(ops.as_mut()),
            None => Err(closed(py, "subscriber")),
        }
    }

    /// A held frame copied out and released.
    fn copied<'py>(&mut self, py: Python<'py>, frame: Frame) -> PyResult<Bound<'py, PyBytes>> {
        // SAFETY: just received and not yet released.
        let bytes = PyBytes::new(py, unsafe { frame.bytes() });
        self.ops(py)?.release().or_raise(py)?;
        Ok(bytes)
    }

    /// The next message, waiting up to `timeout` seconds with the GIL released.
    fn wait(&mut self, py: Python<'_>, timeout: Option<f64>) -> PyResult<Frame> {
        let deadline = deadline(py, timeout)?;
        let ops = self.ops(py)?;
        if let Some(view) = ops.try_recv().or_raise(py)? {
            return Ok(view.into());
        }
        loop {
            let slice = next_slice(deadline);
            let received = py.detach(|| ops.recv(Some(slice)).map(Frame::from));
            match received {
                Ok(frame) => return Ok(frame),
                Err(failure) if failure.code == SALIAS_TIMED_OUT => {}
                Err(failure) => return Err(errors::raise(py, failure)),
            }
            py.check_signals()?;
            if deadline.is_some_and(|deadline| Instant::now() >= deadline) {
                return Err(errors::raise_code(
                    py,
                    SALIAS_TIMED_OUT,
                    "no message arrived before the timeout",
                ));
            }
        }
    }

    fn refuse_while_holding(&self, py: Python<'_>) -> PyResult<()> {
        if self.holding {
            return Err(errors::raise_code(
                py,
                SALIAS_ERROR_BUSY,
                "a Message view holds this subscriber's current message; release it (or leave its `with` block) first",
            ));
        }
        Ok(())
    }
}

#[pymethods]
impl Subscriber {
    /// The next message as `bytes` (a copy), or `None` if there is none now.
    fn try_recv<'py>(&mut self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyBytes>>> {
        match self.ops(py)?.try_recv().or_raise(py)? {
            Some(view) => self.copied(py, view.into()).map(Some),
            None => Ok(None),
        }
    }

    /// The next message as `bytes` (a copy), waiting up to `timeout` seconds (`None`: as
    /// long as it takes); raises `TimedOut`. The GIL is released while waiting, and Ctrl-C
    /// interrupts the wait.
    #[pyo3(signature = (timeout = None))]
    fn recv<'py>(&mut self, py: Python<'py>, timeout: Option<f64>) -> PyResult<Bound<'py, PyBytes>> {
        let frame = self.wait(py, timeout)?;
        self.copied(py, frame)
    }

    /// The next message in place, or `None`: a `Message` view of the frame in shared
    /// memory, valid until it is released (its `with` block ends). No other receive is
    /// possible on this subscriber while it is held.
    fn try_recv_message(slf: Bound<'_, Self>) -> PyResult<Option<Message>> {
        let py = slf.py();
        let mut this = slf.borrow_mut();
        this.refuse_while_holding(py)?;
        let Some(view) = this.ops(py)?.try_recv().or_raise(py)? else {
            return Ok(None);
        };
        this.holding = true;
        drop(this);
        Ok(Some(Message::new(slf.unbind(), view.into())))
    }

    /// The next message in place, waiting up to `timeout` seconds: see `try_recv_message`.
    #[pyo3(signature = (timeout = None))]
    fn recv_message(slf: Bound<'_, Self>, timeout: Option<f64>) -> PyResult<Message> {
        let py = slf.py();
        let mut this = slf.borrow_mut();
        this.refuse_while_holding(py)?;
        let frame = this.wait(py, timeout)?;
        this.holding = true;
        drop(this);
        Ok(Message::new(slf.unbind(), frame))
    }

    /// Up to `max` waiting messages as a list of `bytes` (copies), without waiting.
    #[pyo3(signature = (max = 1024))]
    fn drain<'py>(&mut self, py: Python<'py>, max: usize) -> PyResult<Bound<'py, PyList>> {
        let list = PyList::empty(py);
        let mut failed = None;
        self.ops(py)?
            .drain(max, &mut |view| {
                // SAFETY: inside the drain callback that produced the view.
                let bytes = unsafe { Frame::from(view).bytes() };
                if let Err(error) = list.append(PyBytes::new(py, bytes)) {
                    failed.get_or_insert(error);
                }
            })
            .or_raise(py)?;
        match failed {
            Some(error) => Err(error),
            None => Ok(list),
        }
    }

    /// Copies up to `len(array) - start` waiting messages into the rows of `array` from
    /// row `start`, without waiting: how many. `array` is a writable C-contiguous numpy
    /// array of the channel's dtype (`salias.dtype`); no Python object is made per
    /// message.
    #[pyo3(signature = (array, start = 0))]
    fn drain_into(&mut self, py: Python<'_>, array: &Bound<'_, PyAny>, start: usize) -> PyResult<usize> {
        let row_size = rows_of(py, array, self.message_type.as_ref())?;
        let exported = Exported::of(array, true)?;
        let capacity = (exported.len() / row_size).saturating_sub(start);
        let base = exported.as_mut_ptr();
        let mut row = start;
        let drained = self
            .ops(py)?
            .drain(capacity, &mut |view| {
                // A typed channel's messages are its type's size, which `rows_of` checked
                // the rows against; the `min` keeps a copy in its row regardless.
                let len = view.len.min(row_size);
                // SAFETY: row `row` < start + capacity lies inside the export, which is
                // writable and contiguous until `exported` drops; the payload is `view.len`
                // readable bytes inside the callback; one is shared memory, the other a
                // Python object's, so they do not overlap.
                unsafe { std::ptr::copy_nonoverlapping(view.data, base.add(row * row_size), len) };
                row += 1;
            })
            .or_raise(py)?;
        drop(exported);
        Ok(drained)
    }

    /// Awaits the next message as `bytes` through the readiness descriptor and the running
    /// asyncio loop (`loop.add_reader`). Cancel-safe: a cancelled wait has taken nothing.
    fn recv_async<'py>(slf: Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        let py = slf.py();
        py.import(intern!(py, "salias._aio"))?
            .getattr(intern!(py, "recv_async"))?
            .call1((slf,))
    }

    /// The readiness descriptor: readable while a receive may find a message (for
    /// `select`, `selectors`, and asyncio's `add_reader`, as `recv_async` uses it).
    fn fileno(&mut self, py: Python<'_>) -> PyResult<i32> {
        self.ops(py)?.readiness_fd().or_raise(py)
    }

    /// Messages received through this slot.
    #[getter]
    fn received(&mut self, py: Python<'_>) -> PyResult<u64> {
        self.ops(py)?.received().or_raise(py)
    }

    /// The slot this subscriber holds.
    #[getter]
    fn slot(&mut self, py: Python<'_>) -> PyResult<usize> {
        self.ops(py)?.slot().or_raise(py)
    }

    /// Publishers now attached.
    #[getter]
    fn live_publishers(&mut self, py: Python<'_>) -> PyResult<u32> {
        self.ops(py)?.live_publishers().or_raise(py)
    }

    /// Gives the slot back; later use raises `Closed`. Refused while a `Message` view
    /// holds a frame.
    fn close(&mut self, py: Python<'_>) -> PyResult<()> {
        self.refuse_while_holding(py)?;
        drop(
            self.ops
                .get_mut()
                .unwrap_or_else(|poisoned| poisoned.into_inner())
                .take(),
        );
        Ok(())
    }
}

/// A received message in place: a read-only buffer (`memoryview(message)`,
/// `numpy.frombuffer(message, dtype)`) over the frame in shared memory, valid until
/// `release()` or the end of its `with` block. After that every access raises `Released`;
/// releasing while a memoryview of it is still alive raises `BufferError`, as closing an
/// `mmap` does, so no Python code can read a frame a publisher may reuse.
#[pyclass(module = "salias._salias", name = "Message", frozen)]
pub(crate) struct Message {
    subscriber: Py<Subscriber>,
    frame: Frame,
    released: AtomicBool,
    /// Buffers exported and not yet given back.
    exports: AtomicUsize,
}

impl Message {
    fn new(subscriber: Py<Subscriber>, frame: Frame) -> Self {
        Message {
            subscriber,
            frame,
            released: AtomicBool::new(false),
            exports: AtomicUsize::new(0),
        }
    }

    fn live(&self, py: Python<'_>) -> PyResult<Frame> {
        if self.released.load(Ordering::Relaxed) {
            return Err(errors::named(
                py,
                "Released",
                "the message was released; its frame may already hold another message. Copy what you need (bytes(message)) before releasing".to_owned(),
            ));
        }
        Ok(self.frame)
    }

    /// Gives the frame back to the subscriber (the GIL is held: one thread at a time).
    fn give_back(&self, py: Python<'_>) -> Result<(), Failure> {
        if self.released.load(Ordering::Relaxed) {
            return Ok(());
        }
        let subscriber = self.subscriber.bind(py);
        let Ok(mut subscriber) = subscriber.try_borrow_mut() else {
            return Err(Failure::new(
                SALIAS_ERROR_BUSY,
                "the subscriber is in use by another call; release the message after it returns",
            ));
        };
        self.released.store(true, Ordering::Relaxed);
        subscriber.holding = false;
        match subscriber
            .ops
            .get_mut()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
        {
            Some(ops) => ops.release().map(drop),
            None => Ok(()),
        }
    }
}

#[pymethods]
impl Message {
    /// Releases the frame: the subscriber receives again, and this view raises `Released`
    /// from now on. Idempotent. Raises `BufferError` while a memoryview of it is alive.
    fn release(&self, py: Python<'_>) -> PyResult<()> {
        let exports = self.exports.load(Ordering::Relaxed);
        if exports != 0 && !self.released.load(Ordering::Relaxed) {
            return Err(pyo3::exceptions::PyBufferError::new_err(format!(
                "{exports} buffer(s) of this message are still alive (a memoryview or numpy array); release them (del, memoryview.release()) before the message"
            )));
        }
        self.give_back(py).or_raise(py)
    }

    fn __enter__(slf: Bound<'_, Self>) -> Bound<'_, Self> {
        slf
    }

    fn __exit__(
        &self,
        py: Python<'_>,
        _kind: Option<&Bound<'_, PyAny>>,
        _value: Option<&Bound<'_, PyAny>>,
        _traceback: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<bool> {
        self.release(py)?;
        Ok(false)
    }

    /// A copy of the payload.
    fn __bytes__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let frame = self.live(py)?;
        // SAFETY: not released (checked), so the subscriber still holds the frame.
        Ok(PyBytes::new(py, unsafe { frame.bytes() }))
    }

    fn __len__(&self, py: Python<'_>) -> PyResult<usize> {
        Ok(self.live(py)?.len)
    }

    /// The publisher slot that sent it.
    #[getter]
    fn publisher_slot(&self, py: Python<'_>) -> PyResult<usize> {
        Ok(self.live(py)?.publisher_slot)
    }

    /// Ordered channels: its global sequence number (0 on FIFO channels).
    #[getter]
    fn sequence(&self, py: Python<'_>) -> PyResult<u64> {
        Ok(self.live(py)?.sequence)
    }

    /// Ordered channels: sequence numbers lost just before it, taken by a publisher that
    /// died before committing them (0 on FIFO channels).
    #[getter]
    fn gap_before(&self, py: Python<'_>) -> PyResult<u64> {
        Ok(self.live(py)?.gap_before)
    }

    /// Whether the frame was released.
    #[getter]
    fn released(&self) -> bool {
        self.released.load(Ordering::Relaxed)
    }

    /// Exports the payload read-only, counted so that `release` can refuse while it lives.
    ///
    /// # Safety
    /// `view` is the `Py_buffer` Python asks to fill (the buffer protocol's contract).
    unsafe fn __getbuffer__(slf: Bound<'_, Self>, view: *mut pyo3::ffi::Py_buffer, flags: c_int) -> PyResult<()> {
        let py = slf.py();
        let this = slf.get();
        let frame = this.live(py)?;
        // SAFETY: `view` is Python's to fill; `PyBuffer_FillInfo` takes a new reference to
        // `slf` (kept until `__releasebuffer__`), so the message and the subscriber it
        // holds outlive the export, and `release` refuses while the count is non-zero: the
        // frame stays held as long as anyone can read it. It refuses a writable request.
        let filled = unsafe {
            pyo3::ffi::PyBuffer_FillInfo(
                view,
                slf.as_ptr(),
                frame.address as *mut std::ffi::c_void,
                frame.len as pyo3::ffi::Py_ssize_t,
                1,
                flags,
            )
        };
        if filled != 0 {
            return Err(PyErr::fetch(py));
        }
        this.exports.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    /// # Safety
    /// Called by Python once per successful `__getbuffer__`.
    unsafe fn __releasebuffer__(&self, _view: *mut pyo3::ffi::Py_buffer) {
        self.exports.fetch_sub(1, Ordering::Relaxed);
    }

    fn __repr__(&self) -> String {
        if self.released.load(Ordering::Relaxed) {
            return "<salias.Message released>".to_owned();
        }
        let frame = self.frame;
        format!(
            "<salias.Message {} bytes from publisher {} seq {}>",
            frame.len, frame.publisher_slot, frame.sequence
        )
    }
}

impl Drop for Message {
    fn drop(&mut self) {
        // A view collected without release gives its frame back (no export can be alive:
        // each holds a reference to the message).
        if !self.released.load(Ordering::Relaxed) {
            Python::attach(|py| {
                let _ = self.give_back(py);
            });
        }
    }
}
