/* salias architecture animation: the model of one channel.
 *
 * A small deterministic simulation that follows the library's rules (src/protocol.rs,
 * src/publisher.rs, src/subscriber.rs), and a player that rebuilds the same picture from
 * a trace recorded from a real run (examples/record_trace.rs). Both fill in one `world`,
 * which view.js draws.
 *
 * The rules kept:
 *  - every publisher slot owns a ring; positions are bytes and only grow; a frame at
 *    position p starts at p mod capacity, and one that runs past the end of the ring
 *    continues in the second mapping of the same memory, so it stays contiguous;
 *  - a frame starts at a multiple of its alignment (8 in FIFO, 16 in Ordered), its payload
 *    after the header rounded up to that alignment (header 16 in FIFO, 24 in Ordered, so
 *    an Ordered payload starts at +32), and it takes round_up(payload start + payload,
 *    alignment) bytes; it exists for subscribers only once its commit word is stored;
 *  - a publisher may write up to the slowest cursor + the publication window; it caches
 *    that limit and re-reads the cursors only when it runs out; a refused offer writes
 *    nothing, takes no number and is counted;
 *  - Ordered: after reserving room a publisher takes its number with one fetch_add on the
 *    global sequence and marks it pending until committed; a subscriber delivers strictly
 *    by number, from whichever ring head holds the number it wants;
 *  - a subscriber stores a ring's cursor once a quarter window has been read since the
 *    last store, and stores every cursor whenever it finds nothing to read;
 *  - Fanout: every subscriber has a cursor in every ring and the slowest one not idle
 *    bounds the publisher; a refused publisher frees dead subscribers' slots (their
 *    cursors turn idle) and recomputes its limit;
 *  - a subscriber waiting for a number that a dead publisher took reports a gap (find_gap):
 *    the number was taken, no live publisher holds it and no ring head has it;
 *  - a publisher killed mid-write leaves a frame without commit word, never delivered; the
 *    process that takes the slot over starts after the last committed frame.
 * Simplified: time is counted in steps, one action of one actor per step, the actor
 * drawn by a seeded generator (so every run with the same settings is the same); a
 * publish is two steps (reserve and write, then commit); a subscriber looks for lost
 * numbers after 3 empty polls (the library: 2048 polls and 1 ms); refused publishers
 * look for dead subscribers at most once every 4 steps (the library: every 1 ms); a
 * FIFO burst is 4 frames (64); rings are 4 KiB (one page, the smallest the library
 * allows); process ids are made up; a crashed Mpsc subscriber and a fanout subscriber
 * joining mid-stream are not shown.
 */
(function (root) {
  'use strict';

  const CAPACITY = 4096;
  /** As src/wire/frame.rs: an Ordered frame is 16-aligned so its payload is too. */
  const FRAME_ALIGN = { Fifo: 8, Ordered: 16 };
  const HEADER = { Fifo: 16, Ordered: 24 };
  /** Payload lengths, as in examples/record_trace.rs. */
  const PAYLOADS = [200, 328, 456, 584, 264];
  const BURST = 4;
  const HEALTH_AFTER_MISSES = 3;
  const REAP_EVERY = 4;
  const LETTERS = 'ABCDEFGH';

  const SCENARIOS = {
    steady: { title: 'Steady flow' },
    backpressure: { title: 'Slow subscriber: backpressure' },
    'publisher-crash': { title: 'A publisher killed mid-write', killPublisherAt: 9, successorAt: 30 },
    'ordered-gap': {
      title: 'An ordered publisher dies holding a number',
      mode: 'Ordered',
      killPublisherAt: 9,
      successorAt: 40,
    },
    'subscriber-crash': {
      title: 'A fanout subscriber dies',
      topology: 'Fanout',
      minSubscribers: 2,
      killSubscriberAt: 10,
    },
  };

  const roundUp = (value, align) => Math.ceil(value / align) * align;

  /** mulberry32: a small seeded generator, so runs repeat exactly. */
  function generator(seed) {
    let a = seed >>> 0;
    return function () {
      a = (a + 0x6d2b79f5) >>> 0;
      let t = a;
      t = Math.imul(t ^ (t >>> 15), t | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
  }

  // ------------------------------------------------------------------------------------
  // The world both the simulation and the trace player fill in.

  function newWorld(o) {
    const world = {
      mode: o.mode,
      topology: o.topology,
      kind: o.mode + o.topology,
      capacity: o.capacity,
      window: o.window,
      releaseEvery: Math.max(1, Math.floor(o.window / 4)),
      header: HEADER[o.mode],
      align: FRAME_ALIGN[o.mode],
      sequence: o.mode === 'Ordered' ? 0 : null,
      step: 0,
      reaped: 0,
      frameIds: 0,
      pubs: [],
      subs: [],
      frames: [],
    };
    for (let p = 0; p < o.publishers; p++) {
      world.pubs.push({
        slot: p,
        letter: LETTERS[p],
        pid: 4101 + p,
        holder: 'alive',
        tail: 0,
        limit: o.window,
        published: 0,
        refused: 0,
        pending: null,
        writing: null,
        written: 0,
        lastReap: -Infinity,
        note: 'idle',
      });
      world.frames.push([]);
    }
    for (let s = 0; s < o.subscribers; s++) {
      world.subs.push({
        slot: s,
        pid: 4201 + s,
        holder: 'alive',
        reaped: false,
        heads: world.pubs.map(() => 0),
        cursors: world.pubs.map(() => 0),
        received: 0,
        next: 0,
        gaps: { events: 0, missing: 0, last: null },
        gapBefore: 0,
        misses: 0,
        current: 0,
        burst: 0,
        recent: [],
        note: 'idle',
      });
    }
    return world;
  }

  const isOrdered = (w) => w.mode === 'Ordered';
  const isFanout = (w) => w.topology === 'Fanout';
  const payloadStart = (w) => roundUp(w.header, w.align);
  const frameLen = (w, payload) => roundUp(payloadStart(w) + payload, w.align);
  const pubName = (p) => 'publisher ' + p.letter;
  const subName = (s) => 'subscriber ' + s.slot;
  const label = (f) => (f.seq === null ? f.tag : '#' + f.seq);

  /** The committed frame at position `pos` of ring `ring`, if any. */
  function committedAt(w, ring, pos) {
    return w.frames[ring].find((f) => f.pos === pos && f.state === 'committed') || null;
  }

  /** The slowest cursor of a ring that holds its publisher back, and whose it is. */
  function slowest(w, ring) {
    let best = { pos: w.pubs[ring].tail, sub: null };
    for (const s of w.subs) {
      const c = s.cursors[ring];
      if (c === null) continue; // an idle fanout slot holds nobody back
      if (c < best.pos) best = { pos: c, sub: s };
    }
    return best;
  }

  /** Adds a frame to its ring, dropping what it overwrites. */
  function placeFrame(w, ring, frame) {
    const end = frame.pos + frame.size;
    w.frames[ring] = w.frames[ring].filter(
      (f) => f.pos >= end - w.capacity && !(f.state === 'torn' && f.pos >= frame.pos),
    );
    w.frames[ring].push(frame);
  }

  function newFrame(w, p, pos, payload, seq) {
    p.written += 1;
    return {
      id: ++w.frameIds,
      ring: p.slot,
      pos: pos,
      size: frameLen(w, payload),
      len: payload,
      seq: seq,
      tag: p.letter + p.written,
      state: 'writing',
    };
  }

  /** A subscriber stores its cursor in `ring` (SYNC POINT ring-release). */
  function storeCursor(s, ring) {
    s.cursors[ring] = s.heads[ring];
  }

  /** Stores every cursor that lags the read position; returns the rings stored. */
  function releaseAll(s) {
    const stored = [];
    s.heads.forEach((head, ring) => {
      if (s.cursors[ring] !== null && head !== s.cursors[ring]) {
        storeCursor(s, ring);
        stored.push(ring);
      }
    });
    return stored;
  }

  /** Moves a subscriber past a delivered frame; says whether its cursor was stored. */
  function advance(w, s, frame, releaseRule) {
    s.received += 1;
    s.heads[frame.ring] += frame.size;
    s.recent.push({ id: frame.id, ring: frame.ring, label: label(frame), gap: s.gapBefore });
    if (s.recent.length > 10) s.recent.shift();
    if (frame.seq !== null) {
      s.next = frame.seq + 1;
      s.gapBefore = 0;
    }
    if (releaseRule && s.heads[frame.ring] - s.cursors[frame.ring] >= w.releaseEvery) {
      storeCursor(s, frame.ring);
      return true;
    }
    return false;
  }

  /** Checks what must always hold; a broken rule is a bug in this model, so it throws. */
  function checkInvariants(w) {
    w.pubs.forEach((p, ring) => {
      const low = slowest(w, ring).pos;
      if (p.tail - low > w.window) throw new Error(`ring ${ring}: ${p.tail - low} bytes in flight exceed the window`);
      for (const s of w.subs) {
        const c = s.cursors[ring];
        if (c !== null && (c > s.heads[ring] || s.heads[ring] > p.tail)) {
          throw new Error(`ring ${ring}: subscriber ${s.slot} cursor ${c} head ${s.heads[ring]} tail ${p.tail}`);
        }
      }
    });
    for (const s of w.subs) {
      const seqs = s.recent.map((r) => r.label).filter((l) => l[0] === '#').map((l) => +l.slice(1));
      for (let i = 1; i < seqs.length; i++) {
        if (seqs[i] <= seqs[i - 1]) throw new Error(`subscriber ${s.slot} delivered #${seqs[i]} after #${seqs[i - 1]}`);
      }
    }
  }

  /** The state the page exposes to tests: plain numbers, no references. */
  function snapshot(w) {
    const totals = { published: 0, refused: 0, received: 0, gapEvents: 0, missing: 0, reaped: w.reaped };
    w.pubs.forEach((p) => {
      totals.published += p.published;
      totals.refused += p.refused;
    });
    w.subs.forEach((s) => {
      totals.received += s.received;
      totals.gapEvents += s.gaps.events;
      totals.missing += s.gaps.missing;
    });
    return {
      kind: w.kind,
      mode: w.mode,
      topology: w.topology,
      capacity: w.capacity,
      window: w.window,
      releaseEvery: w.releaseEvery,
      step: w.step,
      sequence: w.sequence,
      publishers: w.pubs.map((p) => ({
        slot: p.slot,
        pid: p.pid,
        holder: p.holder,
        tail: p.tail,
        limit: p.limit,
        published: p.published,
        refused: p.refused,
        pending: p.pending,
        writing: p.writing ? p.writing.pos : null,
      })),
      subscribers: w.subs.map((s) => ({
        slot: s.slot,
        pid: s.pid,
        holder: s.holder,
        reaped: s.reaped,
        heads: s.heads.slice(),
        cursors: s.cursors.slice(),
        received: s.received,
        delivered: s.recent.map((r) => r.label),
        nextSequence: isOrdered(w) ? s.next : null,
        gaps: { events: s.gaps.events, missing: s.gaps.missing, last: s.gaps.last && s.gaps.last.slice() },
      })),
      frames: w.frames.map((ring) => ring.map((f) => ({ pos: f.pos, size: f.size, seq: f.seq, state: f.state }))),
      totals: totals,
    };
  }

  // ------------------------------------------------------------------------------------
  // The simulation.

  class Simulation {
    /** o: {mode, topology, publishers, subscribers, window, scenario, seed} */
    constructor(o) {
      this.options = Object.assign({}, o);
      this.scenario = SCENARIOS[o.scenario] || SCENARIOS.steady;
      this.world = newWorld({
        mode: o.mode,
        topology: o.topology,
        publishers: o.publishers,
        subscribers: o.subscribers,
        capacity: CAPACITY,
        window: o.window,
      });
      this.random = generator(o.seed);
      this.nextPid = 4301;
      const w = this.world;
      // Subscribers keep up with the publishers, except a slow one under backpressure.
      const keepUp = 0.6 * o.publishers;
      this.weights = {
        pub: w.pubs.map(() => 1),
        sub: w.subs.map((s, i) => (o.scenario === 'backpressure' && i === w.subs.length - 1 ? 0.12 * o.publishers : keepUp)),
      };
    }

    get done() {
      return false;
    }

    /** Draws the actor of the next step among the live ones. */
    pick() {
      const w = this.world;
      const actors = [];
      w.pubs.forEach((p, i) => p.holder === 'alive' && actors.push({ pub: p, weight: this.weights.pub[i] }));
      w.subs.forEach((s, i) => s.holder === 'alive' && actors.push({ sub: s, weight: this.weights.sub[i] }));
      const total = actors.reduce((sum, a) => sum + a.weight, 0);
      let r = this.random() * total;
      for (const a of actors) {
        r -= a.weight;
        if (r < 0) return a;
      }
      return actors[actors.length - 1];
    }

    step() {
      const w = this.world;
      w.step += 1;
      const sc = this.scenario;
      let event;
      if (sc.killPublisherAt === w.step) event = this.killPublisher(w.pubs[0]);
      else if (sc.successorAt === w.step) event = this.takeOver(w.pubs[0]);
      else if (sc.killSubscriberAt === w.step) event = this.killSubscriber(w.subs[w.subs.length - 1]);
      else {
        const actor = this.pick();
        event = actor.pub ? this.publisherStep(actor.pub) : this.subscriberStep(actor.sub);
      }
      event.step = w.step;
      checkInvariants(w);
      return event;
    }

    payload() {
      return PAYLOADS[Math.floor(this.random() * PAYLOADS.length)];
    }

    refreshLimit(p) {
      const low = slowest(this.world, p.slot);
      p.limit = low.pos + this.world.window;
      return low;
    }

    /** Frees the slots of dead holders (fanout: their cursors turn idle). */
    reap() {
      const w = this.world;
      const freed = [];
      for (const s of w.subs) {
        if (s.holder === 'dead') {
          s.holder = 'free';
          s.reaped = true;
          s.cursors = s.cursors.map(() => null);
          s.note = 'slot freed by a publisher';
          freed.push(s);
        }
      }
      for (const p of w.pubs) if (p.holder === 'dead') p.holder = 'free';
      w.reaped += freed.length;
      return freed;
    }

    publisherStep(p) {
      return p.writing ? this.commit(p) : this.offer(p);
    }

    /** Reserves room (or is refused), takes a number (Ordered) and writes the frame. */
    offer(p, payload) {
      const w = this.world;
      payload = payload || this.payload();
      const size = frameLen(w, payload);
      const why = [];
      let reapedNote = '';
      if (p.tail + size > p.limit) {
        const cached = p.limit;
        let low = this.refreshLimit(p);
        why.push(`Its cached limit ${cached} had run out, so it re-read the cursors: limit = slowest cursor ${low.pos} + window ${w.window} = ${p.limit}.`);
        if (p.tail + size > p.limit && isFanout(w) && w.step - p.lastReap >= REAP_EVERY) {
          p.lastReap = w.step;
          const freed = this.reap();
          if (freed.length) {
            const dead = freed.map(subName).join(', ');
            low = this.refreshLimit(p);
            reapedNote = `Held back by a dead subscriber, it frees the slot of ${dead}: those cursors turn idle and no longer count. New limit ${p.limit}. `;
            why.push(`A fanout subscriber that dies must not stall the channel; the live subscribers lose nothing.`);
          }
        }
        if (p.tail + size > p.limit) {
          p.refused += 1;
          p.note = 'refused: window full';
          const holder = low.sub ? `${subName(low.sub)}${low.sub.holder === 'dead' ? ' (dead, not yet noticed)' : ''} has released only up to ${low.pos}` : 'the slowest cursor is at ' + low.pos;
          return {
            type: 'refused',
            actor: p,
            ring: p.slot,
            what: `${cap(pubName(p))}'s offer of ${payload} bytes (a ${size}-byte frame) is refused: backpressure. Refused offers so far: ${p.refused}.`,
            why: `Its tail ${p.tail} + ${size} would pass its limit ${p.limit}: ${holder}, and at most the publication window (${w.window} bytes) may be in flight. offer() returns Backpressured as a value; nothing is written${isOrdered(w) ? ' and no number is taken' : ''}.`,
          };
        }
      }
      const pos = p.tail;
      let seq = null;
      if (isOrdered(w)) {
        seq = w.sequence;
        w.sequence += 1;
        p.pending = seq;
      }
      const frame = newFrame(w, p, pos, payload, seq);
      p.writing = frame;
      placeFrame(w, p.slot, frame);
      p.note = 'writing';
      const offset = pos % w.capacity;
      const wraps = offset + size > w.capacity;
      let what = `${reapedNote}${cap(pubName(p))} reserves a ${size}-byte frame at position ${pos} of ring ${p.slot}${isOrdered(w) ? `, takes global sequence number ${seq} with one fetch_add on the shared counter,` : ''} and writes the header and ${payload}-byte payload.`;
      if (wraps) {
        what += ` The frame runs past the end of the ring (${offset} + ${size} > ${w.capacity}); the second mapping makes it one contiguous block: its last ${offset + size - w.capacity} bytes are the first bytes of the ring's memory.`;
      }
      why.push(
        isOrdered(w)
          ? `Room is reserved before the number is taken, so a refused offer never leaves a hole in the sequence. #${seq} is marked pending in the slot until the commit, so a subscriber can tell a number being written from one lost with a dead publisher.`
          : `Nothing is visible yet: the frame's commit word is not stored. FIFO publishing does no read-modify-write on shared memory.`,
      );
      return { type: 'write', actor: p, ring: p.slot, frame: frame, what: what, why: why.join(' ') };
    }

    commit(p) {
      const w = this.world;
      const frame = p.writing;
      frame.state = 'committed';
      p.writing = null;
      p.tail = frame.pos + frame.size;
      p.published += 1;
      p.pending = null;
      p.note = 'idle';
      return {
        type: 'commit',
        actor: p,
        ring: p.slot,
        frame: frame,
        what: `${cap(pubName(p))} commits ${label(frame)}: it stores the frame's commit word (Release) and reports its tail, now ${p.tail}.`,
        why: `A subscriber that loads the commit word with Acquire and finds its position's key sees the whole frame.${frame.seq !== null ? ` #${frame.seq} is no longer pending.` : ''}`,
      };
    }

    subscriberStep(s) {
      const w = this.world;
      const found = isOrdered(w) ? this.findOrdered(s) : this.findFifo(s);
      if (found) {
        s.misses = 0;
        return this.deliver(s, found, '');
      }
      const stored = releaseAll(s);
      s.misses += 1;
      let gapNote = '';
      if (isOrdered(w) && s.misses >= HEALTH_AFTER_MISSES) {
        const end = this.findGap(s);
        if (end !== null) {
          const first = s.next;
          s.gaps.events += 1;
          s.gaps.missing += end - first;
          s.gaps.last = [first, end];
          s.gapBefore += end - first;
          s.next = end;
          gapNote = `${cap(subName(s))} gives up on ${range(first, end)}: the publisher that took it is dead. It reports a gap (gaps(): ${s.gaps.events} event, ${s.gaps.missing} missing) and moves on to #${end}. `;
          const next = this.findOrdered(s);
          if (next) {
            s.misses = 0;
            return this.deliver(s, next, gapNote, stored);
          }
        }
      }
      s.note = 'waiting';
      return this.nothing(s, stored, gapNote);
    }

    /** FIFO: drain the current ring for up to BURST frames, then go round. */
    findFifo(s) {
      const w = this.world;
      const rings = w.pubs.length;
      if (s.burst < BURST) {
        const frame = committedAt(w, s.current, s.heads[s.current]);
        if (frame) {
          s.burst += 1;
          return frame;
        }
      }
      const last = s.burst < BURST ? rings - 1 : rings;
      for (let step = 1; step <= last; step++) {
        const ring = (s.current + step) % rings;
        const frame = committedAt(w, ring, s.heads[ring]);
        if (frame) {
          s.current = ring;
          s.burst = 1;
          return frame;
        }
      }
      return null;
    }

    /** Ordered: the frame numbered `next`, at the head of exactly one ring. */
    findOrdered(s) {
      const w = this.world;
      const rings = w.pubs.length;
      for (let step = 0; step < rings; step++) {
        const ring = (s.current + step) % rings;
        const frame = committedAt(w, ring, s.heads[ring]);
        if (frame && frame.seq === s.next) {
          s.current = ring;
          return frame;
        }
      }
      return null;
    }

    /** find_gap: the end of the run of numbers from `next` on that can never arrive. */
    findGap(s) {
      const w = this.world;
      const wanted = s.next;
      if (w.sequence <= wanted) return null;
      let end = w.sequence;
      for (const p of w.pubs) {
        if (p.holder === 'alive' && p.pending !== null) {
          if (p.pending === wanted) return null;
          if (p.pending > wanted) end = Math.min(end, p.pending);
        }
        const head = committedAt(w, p.slot, s.heads[p.slot]);
        if (head) end = Math.min(end, head.seq);
      }
      return end > wanted ? end : null;
    }

    deliver(s, frame, before, storedBefore) {
      const w = this.world;
      const gap = s.gapBefore;
      const released = advance(w, s, frame, true);
      s.note = 'reading';
      const pos = frame.pos;
      const what = `${before}${cap(subName(s))} ${isOrdered(w) ? 'delivers' : 'reads'} ${label(frame)} (${frame.len} bytes) in place at position ${pos} of ring ${frame.ring}${gap ? `, with gap_before = ${gap}` : ''}.`;
      const why = [];
      if (isOrdered(w)) {
        why.push(`Ordered: it merges the rings by sequence. Each publisher's numbers increase along its ring, so the number it wants is at the head of exactly one ring.`);
      } else {
        why.push(`FIFO: it drains one ring in bursts (${BURST} frames here) before going round to the next; each publisher's messages arrive in the order sent, with no order across publishers.`);
      }
      const read = s.heads[frame.ring] - s.cursors[frame.ring];
      if (released) {
        why.push(`It has now read at least a quarter window (${w.releaseEvery} bytes) of ring ${frame.ring} since its last release, so it stores its cursor: ${s.cursors[frame.ring]}. That room goes back to ${pubName(w.pubs[frame.ring])}.`);
      } else {
        why.push(`Its cursor in ring ${frame.ring} stays at ${s.cursors[frame.ring]} (${read} bytes read since): cursors are stored once a quarter window (${w.releaseEvery} bytes) has been read, so receiving costs no shared write per message.`);
      }
      if (storedBefore && storedBefore.length) why.push(`Finding nothing at first, it had stored its cursors.`);
      return { type: 'receive', actor: s, ring: frame.ring, frame: frame, released: released, what: what, why: why.join(' ') };
    }

    nothing(s, stored, gapNote) {
      const w = this.world;
      let what;
      let why;
      const waitingFor = isOrdered(w) ? ` #${s.next}` : '';
      if (stored.length) {
        what = `${gapNote}${cap(subName(s))} finds nothing to read${waitingFor ? ` (it wants${waitingFor})` : ''} and stores its cursors: ${stored.map((r) => `ring ${r} → ${s.cursors[r]}`).join(', ')}.`;
        why = `Whenever it runs out of messages it releases everything it has read, so no publisher is held back by reads it has finished.`;
      } else {
        what = `${gapNote}${cap(subName(s))} polls: nothing to read${waitingFor ? ` (it wants${waitingFor})` : ''}.`;
        why = 'Nothing committed it has not read yet.';
      }
      if (isOrdered(w)) {
        const holder = w.pubs.find((p) => p.pending === s.next);
        if (holder && holder.holder === 'alive') {
          why = `${cap(pubName(holder))} took #${s.next} and has not committed it yet: the subscriber waits rather than deliver a later number out of order. ` + (stored.length ? why : '');
        } else if (holder) {
          why = `${cap(pubName(holder))} took #${s.next} and died. After ${HEALTH_AFTER_MISSES} empty polls in a row the subscriber checks whether the number can still come (here ${s.misses} so far). ` + (stored.length ? why : '');
        }
      }
      return { type: stored.length ? 'release' : 'poll', actor: s, rings: stored, what: what, why: why };
    }

    /** Fault injection: the publisher dies between writing its frame and committing it. */
    killPublisher(p) {
      const w = this.world;
      let what;
      if (!p.writing && p.holder === 'alive') {
        const wrote = this.offer(p, PAYLOADS[1]);
        if (wrote.type === 'refused') {
          p.holder = 'dead';
          p.note = 'killed';
          return { type: 'kill', actor: p, what: `${cap(pubName(p))} is killed (SIGKILL) while refused for room: it had written nothing.`, why: wrote.why };
        }
      }
      const frame = p.writing;
      frame.state = 'torn';
      p.writing = null;
      p.holder = 'dead';
      p.note = 'killed mid-write';
      what = `${cap(pubName(p))} (pid ${p.pid}) is killed with SIGKILL in the middle of a write: it reserved ${frame.size} bytes at position ${frame.pos}${frame.seq !== null ? `, took #${frame.seq}` : ''} and wrote part of the frame, but never stored its commit word.`;
      const why = `Without its commit word the frame does not exist for subscribers: it is never delivered, torn or whole. The other publishers write their own rings and carry on.${frame.seq !== null ? ` #${frame.seq} stays marked pending in the dead holder's slot.` : ''}`;
      return { type: 'kill', actor: p, ring: p.slot, frame: frame, what: what, why: why };
    }

    /** A new process claims the dead publisher's slot and recovers its tail. */
    takeOver(p) {
      const w = this.world;
      const old = p.pid;
      p.pid = this.nextPid++;
      p.holder = 'alive';
      p.pending = null;
      p.writing = null;
      p.note = 'idle (successor)';
      this.refreshLimit(p);
      return {
        type: 'takeover',
        actor: p,
        ring: p.slot,
        what: `A new process (pid ${p.pid}) calls publisher() and takes slot ${p.slot} over: its holder, pid ${old}, is dead. Scanning from the reported tail ${p.tail}, the first frame has no commit word, so it will write from ${p.tail} on.`,
        why: `Publishing resumes right after the last committed frame; the half-written frame is overwritten.${isOrdered(w) ? ' Its pending mark is cleared: a lost number stays lost, and the successor takes fresh ones.' : ''}`,
      };
    }

    killSubscriber(s) {
      const w = this.world;
      s.holder = 'dead';
      s.note = 'killed';
      const cursors = s.cursors.map((c, ring) => `ring ${ring} at ${c}`).join(', ');
      return {
        type: 'kill',
        actor: s,
        what: `${cap(subName(s))} (pid ${s.pid}) is killed with SIGKILL. Its cursors stay where it last stored them: ${cursors}.`,
        why: `Fanout: each publisher is held back by the slowest subscriber whose slot is held. Nobody is told of the death; a publisher notices when that cursor holds it back.`,
      };
    }
  }

  function cap(text) {
    return text.charAt(0).toUpperCase() + text.slice(1);
  }

  function range(first, end) {
    return end - first === 1 ? `#${first}` : `#${first}–#${end - 1}`;
  }

  // ------------------------------------------------------------------------------------
  // Replaying a recorded trace.

  class TracePlayer {
    constructor(trace) {
      validateTrace(trace);
      this.trace = trace;
      const ch = trace.channel;
      const mode = ch.kind.startsWith('Ordered') ? 'Ordered' : 'Fifo';
      this.world = newWorld({
        mode: mode,
        topology: ch.kind.endsWith('Fanout') ? 'Fanout' : 'Mpsc',
        publishers: ch.publishers,
        subscribers: ch.subscribers,
        capacity: ch.capacity,
        window: ch.publication_window,
      });
      this.world.releaseEvery = ch.release_every;
      this.index = 0;
      this.nextPid = 4301;
    }

    get done() {
      return this.index >= this.trace.events.length;
    }

    step() {
      const w = this.world;
      if (this.done) return { type: 'end', what: 'The trace is over.', why: this.summary(), step: w.step };
      const ev = this.trace.events[this.index++];
      w.step += 1;
      const event = this.apply(ev);
      checkInvariants(w);
      event.step = w.step;
      event.traced = ev;
      if (this.done) event.why += ' ' + this.summary();
      return event;
    }

    summary() {
      const ok = this.matchesFinal();
      return ok
        ? 'End of the recorded run: the replay reached the same final counts the run recorded.'
        : 'End of the recorded run: the replay does NOT reach the final counts the run recorded.';
    }

    /** Whether the world now holds the counts the recorded run ended with. */
    matchesFinal() {
      const f = this.trace.final;
      const w = this.world;
      const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
      return (
        (f.sequence === undefined || f.sequence === w.sequence) &&
        f.publishers.every(
          (p, i) => p.published === w.pubs[i].published && p.backpressured === w.pubs[i].refused && p.position === w.pubs[i].tail,
        ) &&
        f.subscribers.every(
          (s, i) =>
            s.received === w.subs[i].received &&
            same(s.cursors, w.subs[i].cursors) &&
            s.gaps.events === w.subs[i].gaps.events &&
            s.gaps.missing === w.subs[i].gaps.missing,
        )
      );
    }

    apply(ev) {
      const w = this.world;
      const p = ev.publisher !== undefined ? w.pubs[ev.publisher] : null;
      const s = ev.subscriber !== undefined ? w.subs[ev.subscriber] : null;
      switch (ev.type) {
        case 'offer':
          p.note = `offering ${ev.len} bytes`;
          p.offered = ev.len;
          return {
            type: 'offer',
            actor: p,
            ring: p.slot,
            what: `${cap(pubName(p))} calls offer() with ${ev.len} bytes: a ${frameLen(w, ev.len)}-byte frame with its ${w.header}-byte header.`,
            why: 'The next event says whether it was committed or refused.',
          };
        case 'commit': {
          const low = slowest(w, p.slot);
          obey(ev.frame === frameLen(w, p.offered), `a ${p.offered}-byte payload took ${ev.frame} bytes of ring`);
          obey(ev.position === p.tail, `${pubName(p)} committed at ${ev.position}, not at its tail ${p.tail}`);
          obey(ev.position + ev.frame <= low.pos + w.window, `${pubName(p)} wrote past the slowest cursor ${low.pos} + the window`);
          obey(ev.sequence === undefined || ev.sequence === w.sequence, `#${ev.sequence} committed while the counter stood at ${w.sequence}`);
          const frame = {
            id: ++w.frameIds,
            ring: p.slot,
            pos: ev.position,
            size: ev.frame,
            len: p.offered,
            seq: ev.sequence === undefined ? null : ev.sequence,
            tag: p.letter + ev.published,
            state: 'committed',
          };
          placeFrame(w, p.slot, frame);
          p.tail = ev.position + ev.frame;
          p.published = ev.published;
          p.pending = null;
          p.note = 'idle';
          if (frame.seq !== null) w.sequence = frame.seq + 1;
          p.limit = low.pos + w.window;
          return {
            type: 'commit',
            actor: p,
            ring: p.slot,
            frame: frame,
            what: `${cap(pubName(p))}'s offer is committed: a ${ev.frame}-byte frame at position ${ev.position}${frame.seq !== null ? `, global sequence #${frame.seq}` : ''}; published ${ev.published}.`,
            why: `It fits: ${ev.position} + ${ev.frame} ≤ slowest cursor ${low.pos} + window ${w.window}. Recorded from channel_status, which showed the ring position move by the frame${frame.seq !== null ? ' and the global counter by one (the fetch_add)' : ''}.`,
          };
        }
        case 'refused': {
          const low = slowest(w, p.slot);
          const size = frameLen(w, ev.len);
          obey(ev.position === p.tail, `${pubName(p)} was refused at ${ev.position}, not at its tail ${p.tail}`);
          obey(ev.position + size > low.pos + w.window, `${pubName(p)} was refused although its frame fitted the window`);
          p.refused = ev.backpressured;
          p.note = 'refused: window full';
          return {
            type: 'refused',
            actor: p,
            ring: p.slot,
            what: `${cap(pubName(p))}'s offer of ${ev.len} bytes is refused (Backpressured); refused offers: ${ev.backpressured}.`,
            why: `Its tail ${ev.position} + a ${size}-byte frame would pass the slowest cursor ${low.pos} + the window ${w.window}: nothing was written${isOrdered(w) ? ' and no number taken' : ''}.`,
          };
        }
        case 'receive': {
          const frame = committedAt(w, ev.publisher, s.heads[ev.publisher]);
          obey(frame && (frame.seq === null || frame.seq === ev.sequence), `${subName(s)} received from ring ${ev.publisher} a message that is not at its head`);
          obey(!isOrdered(w) || ev.sequence === s.next, `${subName(s)} delivered #${ev.sequence} while it wanted #${s.next}`);
          s.gapBefore = ev.gap_before;
          // The recorded release events move the cursors.
          advance(w, s, frame, false);
          s.received = ev.received;
          s.note = 'reading';
          return {
            type: 'receive',
            actor: s,
            ring: frame.ring,
            frame: frame,
            what: `${cap(subName(s))} receives ${label(frame)} (${ev.len} bytes) from ring ${ev.publisher}${ev.gap_before ? `, gap_before = ${ev.gap_before}` : ''}.`,
            why: isOrdered(w)
              ? `It is the number the subscriber wanted next: the merge by sequence, across the rings' heads.`
              : 'Recorded: what try_recv returned.',
          };
        }
        case 'release':
          obey(ev.cursor === s.heads[ev.publisher], `${subName(s)} stored cursor ${ev.cursor} in ring ${ev.publisher}, not its read position ${s.heads[ev.publisher]}`);
          s.cursors[ev.publisher] = ev.cursor;
          return {
            type: 'release',
            actor: s,
            ring: ev.publisher,
            what: `${cap(subName(s))} stores its cursor in ring ${ev.publisher}: ${ev.cursor}.`,
            why: 'Recorded from channel_status: releases come in batches (a quarter window, or when the subscriber runs out of messages).',
          };
        case 'gap':
          obey(ev.first === s.next, `${subName(s)} reported #${ev.first} lost while it wanted #${s.next}`);
          s.gaps = { events: ev.events, missing: ev.missing, last: [ev.first, ev.end] };
          s.next = ev.end;
          return {
            type: 'gap',
            actor: s,
            what: `${cap(subName(s))} reports a gap: ${range(ev.first, ev.end)} will never arrive (gaps(): ${ev.events} event, ${ev.missing} missing).`,
            why: 'The number was taken by a publisher that died before committing it.',
          };
        case 'crash':
          p.holder = 'dead';
          p.pending = ev.pending;
          p.note = 'killed mid-write';
          if (ev.sequence !== undefined && ev.sequence !== null) w.sequence = ev.sequence;
          placeFrame(w, p.slot, {
            id: ++w.frameIds,
            ring: p.slot,
            pos: ev.position,
            size: w.header,
            len: 0,
            seq: ev.pending,
            tag: p.letter + '?',
            state: 'torn',
          });
          return {
            type: 'kill',
            actor: p,
            ring: p.slot,
            what: `A publisher in another process took slot ${p.slot} and #${ev.pending}, then was killed (SIGKILL) before committing.`,
            why: 'Recorded from channel_status: the slot holder is dead and its number pending.',
          };
        case 'takeover':
          p.holder = 'alive';
          p.pid = this.nextPid++;
          p.pending = null;
          p.tail = ev.position;
          p.note = 'idle (successor)';
          return {
            type: 'takeover',
            actor: p,
            ring: p.slot,
            what: `A successor takes slot ${p.slot} over and starts at position ${ev.position}, after the last committed frame.`,
            why: 'Recorded: publisher() claimed the dead holder\'s slot.',
          };
        default:
          throw new Error('trace: unknown event type ' + ev.type);
      }
    }
  }

  /** The player checks the recorded run against the model's rules as it goes. */
  function obey(rule, broken) {
    if (!rule) throw new Error(`the recorded run breaks a rule of the model: ${broken}`);
  }

  function validateTrace(trace) {
    const ok =
      trace &&
      trace.format === 'salias-trace/1' &&
      trace.channel &&
      Array.isArray(trace.events) &&
      trace.final &&
      Array.isArray(trace.final.publishers) &&
      Array.isArray(trace.final.subscribers);
    if (!ok) throw new Error('not a salias trace (format salias-trace/1)');
  }

  const api = {
    CAPACITY,
    HEADER,
    SCENARIOS,
    Simulation,
    TracePlayer,
    snapshot,
    slowest,
    label,
  };
  root.SaliasModel = api;
  if (typeof module !== 'undefined' && module.exports) module.exports = api;
})(typeof window !== 'undefined' ? window : globalThis);
