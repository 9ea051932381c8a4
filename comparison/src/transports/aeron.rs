//! Aeron IPC through rusteron: the client, the roles' ends, and the embedded C media
//! driver.

use std::ffi::CString;
use std::time::{Duration, Instant};

use rusteron_client::*;

use crate::message::Msg64;
use crate::roles::Params;
use crate::setup::Api;
use crate::transport::{POLL_LIMIT, PingPong, Publish, Subscribe, Transport};

/// Aeron's IPC term length of the default run, in bytes (also the C driver's default for
/// IPC, `AERON_IPC_TERM_BUFFER_LENGTH_DEFAULT` = 64 MiB). Each setup may name its own.
pub const AERON_TERM_BYTES: u64 = 64 << 20;
/// The shortest and longest term Aeron accepts (`AERON_LOGBUFFER_TERM_{MIN,MAX}_LENGTH`).
pub const TERM_MIN_BYTES: u64 = 64 << 10;
pub const TERM_MAX_BYTES: u64 = 1 << 30;

/// A term length Aeron would refuse.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TermLengthError {
    pub bytes: u64,
}

impl std::fmt::Display for TermLengthError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} B is not an Aeron term length: Aeron takes a power of two from {TERM_MIN_BYTES} (64 KiB) to \
             {TERM_MAX_BYTES} (1 GiB); give one such as 1048576 (1 MiB)",
            self.bytes
        )
    }
}

impl std::error::Error for TermLengthError {}

/// `bytes` if Aeron takes it as a term length; checked here so that a bad size fails with
/// its reason before the driver refuses the publication in a child process.
pub fn term_length(bytes: u64) -> Result<u64, TermLengthError> {
    if bytes.is_power_of_two() && (TERM_MIN_BYTES..=TERM_MAX_BYTES).contains(&bytes) {
        Ok(bytes)
    } else {
        Err(TermLengthError { bytes })
    }
}

/// The publication URI of a run whose term is `term_bytes` long (the setup's size).
pub fn publication_uri(term_bytes: u64) -> String {
    format!("aeron:ipc?term-length={term_bytes}")
}

pub const AERON_SUB_URI: &str = "aeron:ipc";

pub struct Client {
    pub aeron: Aeron,
    pub _ctx: AeronContext,
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

/// An exclusive IPC publication on `stream` with terms of `term_bytes` (already checked by
/// [`term_length`]).
pub fn exclusive_publication(client: &Client, stream: i32, term_bytes: u64) -> AeronExclusivePublication {
    let uri = CString::new(publication_uri(term_bytes)).unwrap();
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
            // SAFETY: try_claim_raw(64) succeeded, so the claim's data is 64 writable bytes of
            // the term buffer, this publication's alone until `commit`; the write is unaligned.
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

/// Publishes `message` with `try_claim`, retrying while Aeron refuses it.
fn publish_until_accepted(publication: &AeronExclusivePublication, claim: &AeronBufferClaim, message: &Msg64) {
    loop {
        let position = publish(publication, claim, true, message);
        if position >= 0 {
            return;
        }
        assert!(retryable(position), "aeron publish failed: {position}");
    }
}

/// Aeron IPC: exclusive publications, one subscription per subscriber on the same stream.
pub enum AeronIpc {}

/// An exclusive publication, `try_claim` or `offer` as the run's API says.
pub struct Publisher {
    publication: AeronExclusivePublication,
    claim: AeronBufferClaim,
    use_claim: bool,
    _client: Client,
}

impl Publish for Publisher {
    #[inline(always)]
    fn offer(&mut self, message: &Msg64) -> bool {
        let position = publish(&self.publication, &self.claim, self.use_claim, message);
        assert!(position >= 0 || retryable(position), "aeron publish failed: {position}");
        position >= 0
    }
}

pub struct Subscriber {
    subscription: AeronSubscription,
    _client: Client,
}

impl Subscribe for Subscriber {
    #[inline(always)]
    fn poll(&mut self, mut receive: impl FnMut(&Msg64)) {
        self.subscription
            .poll_fn(
                |buf: &[u8], _header: AeronHeader| receive(&Msg64::read_from(buf)),
                POLL_LIMIT,
            )
            .expect("aeron poll");
    }
}

/// One side of a ping-pong: stream `a.stream` carries pings, `a.stream + 1` pongs.
pub struct Ends {
    claim: AeronBufferClaim,
    publication: AeronExclusivePublication,
    subscription: AeronSubscription,
    _client: Client,
}

impl Ends {
    /// Publishes on `outbound`, subscribes to `inbound`, both connected.
    fn connect(a: &Params, outbound: i32, inbound: i32) -> Ends {
        let client = connect(&a.aeron_dir);
        let subscription = subscription(&client, inbound);
        let publication = exclusive_publication(&client, outbound, AERON_TERM_BYTES);
        wait_connected(&publication);
        wait_images(&subscription, 1);
        Ends {
            claim: AeronBufferClaim::default(),
            publication,
            subscription,
            _client: client,
        }
    }
}

impl PingPong for Ends {
    #[inline(always)]
    fn send(&mut self, message: &Msg64) {
        publish_until_accepted(&self.publication, &self.claim, message);
    }

    #[inline(always)]
    fn recv(&mut self) -> Msg64 {
        let mut back = None;
        while back.is_none() {
            self.subscription
                .poll_fn(|buf: &[u8], _h: AeronHeader| back = Some(Msg64::read_from(buf)), 1)
                .expect("aeron poll");
        }
        back.expect("polled until one came")
    }

    /// Sends the pong from within the poll's handler, as the ping is read.
    #[inline(always)]
    fn echo(&mut self) {
        let (publication, claim) = (&self.publication, &self.claim);
        let mut echoed = 0;
        while echoed == 0 {
            echoed = self
                .subscription
                .poll_fn(
                    |buf: &[u8], _h: AeronHeader| publish_until_accepted(publication, claim, &Msg64::read_from(buf)),
                    1,
                )
                .expect("aeron poll");
        }
    }
}

impl Transport for AeronIpc {
    type Publisher = Publisher;
    type Subscriber = Subscriber;
    type PingPong = Ends;

    fn publisher(a: &Params) -> Publisher {
        let client = connect(&a.aeron_dir);
        let publication = exclusive_publication(&client, a.stream, a.param);
        wait_connected(&publication);
        Publisher {
            publication,
            claim: AeronBufferClaim::default(),
            use_claim: a.api == Some(Api::TryClaim),
            _client: client,
        }
    }

    fn subscriber(a: &Params) -> Subscriber {
        let client = connect(&a.aeron_dir);
        let subscription = subscription(&client, a.stream);
        wait_images(&subscription, a.publishers as i32);
        Subscriber {
            subscription,
            _client: client,
        }
    }

    fn pinger(a: &Params) -> Ends {
        Ends::connect(a, a.stream, a.stream + 1)
    }

    fn ponger(a: &Params) -> Ends {
        Ends::connect(a, a.stream + 1, a.stream)
    }
}

/// Starts the embedded Aeron C media driver: SHARED threading (one agent thread runs the
/// conductor, sender and receiver; IPC needs only the conductor), default backoff idle
/// strategy, log files fully allocated (clients pre-touch their mappings), directory under
/// /dev/shm deleted on start and exit.
pub fn start_aeron_driver() -> rusteron_media_driver::testing::EmbeddedDriver {
    use rusteron_media_driver::bindings::aeron_threading_mode_enum;
    rusteron_media_driver::testing::EmbeddedDriver::launch_with(|ctx| {
        ctx.set_threading_mode(aeron_threading_mode_enum::AERON_THREADING_MODE_SHARED)?;
        ctx.set_ipc_term_buffer_length(AERON_TERM_BYTES as usize)?;
        // a fully allocated (not sparse) log file; clients map it with MAP_POPULATE
        ctx.set_term_buffer_sparse_file(false)?;
        // Every run drains its publications before closing them, so a short linger only
        // frees each run's logs (three terms each, up to 192 MiB) from /dev/shm sooner
        // (default 5 s).
        ctx.set_publication_linger_timeout_ns(200_000_000)?;
        Ok(())
    })
    .expect("start the embedded Aeron media driver")
}
