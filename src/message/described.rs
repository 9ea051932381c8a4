//! [`MessageType`]: a message type described at run time, for programs that cannot derive
//! [`Message`](super::Message) — C, C++ and Python processes, and tools — fingerprinted
//! exactly as `#[derive(SaliasMessage)]` fingerprints a Rust struct with the same fields,
//! so that `connect` checks them against each other as it checks two Rust processes.

use std::fmt;

use super::{Fingerprint, Message};
use crate::error::{Error, Result};
use crate::wire::layout::MAX_TYPE_NAME_LEN;

/// One field of a [`MessageType`]: its name, its type as the Rust derive labels it, and
/// where it lies.
///
/// The type label is the field's Rust type with whitespace removed and only the last path
/// segment kept: `u8`…`u64`, `i8`…`i64`, `f32`, `f64`, arrays as `[u8;16]` or
/// `[[f64;4];4]`, and another struct by its name.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Field {
    /// The field's name (a tuple struct's fields are `0`, `1`, …).
    pub name: String,
    /// The field's type label.
    pub ty: String,
    /// Byte offset of the field in the message.
    pub offset: usize,
    /// Bytes the field occupies.
    pub size: usize,
}

impl Field {
    /// A field called `name` of type label `ty` at `offset`, `size` bytes long.
    pub fn new(name: impl Into<String>, ty: impl Into<String>, offset: usize, size: usize) -> Field {
        Field {
            name: name.into(),
            ty: ty.into(),
            offset,
            size,
        }
    }
}

/// A message type described at run time: its name, size, alignment, schema version and
/// fields. A channel created or connected with one
/// ([`Channel::create_typed`](crate::Channel::create_typed),
/// [`connect_typed`](crate::Channel::connect_typed)) carries messages of exactly its size,
/// and is checked at connect against Rust handles of the `#[derive(SaliasMessage)]` struct
/// with the same fields, and against other described types, as two Rust processes are.
///
/// ```
/// use salias::message::{Field, MessageType};
/// use salias::{Message, SaliasMessage};
/// use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};
///
/// #[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout, Clone, Copy)]
/// #[repr(C)]
/// #[salias(version = 2)]
/// struct Quote {
///     instrument: u64,
///     bid: f64,
///     ask: f64,
/// }
///
/// // What a C program declaring `struct Quote { uint64_t instrument; double bid, ask; }` says.
/// let described = MessageType::new("Quote", 24, 8, 2, vec![
///     Field::new("instrument", "u64", 0, 8),
///     Field::new("bid", "f64", 8, 8),
///     Field::new("ask", "f64", 16, 8),
/// ])?;
/// assert_eq!(described, MessageType::of::<Quote>());
/// assert_eq!(described.layout_hash(), Quote::FINGERPRINT.layout_hash);
/// # Ok::<(), salias::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct MessageType {
    name: String,
    size: usize,
    align: usize,
    schema_version: u32,
    fields: Vec<Field>,
    layout_hash: u64,
}

/// Largest alignment a described type may have: frames of raw-byte handles are aligned to
/// 8 bytes, and a described type travels through one.
pub const MAX_DESCRIBED_ALIGN: usize = 8;

impl MessageType {
    /// Describes a message type, checking that a channel can carry it: a name of 1 to 64
    /// bytes; an alignment that is a power of two up to [`MAX_DESCRIBED_ALIGN`]; a size
    /// that is a multiple of it; fields in offset order that cover every byte exactly once
    /// (no padding — name it, as the Rust derive requires); field names and type labels
    /// that are not empty, and labels without whitespace.
    pub fn new(
        name: impl Into<String>,
        size: usize,
        align: usize,
        schema_version: u32,
        fields: Vec<Field>,
    ) -> Result<MessageType> {
        let name = name.into();
        let invalid = |reason: String| Error::InvalidMessageType {
            name: name.clone(),
            reason,
        };
        if name.is_empty() || name.len() > MAX_TYPE_NAME_LEN {
            return Err(invalid(format!(
                "its name is {} bytes long; give it a name of 1 to {MAX_TYPE_NAME_LEN} bytes",
                name.len()
            )));
        }
        if name.contains('\0') {
            return Err(invalid("its name contains a NUL byte".to_owned()));
        }
        if !align.is_power_of_two() || align > MAX_DESCRIBED_ALIGN {
            return Err(invalid(format!(
                "its alignment {align} is not a power of two up to {MAX_DESCRIBED_ALIGN}; types aligned to more travel only between Rust processes that derive them"
            )));
        }
        if size > u32::MAX as usize || !size.is_multiple_of(align) {
            return Err(invalid(format!(
                "its size {size} is not a multiple of its alignment {align} below 4 GiB, as a C or Rust struct's size is"
            )));
        }
        let mut covered = 0;
        for field in &fields {
            if field.name.is_empty() || field.ty.is_empty() || field.ty.contains(char::is_whitespace) {
                return Err(invalid(format!(
                    "field {:?} of type {:?}: a field needs a name and a type label without whitespace (as `u64` or `[u8;16]`)",
                    field.name, field.ty
                )));
            }
            if field.offset != covered {
                let reason = if field.offset > covered {
                    format!(
                        "bytes {covered}..{} before field {:?} are padding; declare them as a field (e.g. `uint8_t _pad[{}]`), as the Rust derive requires, so no uninitialised byte is sent",
                        field.offset,
                        field.name,
                        field.offset - covered
                    )
                } else {
                    format!(
                        "field {:?} at offset {} overlaps the field before it, which ends at {covered}; list the fields in offset order",
                        field.name, field.offset
                    )
                };
                return Err(invalid(reason));
            }
            covered = field.offset.saturating_add(field.size);
            if covered > size {
                return Err(invalid(format!(
                    "field {:?} ends at byte {covered}, past the type's {size} bytes",
                    field.name
                )));
            }
        }
        if covered != size {
            return Err(invalid(format!(
                "bytes {covered}..{size} after the last field are padding; declare them as a field (e.g. `uint8_t _pad[{}]`), as the Rust derive requires",
                size - covered
            )));
        }
        let layout_hash = layout_hash(&name, size, align, &fields);
        Ok(MessageType {
            name,
            size,
            align,
            schema_version,
            fields,
            layout_hash,
        })
    }

    /// The description of a Rust message type, as its derive computed it.
    pub fn of<T: Message>() -> MessageType {
        let fingerprint = T::FINGERPRINT;
        MessageType {
            name: fingerprint.name.to_owned(),
            size: fingerprint.size as usize,
            align: fingerprint.align as usize,
            schema_version: fingerprint.schema_version,
            fields: T::FIELDS
                .iter()
                .map(|f| Field::new(f.name, f.ty, f.offset, f.size))
                .collect(),
            layout_hash: fingerprint.layout_hash,
        }
    }

    /// The type's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Bytes every message occupies.
    pub fn size(&self) -> usize {
        self.size
    }

    /// The type's alignment in bytes.
    pub fn align(&self) -> usize {
        self.align
    }

    /// The user's schema version.
    pub fn schema_version(&self) -> u32 {
        self.schema_version
    }

    /// The fields, in offset order.
    pub fn fields(&self) -> &[Field] {
        &self.fields
    }

    /// The hash of the name, size, alignment and fields that `connect` compares.
    pub fn layout_hash(&self) -> u64 {
        self.layout_hash
    }

    /// The fingerprint a channel records, with `name` standing for the type's name (a
    /// `Fingerprint` names its type with a `&'static str`).
    pub(crate) fn fingerprint(&self) -> Fingerprint {
        Fingerprint {
            name: "",
            size: self.size as u32,
            align: self.align as u32,
            layout_hash: self.layout_hash,
            schema_version: self.schema_version,
        }
    }
}

impl fmt::Display for MessageType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.fingerprint().describe(&self.name))
    }
}

/// The derive's layout hash ([`Fingerprint::of_fields`]) of fields known at run time.
fn layout_hash(name: &str, size: usize, align: usize, fields: &[Field]) -> u64 {
    let mut hash = super::hash_type(name, size, align);
    for field in fields {
        hash = super::hash_field(hash, &field.name, &field.ty, field.offset, field.size);
    }
    hash
}
