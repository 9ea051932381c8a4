//! The result codes every function returns, and the mapping from salias's errors to them.
//! Plain integers, not a Rust enum: a value C hands back is never trusted to be a variant.

use salias::{Error, PublishError, ReceiveError};

/// What a call did: `SALIAS_OK`, an outcome that is not a failure, or an error (details in
/// `salias_last_error()`).
#[allow(non_camel_case_types)]
pub type salias_code = i32;

/// The call did what it was asked.
pub const SALIAS_OK: salias_code = 0;
/// An offer found no room in the ring; nothing was written. Retry later, or send.
pub const SALIAS_BACKPRESSURED: salias_code = 1;
/// A non-blocking receive found no message.
pub const SALIAS_EMPTY: salias_code = 2;
/// A blocking call gave up after its timeout; nothing was received or written.
pub const SALIAS_TIMED_OUT: salias_code = 3;

/// A null pointer, an unknown kind or flag, or a string that is not UTF-8.
pub const SALIAS_ERROR_INVALID_ARGUMENT: salias_code = 10;
/// The handle was freed, never made, or is of another kind.
pub const SALIAS_ERROR_BAD_HANDLE: salias_code = 11;
/// The handle holds a received message or a claim: release or commit it first.
pub const SALIAS_ERROR_BUSY: salias_code = 12;
/// The call panicked inside the library (a bug): the handle may be unusable.
pub const SALIAS_ERROR_PANIC: salias_code = 13;
/// The call needs a message or claim the handle does not hold.
pub const SALIAS_ERROR_NOT_HELD: salias_code = 14;

/// The channel name is not valid.
pub const SALIAS_ERROR_INVALID_NAME: salias_code = 20;
/// A configuration value cannot be used.
pub const SALIAS_ERROR_INVALID_CONFIG: salias_code = 21;
/// A described message type has a layout no channel can carry.
pub const SALIAS_ERROR_INVALID_MESSAGE_TYPE: salias_code = 22;
/// No channel with this name exists.
pub const SALIAS_ERROR_NOT_FOUND: salias_code = 23;
/// A channel with this name exists.
pub const SALIAS_ERROR_ALREADY_EXISTS: salias_code = 24;
/// The channel's owner died without removing it.
pub const SALIAS_ERROR_STALE: salias_code = 25;
/// The channel carries another message type.
pub const SALIAS_ERROR_TYPE_MISMATCH: salias_code = 26;
/// The channel is of another kind.
pub const SALIAS_ERROR_KIND_MISMATCH: salias_code = 27;
/// The channel was made by an incompatible salias version.
pub const SALIAS_ERROR_VERSION_MISMATCH: salias_code = 28;
/// The channel was made with another platform layer.
pub const SALIAS_ERROR_PLATFORM_MISMATCH: salias_code = 29;
/// The name holds something that is not a salias channel.
pub const SALIAS_ERROR_NOT_A_CHANNEL: salias_code = 30;
/// The channel's owner is still creating it.
pub const SALIAS_ERROR_INITIALIZING: salias_code = 31;
/// Shared memory holds data that breaks the protocol (a crashed, buggy or hostile peer).
pub const SALIAS_ERROR_CORRUPT: salias_code = 32;
/// Every slot of the role asked for is held.
pub const SALIAS_ERROR_NO_FREE_SLOT: salias_code = 33;
/// The slot asked for is held by a live process.
pub const SALIAS_ERROR_SLOT_IN_USE: salias_code = 34;
/// The slot asked for does not exist.
pub const SALIAS_ERROR_SLOT_OUT_OF_RANGE: salias_code = 35;
/// The operating system refused a call.
pub const SALIAS_ERROR_PLATFORM: salias_code = 36;
/// Shared memory (e.g. /dev/shm) is full.
pub const SALIAS_ERROR_NO_SPACE: salias_code = 37;
/// The channel belongs to a user this process does not trust, or grants too much.
pub const SALIAS_ERROR_UNTRUSTED: salias_code = 38;
/// The handle was inherited across fork(): connect again in the child.
pub const SALIAS_ERROR_INHERITED: salias_code = 39;
/// The feature is not supported on this platform.
pub const SALIAS_ERROR_UNSUPPORTED: salias_code = 40;
/// Mpsc: the ring is full and the subscriber has gone.
pub const SALIAS_ERROR_NO_SUBSCRIBER: salias_code = 41;
/// A raw message is larger than the channel or the claim accepts.
pub const SALIAS_ERROR_MESSAGE_TOO_LARGE: salias_code = 42;
/// A message for a typed channel does not have the type's size.
pub const SALIAS_ERROR_WRONG_MESSAGE_SIZE: salias_code = 43;
/// Too many sequence numbers declared lost in one call.
pub const SALIAS_ERROR_GAP_TOO_LARGE: salias_code = 44;
/// Another process truncated the channel's shared memory.
pub const SALIAS_ERROR_TRUNCATED: salias_code = 45;
/// A publisher demoted this tethered subscriber to lossy (its `tether_timeout`).
pub const SALIAS_ERROR_DEMOTED: salias_code = 46;
/// Every publisher has gone and everything they sent was received; receive again to wait
/// for a next publisher.
pub const SALIAS_ERROR_DISCONNECTED: salias_code = 47;
/// An error this version of the C ABI has no code for yet.
pub const SALIAS_ERROR_OTHER: salias_code = 99;

/// The code of a salias error.
pub(crate) fn of_error(error: &Error) -> salias_code {
    match error {
        Error::InvalidName { .. } => SALIAS_ERROR_INVALID_NAME,
        Error::InvalidConfig { .. } => SALIAS_ERROR_INVALID_CONFIG,
        Error::InvalidMessageType { .. } => SALIAS_ERROR_INVALID_MESSAGE_TYPE,
        Error::NotFound { .. } => SALIAS_ERROR_NOT_FOUND,
        Error::AlreadyExists { .. } => SALIAS_ERROR_ALREADY_EXISTS,
        Error::Stale { .. } => SALIAS_ERROR_STALE,
        Error::TypeMismatch { .. } => SALIAS_ERROR_TYPE_MISMATCH,
        Error::KindMismatch { .. } => SALIAS_ERROR_KIND_MISMATCH,
        Error::VersionMismatch { .. } => SALIAS_ERROR_VERSION_MISMATCH,
        Error::PlatformMismatch { .. } => SALIAS_ERROR_PLATFORM_MISMATCH,
        Error::NotAChannel { .. } => SALIAS_ERROR_NOT_A_CHANNEL,
        Error::Initializing { .. } => SALIAS_ERROR_INITIALIZING,
        Error::Corrupt { .. } => SALIAS_ERROR_CORRUPT,
        Error::NoFreeSlot { .. } => SALIAS_ERROR_NO_FREE_SLOT,
        Error::SlotInUse { .. } => SALIAS_ERROR_SLOT_IN_USE,
        Error::SlotOutOfRange { .. } => SALIAS_ERROR_SLOT_OUT_OF_RANGE,
        Error::Platform { .. } => SALIAS_ERROR_PLATFORM,
        Error::NoSpace { .. } => SALIAS_ERROR_NO_SPACE,
        Error::Untrusted { .. } => SALIAS_ERROR_UNTRUSTED,
        Error::Inherited { .. } => SALIAS_ERROR_INHERITED,
        Error::Unsupported { .. } => SALIAS_ERROR_UNSUPPORTED,
        Error::Publish(small) => of_publish(*small),
        Error::Receive(small) => of_receive(*small),
        _ => SALIAS_ERROR_OTHER,
    }
}

/// The code of a publish error.
pub(crate) fn of_publish(error: PublishError) -> salias_code {
    match error {
        PublishError::Backpressured => SALIAS_BACKPRESSURED,
        PublishError::TimedOut => SALIAS_TIMED_OUT,
        PublishError::NoSubscriber => SALIAS_ERROR_NO_SUBSCRIBER,
        PublishError::MessageTooLarge { .. } => SALIAS_ERROR_MESSAGE_TOO_LARGE,
        PublishError::WrongMessageSize { .. } => SALIAS_ERROR_WRONG_MESSAGE_SIZE,
        PublishError::GapTooLarge { .. } => SALIAS_ERROR_GAP_TOO_LARGE,
        PublishError::PackedLength { .. } => SALIAS_ERROR_INVALID_ARGUMENT,
        PublishError::Corrupt => SALIAS_ERROR_CORRUPT,
        PublishError::Truncated => SALIAS_ERROR_TRUNCATED,
        PublishError::Inherited => SALIAS_ERROR_INHERITED,
        _ => SALIAS_ERROR_OTHER,
    }
}

/// The code of a receive error.
pub(crate) fn of_receive(error: ReceiveError) -> salias_code {
    match error {
        ReceiveError::TimedOut => SALIAS_TIMED_OUT,
        ReceiveError::Corrupt => SALIAS_ERROR_CORRUPT,
        ReceiveError::Truncated => SALIAS_ERROR_TRUNCATED,
        ReceiveError::Inherited => SALIAS_ERROR_INHERITED,
        ReceiveError::Demoted => SALIAS_ERROR_DEMOTED,
        ReceiveError::Disconnected => SALIAS_ERROR_DISCONNECTED,
        _ => SALIAS_ERROR_OTHER,
    }
}

/// The name of a result code, e.g. `"SALIAS_ERROR_NOT_FOUND"`: a static string, never null.
#[unsafe(no_mangle)]
pub extern "C" fn salias_code_name(code: salias_code) -> *const std::ffi::c_char {
    name(code).as_ptr()
}

/// The code's name as the header spells it, NUL-terminated; one list of the codes.
pub(crate) fn name(code: salias_code) -> &'static std::ffi::CStr {
    macro_rules! table {
        ($($code:ident),* $(,)?) => {
            match code {
                $( $code => {
                    const NAME: &std::ffi::CStr =
                        match std::ffi::CStr::from_bytes_with_nul(concat!(stringify!($code), "\0").as_bytes()) {
                            Ok(name) => name,
                            Err(_) => panic!("a code name holds a NUL"),
                        };
                    NAME
                } )*
                _ => c"an unknown code",
            }
        };
    }
    table!(
        SALIAS_OK,
        SALIAS_BACKPRESSURED,
        SALIAS_EMPTY,
        SALIAS_TIMED_OUT,
        SALIAS_ERROR_INVALID_ARGUMENT,
        SALIAS_ERROR_BAD_HANDLE,
        SALIAS_ERROR_BUSY,
        SALIAS_ERROR_PANIC,
        SALIAS_ERROR_NOT_HELD,
        SALIAS_ERROR_INVALID_NAME,
        SALIAS_ERROR_INVALID_CONFIG,
        SALIAS_ERROR_INVALID_MESSAGE_TYPE,
        SALIAS_ERROR_NOT_FOUND,
        SALIAS_ERROR_ALREADY_EXISTS,
        SALIAS_ERROR_STALE,
        SALIAS_ERROR_TYPE_MISMATCH,
        SALIAS_ERROR_KIND_MISMATCH,
        SALIAS_ERROR_VERSION_MISMATCH,
        SALIAS_ERROR_PLATFORM_MISMATCH,
        SALIAS_ERROR_NOT_A_CHANNEL,
        SALIAS_ERROR_INITIALIZING,
        SALIAS_ERROR_CORRUPT,
        SALIAS_ERROR_NO_FREE_SLOT,
        SALIAS_ERROR_SLOT_IN_USE,
        SALIAS_ERROR_SLOT_OUT_OF_RANGE,
        SALIAS_ERROR_PLATFORM,
        SALIAS_ERROR_NO_SPACE,
        SALIAS_ERROR_UNTRUSTED,
        SALIAS_ERROR_INHERITED,
        SALIAS_ERROR_UNSUPPORTED,
        SALIAS_ERROR_NO_SUBSCRIBER,
        SALIAS_ERROR_MESSAGE_TOO_LARGE,
        SALIAS_ERROR_WRONG_MESSAGE_SIZE,
        SALIAS_ERROR_GAP_TOO_LARGE,
        SALIAS_ERROR_TRUNCATED,
        SALIAS_ERROR_DEMOTED,
        SALIAS_ERROR_DISCONNECTED,
        SALIAS_ERROR_OTHER,
    )
}
