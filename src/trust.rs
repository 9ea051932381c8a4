//! [`Trust`]: whose channels a process agrees to exchange messages with.
//!
//! A channel is two files any user can create under a name in the shared-memory
//! directory. Connecting to one that another user created would send this process's
//! messages to that user, and hand it whatever they publish. So `connect` refuses channels
//! owned by anyone but the caller's own user unless it is told otherwise.

use crate::error::{Error, Result, TrustProblem};
use crate::platform::{self, ObjectFacts};

/// Whose channels to accept, beyond the caller's own user. The default accepts only
/// channels created by the caller's effective user with the permissions they were
/// created with.
///
/// ```
/// use salias::Trust;
/// // Also accept channels created by the user with uid 1000.
/// let trust = Trust::uid(1000);
/// # let _ = trust;
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Trust {
    uids: Vec<u32>,
    any_user: bool,
    wider_mode: bool,
}

impl Trust {
    /// Channels of the caller's own effective user only (the default).
    pub fn current_user() -> Trust {
        Trust::default()
    }

    /// Also channels created by user `uid`.
    pub fn uid(uid: u32) -> Trust {
        Trust::default().and_uid(uid)
    }

    /// Adds user `uid` to those trusted.
    pub fn and_uid(mut self, uid: u32) -> Trust {
        self.uids.push(uid);
        self
    }

    /// Channels of any user: for tools and services that check the peer by other means.
    pub fn any_user() -> Trust {
        Trust {
            any_user: true,
            ..Trust::default()
        }
    }

    /// Also accepts objects whose mode grants more than the channel was created with
    /// (someone `chmod`ed them since).
    pub fn allow_wider_mode(mut self) -> Trust {
        self.wider_mode = true;
        self
    }

    fn trusts(&self, uid: u32, caller: u32) -> bool {
        self.any_user || uid == caller || self.uids.contains(&uid)
    }

    /// Checks the facts of a channel's control and ring objects against this trust and the
    /// permissions recorded in its control block.
    pub(crate) fn check(
        &self,
        name: &str,
        control: &ObjectFacts,
        rings: Option<&ObjectFacts>,
        recorded_permissions: Option<u32>,
    ) -> Result<()> {
        let caller = platform::effective_uid();
        let refuse = |problem, mode| Error::Untrusted {
            name: name.to_owned(),
            problem,
            owner_uid: control.uid,
            mode,
            caller_uid: caller,
        };
        for facts in [Some(control), rings].into_iter().flatten() {
            if !facts.regular {
                return Err(refuse(TrustProblem::NotAFile, facts.mode));
            }
        }
        if !self.trusts(control.uid, caller) {
            return Err(refuse(TrustProblem::Owner, control.mode));
        }
        if let Some(rings) = rings
            && rings.uid != control.uid
        {
            return Err(refuse(TrustProblem::MixedOwners { ring_uid: rings.uid }, rings.mode));
        }
        if let Some(recorded) = recorded_permissions
            && !self.wider_mode
        {
            for facts in [Some(control), rings].into_iter().flatten() {
                if facts.mode & !recorded != 0 {
                    return Err(refuse(TrustProblem::WiderMode { recorded }, facts.mode));
                }
            }
        }
        Ok(())
    }
}
