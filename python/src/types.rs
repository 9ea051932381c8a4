//! Message types as Python sees them: `MessageType`, the description a typed channel is
//! created or connected with (built from a numpy dtype in `salias/_numpy.py`), and the
//! type a live channel recorded.

use pyo3::prelude::*;
use salias::message::{Field, MessageType as Described};

use crate::errors::{self, OrRaise};

/// A message type: its name, size, alignment, schema version and fields, fingerprinted as
/// `#[derive(SaliasMessage)]` fingerprints the Rust struct with the same fields, so that
/// `connect` checks a Python program against a Rust, C or C++ one.
#[pyclass(module = "salias", name = "MessageType", frozen, eq, hash)]
#[derive(Clone, PartialEq, Eq, Hash)]
pub(crate) struct MessageType {
    pub described: Described,
}

#[pymethods]
impl MessageType {
    /// Describes a type: `fields` are `(name, type_label, offset, size)` in offset order,
    /// covering every byte (name padding as a field); labels as the Rust derive writes
    /// them (`u64`, `f64`, `[u8;4]`, `[[f64;4];4]`, another struct's name).
    #[new]
    #[pyo3(signature = (name, size, align, fields, version = 0))]
    fn new(
        py: Python<'_>,
        name: String,
        size: usize,
        align: usize,
        fields: Vec<(String, String, usize, usize)>,
        version: u32,
    ) -> PyResult<Self> {
        let fields = (fields.into_iter())
            .map(|(name, ty, offset, size)| Field::new(name, ty, offset, size))
            .collect();
        let described = Described::new(name, size, align, version, fields).or_raise(py)?;
        Ok(MessageType { described })
    }

    /// The type's name (part of its fingerprint).
    #[getter]
    fn name(&self) -> &str {
        self.described.name()
    }

    /// Bytes per message.
    #[getter]
    fn size(&self) -> usize {
        self.described.size()
    }

    /// Alignment in bytes.
    #[getter]
    fn align(&self) -> usize {
        self.described.align()
    }

    /// The schema version (`#[salias(version = N)]` in Rust).
    #[getter]
    fn version(&self) -> u32 {
        self.described.schema_version()
    }

    /// The fields as `(name, type_label, offset, size)`, in offset order.
    #[getter]
    fn fields(&self) -> Vec<(String, String, usize, usize)> {
        (self.described.fields().iter())
            .map(|f| (f.name.clone(), f.ty.clone(), f.offset, f.size))
            .collect()
    }

    /// The hash of the name, size, alignment and fields that `connect` compares.
    #[getter]
    fn layout_hash(&self) -> u64 {
        self.described.layout_hash()
    }

    fn __repr__(&self) -> String {
        format!("<salias.MessageType {}>", self.described)
    }

    fn __str__(&self) -> String {
        self.described.to_string()
    }
}

/// The message type the channel `name` records, with its fields: what a program that does
/// not know the type connects with (and `salias.dtype` lays out). `None` for a raw channel.
#[pyfunction]
pub(crate) fn recorded_type(py: Python<'_>, name: &str) -> PyResult<Option<MessageType>> {
    let status = salias::status::channel_status(name).or_raise(py)?;
    let Some(recorded) = status.recorded_type else {
        return Ok(None);
    };
    match recorded.message_type() {
        Some(described) => Ok(Some(MessageType { described })),
        None => Err(errors::named(
            py,
            "FieldsNotRecorded",
            format!(
                "channel {name:?} carries {recorded}, but its creator recorded no field table (its field names exceed the control block's 2 KiB, or the table is damaged); describe the type with salias.MessageType"
            ),
        )),
    }
}
