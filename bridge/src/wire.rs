//! What travels over zenoh: a stream's metadata (the sample attachment, on every sample,
//! so a far side that joins late still learns the kind and type) and batches of messages
//! (the sample payload). Little-endian, no alignment assumed: the bytes come from the
//! network, so every length is checked before use and a bad sample is an error, never a
//! panic.

use salias::status::RecordedType;

const META_MAGIC: [u8; 4] = *b"SLBm";
const META_VERSION: u16 = 1;
const FLAG_ORDERED: u16 = 1;
const FLAG_FANOUT: u16 = 2;

/// Batch header: batch number, index of its first message in the stream, message count.
pub(crate) const BATCH_HEADER: usize = 8 + 8 + 4;
// Then per message: length (u32) and the far publisher slot (u32); Ordered adds the
// global sequence (u64); then the bytes.

/// What the far channel is; the near side must match it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StreamMeta {
    /// Chosen at random when the `out` side starts: a restarted `out` is a new stream.
    pub stream_id: u64,
    /// Whether messages carry a global sequence number.
    pub ordered: bool,
    /// Whether the far channel fans out (the near one must be the same kind).
    pub fanout: bool,
    /// The far channel's largest message.
    pub max_message_size: u32,
    /// The far channel's message type; `None` for raw bytes.
    pub message_type: Option<RecordedType>,
    /// The far channel's name, for messages.
    pub channel: String,
}

impl StreamMeta {
    /// The kind's name as salias writes it, e.g. `OrderedFanout`.
    pub fn kind(&self) -> &'static str {
        match (self.ordered, self.fanout) {
            (false, false) => "FifoMpsc",
            (false, true) => "FifoFanout",
            (true, false) => "OrderedMpsc",
            (true, true) => "OrderedFanout",
        }
    }

    /// The message type in the words of `salias::Error::TypeMismatch`.
    pub fn describe_type(&self) -> String {
        self.message_type
            .as_ref()
            .map_or_else(|| "raw bytes".to_owned(), ToString::to_string)
    }

    pub(crate) fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(64);
        out.extend_from_slice(&META_MAGIC);
        out.extend_from_slice(&META_VERSION.to_le_bytes());
        let flags = if self.ordered { FLAG_ORDERED } else { 0 } | if self.fanout { FLAG_FANOUT } else { 0 };
        out.extend_from_slice(&flags.to_le_bytes());
        out.extend_from_slice(&self.stream_id.to_le_bytes());
        out.extend_from_slice(&self.max_message_size.to_le_bytes());
        let (name, size, align, hash, version) = match &self.message_type {
            Some(t) => (t.name.as_str(), t.size, t.align, t.layout_hash, t.schema_version),
            None => ("", 0, 0, 0, 0),
        };
        for word in [size, align, version] {
            out.extend_from_slice(&word.to_le_bytes());
        }
        out.extend_from_slice(&hash.to_le_bytes());
        for text in [name, &self.channel] {
            // Both are bounded by salias (type names 64 bytes, channel names 64).
            let bytes = &text.as_bytes()[..text.len().min(255)];
            out.push(bytes.len() as u8);
            out.extend_from_slice(bytes);
        }
        out
    }

    pub(crate) fn decode(bytes: &[u8]) -> Result<StreamMeta, String> {
        let mut r = Reader { bytes, at: 0 };
        if r.take(4)? != META_MAGIC {
            return Err("its attachment is not salias-bridge stream metadata".into());
        }
        let version = r.u16()?;
        if version != META_VERSION {
            return Err(format!(
                "its metadata is version {version}, this bridge reads version {META_VERSION}: run the same bridge version on both sides"
            ));
        }
        let flags = r.u16()?;
        let stream_id = r.u64()?;
        let max_message_size = r.u32()?;
        let (size, align, schema_version) = (r.u32()?, r.u32()?, r.u32()?);
        let layout_hash = r.u64()?;
        let name = r.text()?;
        let channel = r.text()?;
        if !r.rest().is_empty() {
            return Err("its metadata has trailing bytes".into());
        }
        Ok(StreamMeta {
            stream_id,
            ordered: flags & FLAG_ORDERED != 0,
            fanout: flags & FLAG_FANOUT != 0,
            max_message_size,
            message_type: (layout_hash != 0).then_some(RecordedType {
                name,
                size,
                align,
                layout_hash,
                schema_version,
                // The stream identifies its type by fingerprint; columns do not cross.
                fields: None,
            }),
            channel,
        })
    }
}

/// Writes one batch into a reused buffer.
pub(crate) struct BatchWriter {
    pub(crate) buf: Vec<u8>,
    pub(crate) count: u32,
    ordered: bool,
}

impl BatchWriter {
    pub(crate) fn new(ordered: bool, capacity: usize) -> Self {
        let mut writer = BatchWriter {
            buf: Vec::with_capacity(capacity),
            count: 0,
            ordered,
        };
        writer.reset(0, 0);
        writer
    }

    /// Starts batch `number`, whose first message is the stream's message `first_index`.
    pub(crate) fn reset(&mut self, number: u64, first_index: u64) {
        self.buf.clear();
        self.buf.extend_from_slice(&number.to_le_bytes());
        self.buf.extend_from_slice(&first_index.to_le_bytes());
        self.buf.extend_from_slice(&0u32.to_le_bytes());
        self.count = 0;
    }

    pub(crate) fn push(&mut self, slot: usize, sequence: u64, bytes: &[u8]) {
        self.buf.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
        self.buf.extend_from_slice(&(slot as u32).to_le_bytes());
        if self.ordered {
            self.buf.extend_from_slice(&sequence.to_le_bytes());
        }
        self.buf.extend_from_slice(bytes);
        self.count += 1;
        self.buf[16..20].copy_from_slice(&self.count.to_le_bytes());
    }
}

/// One message of a received batch.
pub(crate) struct Incoming<'a> {
    pub(crate) sequence: u64,
    pub(crate) bytes: &'a [u8],
}

/// A received batch's header; its messages follow.
pub(crate) struct Batch<'a> {
    pub(crate) number: u64,
    pub(crate) first_index: u64,
    pub(crate) count: u32,
    body: &'a [u8],
    ordered: bool,
}

impl<'a> Batch<'a> {
    pub(crate) fn parse(bytes: &'a [u8], ordered: bool) -> Result<Batch<'a>, String> {
        let mut r = Reader { bytes, at: 0 };
        let number = r.u64()?;
        let first_index = r.u64()?;
        let count = r.u32()?;
        Ok(Batch {
            number,
            first_index,
            count,
            body: r.rest(),
            ordered,
        })
    }

    /// The sequence number of an Ordered batch's first message, if it has one.
    pub(crate) fn first_sequence(&self) -> Option<u64> {
        let bytes = self.body.get(8..16).filter(|_| self.ordered && self.count > 0)?;
        Some(u64::from_le_bytes(bytes.try_into().ok()?))
    }

    /// Calls `each` for every message, in order; stops at the first malformed one.
    pub(crate) fn for_each(&self, mut each: impl FnMut(Incoming<'a>) -> bool) -> Result<(), String> {
        let mut r = Reader {
            bytes: self.body,
            at: 0,
        };
        for i in 0..self.count {
            let len = r.u32()? as usize;
            let _slot = r.u32()?;
            let sequence = if self.ordered { r.u64()? } else { 0 };
            let bytes = r.take(len).map_err(|e| format!("message {i}: {e}"))?;
            if !each(Incoming { sequence, bytes }) {
                return Ok(());
            }
        }
        if !r.rest().is_empty() {
            return Err(format!("{} bytes follow its {} messages", r.rest().len(), self.count));
        }
        Ok(())
    }
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        let end = self.at.checked_add(n).filter(|&end| end <= self.bytes.len());
        let end = end.ok_or_else(|| format!("it ends after {} bytes, {} more were declared", self.bytes.len(), n))?;
        let out = &self.bytes[self.at..end];
        self.at = end;
        Ok(out)
    }
    fn u16(&mut self) -> Result<u16, String> {
        Ok(u16::from_le_bytes(self.take(2)?.try_into().expect("2 bytes")))
    }
    fn u32(&mut self) -> Result<u32, String> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().expect("4 bytes")))
    }
    fn u64(&mut self) -> Result<u64, String> {
        Ok(u64::from_le_bytes(self.take(8)?.try_into().expect("8 bytes")))
    }
    fn text(&mut self) -> Result<String, String> {
        let len = self.take(1)?[0] as usize;
        Ok(String::from_utf8_lossy(self.take(len)?).into_owned())
    }
    fn rest(&self) -> &'a [u8] {
        &self.bytes[self.at..]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_round_trips_and_refuses_damage() {
        let meta = StreamMeta {
            stream_id: 0xfeed,
            ordered: true,
            fanout: false,
            max_message_size: 24,
            message_type: Some(RecordedType {
                name: "Quote".into(),
                size: 24,
                align: 8,
                layout_hash: 0x1234,
                schema_version: 2,
                fields: None,
            }),
            channel: "quotes".into(),
        };
        let bytes = meta.encode();
        assert_eq!(StreamMeta::decode(&bytes), Ok(meta.clone()));
        assert_eq!(meta.kind(), "OrderedMpsc");
        for cut in 0..bytes.len() {
            assert!(StreamMeta::decode(&bytes[..cut]).is_err(), "cut at {cut}");
        }
    }

    #[test]
    fn batches_round_trip_and_refuse_damage() {
        let mut writer = BatchWriter::new(true, 256);
        writer.reset(7, 100);
        writer.push(0, 40, b"abc");
        writer.push(1, 41, b"");
        let batch = Batch::parse(&writer.buf, true).expect("well formed");
        assert_eq!((batch.number, batch.first_index, batch.count), (7, 100, 2));
        assert_eq!(batch.first_sequence(), Some(40));
        let mut seen = Vec::new();
        batch
            .for_each(|m| {
                seen.push((m.sequence, m.bytes.to_vec()));
                true
            })
            .expect("well formed");
        assert_eq!(seen, vec![(40, b"abc".to_vec()), (41, Vec::new())]);
        for cut in 0..writer.buf.len() {
            let parsed = Batch::parse(&writer.buf[..cut], true);
            assert!(
                parsed.is_err() || parsed.expect("checked").for_each(|_| true).is_err(),
                "cut at {cut}"
            );
        }
    }
}
