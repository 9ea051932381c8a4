//! Reading any channel as raw bytes, whatever its kind and message type: what `echo`, `hz`
//! and `record` receive through.
//!
//! A Fanout channel is read as a lossy subscriber (it never holds a publisher back; what it
//! misses is counted) or as a tethered one (publishers wait for it; it loses nothing). An
//! Mpsc channel has one subscriber slot, so reading it takes that slot and consumes what is
//! read: the tool says so on stderr, and a slot held by another process is refused with the
//! library's error.

use std::time::Duration;

use salias::kind::{Fanout, Fifo, Mode, Mpsc, Ordered, Topology};
use salias::receive::{MessageInfo, Start};
use salias::status::{ChannelStatus, channel_status_with};
use salias::{Bytes, Channel, Error, LossySubscriber, ReceiveError, Subscriber, Trust};

/// How a command reads.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Reading {
    /// Publishers never wait for the reader (Fanout only).
    Lossy,
    /// Publishers wait for the reader; nothing is lost.
    Tethered,
}

impl Reading {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Reading::Lossy => "lossy",
            Reading::Tethered => "tethered",
        }
    }
}

/// One message as a tap hands it out.
pub(crate) struct Tapped<'a> {
    /// The publisher slot that sent it.
    pub slot: usize,
    /// Ordered channels: its global sequence number.
    pub sequence: Option<u64>,
    /// Messages missed right before it: FIFO, of its publisher's stream (a lossy reader
    /// overrun); Ordered, sequence numbers (overrun, or held by a publisher that died).
    pub missed_before: u64,
    pub bytes: &'a [u8],
}

/// A subscriber of any kind, reading bytes.
pub(crate) trait Tap {
    /// Hands up to `max` messages to `handle`, waiting at most `wait` for the first; how
    /// many. `Ok(0)` when none came in time.
    fn take(&mut self, max: usize, wait: Duration, handle: &mut dyn FnMut(Tapped<'_>)) -> Result<usize, ReceiveError>;
    /// Why the channel broke, after `Corrupt` or `Truncated`.
    fn fault(&self) -> Option<Error>;
}

/// A channel opened for reading, and what the tool knows of it.
pub(crate) struct Opened {
    pub tap: Box<dyn Tap>,
    pub status: ChannelStatus,
    pub reading: Reading,
}

/// Opens `name` for reading as `reading` asks; `None` asks for the command's default (lossy
/// on Fanout; on Mpsc, the one subscriber slot). A Fanout reader starts where `start` says
/// (`Channel::subscriber_from`, `lossy_subscriber_from`); an Mpsc one where the last
/// subscriber stopped.
pub(crate) fn open(name: &str, trust: &Trust, reading: Option<Reading>, start: Start) -> Result<Opened, String> {
    let status = channel_status_with(name, trust).map_err(|e| crate::commands::explain(name, &e))?;
    let fanout = status.kind.ends_with("Fanout");
    let reading = match (reading, fanout) {
        (Some(Reading::Lossy), false) => {
            return Err(format!(
                "{name:?} is {}: an Mpsc channel has one subscriber and no lossy readers; read it tethered (without --lossy) while no other subscriber is connected",
                status.kind
            ));
        }
        (Some(reading), _) => reading,
        (None, true) => Reading::Lossy,
        (None, false) => Reading::Tethered,
    };
    if start != Start::End && !fanout {
        return Err(format!(
            "{name:?} is {}: only a Fanout channel's readers start at history (--from {}); an Mpsc channel's one subscriber resumes where the last one stopped",
            status.kind,
            describe_start(start),
        ));
    }
    if !fanout {
        eprintln!(
            "salias: {name:?} is {}: reading takes its one subscriber slot and consumes what is read",
            status.kind
        );
    }
    let tap = match status.kind.as_str() {
        "FifoMpsc" => mpsc::<Fifo>(name, trust),
        "OrderedMpsc" => mpsc::<Ordered>(name, trust),
        "FifoFanout" => fanout_tap::<Fifo>(name, trust, reading, start),
        "OrderedFanout" => fanout_tap::<Ordered>(name, trust, reading, start),
        other => {
            return Err(format!(
                "{name:?} is of a kind this tool does not know ({other}); use the salias tool of the version that made it"
            ));
        }
    }
    .map_err(|e| crate::commands::explain(name, &e))?;
    Ok(Opened { tap, status, reading })
}

fn mpsc<M: Mode>(name: &str, trust: &Trust) -> Result<Box<dyn Tap>, Error>
where
    Subscriber<Bytes, M, Mpsc>: Tethered,
{
    let channel = Channel::<Bytes, M, Mpsc>::connect_as_bytes_with(name, trust)?;
    // A subscriber keeps the channel's memory mapped; the handle itself can go.
    Ok(Box::new(Held::new(channel.subscriber()?)))
}

fn fanout_tap<M: Mode>(name: &str, trust: &Trust, reading: Reading, start: Start) -> Result<Box<dyn Tap>, Error>
where
    Subscriber<Bytes, M, Fanout>: Tethered,
    LossySubscriber<Bytes, M>: Lossy,
{
    let channel = Channel::<Bytes, M, Fanout>::connect_as_bytes_with(name, trust)?;
    if reading == Reading::Tethered {
        return Ok(Box::new(Held::new(channel.subscriber_from(start)?)));
    }
    let subscriber = channel.lossy_subscriber_from(start)?;
    let buffer = vec![0; channel.max_message_size()];
    Ok(Box::new(Copying { subscriber, buffer }))
}

/// A tethered subscriber, and per publisher slot what it reports missing before that
/// slot's first message (FIFO, `--from last:N`: what the ring no longer held).
struct Held<S> {
    subscriber: S,
    missed: Vec<u64>,
}

impl<S: Tethered> Held<S> {
    fn new(subscriber: S) -> Self {
        let missed = subscriber.history_missed().to_vec();
        Held { subscriber, missed }
    }
}

/// A lossy subscriber and the buffer it copies into.
struct Copying<S> {
    subscriber: S,
    buffer: Vec<u8>,
}

/// Where a message came from: publisher slot, sequence number (Ordered), and sequence
/// numbers missing right before it (Ordered).
type Origin = (usize, Option<u64>, u64);

/// [`Origin`] of either mode's [`MessageInfo`].
trait Source {
    fn origin(&self) -> Origin;
}

impl Source for MessageInfo<Fifo> {
    fn origin(&self) -> Origin {
        (self.publisher_slot(), None, 0)
    }
}

impl Source for MessageInfo<Ordered> {
    fn origin(&self) -> Origin {
        (self.publisher_slot(), Some(self.sequence()), self.gap_before())
    }
}

/// The tethered subscriber's side of [`Tap`].
trait Tethered {
    fn take(&mut self, max: usize, wait: Duration, handle: &mut dyn FnMut(Tapped<'_>)) -> Result<usize, ReceiveError>;
    fn fault(&self) -> Option<Error>;
    fn history_missed(&self) -> &[u64];
}

impl<M: Mode, K: Topology> Tethered for Subscriber<Bytes, M, K>
where
    MessageInfo<M>: Source,
{
    fn take(&mut self, max: usize, wait: Duration, handle: &mut dyn FnMut(Tapped<'_>)) -> Result<usize, ReceiveError> {
        let mut deliver = |info: MessageInfo<M>, bytes: &[u8]| {
            let (slot, sequence, missed_before) = info.origin();
            handle(Tapped {
                slot,
                sequence,
                missed_before,
                bytes,
            });
        };
        let drained = self.drain(max, &mut deliver)?;
        if drained > 0 || max == 0 {
            return Ok(drained);
        }
        match self.recv_timeout(wait) {
            Ok(message) => deliver(message.info(), &message),
            Err(ReceiveError::TimedOut) => return Ok(0),
            Err(error) => return Err(error),
        }
        Ok(1 + self.drain(max - 1, &mut deliver)?)
    }

    fn fault(&self) -> Option<Error> {
        Subscriber::fault(self)
    }

    fn history_missed(&self) -> &[u64] {
        Subscriber::history_missed(self)
    }
}

/// The lossy subscriber's side of [`Tap`].
trait Lossy {
    fn take_one(&mut self, buffer: &mut [u8], wait: Option<Duration>) -> Result<Option<(usize, Origin)>, ReceiveError>;
    fn fault(&self) -> Option<Error>;
}

impl<M: Mode> Lossy for LossySubscriber<Bytes, M>
where
    MessageInfo<M>: Source,
{
    fn take_one(&mut self, buffer: &mut [u8], wait: Option<Duration>) -> Result<Option<(usize, Origin)>, ReceiveError> {
        let copied = match wait {
            None => self.try_recv_into(buffer)?,
            Some(wait) => match self.recv_into(buffer, Some(wait)) {
                Ok(copied) => Some(copied),
                Err(ReceiveError::TimedOut) => None,
                Err(error) => return Err(error),
            },
        };
        Ok(copied.map(|copied| {
            let (slot, sequence, gap) = copied.info().origin();
            let missed = if sequence.is_some() {
                gap
            } else {
                copied.missed_before()
            };
            (copied.into_inner(), (slot, sequence, missed))
        }))
    }

    fn fault(&self) -> Option<Error> {
        LossySubscriber::fault(self)
    }
}

impl<S: Tethered> Tap for Held<S> {
    fn take(&mut self, max: usize, wait: Duration, handle: &mut dyn FnMut(Tapped<'_>)) -> Result<usize, ReceiveError> {
        if self.missed.iter().all(|&missed| missed == 0) {
            return self.subscriber.take(max, wait, handle);
        }
        let missed = &mut self.missed;
        self.subscriber.take(max, wait, &mut |mut tapped| {
            if let Some(before) = missed.get_mut(tapped.slot) {
                tapped.missed_before += std::mem::take(before);
            }
            handle(tapped)
        })
    }

    fn fault(&self) -> Option<Error> {
        self.subscriber.fault()
    }
}

impl<S: Lossy> Tap for Copying<S> {
    fn take(&mut self, max: usize, wait: Duration, handle: &mut dyn FnMut(Tapped<'_>)) -> Result<usize, ReceiveError> {
        let mut taken = 0;
        while taken < max {
            let waiting = (taken == 0).then_some(wait);
            let Some((len, (slot, sequence, missed_before))) = self.subscriber.take_one(&mut self.buffer, waiting)?
            else {
                break;
            };
            handle(Tapped {
                slot,
                sequence,
                missed_before,
                bytes: &self.buffer[..len],
            });
            taken += 1;
        }
        Ok(taken)
    }

    fn fault(&self) -> Option<Error> {
        self.subscriber.fault()
    }
}

/// Why a pump stopped.
#[derive(PartialEq, Eq, Debug)]
pub(crate) enum Stopped {
    /// Ctrl-C.
    Interrupted,
    /// The deadline passed.
    Deadline,
    /// The limit of messages was received.
    Limit,
    /// The handler asked to stop (enough messages, nobody reads the output).
    Handler,
}

/// What a pump's handler says after each message.
pub(crate) enum Go {
    On,
    Stop,
}

/// Receives from `opened` until Ctrl-C, `deadline`, `limit` messages, or `handle` says
/// stop, handing every message to `handle` (and receiving none past the limit). A channel that breaks ends it with the reason; publishers that all
/// went are noted on stderr once per departure and awaited.
pub(crate) fn pump(
    name: &str,
    opened: &mut Opened,
    deadline: Option<std::time::Instant>,
    limit: Option<u64>,
    mut handle: impl FnMut(Tapped<'_>) -> Go,
) -> Result<Stopped, String> {
    /// The longest a wait lasts before Ctrl-C is looked at again.
    const LOOK_AGAIN: Duration = Duration::from_millis(50);
    let interrupted = crate::interrupt::on_ctrl_c()?;
    let mut stop = false;
    let mut left = limit.unwrap_or(u64::MAX);
    loop {
        if left == 0 {
            return Ok(Stopped::Limit);
        }
        if interrupted.pressed() {
            return Ok(Stopped::Interrupted);
        }
        let wait = match deadline {
            Some(deadline) => match deadline.checked_duration_since(std::time::Instant::now()) {
                Some(left) if !left.is_zero() => left.min(LOOK_AGAIN),
                _ => return Ok(Stopped::Deadline),
            },
            None => LOOK_AGAIN,
        };
        let max = usize::try_from(left.min(256)).unwrap_or(256);
        let taken = opened.tap.take(max, wait, &mut |message| {
            if !stop && matches!(handle(message), Go::Stop) {
                stop = true;
            }
        });
        if stop {
            return Ok(Stopped::Handler);
        }
        match taken {
            Ok(taken) => left -= taken as u64,
            Err(ReceiveError::Disconnected) => {
                eprintln!("salias: {name:?}: every publisher has gone; waiting for the next (Ctrl-C stops)");
            }
            Err(ReceiveError::Demoted) => {
                return Err(format!(
                    "{name:?}: a publisher demoted this tethered reader to lossy after the channel's tether timeout; what it had not read may be lost. Read with --lossy, or create the channel without a tether timeout"
                ));
            }
            Err(error) => {
                let fault = opened.tap.fault().map(|fault| format!(": {fault}")).unwrap_or_default();
                return Err(format!("{name:?}: {error}{fault}"));
            }
        }
    }
}

/// `--from`'s words for `start`.
pub(crate) fn describe_start(start: Start) -> String {
    match start {
        Start::Oldest => "oldest".to_owned(),
        Start::Last(n) => format!("last:{n}"),
        _ => "end".to_owned(),
    }
}

/// `--from oldest|end|last:N`.
pub(crate) fn parse_start(value: &str) -> Result<Start, String> {
    match value {
        "end" => Ok(Start::End),
        "oldest" => Ok(Start::Oldest),
        _ => value
            .strip_prefix("last:")
            .and_then(|n| n.parse::<u64>().ok())
            .filter(|&n| n > 0)
            .map(Start::Last)
            .ok_or_else(|| format!("expected end, oldest or last:N with N at least 1 (e.g. last:100), not {value:?}")),
    }
}
