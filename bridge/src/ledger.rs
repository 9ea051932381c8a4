//! What an `in` bridge has delivered, kept where its death does not take it: one small
//! record in a file (by default in /dev/shm) named after the near channel and the key,
//! rewritten in place before each run of messages it publishes, so a restarted `in` can
//! tell exactly which messages of the stream its predecessor never delivered.
//!
//! The record does not count messages itself (that would be a write per message, and a
//! crash between publishing and counting would still leave doubt). It says where a run
//! begins: "stream S, message index I and sequence number Q onwards, published one by
//! one from publisher slot P of the near channel, whose commit count was C". The near
//! channel keeps that slot's commit count (`PublisherStatus::published`) after the
//! publisher dies, so the restarted `in` reads how many of the run were committed:
//! `published - C`. A run never spans a drop, a skipped message or a gap, so those
//! messages are exactly the run's first ones.

use std::fs::{File, OpenOptions};
use std::io::ErrorKind;
use std::ops::Range;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use salias::{status::ChannelStatus, status::SlotHolder};

use crate::error::{BridgeError, Result};

/// Bytes of one record: 10 little-endian words and a check word.
const RECORD_LEN: usize = 11 * 8;
const MAGIC: u64 = u64::from_le_bytes(*b"SLBin\0\0\x01");

/// Where one run of published messages begins.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Record {
    pub(crate) stream_id: u64,
    /// The batch number expected after the one being delivered.
    pub(crate) next_batch: u64,
    /// The stream message index of the run's first message.
    pub(crate) index: u64,
    /// How many messages the run may hold at most (the rest of its batch).
    pub(crate) count: u64,
    /// Ordered: the far sequence number of the run's first message (runs are contiguous).
    pub(crate) sequence: u64,
    /// Ordered: sequence numbers being declared lost just before the run (0 once the
    /// declaration is committed, or when there is none).
    pub(crate) gap_before: u64,
    /// The near channel's publisher slot the run is published from.
    pub(crate) slot: u64,
    /// The process publishing it.
    pub(crate) pid: u64,
    /// That slot's commit count before the run.
    pub(crate) published: u64,
}

impl Record {
    fn words(&self) -> [u64; 10] {
        [
            MAGIC,
            self.stream_id,
            self.next_batch,
            self.index,
            self.count,
            self.sequence,
            self.gap_before,
            self.slot,
            self.pid,
            self.published,
        ]
    }

    fn encode(&self, out: &mut [u8; RECORD_LEN]) {
        let words = self.words();
        for (chunk, word) in out.chunks_exact_mut(8).zip(words.iter().chain([&check(&words)])) {
            chunk.copy_from_slice(&word.to_le_bytes());
        }
    }

    fn decode(bytes: &[u8]) -> Option<Record> {
        if bytes.len() != RECORD_LEN {
            return None;
        }
        let mut words = [0u64; 11];
        for (word, chunk) in words.iter_mut().zip(bytes.chunks_exact(8)) {
            *word = u64::from_le_bytes(chunk.try_into().ok()?);
        }
        let [
            magic,
            stream_id,
            next_batch,
            index,
            count,
            sequence,
            gap_before,
            slot,
            pid,
            published,
            sum,
        ] = words;
        let record = Record {
            stream_id,
            next_batch,
            index,
            count,
            sequence,
            gap_before,
            slot,
            pid,
            published,
        };
        (magic == MAGIC && sum == check(&record.words())).then_some(record)
    }
}

/// FNV-1a over the words: tells a whole record from a damaged or foreign file.
fn check(words: &[u64; 10]) -> u64 {
    let mut hash = 0xcbf2_9ce4_8422_2325u64;
    for byte in words.iter().flat_map(|w| w.to_le_bytes()) {
        hash = (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3);
    }
    hash
}

/// Where a restarted `in` takes a stream up again, and what it cannot know.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Resume {
    pub(crate) stream_id: u64,
    pub(crate) next_batch: u64,
    /// The first message index the predecessor did not deliver.
    pub(crate) next_index: u64,
    /// Ordered: the first far sequence number it did not deliver or declare.
    pub(crate) next_sequence: u64,
    /// Messages it was publishing when it died whose arrival cannot be told (the near
    /// channel's count was unreadable, or another process took the slot); empty if none.
    pub(crate) in_doubt: Range<u64>,
    /// Ordered: how many numbers from `next_sequence` on were being declared lost as it
    /// died; they may be declared in the near channel already, and the restart declares
    /// them (again).
    pub(crate) gap_in_doubt: u64,
}

impl Resume {
    /// What `record` means, given the near channel's state read before this process took
    /// a publisher slot in it.
    pub(crate) fn from(record: &Record, status: salias::Result<ChannelStatus>) -> Resume {
        let committed = status.ok().and_then(|status| {
            let slot = status.publishers.get(usize::try_from(record.slot).ok()?)?;
            // Another live holder may have published into the slot since: no telling.
            let ours = match slot.holder {
                SlotHolder::Dead { pid } => u64::from(pid) == record.pid,
                SlotHolder::Free => true,
                SlotHolder::Alive { .. } => false,
            };
            let committed = slot.published.checked_sub(record.published)?;
            (ours && committed <= record.count).then_some(committed)
        });
        let mut resume = Resume {
            stream_id: record.stream_id,
            next_batch: record.next_batch,
            next_index: record.index,
            next_sequence: record.sequence,
            in_doubt: record.index..record.index,
            gap_in_doubt: 0,
        };
        match committed {
            // Nothing of the run committed: a gap being declared before it may or may
            // not be in the near channel.
            Some(0) if record.gap_before > 0 => {
                resume.next_sequence = record.sequence.saturating_sub(record.gap_before);
                resume.gap_in_doubt = record.gap_before;
            }
            Some(done) => {
                resume.next_index = record.index.saturating_add(done);
                resume.next_sequence = record.sequence.saturating_add(done);
            }
            None => {
                resume.next_index = record.index.saturating_add(record.count);
                resume.next_sequence = record.sequence.saturating_add(record.count);
                resume.in_doubt = record.index..resume.next_index;
                resume.gap_in_doubt = record.gap_before;
            }
        }
        resume
    }
}

/// The record file, locked while this `in` runs: a second `in` feeding the same channel
/// from the same key would overwrite it.
pub(crate) struct Ledger {
    file: File,
    path: PathBuf,
    buf: [u8; RECORD_LEN],
}

/// Where records go when the configuration names no directory: shared memory's
/// directory, which outlives the process but not the machine (as do the channels).
pub(crate) fn default_dir() -> PathBuf {
    let shm = Path::new("/dev/shm");
    if shm.is_dir() {
        return shm.to_owned();
    }
    std::env::var_os("XDG_RUNTIME_DIR").map_or_else(std::env::temp_dir, PathBuf::from)
}

impl Ledger {
    /// Opens (or creates) the record of `channel` fed from `key` in `dir`, and returns
    /// what a predecessor left in it.
    pub(crate) fn open(dir: &Path, channel: &str, key: &str) -> Result<(Ledger, Option<Record>)> {
        let path = dir.join(format!("salias-bridge-in.{channel}.{:016x}", fnv(key.as_bytes())));
        let failed = |doing: &str| {
            let path = path.clone();
            let doing = doing.to_owned();
            move |source| BridgeError::State { doing, path, source }
        };
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            // A symlink planted in a shared directory is refused.
            .custom_flags(libc::O_NOFOLLOW)
            .open(&path)
            .map_err(failed("opening"))?;
        file.try_lock().map_err(|e| match e {
            std::fs::TryLockError::WouldBlock => BridgeError::State {
                doing: "locking".into(),
                path: path.clone(),
                source: std::io::Error::new(
                    ErrorKind::WouldBlock,
                    format!("another `in` feeds the channel \"{channel}\" from \"{key}\""),
                ),
            },
            std::fs::TryLockError::Error(source) => failed("locking")(source),
        })?;
        let mut buf = [0u8; RECORD_LEN];
        let previous = match file.read_at(&mut buf, 0) {
            Ok(RECORD_LEN) => Record::decode(&buf),
            Ok(_) => None,
            Err(source) => return Err(failed("reading")(source)),
        };
        Ok((Ledger { file, path, buf }, previous))
    }

    /// Rewrites the record in place: one `pwrite` of 88 bytes, no allocation.
    pub(crate) fn write(&mut self, record: &Record) -> std::io::Result<()> {
        record.encode(&mut self.buf);
        self.file.write_all_at(&self.buf, 0)
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }
}

/// FNV-1a: a stable short name for a key expression, which may hold `/` and `*`.
fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |hash, &byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record() -> Record {
        Record {
            stream_id: 0xfeed,
            next_batch: 8,
            index: 100,
            count: 10,
            sequence: 500,
            gap_before: 0,
            slot: 1,
            pid: 4242,
            published: 60,
        }
    }

    fn status_with(published: u64, holder: SlotHolder) -> salias::Result<ChannelStatus> {
        let name = format!("ledger-unit-{}-{published}", std::process::id());
        let channel = salias::RawFifoMpsc::create(&salias::Config::new(&name).publishers(2))?;
        let mut status = salias::status::channel_status(&name)?;
        drop(channel);
        status.publishers[1].published = published;
        status.publishers[1].holder = holder;
        Ok(status)
    }

    #[test]
    fn records_round_trip_and_refuse_damage() {
        let mut buf = [0u8; RECORD_LEN];
        record().encode(&mut buf);
        assert_eq!(Record::decode(&buf), Some(record()));
        for at in 0..RECORD_LEN {
            let mut damaged = buf;
            damaged[at] ^= 1;
            assert_eq!(Record::decode(&damaged), None, "byte {at}");
        }
        assert_eq!(Record::decode(&buf[..RECORD_LEN - 1]), None);
    }

    #[test]
    fn the_near_channels_count_says_how_much_of_the_run_arrived() {
        let dead = SlotHolder::Dead { pid: 4242 };
        let resume = Resume::from(&record(), status_with(63, dead));
        assert_eq!((resume.next_index, resume.next_sequence), (103, 503));
        assert!(resume.in_doubt.is_empty() && resume.gap_in_doubt == 0);
        let resume = Resume::from(&record(), status_with(60, SlotHolder::Free));
        assert_eq!((resume.next_index, resume.next_sequence), (100, 500));
        // Someone else holds the slot, or the count ran past the run: in doubt.
        for status in [
            status_with(63, SlotHolder::Alive { pid: 1 }),
            status_with(71, dead),
            status_with(59, dead),
        ] {
            let resume = Resume::from(&record(), status);
            assert_eq!((resume.next_index, resume.in_doubt), (110, 100..110));
        }
        // A gap being declared when nothing of the run was committed is declared again.
        let gap = Record {
            gap_before: 5,
            ..record()
        };
        let resume = Resume::from(&gap, status_with(60, dead));
        assert_eq!((resume.next_sequence, resume.gap_in_doubt), (495, 5));
        let resume = Resume::from(&gap, status_with(61, dead));
        assert_eq!((resume.next_sequence, resume.gap_in_doubt), (501, 0));
    }
}
