//! Channels: create and connect (a kind by number, as the C ABI names it), and the handle
//! that makes publishers and subscribers.

use std::sync::Mutex;
use std::time::Duration;

use pyo3::prelude::*;
use salias::Config;
use salias::config::HugePages;
use salias_c::dynamic::{ChannelOps, Expect, Failure, connect_kind, create_kind};

use crate::errors::OrRaise;
use crate::publisher::Publisher;
use crate::subscriber::Subscriber;
use crate::types::MessageType;

/// A channel handle. The creator's removes the channel's name when it is closed or
/// collected (unless created with `keep_on_drop`); publishers and subscribers made from it
/// keep working after it is gone.
#[pyclass(module = "salias._salias", name = "Channel", frozen)]
pub(crate) struct Channel {
    /// `None` once closed.
    ops: Mutex<Option<Box<dyn ChannelOps>>>,
    #[pyo3(get)]
    name: String,
    #[pyo3(get)]
    kind: u32,
    /// A typed channel's type.
    #[pyo3(get)]
    message_type: Option<MessageType>,
}

impl Channel {
    fn with<T>(&self, py: Python<'_>, f: impl FnOnce(&dyn ChannelOps) -> T) -> PyResult<T> {
        let ops = self.ops.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        match ops.as_deref() {
            Some(ops) => Ok(f(ops)),
            None => Err(closed(py, "channel")),
        }
    }
}

/// The error for a handle used after `close()`.
pub(crate) fn closed(py: Python<'_>, what: &str) -> PyErr {
    crate::errors::named(
        py,
        "Closed",
        format!("the {what} was closed; make a new one from its channel"),
    )
}

#[pymethods]
impl Channel {
    /// Claims a publisher slot (`NoFreeSlot` when every one is held).
    fn publisher(&self, py: Python<'_>) -> PyResult<Publisher> {
        let made = self.with(py, |ops| ops.publisher())?.or_raise(py)?;
        Ok(Publisher::new(made, self.message_type.clone()))
    }

    /// Claims a subscriber slot. A Fanout subscriber joins at the current end of every
    /// ring; an Mpsc one resumes where the previous subscriber stopped.
    fn subscriber(&self, py: Python<'_>) -> PyResult<Subscriber> {
        let made = self.with(py, |ops| ops.subscriber())?.or_raise(py)?;
        Ok(Subscriber::new(made, self.message_type.clone()))
    }

    /// Frees the slots of publishers and subscribers whose processes died:
    /// `(publishers, subscribers)` reaped.
    fn reap(&self, py: Python<'_>) -> PyResult<(u32, u32)> {
        let reaped = self.with(py, |ops| ops.reap())?;
        Ok((reaped.publishers, reaped.subscribers))
    }

    /// Bytes of ring per publisher.
    #[getter]
    fn capacity(&self, py: Python<'_>) -> PyResult<usize> {
        self.with(py, |ops| ops.capacity())
    }

    /// The largest message in bytes (a typed channel's: its type's size).
    #[getter]
    fn max_message_size(&self, py: Python<'_>) -> PyResult<usize> {
        self.with(py, |ops| ops.max_message_size())
    }

    /// Publisher slots.
    #[getter]
    fn publishers(&self, py: Python<'_>) -> PyResult<u32> {
        self.with(py, |ops| ops.publishers())
    }

    /// Subscriber slots.
    #[getter]
    fn subscribers(&self, py: Python<'_>) -> PyResult<u32> {
        self.with(py, |ops| ops.subscribers())
    }

    /// Whether this handle created the channel.
    #[getter]
    fn is_owner(&self, py: Python<'_>) -> PyResult<bool> {
        self.with(py, |ops| ops.is_owner())
    }

    /// Closes the handle (the creator's removes the name); later use raises `Closed`.
    fn close(&self) {
        let taken = self.ops.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).take();
        drop(taken);
    }
}

/// Creates a channel of kind `kind` (0 FifoMpsc, 1 FifoFanout, 2 OrderedMpsc,
/// 3 OrderedFanout), typed when `message_type` is given.
#[pyfunction]
#[pyo3(signature = (
    kind, name, *, message_type = None, capacity = 1 << 20, publishers = 1, subscribers = None,
    max_message_size = 0, publication_window = None, permissions = 0o600, keep_on_drop = false,
    tether_timeout = None, huge_pages = None, hugetlbfs_dir = None, numa_node = None
))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn create(
    py: Python<'_>,
    kind: u32,
    name: &str,
    message_type: Option<PyRef<'_, MessageType>>,
    capacity: usize,
    publishers: u32,
    subscribers: Option<u32>,
    max_message_size: usize,
    publication_window: Option<usize>,
    permissions: u32,
    keep_on_drop: bool,
    tether_timeout: Option<f64>,
    huge_pages: Option<&str>,
    hugetlbfs_dir: Option<&str>,
    numa_node: Option<u32>,
) -> PyResult<Channel> {
    let mut config = Config::new(name)
        .capacity(capacity)
        .publishers(publishers)
        .permissions(permissions)
        .keep_on_drop(keep_on_drop);
    if let Some(subscribers) = subscribers {
        config = config.subscribers(subscribers);
    }
    if let Some(window) = publication_window {
        config = config.publication_window(window);
    }
    if let Some(seconds) = tether_timeout {
        let timeout = Duration::try_from_secs_f64(seconds).map_err(|_| {
            invalid(
                py,
                format!("tether_timeout is {seconds}; give a positive number of seconds"),
            )
        })?;
        config = config.tether_timeout(timeout);
    }
    config = config.huge_pages(match huge_pages {
        None => HugePages::None,
        Some("2MB") => HugePages::Size2MB,
        Some("1GB") => HugePages::Size1GB,
        Some(other) => {
            return Err(invalid(
                py,
                format!("huge_pages is {other:?}; use None, \"2MB\" or \"1GB\""),
            ));
        }
    });
    if let Some(dir) = hugetlbfs_dir {
        config = config.hugetlbfs_dir(dir);
    }
    if let Some(node) = numa_node {
        config = config.numa_node(node);
    }
    let message_type = message_type.map(|t| t.clone());
    let described = message_type.as_ref().map(|t| &t.described);
    // Creating maps and populates the rings: no reason to hold other threads up.
    let ops = py
        .detach(|| create_kind(kind, &config, max_message_size, described))
        .or_raise(py)?;
    Ok(Channel {
        ops: Mutex::new(Some(ops)),
        name: name.to_owned(),
        kind,
        message_type,
    })
}

/// Connects to the channel `name` of kind `kind`, checking its message type: raw when
/// `message_type` is `None` (unless `any_type`, which takes any channel's messages as
/// bytes), else exactly that type (`TypeMismatch` otherwise).
#[pyfunction]
#[pyo3(signature = (kind, name, *, message_type = None, any_type = false))]
pub(crate) fn connect(
    py: Python<'_>,
    kind: u32,
    name: &str,
    message_type: Option<PyRef<'_, MessageType>>,
    any_type: bool,
) -> PyResult<Channel> {
    let message_type = message_type.map(|t| t.clone());
    let expect = match (&message_type, any_type) {
        (Some(_), true) => {
            return Err(invalid(py, "give message_type or any_type=True, not both".to_owned()));
        }
        (Some(t), false) => Expect::Typed(&t.described),
        (None, true) => Expect::AnyType,
        (None, false) => Expect::Raw,
    };
    let ops = connect_kind(kind, name, expect).or_raise(py)?;
    Ok(Channel {
        ops: Mutex::new(Some(ops)),
        name: name.to_owned(),
        kind,
        message_type,
    })
}

fn invalid(py: Python<'_>, message: String) -> PyErr {
    crate::errors::raise(py, Failure::argument(message))
}
