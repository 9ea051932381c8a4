//! iceoryx2 `ipc::Service` publish-subscribe: services, ports, the roles' ends, the
//! wake-up's event service beside the data, and the tidying of what iceoryx2 leaves in
//! /dev/shm and /tmp.

use std::sync::atomic::{AtomicU64, Ordering};

use iceoryx2::port::listener::Listener;
use iceoryx2::port::notifier::Notifier;
use iceoryx2::port::publisher::Publisher;
use iceoryx2::port::subscriber::Subscriber;
use iceoryx2::prelude::*;
use iceoryx2::service::port_factory::publish_subscribe::PortFactory;
use support::clock::now_ns;

use crate::message::Msg64;
use crate::roles::Params;
use crate::setup::Api;
use crate::transport::{PingPong, Publish, Subscribe, Transport, WakeReceiver, WakeSender};

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

/// iceoryx2's `ipc::Service` publish-subscribe.
pub enum Iceoryx2 {}

/// A port of a service of its own node, which it keeps.
pub struct Port<P> {
    port: P,
    _service: Factory,
    _node: Node<ipc::Service>,
}

impl<P> Port<P> {
    /// The port that `open` makes of `service`.
    fn of(node: Node<ipc::Service>, service: Factory, open: impl FnOnce(&Factory) -> P) -> Port<P> {
        Port {
            port: open(&service),
            _service: service,
            _node: node,
        }
    }

    /// The port that `open` makes of the throughput service of run `a`, with
    /// `a.publishers` publishers and a buffer of `a.param`.
    fn throughput(a: &Params, open: impl FnOnce(&Factory) -> P) -> Port<P> {
        quiet();
        let node = node();
        let service = throughput_service(&node, &a.name, a.publishers, a.param, false);
        Port::of(node, service, open)
    }
}

impl Publish for Port<Publisher<ipc::Service, Msg64, ()>> {
    #[inline(always)]
    fn offer(&mut self, message: &Msg64) -> bool {
        send(&self.port, *message) > 0
    }

    /// The blocking publisher's refusals, retried within its `send`.
    fn refused_within(&self) -> u64 {
        BLOCKED.load(Ordering::Relaxed)
    }
}

impl Subscribe for Port<Subscriber<ipc::Service, Msg64, ()>> {
    #[inline(always)]
    fn poll(&mut self, mut receive: impl FnMut(&Msg64)) {
        match self.port.receive().expect("iceoryx2 receive") {
            Some(sample) => receive(sample.payload()),
            None => std::hint::spin_loop(),
        }
    }
}

/// One side of a ping-pong: the service `<name>/ping` carries pings, `<name>/pong` pongs.
pub struct Ends {
    publisher: Publisher<ipc::Service, Msg64, ()>,
    subscriber: Subscriber<ipc::Service, Msg64, ()>,
    _services: (Factory, Factory),
    _node: Node<ipc::Service>,
}

impl Ends {
    /// The pinger's ends if `pings`, else the ponger's.
    fn connect(a: &Params, pings: bool) -> Ends {
        quiet();
        let node = node();
        let ping = latency_service(&node, &format!("{}/ping", a.name), false);
        let pong = latency_service(&node, &format!("{}/pong", a.name), false);
        let (outbound, inbound) = if pings { (&ping, &pong) } else { (&pong, &ping) };
        Ends {
            publisher: publisher_port(outbound),
            subscriber: subscriber_port(inbound),
            _services: (ping, pong),
            _node: node,
        }
    }
}

impl PingPong for Ends {
    #[inline(always)]
    fn send(&mut self, message: &Msg64) {
        send_until_delivered(&self.publisher, *message);
    }

    #[inline(always)]
    fn recv(&mut self) -> Msg64 {
        receive(&self.subscriber)
    }
}

impl Transport for Iceoryx2 {
    type Publisher = Port<Publisher<ipc::Service, Msg64, ()>>;
    type Subscriber = Port<Subscriber<ipc::Service, Msg64, ()>>;
    type PingPong = Ends;

    /// `loan_uninit` with retries by the caller, or iceoryx2's own blocking send.
    fn publisher(a: &Params) -> Self::Publisher {
        if a.api == Some(Api::LoanUninitBlock) {
            Port::throughput(a, blocking_publisher_port)
        } else {
            Port::throughput(a, publisher_port)
        }
    }

    fn subscriber(a: &Params) -> Self::Subscriber {
        Port::throughput(a, subscriber_port)
    }

    fn pinger(a: &Params) -> Ends {
        Ends::connect(a, true)
    }

    fn ponger(a: &Params) -> Ends {
        Ends::connect(a, false)
    }
}

/// The wake-up's event service beside the data: one notifier, one listener, no events of
/// its own on a notifier's creation or end (they would wake the listener with no message).
pub fn event_service(node: &Node<ipc::Service>, name: &str, create: bool) -> EventFactory {
    let builder = node
        .service_builder(&ServiceName::new(&format!("{name}/wake")).unwrap())
        .event()
        .max_notifiers(1)
        .max_listeners(1)
        .disable_notifier_created_event()
        .disable_notifier_dropped_event()
        .disable_notifier_dead_event();
    if create {
        builder.create().unwrap()
    } else {
        builder.open().unwrap()
    }
}

/// A wake-up end: a port of the data service `<name>/data` (its latency configuration)
/// and one of the event service beside it.
pub struct WakeEnd<P, E> {
    event: E,
    data: Port<P>,
}

impl<P, E> WakeEnd<P, E> {
    fn open(a: &Params, data: impl FnOnce(&Factory) -> P, event: impl FnOnce(&EventFactory) -> E) -> Self {
        let node = node();
        let service = latency_service(&node, &format!("{}/data", a.name), false);
        let events = event_service(&node, &a.name, false);
        let data = Port::of(node, service, data);
        WakeEnd {
            event: event(&events),
            data,
        }
    }
}

/// The wake-up sender: the sample, then `Notifier::notify`.
pub type EventSender = WakeEnd<Publisher<ipc::Service, Msg64, ()>, Notifier<ipc::Service>>;

impl EventSender {
    pub fn connect(a: &Params) -> EventSender {
        WakeEnd::open(a, publisher_port, |events| events.notifier_builder().create().unwrap())
    }
}

impl WakeSender for EventSender {
    fn send(&mut self, message: Msg64) {
        assert_eq!(
            send(&self.data.port, message),
            1,
            "iceoryx2: the receiver did not get the sample"
        );
        self.event.notify().expect("iceoryx2 notify");
    }
}

/// The wake-up receiver: `Listener::blocking_wait`, then the sample.
pub type EventReceiver = WakeEnd<Subscriber<ipc::Service, Msg64, ()>, Listener<ipc::Service>>;

impl EventReceiver {
    pub fn connect(a: &Params) -> EventReceiver {
        WakeEnd::open(a, subscriber_port, |events| events.listener_builder().create().unwrap())
    }
}

impl WakeReceiver for EventReceiver {
    fn wait(&mut self) -> (Msg64, Option<u64>) {
        loop {
            self.event.blocking_wait(|_| {}).expect("iceoryx2 blocking_wait");
            let woke = now_ns();
            if let Some(sample) = self.data.port.receive().expect("iceoryx2 receive") {
                return (*sample.payload(), Some(woke));
            }
        }
    }
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
