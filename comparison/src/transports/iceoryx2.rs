//! iceoryx2 `ipc::Service` publish-subscribe: services, ports, roles, and the tidying of
//! what iceoryx2 leaves in /dev/shm and /tmp.

use std::sync::atomic::{AtomicU64, Ordering};

use iceoryx2::port::publisher::Publisher;
use iceoryx2::port::subscriber::Subscriber;
use iceoryx2::prelude::*;
use iceoryx2::service::port_factory::publish_subscribe::PortFactory;
use support::barrier::Barrier;

use crate::message::Msg64;
use crate::openloop::{openloop_publish, openloop_subscribe};
use crate::pingpong::{ping_loop, pong_loop};
use crate::roles::Params;
use crate::throughput::{Api, drain, flood};

pub type Factory = PortFactory<ipc::Service, Msg64, ()>;
/// An event service's factory (the wake-up runs').
pub type EventFactory = iceoryx2::service::port_factory::event::PortFactory<ipc::Service>;

pub fn quiet() {
    set_log_level(LogLevel::Error);
}

pub fn node() -> Node<ipc::Service> {
    NodeBuilder::new().create::<ipc::Service>().unwrap()
}

/// Throughput service: a lossless queue (no safe overflow: a full subscriber buffer
/// refuses the sample, and the publisher retries it), no history.
pub fn throughput_service(
    node: &Node<ipc::Service>,
    name: &str,
    publishers: u32,
    buffer: u64,
    create: bool,
) -> Factory {
    let builder = node
        .service_builder(&ServiceName::new(name).unwrap())
        .publish_subscribe::<Msg64>()
        .max_publishers(publishers as usize)
        .max_subscribers(1)
        .history_size(0)
        .subscriber_max_buffer_size(buffer as usize)
        .enable_safe_overflow(false);
    if create {
        builder.create().unwrap()
    } else {
        builder.open().unwrap()
    }
}

/// Latency service, as iceoryx2's own publish-subscribe benchmark configures it:
/// buffer 1, safe overflow, no history.
pub fn latency_service(node: &Node<ipc::Service>, name: &str, create: bool) -> Factory {
    let builder = node
        .service_builder(&ServiceName::new(name).unwrap())
        .publish_subscribe::<Msg64>()
        .max_publishers(1)
        .max_subscribers(1)
        .history_size(0)
        .subscriber_max_buffer_size(1)
        .enable_safe_overflow(true);
    if create {
        builder.create().unwrap()
    } else {
        builder.open().unwrap()
    }
}

pub fn publisher_port(service: &Factory) -> Publisher<ipc::Service, Msg64, ()> {
    service
        .publisher_builder()
        .backpressure_strategy(BackpressureStrategy::DiscardData)
        .max_loaned_samples(1)
        .create()
        .unwrap()
}

/// Refused delivery attempts seen by the backpressure handler of a blocking publisher.
pub static BLOCKED: AtomicU64 = AtomicU64::new(0);

/// iceoryx2's own lossless mode: `RetryUntilDelivered`, where `send` itself waits for room
/// (its adaptive wait: yields first, then sleeps). The handler only counts and retries.
pub fn blocking_publisher_port(service: &Factory) -> Publisher<ipc::Service, Msg64, ()> {
    service
        .publisher_builder()
        .backpressure_strategy(BackpressureStrategy::RetryUntilDelivered)
        .set_backpressure_handler(|_: &iceoryx2::port::BackpressureInfo| {
            BLOCKED.fetch_add(1, Ordering::Relaxed);
            iceoryx2::port::BackpressureAction::Retry
        })
        .max_loaned_samples(1)
        .create()
        .unwrap()
}

pub fn subscriber_port(service: &Factory) -> Subscriber<ipc::Service, Msg64, ()> {
    service.subscriber_builder().create().unwrap()
}

/// loan_uninit → write_payload → send; Ok(0) recipients means the subscriber buffer was
/// full (DiscardData, no safe overflow): refused, retried by the caller.
#[inline(always)]
pub fn send(publisher: &Publisher<ipc::Service, Msg64, ()>, message: Msg64) -> usize {
    let sample = publisher.loan_uninit().unwrap();
    let sample = sample.write_payload(message);
    sample.send().unwrap()
}

/// Sends `message` until a subscriber has it.
fn send_until_delivered(publisher: &Publisher<ipc::Service, Msg64, ()>, message: Msg64) {
    while send(publisher, message) == 0 {
        std::hint::spin_loop();
    }
}

/// Busy-polls until a sample arrives.
fn receive(subscriber: &Subscriber<ipc::Service, Msg64, ()>) -> Msg64 {
    loop {
        if let Some(sample) = subscriber.receive().expect("iceoryx2 receive") {
            return *sample.payload();
        }
    }
}

pub fn publisher(a: &Params, barrier: &Barrier) {
    quiet();
    let node = node();
    let service = throughput_service(&node, &a.name, a.publishers, a.param, false);
    let blocking = a.api == Some(Api::LoanUninitBlock);
    let publisher = if blocking {
        blocking_publisher_port(&service)
    } else {
        publisher_port(&service)
    };
    let mut published = flood(a, barrier, |seq| {
        u64::from(send(&publisher, Msg64::new(a.index, seq)) > 0)
    });
    if blocking {
        // The refusals iceoryx2's own send retried count as attempts too.
        let blocked = BLOCKED.load(Ordering::Relaxed);
        published.attempts += blocked;
        published.refused += blocked;
    }
    published.report(barrier);
}

pub fn subscriber(a: &Params, barrier: &Barrier) {
    quiet();
    let node = node();
    let service = throughput_service(&node, &a.name, a.publishers, a.param, false);
    let subscriber = subscriber_port(&service);
    drain(a, barrier, |verifier| {
        match subscriber.receive().expect("iceoryx2 receive") {
            Some(sample) => verifier.check(sample.payload()),
            None => std::hint::spin_loop(),
        }
    });
}

/// Open loop on the lossless throughput service: a sample that reached no subscriber
/// (its buffer full) is refused and sent again with a new loan and a new stamp.
pub fn ol_publisher(a: &Params, barrier: &Barrier) {
    quiet();
    let node = node();
    let service = throughput_service(&node, &a.name, 1, a.param, false);
    let publisher = publisher_port(&service);
    openloop_publish(a, barrier, |m| send(&publisher, *m) > 0);
}

pub fn ol_subscriber(a: &Params, barrier: &Barrier) {
    quiet();
    let node = node();
    let service = throughput_service(&node, &a.name, 1, a.param, false);
    let subscriber = subscriber_port(&service);
    openloop_subscribe(a, barrier, |r| match subscriber.receive().expect("iceoryx2 receive") {
        Some(sample) => r.receive(sample.payload()),
        None => std::hint::spin_loop(),
    });
}

/// The ping and the pong service of run `name`.
fn ping_pong(node: &Node<ipc::Service>, name: &str) -> (Factory, Factory) {
    (
        latency_service(node, &format!("{name}/ping"), false),
        latency_service(node, &format!("{name}/pong"), false),
    )
}

pub fn pinger(a: &Params, barrier: &Barrier) {
    quiet();
    let node = node();
    let (ping, pong) = ping_pong(&node, &a.name);
    let publisher = publisher_port(&ping);
    let subscriber = subscriber_port(&pong);
    ping_loop(a.messages, barrier, |seq| {
        send_until_delivered(&publisher, Msg64::new(0, seq));
        receive(&subscriber)
    });
}

pub fn ponger(a: &Params, barrier: &Barrier) {
    quiet();
    let node = node();
    let (ping, pong) = ping_pong(&node, &a.name);
    let publisher = publisher_port(&pong);
    let subscriber = subscriber_port(&ping);
    pong_loop(a.messages, barrier, || {
        send_until_delivered(&publisher, receive(&subscriber))
    });
}

/// Removes, on drop (also when a run panics), the iceoryx2 objects this invocation left:
/// `/dev/shm/iox2_*` entries that were not there before, and `/tmp/iceoryx2` if it did not
/// exist before and is empty apart from empty directories.
pub struct ShmTidy {
    pub before: Vec<std::ffi::OsString>,
    pub tmp_existed: bool,
}

pub const ICE_TMP: &str = "/tmp/iceoryx2";

impl ShmTidy {
    pub fn iox2_entries() -> Vec<std::ffi::OsString> {
        std::fs::read_dir("/dev/shm")
            .map(|dir| {
                dir.filter_map(|e| e.ok())
                    .map(|e| e.file_name())
                    .filter(|n| n.to_string_lossy().starts_with("iox2_"))
                    .collect()
            })
            .unwrap_or_default()
    }

    pub fn snapshot() -> ShmTidy {
        ShmTidy {
            before: Self::iox2_entries(),
            tmp_existed: std::path::Path::new(ICE_TMP).exists(),
        }
    }

    pub fn remove_empty_dirs(path: &std::path::Path) {
        if let Ok(dir) = std::fs::read_dir(path) {
            for entry in dir.filter_map(|e| e.ok()) {
                if entry.file_type().is_ok_and(|t| t.is_dir()) {
                    Self::remove_empty_dirs(&entry.path());
                }
            }
        }
        let _ = std::fs::remove_dir(path); // fails, harmlessly, unless empty
    }
}

impl Drop for ShmTidy {
    fn drop(&mut self) {
        for name in Self::iox2_entries() {
            if !self.before.contains(&name) {
                let _ = std::fs::remove_file(std::path::Path::new("/dev/shm").join(&name));
            }
        }
        if !self.tmp_existed {
            Self::remove_empty_dirs(std::path::Path::new(ICE_TMP));
        }
    }
}
