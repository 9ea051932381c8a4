//! Ctrl-C (SIGINT) as an event the watching commands wait for or look at between steps, so
//! that they end as after their last step (exit code 0, a recording finished and synced)
//! rather than being killed in the middle of one.

use std::sync::{Condvar, Mutex, OnceLock, PoisonError};
use std::time::Instant;

/// Set once Ctrl-C was pressed; never cleared (the process is on its way out).
pub(crate) struct Interrupted {
    pressed: Mutex<bool>,
    wake: Condvar,
}

static INTERRUPTED: Interrupted = Interrupted {
    pressed: Mutex::new(false),
    wake: Condvar::new(),
};

/// Installs the handler, once a process (a second `set_handler` would fail), and returns
/// what it sets.
pub(crate) fn on_ctrl_c() -> Result<&'static Interrupted, String> {
    static INSTALLED: OnceLock<Result<(), String>> = OnceLock::new();
    INSTALLED
        .get_or_init(|| {
            // ctrlc runs this on a thread of its own, not in the signal handler, so it may lock.
            ctrlc::set_handler(|| {
                *INTERRUPTED.pressed.lock().unwrap_or_else(PoisonError::into_inner) = true;
                INTERRUPTED.wake.notify_all();
            })
            .map_err(|e| format!("cannot watch for Ctrl-C ({e}), so it could not be stopped cleanly"))
        })
        .clone()
        .map(|()| &INTERRUPTED)
}

impl Interrupted {
    /// Whether Ctrl-C was pressed.
    pub(crate) fn pressed(&self) -> bool {
        *self.pressed.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Waits until `deadline` or Ctrl-C, whichever comes first; true for Ctrl-C.
    pub(crate) fn wait_until(&self, deadline: Instant) -> bool {
        let mut pressed = self.pressed.lock().unwrap_or_else(PoisonError::into_inner);
        while !*pressed {
            let Some(left) = deadline
                .checked_duration_since(Instant::now())
                .filter(|left| !left.is_zero())
            else {
                return false;
            };
            pressed = self
                .wake
                .wait_timeout(pressed, left)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
        true
    }
}
