//! The bridge's one error type: what went wrong, on which side, and what to do about it.

use std::fmt;

/// Every way starting or running a bridge can fail.
#[derive(Debug)]
#[non_exhaustive]
pub enum BridgeError {
    /// A salias call on the local channel failed; `source` is the library's own error, so
    /// a type or kind mismatch reads exactly as a local `connect` would report it.
    Salias {
        /// What the bridge was doing, e.g. "connecting to the local channel \"quotes\"".
        doing: String,
        /// The library's error.
        source: salias::Error,
    },
    /// A zenoh call failed.
    Zenoh {
        /// What the bridge was doing, e.g. "opening the zenoh session".
        doing: String,
        /// zenoh's error.
        source: zenoh::Error,
    },
    /// A configuration value cannot be used.
    InvalidConfig {
        /// The setting, e.g. `batch_messages`.
        field: &'static str,
        /// What is wrong and how to fix it.
        reason: String,
    },
    /// The stream carries a typed message the bridge cannot create a channel for: only the
    /// receiving application knows the Rust type.
    NeedsTypedChannel {
        /// The local channel name.
        channel: String,
        /// The stream's message type, in `Error::TypeMismatch`'s words.
        stream_type: String,
        /// The stream's kind, e.g. `FifoMpsc`.
        kind: String,
    },
    /// The local raw channel accepts smaller messages than the stream may carry.
    MessagesTooLarge {
        /// The local channel name.
        channel: String,
        /// The local channel's largest message.
        local_max: usize,
        /// The far channel's largest message.
        stream_max: usize,
    },
    /// The bridge's own thread could not be started, or ended by panicking (a bug).
    Thread {
        /// What happened.
        what: String,
    },
    /// The `in` side's state record (what it delivered, for a restart) cannot be used.
    State {
        /// What the bridge was doing with it, e.g. "opening".
        doing: String,
        /// The record's file.
        path: std::path::PathBuf,
        /// The system's error.
        source: std::io::Error,
    },
    /// The local channel `out` reads was removed or replaced under its name, and the
    /// configuration asked to stop then (`exit_on_removal`).
    ChannelGone {
        /// The channel name.
        channel: String,
        /// What the name leads to now, in salias's words.
        state: salias::status::NameState,
    },
    /// The local channel's kind is not one this bridge knows (a newer salias).
    UnknownKind {
        /// The channel name.
        channel: String,
        /// The kind its control block declares.
        kind: String,
    },
}

impl fmt::Display for BridgeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BridgeError::Salias { doing, source } => write!(f, "{doing}: {source}"),
            BridgeError::Zenoh { doing, source } => write!(
                f,
                "{doing}: zenoh reported: {source}; check the endpoints (e.g. tcp/192.0.2.7:7447) and that the other side runs"
            ),
            BridgeError::InvalidConfig { field, reason } => write!(f, "invalid bridge setting `{field}`: {reason}"),
            BridgeError::NeedsTypedChannel {
                channel,
                stream_type,
                kind,
            } => write!(
                f,
                "the stream carries {stream_type} messages and no local channel \"{channel}\" exists; \
                 the bridge creates raw channels only, because only the receiving application knows the type: \
                 create it there first (e.g. {kind}::<YourType>::create(&Config::new(\"{channel}\"))), then start the bridge"
            ),
            BridgeError::MessagesTooLarge {
                channel,
                local_max,
                stream_max,
            } => write!(
                f,
                "the local channel \"{channel}\" takes messages of at most {local_max} bytes, but the stream's \
                 channel allows {stream_max}; create it with Config::max_message_size({stream_max}) or more"
            ),
            BridgeError::Thread { what } => write!(f, "the bridge's thread {what}"),
            BridgeError::ChannelGone { channel, state } => write!(
                f,
                "the local channel \"{channel}\" that out reads is gone: {state}; out stops, as \
                 --exit-on-removal asks (without it, out follows the name to a new channel)"
            ),
            BridgeError::State { doing, path, source } => write!(
                f,
                "{doing} the in side's state record {}: {source}; it must be writable (choose another \
                 directory with --state-dir) and used by one `in` at a time",
                path.display()
            ),
            BridgeError::UnknownKind { channel, kind } => write!(
                f,
                "the channel \"{channel}\" is of kind \"{kind}\", which this bridge does not know; \
                 build the bridge against the salias version that made the channel"
            ),
        }
    }
}

impl std::error::Error for BridgeError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            BridgeError::Salias { source, .. } => Some(source),
            BridgeError::Zenoh { source, .. } => Some(&**source),
            BridgeError::State { source, .. } => Some(source),
            _ => None,
        }
    }
}

impl BridgeError {
    pub(crate) fn salias(doing: impl Into<String>) -> impl FnOnce(salias::Error) -> BridgeError {
        move |source| BridgeError::Salias {
            doing: doing.into(),
            source,
        }
    }

    pub(crate) fn zenoh(doing: impl Into<String>) -> impl FnOnce(zenoh::Error) -> BridgeError {
        move |source| BridgeError::Zenoh {
            doing: doing.into(),
            source,
        }
    }

    /// The salias error inside, if the local channel refused: e.g. `TypeMismatch`.
    pub fn salias_error(&self) -> Option<&salias::Error> {
        match self {
            BridgeError::Salias { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// What bridge calls return.
pub type Result<T, E = BridgeError> = std::result::Result<T, E>;
