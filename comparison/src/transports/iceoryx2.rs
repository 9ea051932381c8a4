//! iceoryx2 `ipc::Service` publish-subscribe: services, ports, roles, and the tidying of
//! what iceoryx2 leaves in /dev/shm and /tmp.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::message::Msg64;
use crate::openloop::{openloop_publish, openloop_subscribe};
use crate::pingpong::{PING_WARMUP, ping_loop, report_pings};
use crate::platform::now_ns;
use crate::roles::{ChildArgs, report_publisher, report_subscriber};
use crate::shm::Barrier;
use crate::verification::Verifier;

use iceoryx2::port::publisher::Publisher;
use iceoryx2::port::subscriber::Subscriber;
use iceoryx2::prelude::*;
use iceoryx2::service::port_factory::publish_subscribe::PortFactory;

pub type Factory = PortFactory<ipc::Service, Msg64, ()>;

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

pub fn publisher(name: &str, a: &ChildArgs, barrier: &Barrier) {
    quiet();
    let node = node();
    let service = throughput_service(&node, name, a.publishers, a.param, false);
    let blocking = a.variant.ends_with("block");
    let publisher = if blocking {
        blocking_publisher_port(&service)
    } else {
        publisher_port(&service)
    };
    let (mut attempts, mut refused, mut seq) = (0u64, 0u64, 0u64);
    barrier.arrive_and_wait();
    let started = now_ns();
    while seq < a.messages {
        attempts += 1;
        if send(&publisher, Msg64::new(a.index, seq)) > 0 {
            seq += 1;
        } else {
            refused += 1;
            std::hint::spin_loop();
        }
    }
    let elapsed = now_ns() - started;
    if blocking {
        let blocked = BLOCKED.load(Ordering::Relaxed);
        attempts += blocked;
        refused += blocked;
    }
    report_publisher(a.index, elapsed, attempts, refused);
    barrier.wait_subscribers_done(1);
}

pub fn subscriber(name: &str, a: &ChildArgs, barrier: &Barrier) {
    quiet();
    let node = node();
    let service = throughput_service(&node, name, a.publishers, a.param, false);
    let subscriber = subscriber_port(&service);
    let total = a.messages * a.publishers as u64;
    let mut v = Verifier::new(a.publishers as usize);
    barrier.arrive_and_wait();
    let started = now_ns();
    while v.received < total {
        match subscriber.receive().unwrap() {
            Some(sample) => v.check(sample.payload()),
            None => std::hint::spin_loop(),
        }
    }
    let elapsed = now_ns() - started;
    v.finish(a.publishers as u64, a.messages);
    report_subscriber(a.index, elapsed, v.received);
    barrier.subscriber_done();
}

/// Open loop on the lossless throughput service: a sample that reached no subscriber
/// (its buffer full) is refused and sent again with a new loan and a new stamp.
pub fn ol_publisher(name: &str, a: &ChildArgs, barrier: &Barrier) {
    quiet();
    let node = node();
    let service = throughput_service(&node, name, 1, a.param, false);
    let publisher = publisher_port(&service);
    openloop_publish(a, barrier, |m| send(&publisher, *m) > 0);
}

pub fn ol_subscriber(name: &str, a: &ChildArgs, barrier: &Barrier) {
    quiet();
    let node = node();
    let service = throughput_service(&node, name, 1, a.param, false);
    let subscriber = subscriber_port(&service);
    openloop_subscribe(a, barrier, |r| match subscriber.receive().unwrap() {
        Some(sample) => r.receive(sample.payload()),
        None => std::hint::spin_loop(),
    });
}

pub fn pinger(name: &str, a: &ChildArgs, barrier: &Barrier) {
    quiet();
    let node = node();
    let ping = latency_service(&node, &format!("{name}/ping"), false);
    let pong = latency_service(&node, &format!("{name}/pong"), false);
    let publisher = publisher_port(&ping);
    let subscriber = subscriber_port(&pong);
    barrier.arrive_and_wait();
    let samples = ping_loop(a.messages, |seq| {
        while send(&publisher, Msg64::new(0, seq)) == 0 {
            std::hint::spin_loop();
        }
        loop {
            if let Some(sample) = subscriber.receive().unwrap() {
                break *sample.payload();
            }
        }
    });
    report_pings(&samples);
}

pub fn ponger(name: &str, a: &ChildArgs, barrier: &Barrier) {
    quiet();
    let node = node();
    let ping = latency_service(&node, &format!("{name}/ping"), false);
    let pong = latency_service(&node, &format!("{name}/pong"), false);
    let publisher = publisher_port(&pong);
    let subscriber = subscriber_port(&ping);
    barrier.arrive_and_wait();
    for _ in 0..a.messages + PING_WARMUP {
        let message = loop {
            if let Some(sample) = subscriber.receive().unwrap() {
                break *sample.payload();
            }
        };
        while send(&publisher, message) == 0 {
            std::hint::spin_loop();
        }
    }
    barrier.subscriber_done();
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
