//! The rows of the table: how the receiver waits, and what the publisher does after its
//! commit to wake it.

use serde::{Deserialize, Serialize};
use support::records::WakeMechanism;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Row {
    /// `Subscriber::recv`, default `Adaptive`: spins, yields, then sleeps in the futex.
    RecvAdaptive,
    /// `Subscriber::recv` with a strategy that sleeps in the futex on its first idle call:
    /// the kernel's wake alone.
    RecvPark,
    /// Design A prototype: a watcher thread futex-waits, writes an eventfd; epoll.
    WatcherEventfd,
    /// Design B prototype: the publisher writes a byte to the receiver's FIFO; epoll.
    Fifo,
    /// The library's readiness descriptor (design A) in a raw epoll loop.
    FdEpoll,
    /// `recv_async` in a current-thread tokio runtime (the `tokio` feature).
    #[cfg(feature = "tokio")]
    RecvAsync,
}

impl Row {
    /// Every row this build has, in the order they alternate.
    pub fn all() -> Vec<Row> {
        let rows = vec![
            Row::RecvAdaptive,
            Row::RecvPark,
            Row::WatcherEventfd,
            Row::Fifo,
            Row::FdEpoll,
        ];
        #[cfg(feature = "tokio")]
        let rows = [rows, vec![Row::RecvAsync]].concat();
        rows
    }

    pub fn label(self) -> &'static str {
        match self {
            Row::RecvAdaptive => "futex recv (Adaptive)",
            Row::RecvPark => "futex recv (park at once)",
            Row::WatcherEventfd => "A proto: watcher+eventfd+epoll",
            Row::Fifo => "B proto: FIFO+epoll",
            Row::FdEpoll => "Subscriber fd in epoll (A, library)",
            #[cfg(feature = "tokio")]
            Row::RecvAsync => "recv_async, tokio current-thread",
        }
    }

    pub fn mechanism(self) -> WakeMechanism {
        match self {
            Row::RecvAdaptive => WakeMechanism::RecvAdaptive,
            Row::RecvPark => WakeMechanism::RecvPark,
            Row::WatcherEventfd => WakeMechanism::WatcherEventfd,
            Row::Fifo => WakeMechanism::Fifo,
            Row::FdEpoll => WakeMechanism::FdEpoll,
            #[cfg(feature = "tokio")]
            Row::RecvAsync => WakeMechanism::RecvAsync,
        }
    }

    /// Built in this benchmark rather than taken from the library.
    pub fn prototype(self) -> bool {
        matches!(self, Row::WatcherEventfd | Row::Fifo)
    }
}
