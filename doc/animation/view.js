/* salias architecture animation: drawing the model (model.js) and the controls.
 * Plain DOM, no dependencies, works from file://. Exposes window.saliasSim for tests. */
(function () {
  'use strict';
  const M = window.SaliasModel;
  const $ = (id) => document.getElementById(id);
  const SPEEDS = [0.5, 1, 2, 4, 8];
  const BASE_INTERVAL = 900;
  const PUB_COLORS = ['var(--p0)', 'var(--p1)', 'var(--p2)'];
  const SUB_COLORS = ['var(--s0)', 'var(--s1)', 'var(--s2)'];
  const params = new URLSearchParams(location.search);

  const app = {
    source: 'sim',
    model: null,
    trace: window.SALIAS_TRACE || null,
    traceName: 'trace.js (committed)',
    seed: Number(params.get('seed')) || 1,
    playing: false,
    timer: null,
    speed: 1,
    last: null,
    log: [],
    rings: [],
    cells: {},
  };

  const reducedMotion = window.matchMedia('(prefers-reduced-motion: reduce)');
  function applyMotion() {
    document.documentElement.classList.toggle('reduce-motion', reducedMotion.matches);
  }
  applyMotion();
  reducedMotion.addEventListener('change', applyMotion);

  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function escape(text) {
    return String(text).replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]);
  }

  // ------------------------------------------------------------------------------------
  // Building and running the model

  function settings() {
    const [mode, topology] = $('kind').value.split(' ');
    return {
      mode: mode,
      topology: topology,
      publishers: Number($('publishers').value),
      subscribers: Number($('subscribers').value),
      window: Number($('window').value),
      scenario: $('scenario').value,
      seed: app.seed,
    };
  }

  function rebuild() {
    app.model = app.source === 'trace' ? new M.TracePlayer(app.trace) : new M.Simulation(settings());
    app.last = null;
    app.broken = false;
    app.log = [];
    app.cells = {};
    buildRings();
    syncControls();
    render();
  }

  function step() {
    if (app.model.done || app.broken) {
      stop();
      return;
    }
    try {
      app.last = app.model.step();
    } catch (error) {
      // A trace that breaks the model's rules (or a bug): say so and stop, never go on.
      stop();
      app.broken = true;
      console.error(error);
      $('what').textContent = 'The replay stopped: ' + error.message;
      $('why').textContent = '';
      $('step').disabled = true;
      return;
    }
    app.log.push(app.last);
    if (app.log.length > 80) app.log.shift();
    render();
    if (app.model.done) stop();
  }

  function interval() {
    return Math.round(BASE_INTERVAL / app.speed);
  }

  function tick() {
    app.timer = null;
    if (!app.playing) return;
    step();
    if (app.playing) app.timer = setTimeout(tick, interval());
  }

  function play() {
    if (app.playing || app.model.done || app.broken) return;
    app.playing = true;
    syncControls();
    app.timer = setTimeout(tick, Math.min(250, interval()));
  }

  function stop() {
    app.playing = false;
    if (app.timer) clearTimeout(app.timer);
    app.timer = null;
    syncControls();
  }

  // ------------------------------------------------------------------------------------
  // Controls

  function syncControls() {
    const trace = app.source === 'trace';
    const topology = $('kind').value.split(' ')[1];
    for (const id of ['kind', 'publishers', 'window', 'scenario']) $(id).disabled = trace;
    $('subscribers').disabled = trace || topology === 'Mpsc';
    $('source-trace').disabled = !app.trace;
    $('source-sim').checked = !trace;
    $('source-trace').checked = trace;
    $('play').disabled = app.playing || app.model.done;
    $('pause').disabled = !app.playing;
    $('step').disabled = app.model.done;
    $('speed-out').textContent = app.speed + '×';
    $('controls').classList.toggle('trace-mode', trace);
    $('trace-info').hidden = !trace;
    if (trace) {
      const ch = app.model.trace.channel;
      $('trace-info').textContent = `Replaying ${app.traceName}: a real ${ch.kind} run with ${ch.publishers} publisher slots and ${ch.subscribers} subscriber slot${ch.subscribers > 1 ? 's' : ''}, ${ch.capacity}-byte rings, a ${ch.publication_window}-byte publication window. Choose Simulation to change the channel.`;
    }
  }

  /** Keeps the kind, the subscriber count and the scenario consistent with each other. */
  function reconcile(changed) {
    let [mode, topology] = $('kind').value.split(' ');
    const scenario = M.SCENARIOS[$('scenario').value];
    if (changed === 'scenario') {
      if (scenario.mode) mode = scenario.mode;
      if (scenario.topology) topology = scenario.topology;
    } else if (changed === 'kind') {
      if (mode !== 'Ordered' && $('scenario').value === 'ordered-gap') $('scenario').value = 'publisher-crash';
      if (topology !== 'Fanout' && $('scenario').value === 'subscriber-crash') $('scenario').value = 'steady';
    }
    $('kind').value = mode + ' ' + topology;
    if (topology === 'Mpsc') $('subscribers').value = '1';
    else if (changed === 'kind' && $('subscribers').value === '1') $('subscribers').value = '2';
    const minimum = M.SCENARIOS[$('scenario').value].minSubscribers || 1;
    if (Number($('subscribers').value) < minimum) $('subscribers').value = String(minimum);
  }

  function onSetting(event) {
    reconcile(event.target.id);
    app.source = 'sim';
    rebuild();
  }

  function loadTrace(trace, name) {
    new M.TracePlayer(trace); // validates, throws on a document that is not a trace
    stop();
    app.trace = trace;
    app.traceName = name || 'loaded trace';
    app.source = 'trace';
    rebuild();
  }

  function wire() {
    for (const id of ['kind', 'publishers', 'subscribers', 'window', 'scenario']) $(id).addEventListener('change', onSetting);
    $('source-sim').addEventListener('change', () => {
      stop();
      app.source = 'sim';
      rebuild();
    });
    $('source-trace').addEventListener('change', () => {
      stop();
      app.source = 'trace';
      rebuild();
    });
    $('trace-file').addEventListener('change', (event) => {
      const file = event.target.files[0];
      if (!file) return;
      const reader = new FileReader();
      reader.onload = () => {
        try {
          loadTrace(JSON.parse(reader.result), file.name);
        } catch (error) {
          $('what').textContent = `${file.name} could not be loaded: ${error.message}`;
          $('why').textContent = 'Record a trace with `cargo run --example record_trace` and load its trace.json.';
        }
      };
      reader.readAsText(file);
    });
    $('play').addEventListener('click', play);
    $('pause').addEventListener('click', stop);
    $('step').addEventListener('click', () => {
      stop();
      step();
    });
    $('replay').addEventListener('click', () => {
      stop();
      rebuild();
      play();
    });
    $('speed').addEventListener('input', () => {
      app.speed = SPEEDS[Number($('speed').value)];
      syncControls();
    });
    document.addEventListener('keydown', (event) => {
      if (event.target.closest('select, input, button')) return;
      if (event.key === ' ') {
        event.preventDefault();
        app.playing ? stop() : play();
      } else if (event.key === 'ArrowRight') {
        stop();
        step();
      }
    });
  }

  // ------------------------------------------------------------------------------------
  // Drawing

  const pct = (bytes, cap) => (bytes / (2 * cap)) * 100 + '%';

  /** Places `node` over bytes [start, start + len) of the doubled strip. */
  function place(node, start, len, cap) {
    node.style.left = pct(start, cap);
    node.style.width = pct(len, cap);
  }

  /** A run of `len` bytes from position `pos`, as pieces within the first view. */
  function wrapped(pos, len, cap) {
    const off = pos % cap;
    return off + len <= cap ? [[off, len]] : [[off, cap - off], [0, off + len - cap]];
  }

  function buildRings() {
    const w = app.model.world;
    const box = $('rings');
    box.textContent = '';
    app.rings = w.pubs.map((p, ring) => {
      const wrap = el('div', 'ring');
      wrap.id = 'ring-' + ring;
      wrap.style.setProperty('--c', PUB_COLORS[ring]);
      const title = el('div', 'ring-title');
      title.innerHTML = `<b><span class="swatch"></span>Ring ${ring}</b><span class="where">publisher ${p.letter}'s ring · bytes ${ring * w.capacity}–${(ring + 1) * w.capacity - 1} of the ring object, mapped twice</span>`;
      const track = el('div', 'track');
      const pubLane = el('div', 'lane lane-pub');
      const bands = [el('div', 'band'), el('div', 'band')];
      const tail = el('div', 'marker tail', '▼');
      const limit = el('div', 'marker limit', '┆');
      tail.title = 'tail: where the next frame goes';
      limit.title = 'limit: slowest cursor + publication window';
      bands.forEach((b) => pubLane.append(b));
      pubLane.append(tail, limit);
      const strip = el('div', 'strip');
      const v1 = el('div', 'view view1');
      v1.append(el('span', '', 'view 1'));
      const v2 = el('div', 'view view2');
      v2.append(el('span', '', 'view 2 · same memory'));
      strip.append(v1, v2);
      track.append(pubLane, strip);
      const subLanes = w.subs.map((s, sub) => {
        const lane = el('div', 'lane lane-sub');
        lane.style.setProperty('--s', SUB_COLORS[sub]);
        const segments = [el('div', 'unreleased'), el('div', 'unreleased')];
        const cursor = el('div', 'marker cursor', '▲');
        const head = el('div', 'marker head', '◆');
        cursor.title = `subscriber ${sub}'s stored cursor`;
        head.title = `subscriber ${sub}'s read position`;
        const name = el('span', 'lane-label', 'S' + sub);
        segments.forEach((x) => lane.append(x));
        lane.append(cursor, head, name);
        track.append(lane);
        return { lane, segments, cursor, head, name };
      });
      const scale = el('div', 'ring-scale');
      scale.innerHTML = `<span>0</span><span>${w.capacity}</span><span>${2 * w.capacity}</span>`;
      wrap.append(title, track, scale);
      box.append(wrap);
      return { strip, bands, tail, limit, subLanes, frames: new Map() };
    });
  }

  /** Whether every subscriber that holds the ring back has read / released `frame`. */
  function frameClass(w, f) {
    if (f.state !== 'committed') return f.state;
    const end = f.pos + f.size;
    const holding = w.subs.filter((s) => s.cursors[f.ring] !== null);
    if (holding.every((s) => s.cursors[f.ring] >= end)) return 'free';
    if (holding.every((s) => s.heads[f.ring] >= end)) return 'read';
    return 'committed';
  }

  function drawFrames(w, ring, view) {
    const cap = w.capacity;
    const seen = new Set();
    for (const f of w.frames[ring]) {
      seen.add(f.id);
      let pieces = view.frames.get(f.id);
      const off = f.pos % cap;
      const wraps = off + f.size > cap;
      if (!pieces) {
        const main = el('div', 'frame fresh');
        main.dataset.pos = f.pos;
        const mirror = el('div', 'frame ghost');
        const tailPiece = el('div', 'frame ghost wrapped', '↪');
        view.strip.append(mirror, tailPiece, main);
        pieces = { main, mirror, tailPiece };
        view.frames.set(f.id, pieces);
      }
      const state = frameClass(w, f);
      const focus = app.last && app.last.frame === f;
      pieces.main.className =
        'frame ' + state + (wraps ? ' wraps' : '') + (pieces.main.classList.contains('fresh') ? ' fresh' : '') + (focus ? ' focus' : '');
      pieces.main.textContent = state === 'torn' ? '✕' : M.label(f);
      pieces.main.title = `${M.label(f)}: ${f.size}-byte frame at position ${f.pos} (offset ${off})${wraps ? ', wraps: contiguous in view 2' : ''}`;
      place(pieces.main, off, f.size, cap);
      if (wraps) pieces.main.style.setProperty('--seam', ((cap - off) / f.size) * 100 + '%');
      place(pieces.mirror, cap + off, Math.min(f.size, cap - off), cap);
      pieces.tailPiece.hidden = !wraps;
      if (wraps) place(pieces.tailPiece, 0, off + f.size - cap, cap);
    }
    for (const [id, pieces] of view.frames) {
      if (!seen.has(id)) {
        pieces.main.remove();
        pieces.mirror.remove();
        pieces.tailPiece.remove();
        view.frames.delete(id);
      }
    }
  }

  function drawRing(w, ring) {
    const view = app.rings[ring];
    const p = w.pubs[ring];
    const cap = w.capacity;
    drawFrames(w, ring, view);
    const low = M.slowest(w, ring).pos;
    const band = wrapped(low, w.window, cap);
    view.bands.forEach((b, i) => {
      b.hidden = !band[i];
      if (band[i]) place(b, band[i][0], band[i][1], cap);
    });
    view.tail.style.left = pct(p.tail % cap, cap);
    view.limit.style.left = pct(p.limit % cap === 0 && p.limit > 0 ? cap : p.limit % cap, cap);
    view.tail.title = `tail ${p.tail}`;
    view.limit.title = `limit ${p.limit} = slowest cursor ${low} + window ${w.window}`;
    w.subs.forEach((s, sub) => {
      const lane = view.subLanes[sub];
      const cursor = s.cursors[ring];
      const idle = cursor === null;
      lane.lane.classList.toggle('idle', idle);
      lane.name.textContent = 'S' + sub + (idle ? ' idle' : s.holder === 'dead' ? ' dead' : '');
      lane.cursor.hidden = idle;
      lane.head.hidden = idle;
      const pieces = idle ? [] : wrapped(cursor, s.heads[ring] - cursor, cap);
      lane.segments.forEach((x, i) => {
        x.hidden = !pieces[i] || pieces[i][1] === 0;
        if (pieces[i]) place(x, pieces[i][0], pieces[i][1], cap);
      });
      const last = app.last;
      const stored =
        last &&
        last.actor === s &&
        (last.type === 'release' ? (last.rings ? last.rings.includes(ring) : last.ring === ring) : last.released && last.ring === ring);
      lane.cursor.classList.toggle('focus', Boolean(stored));
      if (!idle) {
        lane.cursor.style.left = pct(cursor % cap, cap);
        lane.head.style.left = pct(s.heads[ring] % cap, cap);
        lane.cursor.title = `subscriber ${sub}: cursor ${cursor}`;
        lane.head.title = `subscriber ${sub}: read up to ${s.heads[ring]}`;
      }
    });
  }

  /** A table cell that is marked when its value changed since the last step. */
  function cell(key, value, extra) {
    const changed = app.cells[key] !== undefined && app.cells[key] !== String(value);
    app.nextCells[key] = String(value);
    const classes = [extra || '', changed ? 'changed' : ''].join(' ').trim();
    return `<td${classes ? ` class="${classes}"` : ''}>${escape(value)}</td>`;
  }

  function holderText(holder, pid) {
    return holder === 'alive' ? `pid ${pid}` : holder === 'dead' ? `pid ${pid} dead` : 'free';
  }

  /** The holder as the control block's table shows it: a pid, marked when dead. */
  function holderCell(holder, pid) {
    return holder === 'alive' ? String(pid) : holder === 'dead' ? pid + ' †' : 'free';
  }

  function drawControlBlock(w) {
    app.nextCells = {};
    const ordered = w.mode === 'Ordered';
    let html = `<div class="cb-title">Control block <span class="where">(shared memory)</span></div>`;
    html += `<div class="cb-header">${w.kind} · ${w.capacity} B per ring · window ${w.window} B · release every ${w.releaseEvery} B`;
    if (ordered) html += ` · global sequence <b id="global-sequence">${w.sequence}</b>`;
    html += `</div><div class="cb-tables"><table id="producer-slots"><caption>Producer slots: holder, progress</caption><tr><th>slot</th><th>pid</th><th>tail</th><th>published</th><th>refused</th>${ordered ? '<th>pending</th>' : ''}</tr>`;
    for (const p of w.pubs) {
      html += `<tr><td><span class="swatch" style="--c:${PUB_COLORS[p.slot]}"></span>${p.slot} ${p.letter}</td>`;
      html += cell(`p${p.slot}h`, holderCell(p.holder, p.pid), p.holder === 'dead' ? 'dead' : '');
      html += cell(`p${p.slot}t`, p.tail) + cell(`p${p.slot}n`, p.published) + cell(`p${p.slot}r`, p.refused);
      if (ordered) html += cell(`p${p.slot}q`, p.pending === null ? '—' : '#' + p.pending);
      html += '</tr>';
    }
    html += `</table><table id="subscriber-slots"><caption>Subscriber slots: holder, a cursor per ring</caption><tr><th>slot</th><th>pid</th>`;
    html += w.pubs.map((p) => `<th>ring ${p.slot}</th>`).join('') + '</tr>';
    for (const s of w.subs) {
      html += `<tr><td><span class="swatch" style="--c:${SUB_COLORS[s.slot]}"></span>${s.slot}</td>`;
      html += cell(`s${s.slot}h`, holderCell(s.holder, s.pid), s.holder === 'dead' ? 'dead' : '');
      s.cursors.forEach((c, ring) => {
        html += cell(`s${s.slot}c${ring}`, c === null ? 'idle' : c, c === null ? 'idle' : '');
      });
      html += '</tr>';
    }
    html += '</table></div>';
    $('control-block').innerHTML = html;
    app.cells = app.nextCells;
  }

  function drawCards(w) {
    const active = app.last && app.last.actor;
    $('publisher-cards').innerHTML = w.pubs
      .map((p) => {
        const cls = ['card', p.holder, active === p ? 'active' : ''].join(' ');
        const pending = p.pending !== null ? ` · holds #${p.pending}` : '';
        return `<div class="${cls}" id="publisher-${p.slot}" style="--c:${PUB_COLORS[p.slot]}">
          <h3>Publisher ${p.letter} <span class="pid">${holderText(p.holder, p.pid)}</span></h3>
          <div class="role">holds producer slot ${p.slot}, writes ring ${p.slot}</div>
          <div class="state">${escape(p.note)}${pending}</div>
          <div class="nums">published ${p.published} · refused ${p.refused}</div>
          <div class="nums">tail ${p.tail} · limit ${p.limit}</div></div>`;
      })
      .join('');
    $('subscriber-cards').innerHTML = w.subs
      .map((s) => {
        const cls = ['card', s.holder, active === s ? 'active' : ''].join(' ');
        const ordered = w.mode === 'Ordered';
        const gaps = ordered
          ? `<div class="nums">next #${s.next} · gaps ${s.gaps.events}${s.gaps.last ? ` (#${s.gaps.last[0]}${s.gaps.last[1] - s.gaps.last[0] > 1 ? '–#' + (s.gaps.last[1] - 1) : ''} lost)` : ''}</div>`
          : '';
        const chips = s.recent
          .map((r) => `<span class="chip${r.gap ? ' gap' : ''}" style="--c:${PUB_COLORS[r.ring]}" title="${r.gap ? 'gap_before ' + r.gap : ''}">${escape(r.label)}</span>`)
          .join('');
        const state = s.reaped ? 'dead, slot freed (reaped)' : s.holder === 'dead' ? 'killed' : s.note;
        return `<div class="${cls}" id="subscriber-${s.slot}" style="--c:${SUB_COLORS[s.slot]}">
          <h3>Subscriber ${s.slot} <span class="pid">${holderText(s.holder, s.pid)}</span></h3>
          <div class="role">holds subscriber slot ${s.slot}, reads ${w.pubs.length > 1 ? `rings 0–${w.pubs.length - 1}` : 'ring 0'}</div>
          <div class="state">${escape(state)}</div>
          <div class="nums">received ${s.received}</div>${gaps}
          <div class="chips" aria-label="last messages received">${chips}</div></div>`;
      })
      .join('');
  }

  function introCaption(w) {
    if (app.source === 'trace') {
      return {
        what: `A trace recorded from a real ${w.kind} run (examples/record_trace.rs): ${app.model.trace.events.length} events.`,
        why: app.model.trace.scenario + '. Press Play or Step to replay it.',
      };
    }
    const sc = M.SCENARIOS[settings().scenario];
    return {
      what: `${w.kind} with ${w.pubs.length} publisher${w.pubs.length > 1 ? 's' : ''} and ${w.subs.length} subscriber${w.subs.length > 1 ? 's' : ''}: ${sc.title.toLowerCase()}.`,
      why:
        'Each publisher slot owns a ring; subscribers read frames in place and tell publishers how far they got through their cursors in the control block. ' +
        (w.mode === 'Ordered'
          ? 'Ordered: one global sequence number per message, taken with fetch_add, and every subscriber delivers in that order. '
          : 'FIFO: each publisher\'s messages arrive in the order sent; publishing is plain stores, no read-modify-write. ') +
        'Press Play or Step.',
    };
  }

  function drawCaption(w) {
    const text = app.last || introCaption(w);
    $('step-no').textContent = 'Step ' + w.step;
    $('source-tag').textContent = app.source === 'trace' ? `Recorded trace · ${w.kind} · ${app.traceName}` : `Simulation · ${w.kind} · seed ${app.seed}`;
    $('what').textContent = text.what;
    $('why').textContent = text.why;
    const t = M.snapshot(w).totals;
    const items = [
      ['published', t.published],
      ['received', t.received],
      ['refused offers', t.refused],
    ];
    if (w.mode === 'Ordered') items.push(['gaps', `${t.gapEvents} (${t.missing} lost)`]);
    if (w.topology === 'Fanout') items.push(['reaped subscribers', t.reaped]);
    $('totals').innerHTML = items.map(([k, v]) => `<div><dt>${k}</dt><dd>${v}</dd></div>`).join('');
  }

  function drawLog() {
    const list = $('log');
    list.textContent = '';
    list.start = app.log.length ? app.log[app.log.length - 1].step : 0;
    for (let i = app.log.length - 1; i >= Math.max(0, app.log.length - 40); i--) {
      const item = el('li', '', app.log[i].what);
      item.value = app.log[i].step;
      list.append(item);
    }
  }

  function render() {
    const w = app.model.world;
    $('channel-title').innerHTML = `Channel <span>${w.kind}</span>`;
    drawControlBlock(w);
    w.pubs.forEach((p, ring) => drawRing(w, ring));
    drawCards(w);
    drawCaption(w);
    drawLog();
  }

  // ------------------------------------------------------------------------------------
  // For tests and the curious

  window.saliasSim = {
    state() {
      const w = app.model.world;
      return Object.assign(M.snapshot(w), {
        source: app.source,
        scenario: app.source === 'sim' ? settings().scenario : null,
        seed: app.seed,
        playing: app.playing,
        speed: app.speed,
        interval: interval(),
        done: app.model.done,
        reducedMotion: document.documentElement.classList.contains('reduce-motion'),
        caption: { what: $('what').textContent, why: $('why').textContent },
        matchesFinal: app.source === 'trace' ? app.model.matchesFinal() : null,
        traceFinal: app.source === 'trace' ? app.model.trace.final : null,
        traceEvents: app.source === 'trace' ? app.model.trace.events.length : null,
      });
    },
    /** Runs `n` steps at once (the Step button does one). */
    advance(n) {
      stop();
      for (let i = 0; i < n && !app.model.done; i++) {
        // Drawn before the last step too, so the control block marks what that step changed.
        if (i === n - 1) render();
        app.last = app.model.step();
        app.log.push(app.last);
      }
      app.log = app.log.slice(-80);
      render();
    },
    loadTrace: loadTrace,
  };

  wire();
  rebuild();
})();
