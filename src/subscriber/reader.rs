//! Reading one ring in place: the committed frame at a ring's head, moving past it, and
//! releasing room to publishers in batches.

use std::marker::PhantomData;
use std::sync::atomic::{AtomicU64, Ordering};

use super::select::BURST;
use super::{MessageInfo, Next, Reader, Subscriber};
use crate::error::Result;
use crate::handle_error::ReceiveError;
use crate::kind::{KindMarker, Mode, Topology};
use crate::message::{Frame, Message, Payload};
use crate::protocol::{self, Head};
use crate::wire::frame::{self, RawHeader, Shape};
use crate::wire::layout::CURSOR_UNTETHERED;
use crate::wire::ring::{FrameAt, ReadOnly, Ring};

/// Reading ahead (`run`, so `drain` and `recv_batch`). A subscriber that has taken
/// `READ_AHEAD_AFTER` messages since a receive last found nothing left is taken to be
/// behind its publisher: likely, the frames ahead of its head were committed a while ago
/// (behind a full ring, a whole ring ago) and their lines have left the publisher's
/// cache. A guess, never a read: a prefetch changes nothing a subscriber sees. Each
/// message that takes its head into a new `READ_BLOCK` of the ring asks for every line of
/// the block `READ_AHEAD` bytes past the one it lands in (one block a message, however
/// many it crosses), or `FAR_READ_AHEAD` in a ring of `FAR_RING` or more. The wait of
/// `READ_AHEAD_AFTER` messages after catching up keeps a subscriber close behind its publisher from asking
/// for lines the publisher may still be writing; the count is in messages, not bytes, so
/// it does not prove the subscriber is as far behind as the distance.
///
/// Measured with `cargo bench --bench ipc` on a 2-core Intel Xeon VM
/// (doc/performance-notes.md, "A subscriber behind its publisher reads ahead"), against
/// no reading ahead:
/// - typed 64-byte messages, single offers and batches: 1.07× and 1.05× as fast through a
///   1 MiB ring, 1.65× and 1.70× through 4 MiB, 1.87× and 4.2× through 64 MiB (no round
///   left in the slow mode 5 of 40 single-offer and 31 of 40 batch rounds fell into);
/// - raw messages in a 4 MiB ring: 128-byte batches 1.10×, 1 KiB batches 1.74×, 2 KiB
///   single offers 1.85×; 64-byte single offers 0.96×.
///
/// In rings of `FAR_RING` or more, 16 KiB ahead ran 64 MiB batches 1.05× and 1.075× as
/// fast as 8 KiB in two A/Bs (per-invocation medians above 1 in 28 of 32; single offers
/// 1.00× and 1.01×; 32 KiB the same as 16).
///
/// Reading 8 KiB ahead in a 1 MiB ring ran batches at 0.87× (184 against 212 M msg/s);
/// 4 KiB ahead in a 4 MiB ring gained 128-byte batches more but ran raw 8–128-byte single
/// offers at 0.96–0.98×; 2 KiB ahead left most 64 MiB rounds in their slow mode; one line
/// a block lost the gains; counting from the 8th message of a run ran batches through a
/// 1 MiB ring at 0.60×.
const READ_AHEAD_AFTER: u64 = 16;
const READ_AHEAD: u64 = 2048;
const FAR_READ_AHEAD: u64 = 16384;
const FAR_RING: u64 = 16 << 20;
const READ_BLOCK: u64 = 512;

/// Asks for the lines of the `READ_BLOCK` that lies `ahead` bytes past the block holding
/// `head`.
#[inline(always)]
fn read_ahead(view: Ring<ReadOnly>, head: u64, ahead: u64) {
    view.prefetch_for_read(head / READ_BLOCK * READ_BLOCK + ahead, READ_BLOCK as usize);
}

impl<T: Payload, M: Mode, K: Topology> Subscriber<T, M, K> {
    /// The committed frame at the head of ring `ring`, if any.
    #[inline(always)]
    pub(super) fn peek(&self, ring: usize) -> Result<Option<Head>, ReceiveError> {
        Ok(self.peek_at(ring)?.map(|(head, _)| head))
    }

    /// The committed frame at the head of ring `ring`, if any, and where it is.
    #[inline(always)]
    pub(super) fn peek_at(&self, ring: usize) -> Result<Option<(Head, FrameAt<ReadOnly>)>, ReceiveError> {
        let Reader { ring: view, head, .. } = self.readers[ring];
        let frame = view.frame(head);
        frame.prefetch_payload();
        if !protocol::is_committed(frame.commit_word(), head) {
            return Ok(None);
        }
        // The commit, loaded with Acquire, made the header visible.
        let shape = self.shape();
        let header = frame.header(shape);
        let lost = || frame.hole_count(shape);
        Ok(Some((self.checked_head(ring, header, lost)?, frame)))
    }

    /// Validates the header read at the head of `ring`, as any value read from shared
    /// memory: a message of the channel's length, a hole frame (whose count `lost` reads),
    /// or an error.
    #[inline(always)]
    pub(super) fn checked_head(
        &self,
        ring: usize,
        RawHeader { len, sequence, flags }: RawHeader,
        lost: impl FnOnce() -> u64,
    ) -> Result<Head, ReceiveError> {
        if flags != 0 {
            // Only Ordered frames have flags (FIFO reads them as 0): a hole, or corrupt.
            return self.peek_hole(ring, len, sequence, flags, lost);
        }
        // A fixed-size channel's length is the one it knows, not the one just read: the next
        // frame's position is computed from it, and from the read value it would wait for
        // this frame's header line to arrive, so the reads of consecutive frames could not
        // overlap (a FIFO subscriber of a full 64 KiB ring delivered 30 M msg/s that way,
        // 67 M without; doc/performance-notes.md). Typed handles know it at compile time.
        let known = match self.fixed_len {
            Some(fixed) if len == fixed => Some(T::FIXED_LEN.unwrap_or(fixed)),
            None if len <= self.max_len => Some(len),
            _ => None,
        };
        let Some(len) = known else {
            let what = format!(
                "ring {ring} has a frame at position {} declaring {len} bytes, but this channel's messages are {} bytes",
                self.readers[ring].head,
                match self.fixed_len {
                    Some(fixed) => format!("exactly {fixed}"),
                    None => format!("at most {}", self.max_len),
                }
            );
            return Err(self.fault.corrupt(&self.shared, what).into());
        };
        Ok(Head { len, sequence })
    }

    /// The committed frame at the head of `ring`, whose flags are not 0: a hole frame (whose
    /// count `lost` reads), validated as any value read from shared memory, or an error.
    #[cold]
    #[inline(never)]
    fn peek_hole(
        &self,
        ring: usize,
        len: usize,
        sequence: u64,
        flags: u32,
        lost: impl FnOnce() -> u64,
    ) -> Result<Head, ReceiveError> {
        let position = self.readers[ring].head;
        if flags != frame::FLAG_HOLE || len != frame::HOLE_LEN {
            let what = format!(
                "ring {ring} has a frame at position {position} with flags {flags:#x} and length {len}; only a hole frame (flags {:#x}, length {}) may have flags",
                frame::FLAG_HOLE,
                frame::HOLE_LEN
            );
            return Err(self.fault.corrupt(&self.shared, what).into());
        }
        let lost = lost();
        // Every number the hole covers was taken, so it ends at or below the counter.
        // Relaxed suffices: the publisher took them before committing (Release), and the
        // commit was loaded with Acquire, so this load sees at least that count.
        let taken = self.shared.hot().sequence.next.load(Ordering::Relaxed);
        match u32::try_from(lost) {
            // A publisher declares at most `MAX_GAP` (`u32::MAX`) numbers in one frame.
            Ok(count) if count > 0 && sequence.checked_add(lost).is_some_and(|end| end <= taken) => {
                Ok(Head::hole(sequence, count))
            }
            _ => {
                let what = format!(
                    "ring {ring} has a hole frame at position {position} declaring {lost} numbers lost from {sequence}, but only {taken} were ever taken, and one frame declares 1 to {} numbers",
                    crate::handle_error::MAX_GAP
                );
                Err(self.fault.corrupt(&self.shared, what).into())
            }
        }
    }

    /// Moves past a frame without delivering it.
    pub(super) fn skip(&mut self, ring: usize, len: usize) {
        self.skipped += 1;
        self.move_head(ring, len);
    }

    /// Moves past the delivered frame at the head of `ring`.
    #[inline(always)]
    pub(super) fn advance(&mut self, next: Next) {
        self.hot.received += 1;
        if M::ORDERED {
            self.next_sequence = next.sequence + 1;
            self.gap_before = 0;
            if !K::FANOUT {
                // Per message, to a line only a successor reads: if this process dies, the
                // next subscriber passes over everything handled so far, even though the
                // cursors are saved only now and then.
                self.resume_point().store(self.next_sequence, Ordering::Relaxed);
            }
        }
        self.move_head(next.ring, next.len);
    }

    #[inline(always)]
    pub(super) fn move_head(&mut self, ring: usize, len: usize) {
        let frame_len = self.shape().len(len) as u64;
        let reader = &mut self.readers[ring];
        reader.head += frame_len;
        if K::FANOUT && !M::ORDERED && T::FIXED_LEN.is_none() {
            // Variable-size frames: what a lossy subscriber missed is counted from here.
            self.counts[ring].frames += 1;
        }
        if reader.head - reader.released >= self.release_every {
            self.release_batch(ring);
        }
    }

    /// Every quarter window: publishes the head of `ring`. Out of line, so that the view's
    /// drop, which moves the head, stays small enough to inline.
    #[inline(never)]
    fn release_batch(&mut self, ring: usize) {
        self.save_resume_point();
        self.store_cursor(ring);
        self.wake_publishers();
    }

    /// Ordered Mpsc: saves the next sequence number before any cursor moves past what it
    /// covers, so a successor of a subscriber that crashed passes over exactly the
    /// messages already delivered (they are numbered below it) and loses none.
    #[inline(always)]
    pub(super) fn save_resume_point(&self) {
        if M::ORDERED && !K::FANOUT {
            // SYNC POINT mpsc-resume (holder side): stored before the cursors it covers
            // move (Release), read by a successor's `attach` (Acquire).
            self.resume_point().store(self.next_sequence, Ordering::Release);
        }
    }

    #[inline(always)]
    pub(super) fn resume_point(&self) -> &AtomicU64 {
        self.resume.get()
    }

    /// Publishes the head of `ring` as its cursor.
    #[inline(always)]
    pub(super) fn store_cursor(&mut self, ring: usize) {
        if K::FANOUT && self.tether && self.readers[ring].untethered == 0 {
            return self.release_tethered(ring);
        }
        let reader = &mut self.readers[ring];
        protocol::release(reader.cursor.get(), reader.head | reader.untethered);
        reader.released = reader.head;
    }

    /// A tethered subscriber a publisher may demote releases only if it was not demoted
    /// meanwhile; if it was, it stops holding every publisher back. Out of line: it runs
    /// once per batch, and only on channels with a tether timeout.
    #[inline(never)]
    fn release_tethered(&mut self, ring: usize) {
        let reader = &mut self.readers[ring];
        if protocol::release_unless_demoted(reader.cursor.get(), reader.released, reader.head) {
            reader.released = reader.head;
        } else {
            self.untether();
            self.demoted = true;
        }
    }

    /// Demoted (or turned lossy): marks every cursor untethered, so no publisher waits for
    /// this subscriber any more.
    #[cold]
    pub(super) fn untether(&mut self) {
        for reader in self.readers.iter_mut() {
            reader.untethered = CURSOR_UNTETHERED;
            protocol::release(reader.cursor.get(), reader.head | CURSOR_UNTETHERED);
            reader.released = reader.head;
        }
    }

    /// Tells publishers about all room released so far (done automatically whenever the
    /// subscriber runs out of messages).
    pub fn release_all(&mut self) {
        if !self.readers.iter().any(|r| r.head != r.released) {
            return;
        }
        self.save_resume_point();
        for ring in 0..self.readers.len() {
            if self.readers[ring].head != self.readers[ring].released {
                self.store_cursor(ring);
            }
        }
        self.wake_publishers();
    }

    /// The payload of the frame `next` at the head of ring `next.ring`, borrowed in place.
    ///
    /// # Safety
    /// `next` must be what a search (`find`, `peek`) returned for the ring's current head,
    /// and the head must not have moved since: then the frame is committed, its length was
    /// validated against the geometry (which bounds it inside the double view), and the
    /// cursor holds publishers off it while `self` is borrowed.
    #[inline(always)]
    pub(super) unsafe fn payload(&self, next: Next) -> &[u8] {
        // SAFETY: the caller's contract is `FrameAt::payload`'s.
        unsafe { next.frame.payload(self.shape(), next.len) }
    }

    /// The payload of the frame `next` of a typed channel, as a `T`.
    ///
    /// # Safety
    /// As for [`Subscriber::payload`].
    #[inline(always)]
    pub(super) unsafe fn message(&self, next: Next) -> &T
    where
        T: crate::message::Message,
    {
        // SAFETY: as in `payload`, with the length validated to be exactly
        // `size_of::<T>()`; frames of `T` are aligned to `align_of::<T>()`, and
        // `T: FromBytes + Immutable` (`Message` supertraits) accepts any bytes and has no
        // interior mutability behind the shared view.
        unsafe { next.frame.payload_as::<T>(Frame::<T, M>::SHAPE) }
    }
}

impl<T: Payload, M: Mode, K: Topology> Subscriber<T, M, K> {
    /// `drain`, after handing out a message from `ring`: hands out the messages right
    /// behind it in the same ring for as long as each is the one a search would find next
    /// (FIFO: up to what is left of the burst; Ordered: the next number), up to `budget`;
    /// returns how many. Per message, the steps of a search's look at the current ring and
    /// of `advance`, with the ring's view and head kept in registers rather than read back
    /// from `readers` (the reader's copy and second indexing, and the search's branches:
    /// callgrind, `benches/instructions`, the run saves typed FIFO 25-26 instructions a
    /// message and Ordered 31; doc/performance-notes.md). A frame the run does not take,
    /// an invalid one included, is left to the search. Also says whether the run ended at
    /// a frame not yet committed, which a search would only look at again. Once the
    /// subscriber is behind its publisher, the run reads ahead (`read_ahead`).
    #[inline(always)]
    pub(super) fn run(
        &mut self,
        ring: usize,
        budget: usize,
        mut handle: impl FnMut(MessageInfo<M>, Committed<'_, T>),
    ) -> (usize, bool) {
        let shape = self.shape();
        // The length every frame must have: a typed handle's, known at compile time, or a
        // fixed-size channel's. Then the next frame's position does not wait for this
        // frame's header to arrive (`checked_head`).
        let known_len = T::FIXED_LEN.or(self.fixed_len);
        let max_len = self.max_len;
        let limit = if M::ORDERED {
            budget
        } else {
            budget.min(BURST.saturating_sub(self.hot.burst.get()) as usize)
        };
        let Reader {
            ring: view,
            head,
            released,
            ..
        } = self.readers[ring];
        let mut release_at = released + self.release_every;
        // From which message of this run on it reads ahead.
        let read_ahead_from = READ_AHEAD_AFTER.saturating_sub(self.taken_since_caught_up()) as usize;
        let ahead = if self.capacity >= FAR_RING {
            FAR_READ_AHEAD
        } else {
            READ_AHEAD
        };
        let mut run = Run {
            subscriber: self,
            ring,
            head,
            taken: 0,
        };
        let mut uncommitted = false;
        while run.taken < limit {
            let head = run.head;
            let frame = view.frame(head);
            frame.prefetch_payload();
            if !protocol::is_committed(frame.commit_word(), head) {
                uncommitted = true;
                break;
            }
            // The commit, loaded with Acquire, made the header visible. The run takes only
            // frames of a length `checked_head` accepts, without flags (no hole), and,
            // Ordered, numbered next; FIFO frames read sequence and flags as 0.
            let header = frame.header(shape);
            let wanted = if M::ORDERED { run.subscriber.next_sequence } else { 0 };
            let len = match known_len {
                Some(len) if header.len == len => len,
                None if header.len <= max_len => header.len,
                _ => break,
            };
            if header.flags != 0 || header.sequence != wanted {
                break;
            }
            let info = MessageInfo {
                slot: ring,
                seq: header.sequence,
                gap: 0,
                _mode: KindMarker::default(),
            };
            handle(
                info,
                Committed {
                    frame,
                    shape,
                    len,
                    _borrow: PhantomData,
                },
            );
            if M::ORDERED {
                let subscriber = &mut *run.subscriber;
                subscriber.next_sequence = header.sequence + 1;
                if !K::FANOUT {
                    // As `advance`: per message, to a line only a successor reads.
                    subscriber
                        .resume_point()
                        .store(subscriber.next_sequence, Ordering::Relaxed);
                }
            }
            run.head = head + shape.len(len) as u64;
            run.taken += 1;
            if run.taken >= read_ahead_from && run.head / READ_BLOCK != head / READ_BLOCK {
                read_ahead(view, run.head, ahead);
            }
            if run.head >= release_at {
                let subscriber = &mut *run.subscriber;
                subscriber.readers[ring].head = run.head;
                subscriber.release_batch(ring);
                if K::FANOUT && subscriber.demoted {
                    // `drain` stops too: see there.
                    break;
                }
                release_at = subscriber.readers[ring].released + subscriber.release_every;
            }
        }
        (run.taken, uncommitted)
    }
}

/// A committed frame a run hands to its handler, readable until the handler returns: the
/// handler takes it for every lifetime `'a`, so it cannot keep it, and the run moves the
/// head past the frame (letting publishers reuse it) only after the handler returns.
pub(super) struct Committed<'a, T> {
    frame: FrameAt<ReadOnly>,
    shape: Shape,
    /// Validated as `checked_head` does: the channel's fixed length (`T`'s size for a typed
    /// handle), or at most its largest message.
    len: usize,
    _borrow: PhantomData<&'a T>,
}

impl<'a, T> Committed<'a, T> {
    /// The payload's bytes.
    #[inline(always)]
    pub(super) fn bytes(&self) -> &'a [u8] {
        // SAFETY: the frame is committed (its commit word loaded with Acquire matched its
        // position) and its length was validated against the channel's geometry, which
        // bounds it inside the double view, as `payload` requires; the run moves the head
        // past it only after the handler that holds this returns, so the cursor holds
        // publishers off it meanwhile (peers' part: crate docs, "What a borrowed message
        // assumes about peers").
        unsafe { self.frame.payload(self.shape, self.len) }
    }

    /// The payload as the handle's message type.
    #[inline(always)]
    pub(super) fn message(&self) -> &'a T
    where
        T: Message,
    {
        debug_assert_eq!(self.len, size_of::<T>());
        // SAFETY: as in `bytes`; for a typed handle `len` is exactly `T`'s size: the run
        // takes only frames of its `FIXED_LEN`, which a FIFO frame declares and a typed
        // Ordered frame implies (the channel's geometry validated against it at connect);
        // frames of `T` are aligned to `align_of::<T>()` (the handle's shape), and
        // `T: Message` accepts any bytes and has no interior mutability behind the view.
        unsafe { self.frame.payload_as::<T>(self.shape) }
    }
}

/// A run's progress, kept in registers and stored into the subscriber when the run ends,
/// also when a `handle` panics: the subscriber has then moved past exactly the messages
/// handled, as it would have message by message.
struct Run<'a, T: Payload, M: Mode, K: Topology> {
    subscriber: &'a mut Subscriber<T, M, K>,
    ring: usize,
    head: u64,
    taken: usize,
}

impl<T: Payload, M: Mode, K: Topology> Drop for Run<'_, T, M, K> {
    #[inline(always)]
    fn drop(&mut self) {
        let subscriber = &mut *self.subscriber;
        subscriber.readers[self.ring].head = self.head;
        if !M::ORDERED {
            subscriber.hot.burst.set(subscriber.hot.burst.get() + self.taken as u32);
        }
        subscriber.hot.received += self.taken as u64;
        if K::FANOUT && !M::ORDERED && T::FIXED_LEN.is_none() {
            // As `move_head`: what a lossy subscriber missed is counted in frames.
            subscriber.counts[self.ring].frames += self.taken as u64;
        }
    }
}
