//! Same-run, cross-process comparison of salias with Aeron IPC, iceoryx2 and the machine's
//! floors, by the rules of the project's benchmarking guide.
//!
//! Run: `cargo run --release -- [--quick] [--only throughput|latency|openloop] [--two-publishers]`
//! from `comparison/` (or `scripts/compare` from the repository root).
//!
//! - Every publisher, subscriber, pinger and ponger is a separate process: this binary
//!   re-executes itself with a role, pinned to a named core (recorded with every figure).
//!   The parent only orchestrates, creates the shared objects and, for Aeron, hosts the
//!   embedded C media driver (one driver for the whole invocation, on an unpinned thread).
//! - The clock starts after every process has connected and passed a barrier in shared
//!   memory and stops when the publisher made its last offer / the subscriber has the last
//!   message; setup, prefault, spawn and teardown stay outside.
//! - Every run verifies message count, per-publisher order, a payload word and a checksum.
//! - Variants alternate round by round (A B C … A B C …, the starting variant rotating each
//!   round); the summary is the median with min and max over the rounds, and ratios.
//! - Latency: ping-pong round trip / 2 next to the bare cache-line floor, and an open-loop
//!   sweep of offered load (planned send times, never skipped; HdrHistograms of queueing,
//!   service and total time), both between cores 0 and 1.
//! - Raw results: JSON lines in `comparison/results/<unix time>.jsonl` with a header record.

use std::ffi::CString;
use std::io::{BufRead, Write};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use salias::{BusySpin, Channel, Config, Error, Fifo, Mpsc, SaliasMessage};

// ---------------------------------------------------------------------------------------
// The message: 64 bytes, exactly as in benches/ipc.rs.

/// 64 bytes: {producer u64, seq u64, 6 × u64 derived from seq}.
#[derive(SaliasMessage, Clone, Copy, Debug)]
#[repr(C)]
struct Msg64 {
    producer: u64,
    seq: u64,
    words: [u64; 6],
}

// SAFETY: plain `repr(C)` data of eight u64 words: no pointers, no padding, valid for any
// bit pattern, so it may live in iceoryx2's shared memory.
unsafe impl iceoryx2::prelude::ZeroCopySend for Msg64 {}

impl Msg64 {
    fn new(producer: u64, seq: u64) -> Self {
        Msg64 {
            producer,
            seq,
            words: [seq ^ producer; 6],
        }
    }

    fn as_bytes(&self) -> &[u8] {
        // SAFETY: `repr(C)`, 64 bytes of u64s without padding.
        unsafe { std::slice::from_raw_parts(self as *const Msg64 as *const u8, 64) }
    }

    fn read_from(bytes: &[u8]) -> Msg64 {
        assert_eq!(bytes.len(), 64, "message length");
        // SAFETY: 64 readable bytes; every bit pattern is a valid Msg64.
        unsafe { std::ptr::read_unaligned(bytes.as_ptr() as *const Msg64) }
    }
}

const _: () = assert!(std::mem::size_of::<Msg64>() == 64);

/// Checks one received message against the per-publisher expectation.
struct Verifier {
    next: Vec<u64>,
    received: u64,
    checksum: u64,
}

impl Verifier {
    fn new(publishers: usize) -> Self {
        Verifier {
            next: vec![0; publishers],
            received: 0,
            checksum: 0,
        }
    }

    #[inline(always)]
    fn check(&mut self, m: &Msg64) {
        let producer = m.producer as usize;
        assert_eq!(m.seq, self.next[producer], "lost or reordered");
        assert_eq!(m.words[5], m.seq ^ m.producer, "corrupted");
        self.next[producer] += 1;
        self.received += 1;
        self.checksum = self.checksum.wrapping_add(m.seq);
    }

    fn finish(&self, publishers: u64, messages: u64) {
        assert_eq!(self.received, publishers * messages, "count");
        let expected = publishers.wrapping_mul(messages * (messages - 1) / 2);
        assert_eq!(self.checksum, expected, "checksum");
    }
}

// ---------------------------------------------------------------------------------------
// Platform helpers (as in benches/ipc.rs)

fn cores() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// Publishers on the first cores, subscribers on the last: P0@0, S0@1 on two cores.
fn core_for(role: &str, index: usize) -> usize {
    let cores = cores().max(1);
    match role {
        "publisher" => index % cores,
        _ => (cores - 1 - index % cores) % cores,
    }
}

fn pin(core: usize) {
    // SAFETY: a zeroed cpu_set_t is valid; the calls take pointers to it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(core, &mut set);
        assert_eq!(
            libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set),
            0,
            "pin to core {core}"
        );
    }
}

fn now_ns() -> u64 {
    let mut t = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: valid out pointer.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut t) };
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

/// A file in /dev/shm mapped shared, for the barrier and the floors.
struct ShmFile {
    map: memmap2::MmapMut,
    path: String,
    /// The creator removes the file when dropped (also when a run panics).
    owner: bool,
}

impl Drop for ShmFile {
    fn drop(&mut self) {
        if self.owner {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

impl ShmFile {
    fn create(path: &str, len: usize) -> ShmFile {
        let file = std::fs::File::create_new(path).unwrap_or_else(|e| panic!("{path}: {e}"));
        file.set_len(len as u64).unwrap();
        // SAFETY: a private file of this benchmark, accessed through atomics and the
        // floor protocols only.
        let map = unsafe { memmap2::MmapOptions::new().populate().map_mut(&file).unwrap() };
        ShmFile {
            map,
            path: path.into(),
            owner: true,
        }
    }

    fn open(path: &str) -> ShmFile {
        let file = std::fs::OpenOptions::new().read(true).write(true).open(path).unwrap();
        // SAFETY: as in `create`.
        let map = unsafe { memmap2::MmapOptions::new().populate().map_mut(&file).unwrap() };
        ShmFile {
            map,
            path: path.into(),
            owner: false,
        }
    }

    fn word(&self, index: usize) -> &AtomicU64 {
        assert!((index + 1) * 8 <= self.map.len());
        // SAFETY: in bounds (checked), 8-byte aligned (page-aligned mapping).
        unsafe { &*(self.map.as_ptr() as *const AtomicU64).add(index) }
    }
}

/// Start barrier: word 0 counts arrivals, word 1 is "go"; word 8 counts subscribers done
/// (publishers keep their resources until then); words 16 and 24 carry the floor's ping
/// and pong on one cache line pair as in benches/ipc.rs (there both share a line: 2, 3).
struct Barrier(ShmFile);

impl Barrier {
    fn path(name: &str) -> String {
        format!("/dev/shm/{name}.barrier")
    }
    fn create(name: &str) -> Barrier {
        Barrier(ShmFile::create(&Self::path(name), 4096))
    }
    fn open(name: &str) -> Barrier {
        Barrier(ShmFile::open(&Self::path(name)))
    }
    fn word(&self, i: usize) -> &AtomicU64 {
        self.0.word(i)
    }
    fn arrive_and_wait(&self) {
        self.word(0).fetch_add(1, Ordering::AcqRel);
        while self.word(1).load(Ordering::Acquire) == 0 {
            std::hint::spin_loop();
        }
    }
    fn release_when(&self, parties: u64, children: &mut [Child]) {
        while self.word(0).load(Ordering::Acquire) < parties {
            for child in children.iter_mut() {
                if let Ok(Some(status)) = child.try_wait() {
                    panic!(
                        "a benchmark process exited before the start barrier{}: {status}",
                        interrupted()
                    );
                }
            }
            std::thread::sleep(Duration::from_micros(200));
        }
        self.word(1).store(1, Ordering::Release);
    }
    fn subscriber_done(&self) {
        self.word(8).fetch_add(1, Ordering::AcqRel);
    }
    fn wait_subscribers_done(&self, subscribers: u64) {
        while self.word(8).load(Ordering::Acquire) < subscribers {
            std::thread::sleep(Duration::from_micros(100));
        }
    }
}

// ---------------------------------------------------------------------------------------
// Throughput setups

/// Aeron's IPC term length, set explicitly on the publication URI (it is also the C driver's
/// default for IPC, `AERON_IPC_TERM_BUFFER_LENGTH_DEFAULT` = 64 MiB).
const AERON_URI: &str = "aeron:ipc?term-length=64m";
const AERON_SUB_URI: &str = "aeron:ipc";
const POLL_LIMIT: usize = 256;
const BATCH: usize = 16;

#[derive(Clone, Debug)]
struct Setup {
    system: &'static str,
    variant: &'static str,
    publishers: u32,
    messages: u64,
    /// salias / spsc-floor: ring bytes per publisher; iceoryx2: subscriber buffer (samples);
    /// aeron: term length bytes (informational; the URI carries it).
    param: u64,
}

impl Setup {
    fn label(&self) -> String {
        let shape = format!("{}P1S", self.publishers);
        match self.system {
            "salias" => format!("salias FifoMpsc {shape} ring {} MiB {}", self.param >> 20, self.variant),
            "aeron" => format!("aeron ipc {shape} term {} MiB {}", self.param >> 20, self.variant),
            "iceoryx2" => format!("iceoryx2 {shape} buffer {} {}", self.param, self.variant),
            _ => format!("spsc-floor {shape} ring {} MiB {}", self.param >> 20, self.variant),
        }
    }

    fn to_args(&self, index: usize, extra: &str, stream: i32) -> Vec<String> {
        vec![
            self.system.into(),
            self.variant.into(),
            self.publishers.to_string(),
            self.messages.to_string(),
            self.param.to_string(),
            index.to_string(),
            extra.into(),
            stream.to_string(),
        ]
    }
}

struct ChildArgs {
    system: String,
    variant: String,
    publishers: u32,
    messages: u64,
    param: u64,
    index: u64,
    extra: String,
    stream: i32,
    /// Role-specific arguments after the common eight (open loop: interval ps, warm-up).
    rest: Vec<String>,
}

impl ChildArgs {
    fn parse(a: &[String]) -> ChildArgs {
        ChildArgs {
            system: a[0].clone(),
            variant: a[1].clone(),
            publishers: a[2].parse().unwrap(),
            messages: a[3].parse().unwrap(),
            param: a[4].parse().unwrap(),
            index: a[5].parse().unwrap(),
            extra: a[6].clone(),
            stream: a[7].parse().unwrap(),
            rest: a[8..].to_vec(),
        }
    }
}

/// What a publisher process reports.
fn report_publisher(index: u64, elapsed: u64, attempts: u64, refused: u64) {
    println!("RESULT publisher {index} elapsed_ns {elapsed} attempts {attempts} refused {refused}");
}

fn report_subscriber(index: u64, elapsed: u64, received: u64) {
    println!("RESULT subscriber {index} elapsed_ns {elapsed} received {received}");
}

// ---- salias --------------------------------------------------------------------------

fn salias_publisher(name: &str, a: &ChildArgs, barrier: &Barrier) {
    let channel = Channel::<Msg64, Fifo, Mpsc>::connect(name).unwrap();
    let mut publisher = channel.publisher().unwrap();
    let batch_len = if a.variant == "offer" { 1 } else { BATCH };
    let mut batch = vec![Msg64::new(a.index, 0); batch_len];
    let (mut attempts, mut refused, mut seq) = (0u64, 0u64, 0u64);
    barrier.arrive_and_wait();
    let started = now_ns();
    while seq < a.messages {
        attempts += 1;
        if batch_len > 1 {
            let count = (a.messages - seq).min(batch_len as u64) as usize;
            for (i, message) in batch[..count].iter_mut().enumerate() {
                *message = Msg64::new(a.index, seq + i as u64);
            }
            match publisher.offer_batch(&batch[..count]) {
                Ok(n) => seq += n as u64,
                Err(Error::Backpressured) => {
                    refused += 1;
                    std::hint::spin_loop()
                }
                Err(e) => panic!("{e}"),
            }
        } else {
            match publisher.offer(&Msg64::new(a.index, seq)) {
                Ok(()) => seq += 1,
                Err(Error::Backpressured) => {
                    refused += 1;
                    std::hint::spin_loop()
                }
                Err(e) => panic!("{e}"),
            }
        }
    }
    let elapsed = now_ns() - started;
    report_publisher(a.index, elapsed, attempts, refused);
    barrier.wait_subscribers_done(1);
}

fn salias_subscriber(name: &str, a: &ChildArgs, barrier: &Barrier) {
    let channel = Channel::<Msg64, Fifo, Mpsc>::connect(name).unwrap();
    let mut subscriber = channel.subscriber().unwrap();
    let total = a.messages * a.publishers as u64;
    let mut v = Verifier::new(a.publishers as usize);
    barrier.arrive_and_wait();
    let started = now_ns();
    while v.received < total {
        subscriber.poll(POLL_LIMIT, |_, m| v.check(m)).unwrap();
    }
    let elapsed = now_ns() - started;
    v.finish(a.publishers as u64, a.messages);
    report_subscriber(a.index, elapsed, v.received);
    barrier.subscriber_done();
}

// ---- Aeron ---------------------------------------------------------------------------

mod aeron {
    use super::*;
    use rusteron_client::*;

    pub struct Client {
        pub aeron: Aeron,
        _ctx: AeronContext,
    }

    pub fn connect(dir: &str) -> Client {
        let ctx = AeronContext::new().unwrap();
        ctx.set_dir(&CString::new(dir).unwrap()).unwrap();
        // Map (and fault in) the log buffers when a publication or image is added, outside
        // the timed region; salias and the floors prefault their memory too.
        ctx.set_pre_touch_mapped_memory(true).unwrap();
        ctx.set_error_handler(Some(|code: i32, msg: &str| eprintln!("aeron error {code}: {msg}")))
            .unwrap();
        let aeron = Aeron::new(&ctx).unwrap();
        aeron.start().unwrap();
        Client { aeron, _ctx: ctx }
    }

    pub fn exclusive_publication(client: &Client, stream: i32) -> AeronExclusivePublication {
        let uri = CString::new(AERON_URI).unwrap();
        client
            .aeron
            .async_add_exclusive_publication(&uri, stream)
            .unwrap()
            .poll_blocking(Duration::from_secs(30))
            .unwrap()
    }

    pub fn subscription(client: &Client, stream: i32) -> AeronSubscription {
        let uri = CString::new(AERON_SUB_URI).unwrap();
        client
            .aeron
            .async_add_subscription(&uri, stream, Handlers::NONE, Handlers::NONE)
            .unwrap()
            .poll_blocking(Duration::from_secs(30))
            .unwrap()
    }

    pub fn wait_connected(publication: &AeronExclusivePublication) {
        let deadline = Instant::now() + Duration::from_secs(30);
        while !publication.is_connected() {
            assert!(Instant::now() < deadline, "aeron publication never connected");
            std::thread::sleep(Duration::from_micros(100));
        }
    }

    pub fn wait_images(subscription: &AeronSubscription, images: i32) {
        let deadline = Instant::now() + Duration::from_secs(30);
        while subscription.image_count().unwrap() < images {
            assert!(Instant::now() < deadline, "aeron subscription never saw its images");
            std::thread::sleep(Duration::from_micros(100));
        }
    }

    /// One publish of `message`: try_claim + write + commit, or offer. Returns the raw
    /// Aeron position (negative: refused).
    #[inline(always)]
    pub fn publish(
        publication: &AeronExclusivePublication,
        claim: &AeronBufferClaim,
        use_claim: bool,
        message: &Msg64,
    ) -> i64 {
        if use_claim {
            let position = publication.try_claim_raw(64, claim);
            if position >= 0 {
                let data = claim.data();
                debug_assert_eq!(data.len(), 64);
                // SAFETY: the claim holds 64 writable bytes in the term buffer.
                unsafe { std::ptr::write_unaligned(data.as_mut_ptr() as *mut Msg64, *message) };
                claim.commit().unwrap();
            }
            position
        } else {
            publication.offer_raw::<AeronReservedValueSupplierLogger>(message.as_bytes(), None)
        }
    }

    /// Whether a negative position is back pressure (retry) rather than an error.
    pub fn retryable(position: i64) -> bool {
        // -1 not connected, -2 back pressured, -3 admin action (term rotation)
        matches!(position, -3..=-1)
    }

    pub fn publisher(a: &ChildArgs, barrier: &Barrier) {
        let client = connect(&a.extra);
        let publication = exclusive_publication(&client, a.stream);
        wait_connected(&publication);
        let claim = AeronBufferClaim::default();
        let use_claim = a.variant == "try_claim";
        let (mut attempts, mut refused, mut seq) = (0u64, 0u64, 0u64);
        barrier.arrive_and_wait();
        let started = now_ns();
        while seq < a.messages {
            attempts += 1;
            let position = publish(&publication, &claim, use_claim, &Msg64::new(a.index, seq));
            if position >= 0 {
                seq += 1;
            } else if retryable(position) {
                refused += 1;
                std::hint::spin_loop();
            } else {
                panic!("aeron publish failed: {position}");
            }
        }
        let elapsed = now_ns() - started;
        report_publisher(a.index, elapsed, attempts, refused);
        barrier.wait_subscribers_done(1);
        drop(publication);
    }

    pub fn subscriber(a: &ChildArgs, barrier: &Barrier) {
        let client = connect(&a.extra);
        let subscription = subscription(&client, a.stream);
        wait_images(&subscription, a.publishers as i32);
        let total = a.messages * a.publishers as u64;
        let mut v = Verifier::new(a.publishers as usize);
        barrier.arrive_and_wait();
        let started = now_ns();
        while v.received < total {
            subscription
                .poll_fn(
                    |buf: &[u8], _header: AeronHeader| v.check(&Msg64::read_from(buf)),
                    POLL_LIMIT,
                )
                .unwrap();
        }
        let elapsed = now_ns() - started;
        v.finish(a.publishers as u64, a.messages);
        report_subscriber(a.index, elapsed, v.received);
        barrier.subscriber_done();
    }

    /// Ping-pong: stream `a.stream` carries pings, `a.stream + 1` pongs.
    pub fn pinger(a: &ChildArgs, barrier: &Barrier) {
        let client = connect(&a.extra);
        let subscription = subscription(&client, a.stream + 1);
        let publication = exclusive_publication(&client, a.stream);
        wait_connected(&publication);
        wait_images(&subscription, 1);
        let claim = AeronBufferClaim::default();
        barrier.arrive_and_wait();
        let samples = ping_loop(a.messages, |seq| {
            let message = Msg64::new(0, seq);
            loop {
                let position = publish(&publication, &claim, true, &message);
                if position >= 0 {
                    break;
                }
                assert!(retryable(position), "aeron publish failed: {position}");
            }
            let mut back = None;
            while back.is_none() {
                subscription
                    .poll_fn(|buf: &[u8], _h: AeronHeader| back = Some(Msg64::read_from(buf)), 1)
                    .unwrap();
            }
            back.unwrap()
        });
        report_pings(&samples);
    }

    pub fn ponger(a: &ChildArgs, barrier: &Barrier) {
        let client = connect(&a.extra);
        let subscription = subscription(&client, a.stream);
        let publication = exclusive_publication(&client, a.stream + 1);
        wait_connected(&publication);
        wait_images(&subscription, 1);
        let claim = AeronBufferClaim::default();
        barrier.arrive_and_wait();
        let mut echoed = 0;
        while echoed < a.messages + PING_WARMUP {
            echoed += subscription
                .poll_fn(
                    |buf: &[u8], _h: AeronHeader| {
                        let message = Msg64::read_from(buf);
                        loop {
                            let position = publish(&publication, &claim, true, &message);
                            if position >= 0 {
                                break;
                            }
                            assert!(retryable(position), "aeron publish failed: {position}");
                        }
                    },
                    1,
                )
                .unwrap() as u64;
        }
        barrier.subscriber_done();
    }
}

// ---- iceoryx2 ------------------------------------------------------------------------

mod ice {
    use super::*;
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

    fn publisher_port(service: &Factory) -> Publisher<ipc::Service, Msg64, ()> {
        service
            .publisher_builder()
            .backpressure_strategy(BackpressureStrategy::DiscardData)
            .max_loaned_samples(1)
            .create()
            .unwrap()
    }

    /// Refused delivery attempts seen by the backpressure handler of a blocking publisher.
    static BLOCKED: AtomicU64 = AtomicU64::new(0);

    /// iceoryx2's own lossless mode: `RetryUntilDelivered`, where `send` itself waits for room
    /// (its adaptive wait: yields first, then sleeps). The handler only counts and retries.
    fn blocking_publisher_port(service: &Factory) -> Publisher<ipc::Service, Msg64, ()> {
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

    fn subscriber_port(service: &Factory) -> Subscriber<ipc::Service, Msg64, ()> {
        service.subscriber_builder().create().unwrap()
    }

    /// loan_uninit → write_payload → send; Ok(0) recipients means the subscriber buffer was
    /// full (DiscardData, no safe overflow): refused, retried by the caller.
    #[inline(always)]
    fn send(publisher: &Publisher<ipc::Service, Msg64, ()>, message: Msg64) -> usize {
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
}

// ---- the SPSC floor: a minimal Lamport ring with cached indices and batched publication

/// Layout: word 0 tail (producer), word 16 head (consumer), slots from byte 256.
const SPSC_SLOTS_OFFSET: usize = 256;

fn spsc_path(name: &str) -> String {
    format!("/dev/shm/{name}.spsc")
}

fn spsc_publisher(name: &str, a: &ChildArgs, barrier: &Barrier) {
    let ring = ShmFile::open(&spsc_path(name));
    let slots = (a.param as usize) / 64;
    let mask = slots as u64 - 1;
    let base = ring.map.as_ptr() as *mut Msg64;
    let (tail_word, head_word) = (ring.word(0), ring.word(16));
    let (mut tail, mut published, mut cached_head) = (0u64, 0u64, 0u64);
    let (mut attempts, mut refused) = (0u64, 0u64);
    barrier.arrive_and_wait();
    let started = now_ns();
    while tail < a.messages {
        attempts += 1;
        if tail - cached_head == slots as u64 {
            cached_head = head_word.load(Ordering::Acquire);
            if tail - cached_head == slots as u64 {
                if published != tail {
                    tail_word.store(tail, Ordering::Release);
                    published = tail;
                }
                refused += 1;
                std::hint::spin_loop();
                continue;
            }
        }
        // SAFETY: slot `tail & mask` is free (tail - head < slots) and inside the mapping.
        unsafe {
            base.byte_add(SPSC_SLOTS_OFFSET)
                .add((tail & mask) as usize)
                .write(Msg64::new(a.index, tail))
        };
        tail += 1;
        if tail - published >= BATCH as u64 {
            tail_word.store(tail, Ordering::Release);
            published = tail;
        }
    }
    tail_word.store(tail, Ordering::Release);
    let elapsed = now_ns() - started;
    report_publisher(a.index, elapsed, attempts, refused);
    barrier.wait_subscribers_done(1);
}

fn spsc_subscriber(name: &str, a: &ChildArgs, barrier: &Barrier) {
    let ring = ShmFile::open(&spsc_path(name));
    let slots = (a.param as usize) / 64;
    let mask = slots as u64 - 1;
    let base = ring.map.as_ptr() as *const Msg64;
    let (tail_word, head_word) = (ring.word(0), ring.word(16));
    let (mut head, mut cached_tail) = (0u64, 0u64);
    let mut v = Verifier::new(1);
    barrier.arrive_and_wait();
    let started = now_ns();
    while v.received < a.messages {
        if head == cached_tail {
            cached_tail = tail_word.load(Ordering::Acquire);
            if head == cached_tail {
                std::hint::spin_loop();
                continue;
            }
        }
        let end = cached_tail.min(head + POLL_LIMIT as u64);
        while head < end {
            // SAFETY: head < tail (published with Release, read with Acquire): the slot is
            // written and will not be overwritten until `head` moves past it.
            let m = unsafe { base.byte_add(SPSC_SLOTS_OFFSET).add((head & mask) as usize).read() };
            v.check(&m);
            head += 1;
        }
        head_word.store(head, Ordering::Release);
    }
    let elapsed = now_ns() - started;
    v.finish(1, a.messages);
    report_subscriber(a.index, elapsed, v.received);
    barrier.subscriber_done();
}

// ---------------------------------------------------------------------------------------
// Latency: ping-pong round trip / 2

const PING_WARMUP: u64 = 10_000;

/// Runs PING_WARMUP unrecorded then `pings` recorded round trips; `round_trip(seq)` sends
/// message `seq` and returns the echo.
fn ping_loop(pings: u64, mut round_trip: impl FnMut(u64) -> Msg64) -> Vec<u64> {
    let mut samples = Vec::with_capacity(pings as usize);
    for seq in 0..PING_WARMUP + pings {
        let sent = now_ns();
        let back = round_trip(seq);
        let rtt = now_ns() - sent;
        assert_eq!(back.seq, seq, "ping-pong out of step");
        assert_eq!(back.words[5], seq, "ping-pong corrupted");
        if seq >= PING_WARMUP {
            samples.push(rtt);
        }
    }
    samples.sort_unstable();
    samples
}

fn percentile(sorted: &[u64], p: f64) -> u64 {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

/// Prints round-trip percentiles (ns): p50 p90 p99 p99.9 p99.99 max count.
fn report_pings(sorted: &[u64]) {
    println!(
        "RESULT pings {} {} {} {} {} {} {}",
        percentile(sorted, 0.5),
        percentile(sorted, 0.9),
        percentile(sorted, 0.99),
        percentile(sorted, 0.999),
        percentile(sorted, 0.9999),
        sorted[sorted.len() - 1],
        sorted.len()
    );
}

fn salias_pinger(name: &str, a: &ChildArgs, barrier: &Barrier) {
    let ping = Channel::<Msg64, Fifo, Mpsc>::connect(&format!("{name}-ping")).unwrap();
    let pong = Channel::<Msg64, Fifo, Mpsc>::connect(&format!("{name}-pong")).unwrap();
    let mut outbound = ping.publisher().unwrap();
    let mut inbound = pong.subscriber().unwrap();
    inbound.set_wait_strategy(BusySpin);
    barrier.arrive_and_wait();
    let samples = ping_loop(a.messages, |seq| {
        outbound.send(&Msg64::new(0, seq)).unwrap();
        *inbound.recv().unwrap()
    });
    report_pings(&samples);
}

fn salias_ponger(name: &str, a: &ChildArgs, barrier: &Barrier) {
    let ping = Channel::<Msg64, Fifo, Mpsc>::connect(&format!("{name}-ping")).unwrap();
    let pong = Channel::<Msg64, Fifo, Mpsc>::connect(&format!("{name}-pong")).unwrap();
    let mut inbound = ping.subscriber().unwrap();
    inbound.set_wait_strategy(BusySpin);
    let mut outbound = pong.publisher().unwrap();
    barrier.arrive_and_wait();
    for _ in 0..a.messages + PING_WARMUP {
        let message = *inbound.recv().unwrap();
        outbound.send(&message).unwrap();
    }
    barrier.subscriber_done();
}

/// The bare cache-line floor: word 2 carries pings, word 3 pongs (one cache line, as in
/// benches/ipc.rs).
fn floor_pinger(a: &ChildArgs, barrier: &Barrier) {
    barrier.arrive_and_wait();
    let (ping, pong) = (barrier.word(2), barrier.word(3));
    let samples = ping_loop(a.messages, |seq| {
        ping.store(seq + 1, Ordering::Release);
        while pong.load(Ordering::Acquire) != seq + 1 {
            std::hint::spin_loop();
        }
        Msg64::new(0, seq)
    });
    report_pings(&samples);
}

fn floor_ponger(a: &ChildArgs, barrier: &Barrier) {
    barrier.arrive_and_wait();
    let (ping, pong) = (barrier.word(2), barrier.word(3));
    for i in 1..=a.messages + PING_WARMUP {
        while ping.load(Ordering::Acquire) != i {
            std::hint::spin_loop();
        }
        pong.store(i, Ordering::Release);
    }
    barrier.subscriber_done();
}

// ---------------------------------------------------------------------------------------
// Open-loop latency (BENCHMARKING.md rule 5): the publisher sends message i at its planned
// time t0 + i·Δ, never skipping or rebasing the plan when it falls behind, and stamps the
// planned and the actual send time into the message (words[0], words[1]); the subscriber
// stamps the receive time. All stamps are CLOCK_MONOTONIC ns, one clock for every process
// on the machine. Queueing = sent − planned, service = received − sent, total = received −
// planned, each in an HdrHistogram (1 ns resolution, 3 significant digits). The first
// `warmup` messages follow the same plan but are not recorded.

/// The open-loop message: the stamps take words 0 and 1; word 5 stays `seq ^ producer`
/// so the usual verification (count, order, payload word, checksum) still applies.
#[inline(always)]
fn stamped(producer: u64, seq: u64, planned: u64, sent: u64) -> Msg64 {
    let mut m = Msg64::new(producer, seq);
    m.words[0] = planned;
    m.words[1] = sent;
    m
}

/// Planned send time of message `i`: Δ is given in picoseconds so that rates like
/// 3 M msg/s (333.3 ns) keep their exact mean.
#[inline(always)]
fn planned_ns(t0: u64, i: u64, interval_ps: u64) -> u64 {
    t0 + ((i as u128 * interval_ps as u128) / 1000) as u64
}

/// Runs the plan: for each message, busy-waits until its planned time (if already late,
/// sends at once), then calls `try_send(message)` until it is accepted, restamping the send
/// time on each retry. Reports attempts, refusals and how long the plan took.
fn openloop_publish(a: &ChildArgs, barrier: &Barrier, mut try_send: impl FnMut(&Msg64) -> bool) {
    let interval_ps: u64 = a.rest[0].parse().unwrap();
    let (mut attempts, mut refused, mut late) = (0u64, 0u64, 0u64);
    barrier.arrive_and_wait();
    let t0 = now_ns();
    let mut last_sent = t0;
    for seq in 0..a.messages {
        let planned = planned_ns(t0, seq, interval_ps);
        let mut now = now_ns();
        if now > planned {
            late += 1;
        }
        while now < planned {
            std::hint::spin_loop();
            now = now_ns();
        }
        // The first attempt goes out stamped with the clock read that ended the wait (one
        // clock read per message at high rates); a retry after a refusal is restamped.
        let mut sent = now;
        loop {
            attempts += 1;
            if try_send(&stamped(a.index, seq, planned, sent)) {
                last_sent = sent;
                break;
            }
            refused += 1;
            std::hint::spin_loop();
            sent = now_ns();
        }
    }
    let planned_span = planned_ns(t0, a.messages - 1, interval_ps) - t0;
    println!(
        "RESULT olpublisher {} span_ns {} planned_span_ns {planned_span} attempts {attempts} refused {refused} late {late}",
        a.index,
        last_sent - t0
    );
    barrier.wait_subscribers_done(1);
}

/// The three histograms of the subscriber.
struct OpenLoopRecorder {
    queueing: hdrhistogram::Histogram<u64>,
    service: hdrhistogram::Histogram<u64>,
    total: hdrhistogram::Histogram<u64>,
    warmup: u64,
    verifier: Verifier,
}

impl OpenLoopRecorder {
    fn new(warmup: u64) -> Self {
        // 1 ns .. 1000 s, 3 significant digits; larger values saturate at the top.
        let h = || hdrhistogram::Histogram::<u64>::new_with_bounds(1, 1_000_000_000_000, 3).unwrap();
        OpenLoopRecorder {
            queueing: h(),
            service: h(),
            total: h(),
            warmup,
            verifier: Verifier::new(1),
        }
    }

    #[inline(always)]
    fn receive(&mut self, m: &Msg64) {
        let received = now_ns();
        self.verifier.check(m);
        if m.seq >= self.warmup {
            let (planned, sent) = (m.words[0], m.words[1]);
            self.queueing.saturating_record(sent.saturating_sub(planned));
            self.service.saturating_record(received.saturating_sub(sent));
            self.total.saturating_record(received.saturating_sub(planned));
        }
    }

    fn report(&self, messages: u64) {
        self.verifier.finish(1, messages);
        for (what, h) in [
            ("queueing", &self.queueing),
            ("service", &self.service),
            ("total", &self.total),
        ] {
            println!(
                "RESULT olhist {what} {} {} {} {} {} {} {}",
                h.value_at_quantile(0.5),
                h.value_at_quantile(0.9),
                h.value_at_quantile(0.99),
                h.value_at_quantile(0.999),
                h.value_at_quantile(0.9999),
                h.max(),
                h.len()
            );
        }
    }
}

fn openloop_subscribe(a: &ChildArgs, barrier: &Barrier, mut poll: impl FnMut(&mut OpenLoopRecorder)) {
    let warmup: u64 = a.rest[1].parse().unwrap();
    let mut recorder = OpenLoopRecorder::new(warmup);
    barrier.arrive_and_wait();
    while recorder.verifier.received < a.messages {
        poll(&mut recorder);
    }
    recorder.report(a.messages);
    barrier.subscriber_done();
}

fn salias_ol_publisher(name: &str, a: &ChildArgs, barrier: &Barrier) {
    let channel = Channel::<Msg64, Fifo, Mpsc>::connect(name).unwrap();
    let mut publisher = channel.publisher().unwrap();
    openloop_publish(a, barrier, |m| match publisher.offer(m) {
        Ok(()) => true,
        Err(Error::Backpressured) => false,
        Err(e) => panic!("{e}"),
    });
}

fn salias_ol_subscriber(name: &str, a: &ChildArgs, barrier: &Barrier) {
    let channel = Channel::<Msg64, Fifo, Mpsc>::connect(name).unwrap();
    let mut subscriber = channel.subscriber().unwrap();
    openloop_subscribe(a, barrier, |r| {
        subscriber.poll(POLL_LIMIT, |_, m| r.receive(m)).unwrap();
    });
}

fn aeron_ol_publisher(a: &ChildArgs, barrier: &Barrier) {
    use rusteron_client::AeronBufferClaim;
    let client = aeron::connect(&a.extra);
    let publication = aeron::exclusive_publication(&client, a.stream);
    aeron::wait_connected(&publication);
    let claim = AeronBufferClaim::default();
    openloop_publish(a, barrier, |m| {
        let position = aeron::publish(&publication, &claim, true, m);
        assert!(
            position >= 0 || aeron::retryable(position),
            "aeron publish failed: {position}"
        );
        position >= 0
    });
    drop(publication);
}

fn aeron_ol_subscriber(a: &ChildArgs, barrier: &Barrier) {
    use rusteron_client::AeronHeader;
    let client = aeron::connect(&a.extra);
    let subscription = aeron::subscription(&client, a.stream);
    aeron::wait_images(&subscription, 1);
    openloop_subscribe(a, barrier, |r| {
        subscription
            .poll_fn(
                |buf: &[u8], _h: AeronHeader| r.receive(&Msg64::read_from(buf)),
                POLL_LIMIT,
            )
            .unwrap();
    });
}

/// One open-loop run's result, as the parent collects it.
struct OpenLoop {
    achieved_per_s: f64,
    /// How much longer the plan took than planned (1.0 = on time).
    stretch: f64,
    refused: f64,
    late_fraction: f64,
    /// queueing, service, total: p50 p90 p99 p99.9 p99.99 max count
    hist: [[u64; 7]; 3],
    placement: String,
}

impl OpenLoop {
    /// Saturated: the publisher could not keep to the plan (it ended > 10 % late) or the
    /// median message waited more than 100 µs to be sent.
    fn saturated(&self) -> bool {
        self.stretch > 1.1 || self.hist[0][0] > 100_000
    }
}

/// The cores of the latency runs (ping-pong, floor, open loop): 0 and 1.
fn latency_cores() -> [usize; 2] {
    [0, 1 % cores().max(1)]
}

fn openloop_run(
    system: &'static str,
    param: u64,
    rate: f64,
    plan: (f64, f64),
    round: usize,
    ctx: &mut Ctx,
) -> OpenLoop {
    let (duration_s, warmup_s) = plan;
    let warmup = (rate * warmup_s).round().max(1.0) as u64;
    let messages = warmup + (rate * duration_s).round().max(2.0) as u64;
    let interval_ps = (1e12 / rate).round() as u64;
    let setup = Setup {
        system,
        variant: "openloop",
        publishers: 1,
        messages,
        param,
    };
    let name = unique_name(&format!("ol-{system}"), round);
    let stream = ctx.stream();
    let resources = create_resources(&setup, &name);
    let barrier = Barrier::create(&name);
    let [pub_core, sub_core] = latency_cores();
    let mut args = setup.to_args(0, &ctx.aeron_dir, stream);
    args.push(interval_ps.to_string());
    args.push(warmup.to_string());
    let mut children = vec![
        spawn_role("ol-subscriber", &name, sub_core, &args),
        spawn_role("ol-publisher", &name, pub_core, &args),
    ];
    barrier.release_when(2, &mut children);
    let mut hist = [[0u64; 7]; 3];
    let (mut span, mut planned_span, mut attempts, mut refused, mut late) = (0u64, 0u64, 0u64, 0u64, 0u64);
    for mut child in children {
        let stdout = child.stdout.take().unwrap();
        for line in std::io::BufReader::new(stdout).lines() {
            let line = line.unwrap();
            let w: Vec<&str> = line.split_whitespace().collect();
            match (w.first(), w.get(1)) {
                (Some(&"RESULT"), Some(&"olpublisher")) => {
                    span = w[4].parse().unwrap();
                    planned_span = w[6].parse().unwrap();
                    attempts = w[8].parse().unwrap();
                    refused = w[10].parse().unwrap();
                    late = w[12].parse().unwrap();
                }
                (Some(&"RESULT"), Some(&"olhist")) => {
                    let k = ["queueing", "service", "total"]
                        .iter()
                        .position(|x| *x == w[2])
                        .unwrap();
                    for (j, v) in w[3..10].iter().enumerate() {
                        hist[k][j] = v.parse().unwrap();
                    }
                }
                _ => {}
            }
        }
        assert!(
            child.wait().unwrap().success(),
            "an open-loop process failed{}: {system} at {rate} msg/s",
            interrupted()
        );
    }
    drop(barrier);
    drop(resources);
    assert_eq!(hist[2][6], messages - warmup, "open-loop sample count");
    OpenLoop {
        achieved_per_s: (messages - 1) as f64 / (span.max(1) as f64 / 1e9),
        stretch: span as f64 / planned_span.max(1) as f64,
        refused: refused as f64 / attempts.max(1) as f64,
        late_fraction: late as f64 / messages as f64,
        hist,
        placement: format!("P0@{pub_core} S0@{sub_core}"),
    }
}

fn hist_json(h: &[u64; 7]) -> String {
    format!(
        "{{\"p50\":{},\"p90\":{},\"p99\":{},\"p99.9\":{},\"p99.99\":{},\"max\":{},\"count\":{}}}",
        h[0], h[1], h[2], h[3], h[4], h[5], h[6]
    )
}

// ---------------------------------------------------------------------------------------
// Child entry

fn child(role: &str, name: &str, core: usize, args: &[String]) {
    pin(core);
    let a = ChildArgs::parse(args);
    let barrier = Barrier::open(name);
    match (role, a.system.as_str()) {
        ("publisher", "salias") => salias_publisher(name, &a, &barrier),
        ("subscriber", "salias") => salias_subscriber(name, &a, &barrier),
        ("publisher", "aeron") => aeron::publisher(&a, &barrier),
        ("subscriber", "aeron") => aeron::subscriber(&a, &barrier),
        ("publisher", "iceoryx2") => ice::publisher(name, &a, &barrier),
        ("subscriber", "iceoryx2") => ice::subscriber(name, &a, &barrier),
        ("publisher", "spsc-floor") => spsc_publisher(name, &a, &barrier),
        ("subscriber", "spsc-floor") => spsc_subscriber(name, &a, &barrier),
        ("ping", "salias") => salias_pinger(name, &a, &barrier),
        ("pong", "salias") => salias_ponger(name, &a, &barrier),
        ("ping", "aeron") => aeron::pinger(&a, &barrier),
        ("pong", "aeron") => aeron::ponger(&a, &barrier),
        ("ping", "iceoryx2") => ice::pinger(name, &a, &barrier),
        ("pong", "iceoryx2") => ice::ponger(name, &a, &barrier),
        ("ol-publisher", "salias") => salias_ol_publisher(name, &a, &barrier),
        ("ol-subscriber", "salias") => salias_ol_subscriber(name, &a, &barrier),
        ("ol-publisher", "aeron") => aeron_ol_publisher(&a, &barrier),
        ("ol-subscriber", "aeron") => aeron_ol_subscriber(&a, &barrier),
        ("ol-publisher", "iceoryx2") => ice::ol_publisher(name, &a, &barrier),
        ("ol-subscriber", "iceoryx2") => ice::ol_subscriber(name, &a, &barrier),
        ("ping", "floor") => floor_pinger(&a, &barrier),
        ("pong", "floor") => floor_ponger(&a, &barrier),
        _ => panic!("unknown role {role} for {}", a.system),
    }
}

// ---------------------------------------------------------------------------------------
// Orchestration

static INTERRUPTED: AtomicU64 = AtomicU64::new(0);

extern "C" fn on_interrupt(_: libc::c_int) {
    INTERRUPTED.store(1, Ordering::Relaxed);
}

/// Ctrl-C kills the children (the handler does not survive their exec); the parent only
/// notes it, then fails on the dead child and unwinds, so every shared object it created
/// (salias channels, barrier and ring files, the Aeron directory, iceoryx2 services and
/// leftovers) is removed on the way out.
fn catch_interrupt() {
    let handler: extern "C" fn(libc::c_int) = on_interrupt;
    // SAFETY: installing a handler that only stores to an atomic.
    unsafe { libc::signal(libc::SIGINT, handler as libc::sighandler_t) };
}

fn interrupted() -> &'static str {
    if INTERRUPTED.load(Ordering::Relaxed) != 0 {
        " (interrupted)"
    } else {
        ""
    }
}

fn spawn_role(role: &str, name: &str, core: usize, args: &[String]) -> Child {
    Command::new(std::env::current_exe().unwrap())
        .args(["--role", role, name, &core.to_string(), "--"])
        .args(args)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Shared objects a run's parent creates and holds until the children are done.
enum Resources {
    Salias(#[allow(dead_code)] Vec<Box<dyn std::any::Any>>),
    Ice(
        #[allow(dead_code)] Vec<ice::Factory>,
        #[allow(dead_code)] iceoryx2::prelude::Node<iceoryx2::prelude::ipc::Service>,
    ),
    Spsc(#[allow(dead_code)] ShmFile),
    None,
}

fn unique_name(tag: &str, round: usize) -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    format!(
        "cmp-{tag}-{}-{round}-{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}

struct Ctx {
    aeron_dir: String,
    next_stream: i32,
}

impl Ctx {
    fn stream(&mut self) -> i32 {
        self.next_stream += 2;
        self.next_stream
    }
}

struct Run {
    published_per_s: f64,
    delivered_per_s: f64,
    refused: f64,
    placement: String,
}

/// The shared objects of a throughput or open-loop run (Aeron's come from its driver).
fn create_resources(setup: &Setup, name: &str) -> Resources {
    match setup.system {
        "salias" => {
            let config = Config::new(name)
                .capacity(setup.param as usize)
                .publishers(setup.publishers)
                .subscribers(1);
            let channel: Box<dyn std::any::Any> = Box::new(Channel::<Msg64, Fifo, Mpsc>::create(&config).unwrap());
            Resources::Salias(vec![channel])
        }
        "iceoryx2" => {
            ice::quiet();
            let node = ice::node();
            let service = ice::throughput_service(&node, name, setup.publishers, setup.param, true);
            Resources::Ice(vec![service], node)
        }
        "spsc-floor" => Resources::Spsc(ShmFile::create(
            &spsc_path(name),
            SPSC_SLOTS_OFFSET + setup.param as usize,
        )),
        _ => Resources::None,
    }
}

fn throughput_run(setup: &Setup, round: usize, ctx: &mut Ctx) -> Run {
    let name = unique_name(setup.system, round);
    let stream = ctx.stream();
    let resources = create_resources(setup, &name);
    let barrier = Barrier::create(&name);
    let mut children = Vec::new();
    let mut placement = Vec::new();
    let core = core_for("subscriber", 0);
    placement.push(format!("S0@{core}"));
    children.push(spawn_role(
        "subscriber",
        &name,
        core,
        &setup.to_args(0, &ctx.aeron_dir, stream),
    ));
    for p in 0..setup.publishers as usize {
        let core = core_for("publisher", p);
        placement.push(format!("P{p}@{core}"));
        children.push(spawn_role(
            "publisher",
            &name,
            core,
            &setup.to_args(p, &ctx.aeron_dir, stream),
        ));
    }
    barrier.release_when(setup.publishers as u64 + 1, &mut children);
    let (mut publish_ns, mut deliver_ns, mut attempts, mut refused) = (0u64, 0u64, 0u64, 0u64);
    for mut child in children {
        let stdout = child.stdout.take().unwrap();
        for line in std::io::BufReader::new(stdout).lines() {
            let line = line.unwrap();
            let words: Vec<&str> = line.split_whitespace().collect();
            if words.first() != Some(&"RESULT") {
                continue;
            }
            let elapsed: u64 = words[4].parse().unwrap();
            if words[1] == "publisher" {
                publish_ns = publish_ns.max(elapsed);
                attempts += words[6].parse::<u64>().unwrap();
                refused += words[8].parse::<u64>().unwrap();
            } else {
                deliver_ns = deliver_ns.max(elapsed);
            }
        }
        assert!(
            child.wait().unwrap().success(),
            "a benchmark process failed{}: {}",
            interrupted(),
            setup.label()
        );
    }
    drop(barrier);
    drop(resources);
    let published = setup.messages as f64 * setup.publishers as f64;
    Run {
        published_per_s: published / (publish_ns as f64 / 1e9),
        delivered_per_s: published / (deliver_ns as f64 / 1e9),
        refused: refused as f64 / attempts.max(1) as f64,
        placement: placement.join(" "),
    }
}

/// Round-trip percentiles (ns) of one ping-pong run.
struct Pings {
    rtt: [u64; 6],
    count: u64,
}

fn pingpong_run(system: &'static str, pings: u64, round: usize, ctx: &mut Ctx) -> (Pings, [usize; 2]) {
    let name = unique_name(system, round);
    let stream = ctx.stream();
    let resources = match system {
        "salias" => {
            let ping = Channel::<Msg64, Fifo, Mpsc>::create(&Config::new(format!("{name}-ping"))).unwrap();
            let pong = Channel::<Msg64, Fifo, Mpsc>::create(&Config::new(format!("{name}-pong"))).unwrap();
            Resources::Salias(vec![Box::new(ping), Box::new(pong)])
        }
        "iceoryx2" => {
            ice::quiet();
            let node = ice::node();
            let ping = ice::latency_service(&node, &format!("{name}/ping"), true);
            let pong = ice::latency_service(&node, &format!("{name}/pong"), true);
            Resources::Ice(vec![ping, pong], node)
        }
        _ => Resources::None,
    };
    let setup = Setup {
        system,
        variant: "pingpong",
        publishers: 1,
        messages: pings,
        param: 0,
    };
    let barrier = Barrier::create(&name);
    let cores = latency_cores();
    let args = setup.to_args(0, &ctx.aeron_dir, stream);
    let mut children = vec![
        spawn_role("pong", &name, cores[1], &args),
        spawn_role("ping", &name, cores[0], &args),
    ];
    barrier.release_when(2, &mut children);
    let mut result = None;
    for mut child in children {
        let stdout = child.stdout.take().unwrap();
        for line in std::io::BufReader::new(stdout).lines() {
            let line = line.unwrap();
            let words: Vec<&str> = line.split_whitespace().collect();
            if words.first() == Some(&"RESULT") && words[1] == "pings" {
                let v: Vec<u64> = words[2..9].iter().map(|w| w.parse().unwrap()).collect();
                result = Some(Pings {
                    rtt: [v[0], v[1], v[2], v[3], v[4], v[5]],
                    count: v[6],
                });
            }
        }
        assert!(
            child.wait().unwrap().success(),
            "a ping-pong process failed{}: {system}",
            interrupted()
        );
    }
    drop(barrier);
    drop(resources);
    (result.expect("pinger reported nothing"), cores)
}

// ---------------------------------------------------------------------------------------
// Reporting

fn stats(samples: &[f64]) -> (f64, f64, f64) {
    let mut sorted = samples.to_vec();
    sorted.sort_by(|a, b| a.total_cmp(b));
    (sorted[sorted.len() / 2], sorted[0], sorted[sorted.len() - 1])
}

fn machine() -> String {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find(|l| l.starts_with("model name"))
                .map(|l| l.split(':').nth(1).unwrap_or("").trim().to_owned())
        })
        .unwrap_or_else(|| "unknown cpu".into());
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    format!("{cpu}, {} cores, Linux {}", cores(), kernel.trim())
}

/// Versions of the peers, read from this crate's Cargo.lock at build time.
fn lock_version(package: &str) -> String {
    let lock = include_str!("../Cargo.lock");
    let needle = format!("name = \"{package}\"\nversion = \"");
    lock.find(&needle)
        .map(|at| {
            let rest = &lock[at + needle.len()..];
            rest[..rest.find('"').unwrap()].to_owned()
        })
        .unwrap_or_else(|| "unknown".into())
}

fn salias_revision() -> String {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    let run = |args: &[&str]| {
        Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
    };
    let head = run(&["rev-parse", "--short=12", "HEAD"]).unwrap_or_else(|| "unknown".into());
    let dirty = run(&["status", "--porcelain", "--", "src", "Cargo.toml"]).is_some_and(|s| !s.is_empty());
    format!("{head}{}", if dirty { "+dirty" } else { "" })
}

fn json_str(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() >= 6 && args[1] == "--role" {
        child(&args[2], &args[3], args[4].parse().unwrap(), &args[6..]);
        return;
    }
    if args.iter().any(|a| a == "--help" || a == "-h") {
        println!(
            "salias-comparison [--quick] [--rounds N] [--only throughput|latency|openloop] [--two-publishers]\n\
             \x20                 [--no-aeron] [--systems salias,aeron,iceoryx2,floor] [--messages N]\n\
             \x20                 [--pings N] [--salias-ring BYTES] [--ice-buffer SAMPLES]\n\
             \x20                 [--loads M,M,...] [--ol-duration S] [--ol-warmup S]\n\
             default: 5 rounds, 10M messages per publisher, 200k pings; --quick: 3 rounds, 2M, 100k.\n\
             open loop: loads 0.1,0.5,1,2,5,10,20,50 M msg/s until a system saturates, 1 s per level\n\
             \x20          + 0.2 s warm-up (--quick: 0.5 s + 0.1 s); default runs throughput, latency, open loop.\n\
             2P1S runs by default only with >= 3 cores. Results: comparison/results/<unix time>.jsonl"
        );
        return;
    }
    cores();
    catch_interrupt();
    let quick = args.iter().any(|a| a == "--quick");
    let only = args
        .iter()
        .position(|a| a == "--only")
        .and_then(|i| args.get(i + 1))
        .cloned();
    if let Some(o) = only.as_deref() {
        assert!(
            ["throughput", "latency", "openloop"].contains(&o),
            "--only takes throughput, latency or openloop, not {o}"
        );
    }
    let run_throughput = only.as_deref().is_none_or(|o| o == "throughput");
    let run_latency = only.as_deref().is_none_or(|o| o == "latency");
    let run_openloop = only.as_deref().is_none_or(|o| o == "openloop");
    let two_publishers = cores() >= 3 || args.iter().any(|a| a == "--two-publishers");
    let skip_aeron = args.iter().any(|a| a == "--no-aeron");
    let rounds = args
        .iter()
        .position(|a| a == "--rounds")
        .and_then(|i| args.get(i + 1))
        .map(|r| r.parse::<usize>().unwrap())
        .unwrap_or(if quick { 3 } else { 5 });
    let flag = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .map(|v| v.parse::<u64>().unwrap())
    };
    let messages: u64 = flag("--messages").unwrap_or(if quick { 2_000_000 } else { 10_000_000 });
    let pings: u64 = flag("--pings").unwrap_or(if quick { 100_000 } else { 200_000 });
    let salias_ring: u64 = flag("--salias-ring").unwrap_or(1 << 20);
    let ice_buffer: u64 = flag("--ice-buffer").unwrap_or(salias_ring / 64);
    // `--systems salias,aeron,iceoryx2,floor` (floor = both floors) restricts what runs.
    let systems: Option<Vec<String>> = args
        .iter()
        .position(|a| a == "--systems")
        .and_then(|i| args.get(i + 1))
        .map(|v| v.split(',').map(|s| s.trim().to_owned()).collect());
    let wanted = |system: &str| {
        let system = if system == "spsc-floor" { "floor" } else { system };
        (system != "aeron" || !skip_aeron) && systems.as_ref().is_none_or(|list| list.iter().any(|s| s == system))
    };

    // Throughput setups, in the order they alternate within a round.
    let mut setups = Vec::new();
    let mut add = |system: &'static str, variant, publishers, param| {
        if !wanted(system) {
            return;
        }
        setups.push(Setup {
            system,
            variant,
            publishers,
            messages,
            param,
        })
    };
    add("salias", "offer", 1, salias_ring);
    add("aeron", "try_claim", 1, 64 << 20);
    add("iceoryx2", "loan_uninit", 1, ice_buffer);
    add("salias", "offer_batch16", 1, salias_ring);
    add("iceoryx2", "loan_uninit_block", 1, ice_buffer);
    add("aeron", "offer", 1, 64 << 20);
    add("spsc-floor", "batch16", 1, salias_ring);
    if !quick && salias_ring != 64 << 20 {
        // salias with a ring as large as Aeron's term (Aeron's IPC window is term / 2)
        add("salias", "offer", 1, 64 << 20);
    }
    if two_publishers {
        add("salias", "offer", 2, salias_ring);
        add("aeron", "try_claim", 2, 64 << 20);
        add("iceoryx2", "loan_uninit", 2, ice_buffer);
        add("salias", "offer_batch16", 2, salias_ring);
    }
    // Open loop: offered loads in M msg/s (`--loads 0.1,0.5,…`), run per level until a
    // system saturates; a fixed duration per level plus an unrecorded warm-up.
    let loads: Vec<f64> = args
        .iter()
        .position(|a| a == "--loads")
        .and_then(|i| args.get(i + 1))
        .map(|v| v.split(',').map(|x| x.trim().parse::<f64>().unwrap()).collect())
        .unwrap_or_else(|| vec![0.1, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0]);
    let float_flag = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .map(|v| v.parse::<f64>().unwrap())
    };
    let ol_duration = float_flag("--ol-duration").unwrap_or(if quick { 0.5 } else { 1.0 });
    let ol_warmup = float_flag("--ol-warmup").unwrap_or(if quick { 0.1 } else { 0.2 });
    let mut openloop_systems: Vec<(&'static str, u64)> =
        vec![("salias", salias_ring), ("aeron", 64 << 20), ("iceoryx2", ice_buffer)];
    openloop_systems.retain(|(s, _)| wanted(s));
    let mut latency_systems = vec!["floor", "salias", "aeron", "iceoryx2"];
    latency_systems.retain(|s| wanted(s));
    let skip_aeron = !wanted("aeron");

    // Leave /dev/shm and /tmp as found: iceoryx2 keeps a global management object in
    // /dev/shm and directories under /tmp/iceoryx2 after its last process exits.
    let _tidy = ShmTidy::snapshot();

    // The embedded Aeron C media driver, for the whole invocation.
    let driver = if skip_aeron { None } else { Some(start_aeron_driver()) };
    let mut ctx = Ctx {
        aeron_dir: driver.as_ref().map_or("-".into(), |d| d.dir().to_owned()),
        next_stream: 1000,
    };

    let out_dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("results");
    std::fs::create_dir_all(&out_dir).unwrap();
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let out_path = out_dir.join(format!("{stamp}.jsonl"));
    let mut out = std::fs::File::create(&out_path).unwrap();
    let versions = format!(
        "{{\"salias\":{},\"rusteron-client\":{},\"rusteron-media-driver\":{},\"aeron-c\":{},\"iceoryx2\":{},\"rustc\":{}}}",
        json_str(&salias_revision()),
        json_str(&lock_version("rusteron-client")),
        json_str(&lock_version("rusteron-media-driver")),
        json_str(&if skip_aeron {
            "not run".into()
        } else {
            rusteron_client::Aeron::version_full().to_owned()
        }),
        json_str(&lock_version("iceoryx2")),
        json_str(env!("CMP_RUSTC_VERSION")),
    );
    let config = format!(
        "{{\"messages_per_publisher\":{messages},\"pings\":{pings},\"ping_warmup\":{PING_WARMUP},\"poll_limit\":{POLL_LIMIT},\"batch\":{BATCH},\"salias_ring_bytes\":{salias_ring},\"aeron_uri\":{},\"aeron_driver\":\"embedded C driver in the parent process, threading SHARED, backoff idle, unpinned; non-sparse log files, clients pre-touch mapped memory, publication linger 200 ms\",\"iceoryx2_throughput\":\"ipc::Service, subscriber_max_buffer_size {ice_buffer}, safe overflow off, history 0, DiscardData + application retry\",\"iceoryx2_latency\":\"buffer 1, safe overflow on, history 0\",\"openloop\":{{\"loads_m_per_s\":[{}],\"duration_s\":{ol_duration},\"warmup_s\":{ol_warmup},\"systems\":\"salias FifoMpsc 1P1S offer (ring {salias_ring} B); aeron exclusive publication try_claim; iceoryx2 throughput service (buffer {ice_buffer}) loan_uninit, refused = reached no subscriber\",\"stamps\":\"CLOCK_MONOTONIC ns; words[0] planned, words[1] sent (the clock read that ended the wait; restamped on a retry); receive stamped per message in the poll callback\",\"histogram\":\"hdrhistogram 7, 1 ns .. 1000 s, 3 significant digits\",\"saturated\":\"plan ended > 10% late or queueing p50 > 100 us\"}}}}",
        json_str(AERON_URI),
        loads.iter().map(|l| l.to_string()).collect::<Vec<_>>().join(",")
    );
    writeln!(
        out,
        "{{\"machine\":{},\"command\":{},\"versions\":{versions},\"rounds\":{rounds},\"config\":{config}}}",
        json_str(&machine()),
        json_str(&args.join(" "))
    )
    .unwrap();
    println!(
        "salias comparison on {}; {rounds} alternating rounds; raw data: {}",
        machine(),
        out_path.display()
    );
    println!("versions: {versions}");
    if !two_publishers {
        println!("(2P1S skipped: {} cores; pass --two-publishers to force)", cores());
    }

    let started = Instant::now();
    let mut results: Vec<Vec<Run>> = setups.iter().map(|_| Vec::new()).collect();
    for round in 0..if run_throughput { rounds } else { 0 } {
        let n = setups.len();
        for k in 0..n {
            let i = (k + round) % n;
            let setup = &setups[i];
            let run = throughput_run(setup, round, &mut ctx);
            writeln!(
                out,
                "{{\"bench\":\"throughput\",\"system\":{},\"label\":{},\"round\":{round},\"publishers\":{},\"messages_per_publisher\":{},\"published_per_s\":{:.0},\"delivered_per_s\":{:.0},\"refused_fraction\":{:.6},\"placement\":{}}}",
                json_str(if setup.system == "spsc-floor" { "spsc-floor" } else { setup.system }),
                json_str(&setup.label()),
                setup.publishers,
                setup.messages,
                run.published_per_s,
                run.delivered_per_s,
                run.refused,
                json_str(&run.placement)
            )
            .unwrap();
            out.flush().unwrap();
            eprintln!(
                "  round {}/{rounds} {:<44} delivered {:>7.2} M/s",
                round + 1,
                setup.label(),
                run.delivered_per_s / 1e6
            );
            results[i].push(run);
        }
        eprintln!(
            "throughput round {}/{rounds} done after {:.1?}",
            round + 1,
            started.elapsed()
        );
    }

    let mut latency: Vec<Vec<Pings>> = latency_systems.iter().map(|_| Vec::new()).collect();
    let mut pingpong_cores = [0, 0];
    for round in 0..if run_latency { rounds } else { 0 } {
        let n = latency_systems.len();
        for k in 0..n {
            let i = (k + round) % n;
            let system = latency_systems[i];
            let (p, cores) = pingpong_run(system, pings, round, &mut ctx);
            pingpong_cores = cores;
            writeln!(
                out,
                "{{\"bench\":\"pingpong\",\"system\":{},\"round\":{round},\"cores\":[{},{}],\"one_way_ns\":{{\"p50\":{},\"p90\":{},\"p99\":{},\"p99.9\":{},\"p99.99\":{},\"max\":{},\"count\":{}}}}}",
                json_str(system),
                cores[0],
                cores[1],
                p.rtt[0] / 2,
                p.rtt[1] / 2,
                p.rtt[2] / 2,
                p.rtt[3] / 2,
                p.rtt[4] / 2,
                p.rtt[5] / 2,
                p.count
            )
            .unwrap();
            out.flush().unwrap();
            latency[i].push(p);
        }
        eprintln!(
            "latency round {}/{rounds} done after {:.1?}",
            round + 1,
            started.elapsed()
        );
    }

    // Open loop, level by level; within a level the systems alternate round by round.
    let mut openloop: Vec<(f64, Vec<Vec<OpenLoop>>)> = Vec::new();
    let mut sweeping: Vec<bool> = openloop_systems.iter().map(|_| true).collect();
    for &load in if run_openloop { &loads[..] } else { &[] } {
        let active: Vec<usize> = (0..openloop_systems.len()).filter(|&i| sweeping[i]).collect();
        if active.is_empty() {
            break;
        }
        let mut runs: Vec<Vec<OpenLoop>> = openloop_systems.iter().map(|_| Vec::new()).collect();
        for round in 0..rounds {
            for k in 0..active.len() {
                let i = active[(k + round) % active.len()];
                let (system, param) = openloop_systems[i];
                let r = openloop_run(system, param, load * 1e6, (ol_duration, ol_warmup), round, &mut ctx);
                writeln!(
                    out,
                    "{{\"bench\":\"openloop\",\"system\":{},\"round\":{round},\"offered_per_s\":{:.0},\"achieved_per_s\":{:.0},\"duration_s\":{ol_duration},\"warmup_s\":{ol_warmup},\"refused_fraction\":{:.6},\"late_fraction\":{:.6},\"saturated\":{},\"placement\":{},\"queueing_ns\":{},\"service_ns\":{},\"total_ns\":{}}}",
                    json_str(system),
                    load * 1e6,
                    r.achieved_per_s,
                    r.refused,
                    r.late_fraction,
                    r.saturated(),
                    json_str(&r.placement),
                    hist_json(&r.hist[0]),
                    hist_json(&r.hist[1]),
                    hist_json(&r.hist[2])
                )
                .unwrap();
                out.flush().unwrap();
                eprintln!(
                    "  open loop {load:>5} M/s round {}/{rounds} {system:<9} total p50 {:>9} p99 {:>9} p99.9 {:>10} ns, sent at {:.2} M/s{}",
                    round + 1,
                    r.hist[2][0],
                    r.hist[2][2],
                    r.hist[2][3],
                    r.achieved_per_s / 1e6,
                    if r.saturated() { " (saturated)" } else { "" }
                );
                runs[i].push(r);
            }
        }
        // A system that saturated in the majority of this level's rounds stops here.
        for &i in &active {
            let saturated = runs[i].iter().filter(|r| r.saturated()).count();
            if saturated * 2 > runs[i].len() {
                sweeping[i] = false;
            }
        }
        openloop.push((load, runs));
        eprintln!("open loop {load} M/s done after {:.1?}", started.elapsed());
    }
    drop(driver);

    // ---- summary
    if run_throughput {
        println!(
            "\n{:<46} {:>26} {:>26} {:>9}  placement",
            "throughput, 64-byte messages", "published M/s med [min,max]", "delivered M/s med [min,max]", "refused"
        );
        for (setup, runs) in setups.iter().zip(&results) {
            let (p, p0, p1) = stats(&runs.iter().map(|r| r.published_per_s / 1e6).collect::<Vec<_>>());
            let (d, d0, d1) = stats(&runs.iter().map(|r| r.delivered_per_s / 1e6).collect::<Vec<_>>());
            let (refused, _, _) = stats(&runs.iter().map(|r| r.refused * 100.0).collect::<Vec<_>>());
            println!(
                "{:<46} {p:>9.2} [{p0:>6.2},{p1:>6.2}] {d:>11.2} [{d0:>6.2},{d1:>6.2}] {refused:>8.2}%  {}",
                setup.label(),
                runs[0].placement
            );
        }
        // Ratios of delivered rates, per round (the runs of a round ran back to back), then
        // the median and range over rounds.
        let find = |system: &str, variant: &str, publishers: u32| {
            setups
                .iter()
                .position(|s| s.system == system && s.variant == variant && s.publishers == publishers)
        };
        let pairs = [
            (("salias", "offer", 1), ("aeron", "try_claim", 1)),
            (("salias", "offer", 1), ("aeron", "offer", 1)),
            (("salias", "offer", 1), ("iceoryx2", "loan_uninit", 1)),
            (("salias", "offer", 1), ("spsc-floor", "batch16", 1)),
            (("salias", "offer_batch16", 1), ("spsc-floor", "batch16", 1)),
            (("salias", "offer_batch16", 1), ("aeron", "try_claim", 1)),
            (("salias", "offer", 2), ("aeron", "try_claim", 2)),
            (("salias", "offer", 2), ("iceoryx2", "loan_uninit", 2)),
        ];
        println!("\nratios of delivered rates, median [min,max] of per-round ratios:");
        for (a, b) in pairs {
            if let (Some(i), Some(j)) = (find(a.0, a.1, a.2), find(b.0, b.1, b.2)) {
                let ratios: Vec<f64> = results[i]
                    .iter()
                    .zip(&results[j])
                    .map(|(x, y)| x.delivered_per_s / y.delivered_per_s)
                    .collect();
                let (m, lo, hi) = stats(&ratios);
                println!(
                    "  {:<32} / {:<32} {m:>6.2}× [{lo:.2}, {hi:.2}]",
                    format!("{} {}P1S {}", a.0, a.2, a.1),
                    format!("{} {}P1S {}", b.0, b.2, b.1)
                );
            }
        }
    }
    if run_latency {
        println!(
            "\nping-pong one way (round trip / 2) between cores {} and {}, {pings} pings + {PING_WARMUP} warm-up × {rounds} rounds; ns, median over rounds [min,max] of p50; medians of the other percentiles:",
            pingpong_cores[0], pingpong_cores[1]
        );
        println!(
            "{:<10} {:>20} {:>8} {:>8} {:>8} {:>9} {:>9}",
            "system", "p50 [min,max]", "p90", "p99", "p99.9", "p99.99", "max"
        );
        let medians: Vec<f64> = latency
            .iter()
            .map(|runs| stats(&runs.iter().map(|p| p.rtt[0] as f64 / 2.0).collect::<Vec<_>>()).0)
            .collect();
        for (system, runs) in latency_systems.iter().zip(&latency) {
            let q = |k: usize| stats(&runs.iter().map(|p| p.rtt[k] as f64 / 2.0).collect::<Vec<_>>());
            let (p50, lo, hi) = q(0);
            println!(
                "{system:<10} {:>20} {:>8.0} {:>8.0} {:>8.0} {:>9.0} {:>9.0}",
                format!("{p50:.0} [{lo:.0},{hi:.0}]"),
                q(1).0,
                q(2).0,
                q(3).0,
                q(4).0,
                q(5).0
            );
        }
        let at = |s: &str| latency_systems.iter().position(|x| *x == s);
        if let Some(si) = at("salias") {
            for other in ["aeron", "iceoryx2", "floor"] {
                if let Some(oi) = at(other) {
                    let ratios: Vec<f64> = latency[si]
                        .iter()
                        .zip(&latency[oi])
                        .map(|(x, y)| x.rtt[0] as f64 / y.rtt[0] as f64)
                        .collect();
                    let (m, lo, hi) = stats(&ratios);
                    println!(
                        "  p50 latency salias / {other:<9} {m:>5.2}× [{lo:.2}, {hi:.2}]  (medians {:.0} / {:.0} ns)",
                        medians[si], medians[oi]
                    );
                }
            }
        }
    }
    if run_openloop && !openloop.is_empty() {
        let [a, b] = latency_cores();
        println!(
            "\nopen loop, 1P1S, publisher on core {a}, subscriber on core {b}, {ol_duration} s per level + {ol_warmup} s warm-up × {rounds} rounds;\nns, medians over rounds of each percentile (total = queueing + service):"
        );
        println!(
            "{:>7} {:<9} {:>8} {:>9} {:>9} {:>10} {:>10} {:>9} {:>9} {:>8} {:>6}",
            "M/s", "system", "sent M/s", "total p50", "p99", "p99.9", "max", "queue p50", "serv p50", "refused", "sat"
        );
        for (load, runs) in &openloop {
            for ((system, _), runs) in openloop_systems.iter().zip(runs) {
                if runs.is_empty() {
                    continue;
                }
                let m = |k: usize, j: usize| stats(&runs.iter().map(|r| r.hist[k][j] as f64).collect::<Vec<_>>()).0;
                let sent = stats(&runs.iter().map(|r| r.achieved_per_s / 1e6).collect::<Vec<_>>()).0;
                let refused = stats(&runs.iter().map(|r| r.refused * 100.0).collect::<Vec<_>>()).0;
                let saturated = runs.iter().filter(|r| r.saturated()).count();
                println!(
                    "{load:>7} {system:<9} {sent:>8.2} {:>9.0} {:>9.0} {:>10.0} {:>10.0} {:>9.0} {:>9.0} {refused:>7.2}% {saturated:>4}/{}",
                    m(2, 0),
                    m(2, 2),
                    m(2, 3),
                    m(2, 5),
                    m(0, 0),
                    m(1, 0),
                    runs.len()
                );
            }
        }
    }
    println!("\nraw data: {}", out_path.display());
}

/// Removes, on drop (also when a run panics), the iceoryx2 objects this invocation left:
/// `/dev/shm/iox2_*` entries that were not there before, and `/tmp/iceoryx2` if it did not
/// exist before and is empty apart from empty directories.
struct ShmTidy {
    before: Vec<std::ffi::OsString>,
    tmp_existed: bool,
}

const ICE_TMP: &str = "/tmp/iceoryx2";

impl ShmTidy {
    fn iox2_entries() -> Vec<std::ffi::OsString> {
        std::fs::read_dir("/dev/shm")
            .map(|dir| {
                dir.filter_map(|e| e.ok())
                    .map(|e| e.file_name())
                    .filter(|n| n.to_string_lossy().starts_with("iox2_"))
                    .collect()
            })
            .unwrap_or_default()
    }

    fn snapshot() -> ShmTidy {
        ShmTidy {
            before: Self::iox2_entries(),
            tmp_existed: std::path::Path::new(ICE_TMP).exists(),
        }
    }

    fn remove_empty_dirs(path: &std::path::Path) {
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

/// Starts the embedded Aeron C media driver: SHARED threading (one agent thread runs the
/// conductor, sender and receiver; IPC needs only the conductor), default backoff idle
/// strategy, log files fully allocated (clients pre-touch their mappings), directory under /dev/shm deleted on start and exit.
fn start_aeron_driver() -> rusteron_media_driver::testing::EmbeddedDriver {
    use rusteron_media_driver::bindings::aeron_threading_mode_enum;
    rusteron_media_driver::testing::EmbeddedDriver::launch_with(|ctx| {
        ctx.set_threading_mode(aeron_threading_mode_enum::AERON_THREADING_MODE_SHARED)?;
        ctx.set_ipc_term_buffer_length(64 << 20)?;
        // a fully allocated (not sparse) log file; clients map it with MAP_POPULATE
        ctx.set_term_buffer_sparse_file(false)?;
        // Every run drains its publications before closing them, so a short linger only
        // frees each run's 192 MiB log from /dev/shm sooner (default 5 s).
        ctx.set_publication_linger_timeout_ns(200_000_000)?;
        Ok(())
    })
    .expect("start the embedded Aeron media driver")
}
