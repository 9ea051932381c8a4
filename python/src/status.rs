//! Functions on names: a channel's status as a dict, remove, remove_stale, list.

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use salias::status::{ChannelStatus, SlotHolder};

use crate::errors::OrRaise;

/// What the channel `name` looks like now, without connecting: its kind, type, geometry,
/// owner, and every publisher and subscriber slot (as `salias show --json` prints it).
#[pyfunction]
pub(crate) fn status<'py>(py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyDict>> {
    let status = salias::status::channel_status(name).or_raise(py)?;
    to_dict(py, &status)
}

fn holder<'py>(py: Python<'py>, holder: SlotHolder) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    let (state, pid) = match holder {
        SlotHolder::Free => ("free", None),
        SlotHolder::Alive { pid } => ("alive", Some(pid)),
        SlotHolder::Dead { pid } => ("dead", Some(pid)),
    };
    dict.set_item("state", state)?;
    dict.set_item("pid", pid)?;
    Ok(dict)
}

fn to_dict<'py>(py: Python<'py>, status: &ChannelStatus) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    dict.set_item("name", &status.name)?;
    dict.set_item("initialised", status.initialised)?;
    dict.set_item("kind", &status.kind)?;
    let message_type = match &status.recorded_type {
        Some(recorded) => {
            let described = PyDict::new(py);
            described.set_item("name", &recorded.name)?;
            described.set_item("size", recorded.size)?;
            described.set_item("align", recorded.align)?;
            described.set_item("version", recorded.schema_version)?;
            described.set_item("layout_hash", recorded.layout_hash)?;
            let fields = (recorded.fields.as_ref())
                .map(|fields| -> Vec<_> { fields.iter().map(|f| (&f.name, &f.ty, f.offset, f.size)).collect() });
            described.set_item("fields", fields)?;
            Some(described)
        }
        None => None,
    };
    dict.set_item("message_type", message_type)?;
    dict.set_item("capacity", status.capacity)?;
    dict.set_item("max_message_size", status.max_message_size)?;
    dict.set_item("owner", holder(py, status.owner)?)?;
    dict.set_item("stale", status.is_stale())?;
    dict.set_item("sequence", status.sequence)?;
    let publishers = PyList::empty(py);
    for (slot, publisher) in status.publishers.iter().enumerate() {
        let entry = PyDict::new(py);
        entry.set_item("slot", slot)?;
        entry.set_item("holder", holder(py, publisher.holder)?)?;
        entry.set_item("position", publisher.position)?;
        entry.set_item("published", publisher.published)?;
        entry.set_item("backpressured", publisher.backpressured)?;
        entry.set_item("pending", publisher.pending)?;
        publishers.append(entry)?;
    }
    dict.set_item("publishers", publishers)?;
    let subscribers = PyList::empty(py);
    for (slot, subscriber) in status.subscribers.iter().enumerate() {
        let entry = PyDict::new(py);
        entry.set_item("slot", slot)?;
        entry.set_item("holder", holder(py, subscriber.holder)?)?;
        entry.set_item("cursors", &subscriber.cursors)?;
        entry.set_item("backlog_bytes", subscriber.backlog_bytes)?;
        entry.set_item("kind", subscriber.kind.to_string())?;
        entry.set_item("demoted", subscriber.demoted)?;
        entry.set_item("missed", subscriber.missed)?;
        subscribers.append(entry)?;
    }
    dict.set_item("subscribers", subscribers)?;
    dict.set_item("owner_uid", status.owner_uid)?;
    dict.set_item("mode", status.mode)?;
    Ok(dict)
}

/// Removes the channel's names whatever state it is in; processes that have it open keep
/// working, new connects raise `NotFound`.
#[pyfunction]
pub(crate) fn remove(py: Python<'_>, name: &str) -> PyResult<()> {
    salias::remove(name).or_raise(py)
}

/// Removes the channel only if its owner died without removing it: whether it did.
#[pyfunction]
pub(crate) fn remove_stale(py: Python<'_>, name: &str) -> PyResult<bool> {
    salias::channel::remove_stale(name).or_raise(py)
}

/// The names of the channels there are.
#[pyfunction]
pub(crate) fn list_channels(py: Python<'_>) -> PyResult<Vec<String>> {
    salias::status::list_channels().or_raise(py)
}
