//! A handle's record of the full [`Error`] behind a broken channel: the publisher and the
//! subscriber return the small [`Broken`] kinds on their hot paths and keep the sentence
//! here for `fault()`.

use std::sync::{Mutex, PoisonError};

use crate::error::Error;
use crate::handle_error::{Broken, PublishError};
use crate::platform::Unhealthy;
use crate::region::Shared;

/// A handle's record of the full error behind the last [`Broken`] failure it returned.
/// Written only on the cold failure path, through `&self` (receives find corruption there);
/// a mutex nobody contends rather than a `Cell`, so the record itself says nothing about
/// whether a handle is `Sync` (the handles' own markers say that).
#[derive(Default)]
pub(crate) struct FaultRecord(Mutex<Option<Error>>);

impl FaultRecord {
    /// Keeps `error`, one of the channel's own failures, and says which kind it is.
    #[cold]
    #[inline(never)]
    pub(crate) fn record(&self, shared: &Shared, error: Error) -> Broken {
        let broken = match &error {
            Error::Inherited { .. } => Broken::Inherited,
            _ if shared.is_truncated() => Broken::Truncated,
            _ => Broken::Corrupt,
        };
        *self.0.lock().unwrap_or_else(PoisonError::into_inner) = Some(error);
        broken
    }

    /// Records a protocol violation `what` (or the truncation behind it).
    #[cold]
    #[inline(never)]
    pub(crate) fn corrupt(&self, shared: &Shared, what: String) -> Broken {
        self.record(shared, shared.corrupt(what))
    }

    /// Records that the channel's health cell was found unhealthy.
    #[cold]
    #[inline(never)]
    pub(crate) fn unhealthy(&self, shared: &Shared, bad: Unhealthy) -> Broken {
        self.record(shared, bad.error(&shared.name))
    }

    /// The last recorded error, kept.
    pub(crate) fn get(&self) -> Option<Error> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// The full error for a setup call that failed with `small`: the recorded one if
    /// `small` reports a broken channel.
    #[cold]
    pub(crate) fn full(&self, small: PublishError) -> Error {
        match small {
            PublishError::Corrupt | PublishError::Truncated | PublishError::Inherited => {
                self.get().unwrap_or(Error::Publish(small))
            }
            other => Error::Publish(other),
        }
    }
}
