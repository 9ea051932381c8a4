//! What a channel carries: fixed-layout typed messages ([`Message`], derived with
//! `#[derive(SaliasMessage)]`, or described at run time as a [`MessageType`]) or
//! variable-length raw bytes ([`Bytes`]).

use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

mod described;

pub use described::{Field, MAX_DESCRIBED_ALIGN, MessageType};

use crate::fnv;
use crate::kind::Mode;
use crate::wire::frame::Shape;
use derived::{DerivedMessage, FieldLayout};

/// A plain-data message type that can be copied byte for byte between processes.
///
/// Its plain-data guarantees are zerocopy's, required as supertraits: `FromBytes` (every
/// bit pattern of `size_of::<Self>()` bytes is a valid value, so whatever a peer writes
/// reads as some `Self`), `IntoBytes` (no padding: every byte sent is initialised),
/// `Immutable` (no interior mutability behind a shared view) and `KnownLayout`. Derive
/// those with zerocopy (`zerocopy = { version = "0.8", features = ["derive"] }`, also
/// re-exported as [`salias::zerocopy`](crate::zerocopy)) next to `SaliasMessage`, which
/// adds the fingerprint and refuses, with a sentence saying what to use instead, the field
/// types that could never cross a process boundary.
///
/// # A safe trait
///
/// `Message` promises nothing zerocopy's traits do not already prove: salias's reads and
/// writes of a `T` rely on `size_of::<T>()`, `align_of::<T>()` and the four supertraits
/// only. The one other item, `FINGERPRINT`, is what `connect` compares to decide whether
/// two processes mean the same type; a channel's frame length and alignment are checked
/// against the real `size_of` and `align_of` separately, and every received frame's
/// length against `size_of::<T>()`, so a fingerprint that lied would let two different
/// plain-data types share a channel (wrong values, as from a buggy peer), never an
/// out-of-bounds or invalid read. It is implemented for exactly the types that derive
/// `SaliasMessage` (whose fingerprint is computed from the fields, never written by hand)
/// and zerocopy's four traits.
///
/// ```
/// use salias::{Message, SaliasMessage};
/// use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};
///
/// #[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout, Clone, Copy)]
/// #[repr(C)]
/// #[salias(version = 2)]
/// struct Order {
///     id: u64,
///     price: f64,
///     quantity: u32,
///     side: u8,
///     _pad: [u8; 3], // explicit: `IntoBytes` refuses padding
/// }
/// assert_eq!(Order::FINGERPRINT.size, 24);
/// assert_eq!(Order::FINGERPRINT.schema_version, 2);
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a salias message type",
    label = "this type cannot be sent through a salias channel",
    note = "add `#[derive(salias::SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout)]` (the last four from zerocopy) and `#[repr(C)]` to `{Self}`, or use `salias::Bytes` for raw byte messages"
)]
pub trait Message: FromBytes + IntoBytes + Immutable + KnownLayout + Sized + Send + Sync + 'static {
    /// The type's identity across processes, checked when a process connects.
    const FINGERPRINT: Fingerprint;
    /// The fields the fingerprint was computed from ([`MessageType::of`] describes them).
    #[doc(hidden)]
    const FIELDS: &'static [FieldLayout];
}

// Not recommended in diagnostics: a type that is not a message is then reported with
// `Message`'s (and `Payload`'s) own words, not as a missing hidden `DerivedMessage`.
#[diagnostic::do_not_recommend]
impl<T> Message for T
where
    T: DerivedMessage + FromBytes + IntoBytes + Immutable + KnownLayout + Send + Sync + 'static,
{
    const FINGERPRINT: Fingerprint = {
        let fingerprint = <T as DerivedMessage>::FINGERPRINT;
        // The derive computes both from the type; a connect check relies on them.
        assert!(fingerprint.size as usize == size_of::<T>() && fingerprint.align as usize == align_of::<T>());
        fingerprint
    };
    const FIELDS: &'static [FieldLayout] = <T as DerivedMessage>::FIELDS;
}

/// Marker for a raw byte channel: variable-length frames up to the configured maximum.
///
/// ```
/// # let name = format!("doc-bytes-{}", std::process::id());
/// let channel = salias::Channel::<salias::Bytes>::create(&salias::Config::new(&name))?;
/// channel.publisher()?.offer(b"any length, up to max_message_size")?;
/// # Ok::<(), salias::Error>(())
/// ```
#[derive(Debug)]
pub enum Bytes {}

/// What identifies a message type across independently compiled processes.
///
/// ```
/// use salias::{Message, SaliasMessage};
/// use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};
/// #[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout, Clone, Copy)]
/// #[repr(C)]
/// struct Tick { seq: u64 }
/// let fingerprint = Tick::FINGERPRINT;
/// assert_eq!((fingerprint.name, fingerprint.size, fingerprint.align), ("Tick", 8, 8));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Fingerprint {
    /// The type's name, without its crate path unless overridden with `#[salias(name = "...")]`.
    pub name: &'static str,
    /// `size_of` the type.
    pub size: u32,
    /// `align_of` the type.
    pub align: u32,
    /// A hash of the field names, field types, offsets and sizes.
    pub layout_hash: u64,
    /// The user's schema version, `#[salias(version = N)]`, 0 by default.
    pub schema_version: u32,
}

const fn fnv_u64(hash: u64, value: u64) -> u64 {
    fnv::hash(hash, &value.to_le_bytes())
}

/// The layout hash's start: the type's name, size and alignment.
const fn hash_type(name: &str, size: usize, align: usize) -> u64 {
    let hash = fnv::hash(fnv::OFFSET, name.as_bytes());
    fnv_u64(fnv_u64(hash, size as u64), align as u64)
}

/// The layout hash after one more field: its name, type label, offset and size. The one
/// formula for derived ([`Fingerprint::of_fields`]) and described ([`MessageType`]) types.
const fn hash_field(hash: u64, name: &str, ty: &str, offset: usize, size: usize) -> u64 {
    let mut hash = fnv::hash(hash, name.as_bytes());
    hash = fnv::hash(hash, b":");
    hash = fnv::hash(hash, ty.as_bytes());
    hash = fnv_u64(hash, offset as u64);
    fnv_u64(hash, size as u64)
}

impl Fingerprint {
    /// Builds a fingerprint at compile time from a type's fields; used by the derive.
    #[doc(hidden)]
    pub const fn of_fields(
        name: &'static str,
        size: usize,
        align: usize,
        fields: &[FieldLayout],
        schema_version: u32,
    ) -> Fingerprint {
        let mut hash = hash_type(name, size, align);
        let mut i = 0;
        while i < fields.len() {
            let field = &fields[i];
            hash = hash_field(hash, field.name, field.ty, field.offset, field.size);
            i += 1;
        }
        Fingerprint {
            name,
            size: size as u32,
            align: align as u32,
            layout_hash: hash,
            schema_version,
        }
    }

    /// The fingerprint of a raw byte channel.
    pub const BYTES: Fingerprint = Fingerprint {
        name: "bytes",
        size: 0,
        align: 1,
        layout_hash: 0,
        schema_version: 0,
    };
}

impl Fingerprint {
    /// A human-readable description, with `name` standing for the type name.
    pub(crate) fn describe(&self, name: &str) -> String {
        if self.layout_hash == 0 && self.size == 0 {
            return "raw bytes".to_owned();
        }
        format!(
            "`{name}` (schema v{}, {} bytes, align {}, layout {:016x})",
            self.schema_version, self.size, self.align, self.layout_hash
        )
    }
}

/// What a channel can carry: every [`Message`] type, and [`Bytes`].
///
/// Sealed: implemented by salias only.
///
/// ```
/// use salias::{message::Payload, SaliasMessage};
/// use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};
/// #[derive(SaliasMessage, FromBytes, IntoBytes, Immutable, KnownLayout, Clone, Copy)]
/// #[repr(C)]
/// struct Tick { seq: u64 }
/// fn one_message_size<T: Payload>() -> Option<usize> { T::FIXED_LEN }
/// assert_eq!(one_message_size::<Tick>(), Some(8));
/// assert_eq!(one_message_size::<salias::Bytes>(), None);
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be carried by a salias channel",
    label = "not a salias message type",
    note = "derive `salias::SaliasMessage` and zerocopy's `FromBytes`, `IntoBytes`, `Immutable` and `KnownLayout` on a `#[repr(C)]` struct, or use `salias::Bytes` for raw byte messages"
)]
pub trait Payload: sealed::Sealed + 'static {
    /// The payload length of every message, or `None` for variable-length raw bytes.
    const FIXED_LEN: Option<usize>;
    /// Required alignment of the payload inside the ring.
    const ALIGN: usize;
    /// The type's identity across processes.
    const FINGERPRINT: Fingerprint;
    /// Its fields (none for raw bytes), which a creator records for tools.
    #[doc(hidden)]
    const FIELDS: &'static [FieldLayout];
}

mod sealed {
    pub trait Sealed {}
    impl<T: super::Message> Sealed for T {}
    impl Sealed for super::Bytes {}
}

impl<T: Message> Payload for T {
    const FIXED_LEN: Option<usize> = Some(size_of::<T>());
    const ALIGN: usize = align_of::<T>();
    const FINGERPRINT: Fingerprint = <T as Message>::FINGERPRINT;
    const FIELDS: &'static [FieldLayout] = <T as Message>::FIELDS;
}

impl Payload for Bytes {
    const FIXED_LEN: Option<usize> = None;
    const ALIGN: usize = 1;
    const FINGERPRINT: Fingerprint = Fingerprint::BYTES;
    const FIELDS: &'static [FieldLayout] = &[];
}

/// The frames of a channel of `T` in mode `M`: the wire layer's [`Shape`] for them, known
/// at compile time.
pub(crate) struct Frame<T: Payload, M: Mode>(core::marker::PhantomData<(fn() -> T, M)>);

impl<T: Payload, M: Mode> Frame<T, M> {
    /// The frames of a channel of `T`. Raw bytes have no length of their own, so this is a
    /// raw channel's shape; a raw handle of a typed channel uses [`Frame::in_channel`].
    pub(crate) const SHAPE: Shape = Shape::new(M::ORDERED, T::ALIGN, T::FIXED_LEN);
    /// Frames start at multiples of this; at least 8 so the commit word is always aligned.
    pub(crate) const ALIGN: usize = Self::SHAPE.align();
    /// Offset of the payload from the frame start.
    pub(crate) const HEADER: usize = Self::SHAPE.header();

    /// Bytes a frame with `payload` bytes occupies in the ring.
    #[inline(always)]
    pub(crate) const fn len(payload: usize) -> usize {
        Self::SHAPE.len(payload)
    }

    /// The frames a handle of `T` reads and writes in a channel whose messages are all
    /// `channel_fixed_len` bytes (a typed channel) or of any length: `T`'s own for a
    /// message type (the channel's, which the handle's connection checked); for raw bytes
    /// the channel's, since an Ordered frame of a typed channel stores no length (a FIFO
    /// frame always stores it: the same shape either way).
    pub(crate) const fn in_channel(channel_fixed_len: Option<usize>) -> Shape {
        Self::known_or(Shape::new(M::ORDERED, T::ALIGN, channel_fixed_len))
    }

    /// [`Frame::SHAPE`] where it is all a handle can meet (a message type, or FIFO: a
    /// constant the hot paths fold in), else `in_channel`, the shape a raw handle was
    /// given when it connected.
    #[inline(always)]
    pub(crate) const fn known_or(in_channel: Shape) -> Shape {
        if T::FIXED_LEN.is_some() || !M::ORDERED {
            Self::SHAPE
        } else {
            in_channel
        }
    }
}

/// What the derive's expansion names, through `salias::__private` only: not API, and
/// outside the public `message` module so that diagnostics name them by that path.
pub(crate) mod derived {
    use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

    use super::Fingerprint;

    /// What `#[derive(SaliasMessage)]` implements: the fingerprint it computed from the
    /// fields. Not public API; `Message` follows from it and zerocopy's traits.
    #[doc(hidden)]
    pub trait DerivedMessage {
        /// The fingerprint computed by the derive.
        const FINGERPRINT: Fingerprint;
        /// The fields it was computed from.
        const FIELDS: &'static [FieldLayout];
    }

    /// What the derive asks of the type itself, checked at the derive so that a type missing
    /// zerocopy's derives gets one error there that says which to add.
    #[doc(hidden)]
    #[diagnostic::on_unimplemented(
        message = "`{Self}` does not implement zerocopy's `FromBytes`, `IntoBytes`, `Immutable` and `KnownLayout`, which a salias message needs",
        label = "a salias message must also be plain data by zerocopy's derives",
        note = "derive them next to `SaliasMessage`: `#[derive(SaliasMessage, zerocopy::FromBytes, zerocopy::IntoBytes, zerocopy::Immutable, zerocopy::KnownLayout)]`, with `zerocopy = {{ version = \"0.8\", features = [\"derive\"] }}` in Cargo.toml",
        note = "if they are derived already, zerocopy's own errors for them say what to fix (padding, or a field that is not plain data)"
    )]
    pub trait PlainData {}

    #[diagnostic::do_not_recommend]
    impl<T: FromBytes + IntoBytes + Immutable + KnownLayout> PlainData for T {}

    /// Compiles only for a type with zerocopy's four traits; the derive calls it.
    #[doc(hidden)]
    pub const fn assert_plain_data<T: PlainData>() {}

    /// One field as the derive describes it to [`Fingerprint::of_fields`].
    #[doc(hidden)]
    #[derive(Clone, Copy, Debug)]
    pub struct FieldLayout {
        pub name: &'static str,
        pub ty: &'static str,
        pub offset: usize,
        pub size: usize,
    }
}
