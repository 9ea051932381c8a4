// Drives doc/animation/index.html from file:// in Debian's chromium (headless) and checks
// that it works as a person would use it: every control does what it should, the
// simulation follows the library's rules to the exact state, the recorded trace replays
// to the counts it recorded, the page fits a 390-px screen and honours reduced motion.
// Writes screenshots to target/animation-screenshots/. Run: npm ci && node test.mjs
// (SALIAS_FRESH_TRACE=path/trace.json also replays a freshly recorded trace through the
// file picker; --readme-screenshot rewrites doc/animation/screenshot.png).
import { chromium } from 'playwright-core';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import fs from 'node:fs';
import path from 'node:path';

const here = path.dirname(fileURLToPath(import.meta.url));
const animation = path.resolve(here, '..');
const repo = path.resolve(animation, '../..');
const pageUrl = pathToFileURL(path.join(animation, 'index.html')).href;
const shots = path.join(repo, 'target', 'animation-screenshots');
const committedTracePath = path.join(animation, 'trace.json');
const Model = createRequire(import.meta.url)(path.join(animation, 'model.js'));
const started = Date.now();

let passed = 0;
let failed = 0;
const errors = [];

async function check(name, body) {
  try {
    await body();
    passed += 1;
    console.log(`ok    ${name}`);
  } catch (error) {
    failed += 1;
    console.log(`FAIL  ${name}\n      ${String(error && error.stack ? error.stack : error).split('\n').slice(0, 3).join('\n      ')}`);
  }
}

function assert(condition, message) {
  if (!condition) throw new Error(message);
}

function equal(actual, expected, what) {
  const a = JSON.stringify(actual);
  const e = JSON.stringify(expected);
  if (a !== e) throw new Error(`${what}: expected ${e}, got ${a}`);
}

const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'],
});

/** A fresh page on the animation; console errors, page errors and any request that
 *  leaves the disk are collected. */
async function open(viewport = { width: 1280, height: 900 }) {
  const context = await browser.newContext({ viewport });
  const page = await context.newPage();
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(`console error: ${message.text()}`);
  });
  page.on('pageerror', (error) => errors.push(`page error: ${error.message}`));
  page.on('request', (request) => {
    if (!request.url().startsWith('file:')) errors.push(`network request: ${request.url()}`);
  });
  await page.goto(pageUrl);
  await page.waitForFunction(() => window.saliasSim !== undefined);
  return page;
}

const state = (page) => page.evaluate(() => window.saliasSim.state());

/** Moves a range input as a person dragging it would: sets it, fires `input`. */
async function setRange(page, selector, value) {
  await page.locator(selector).evaluate((input, v) => {
    input.value = v;
    input.dispatchEvent(new Event('input', { bubbles: true }));
  }, String(value));
}

async function clickSteps(page, n) {
  for (let i = 0; i < n; i++) await page.click('#step');
}

/** Steps with the keyboard shortcut (→), three times quicker than clicking in this driver. */
async function pressSteps(page, n) {
  await page.evaluate(() => document.activeElement && document.activeElement.blur());
  for (let i = 0; i < n; i++) await page.keyboard.press('ArrowRight');
}

/** The model run headless in node with the same settings, for comparison with the page. */
function modelState(options, steps) {
  const sim = new Model.Simulation(Object.assign({ seed: 1, window: 4096, scenario: 'steady' }, options));
  for (let i = 0; i < steps; i++) sim.step();
  return Model.snapshot(sim.world);
}

/** The parts of a page state the model decides. */
function modelPart(s) {
  const { kind, mode, topology, capacity, window, releaseEvery, step, sequence, publishers, subscribers, frames, totals } = s;
  return { kind, mode, topology, capacity, window, releaseEvery, step, sequence, publishers, subscribers, frames, totals };
}

/** Every ring: cursors within [0, head], heads within [0, tail], at most a window in flight. */
function assertRules(s) {
  s.publishers.forEach((p, ring) => {
    const cursors = s.subscribers.map((sub) => sub.cursors[ring]).filter((c) => c !== null);
    const slowest = Math.min(p.tail, ...cursors);
    assert(p.tail - slowest <= s.window, `ring ${ring}: ${p.tail - slowest} bytes in flight, window ${s.window}`);
    s.subscribers.forEach((sub) => {
      const c = sub.cursors[ring];
      if (c !== null) assert(c <= sub.heads[ring] && sub.heads[ring] <= p.tail, `ring ${ring}: cursor ${c}, head ${sub.heads[ring]}, tail ${p.tail}`);
    });
  });
}

/** No two of the elements overlap, and each lies inside the viewport's width. */
async function assertNoOverlap(page, selectors, width) {
  const boxes = [];
  for (const selector of selectors) {
    const box = await page.locator(selector).first().boundingBox();
    assert(box && box.width > 0 && box.height > 0, `${selector} is not shown`);
    assert(box.x >= 0 && box.x + box.width <= width + 0.5, `${selector} spans x ${box.x}–${box.x + box.width}, outside ${width} px`);
    boxes.push([selector, box]);
  }
  for (let i = 0; i < boxes.length; i++) {
    for (let j = i + 1; j < boxes.length; j++) {
      const [sa, a] = boxes[i];
      const [sb, b] = boxes[j];
      const overlap = a.x < b.x + b.width - 0.5 && b.x < a.x + a.width - 0.5 && a.y < b.y + b.height - 0.5 && b.y < a.y + a.height - 0.5;
      assert(!overlap, `${sa} ${JSON.stringify(a)} overlaps ${sb} ${JSON.stringify(b)}`);
    }
  }
}

async function replayToEnd(page) {
  // One step per recorded event left.
  const s = await state(page);
  await pressSteps(page, s.traceEvents - s.step);
}

function assertFinalCounts(s, final) {
  assert(s.done, 'the trace replay is not over');
  equal(s.sequence, final.sequence, 'global sequence');
  final.publishers.forEach((p, i) => {
    equal(s.publishers[i].published, p.published, `publisher ${i} published`);
    equal(s.publishers[i].refused, p.backpressured, `publisher ${i} refused offers`);
    equal(s.publishers[i].tail, p.position, `publisher ${i} tail`);
  });
  final.subscribers.forEach((sub, i) => {
    equal(s.subscribers[i].received, sub.received, `subscriber ${i} received`);
    equal(s.subscribers[i].cursors, sub.cursors, `subscriber ${i} cursors`);
    equal(s.subscribers[i].gaps.events, sub.gaps.events, `subscriber ${i} gap events`);
    equal(s.subscribers[i].gaps.missing, sub.gaps.missing, `subscriber ${i} missing numbers`);
  });
  assert(s.matchesFinal, 'the page does not say the replay matches');
}

fs.mkdirSync(shots, { recursive: true });
const page = await open();

await check('opens from file:// with the default channel: FifoMpsc, 2 publishers, 1 subscriber, step 0', async () => {
  const s = await state(page);
  equal([s.source, s.kind, s.publishers.length, s.subscribers.length, s.step, s.window], ['sim', 'FifoMpsc', 2, 1, 0, 4096], 'initial state');
  equal(await page.locator('.ring').count(), 2, 'rings drawn');
  equal(await page.locator('#publisher-cards .card').count(), 2, 'publisher cards');
  equal(await page.locator('#subscriber-cards .card').count(), 1, 'subscriber cards');
  assert(await page.locator('#subscribers').isDisabled(), 'Mpsc has one subscriber: its count is fixed');
});

await check('Step: 40 clicks give the exact FifoMpsc state (ring tails, cursors, counts)', async () => {
  await clickSteps(page, 40);
  const s = await state(page);
  equal(s.step, 40, 'step');
  equal(s.publishers.map((p) => [p.tail, p.published, p.refused]), [[3392, 8, 0], [2768, 6, 0]], 'publishers [tail, published, refused]');
  equal(s.subscribers[0].heads, [1976, 2144], 'subscriber read positions');
  equal(s.subscribers[0].cursors, [1416, 2144], 'subscriber stored cursors (released in batches)');
  equal(s.subscribers[0].delivered.join(' '), 'A1 A2 A3 A4 B1 B2 B3 B4 A5', 'FIFO delivery: bursts of 4 per ring');
  equal(modelPart(s), modelState({ mode: 'Fifo', topology: 'Mpsc', publishers: 2, subscribers: 1 }, 40), 'page state = model run in node');
  assertRules(s);
  assert((await page.locator('#step-no').textContent()) === 'Step 40', 'caption step number');
  assert((await page.locator('#what').textContent()).length > 20, 'the caption says what the step did');
  assert((await page.locator('#why').textContent()).length > 20, 'the caption says why');
});

await check('Replay restarts from step 0 and plays the same steps again (seeded)', async () => {
  const before = modelPart(await state(page));
  await page.click('#replay');
  let s = await state(page);
  assert(s.playing && s.step <= 1, `after Replay: playing ${s.playing}, step ${s.step}`);
  await page.click('#pause');
  s = await state(page);
  await pressSteps(page, 40 - s.step);
  equal(modelPart(await state(page)), before, 'state after 40 steps, replayed');
});

await check('Play runs steps on its own; Pause stops them', async () => {
  await page.click('#play');
  await page.waitForFunction(() => window.saliasSim.state().step >= 42, null, { timeout: 8000 });
  assert((await state(page)).playing, 'playing');
  assert(await page.locator('#play').isDisabled(), 'Play is disabled while playing');
  await page.click('#pause');
  const paused = (await state(page)).step;
  await page.waitForTimeout(1500);
  const s = await state(page);
  assert(!s.playing && s.step === paused, `paused at ${paused}, now ${s.step}`);
});

await check('Speed: 8× plays many steps a second, 0.5× at most one', async () => {
  await setRange(page, '#speed', 4);
  let s = await state(page);
  equal([s.speed, s.interval], [8, 113], 'speed 8×');
  equal(await page.locator('#speed-out').textContent(), '8×', 'speed label');
  const from = s.step;
  await page.click('#play');
  await page.waitForTimeout(1200);
  await page.click('#pause');
  const fast = (await state(page)).step - from;
  await setRange(page, '#speed', 0);
  s = await state(page);
  equal([s.speed, s.interval], [0.5, 1800], 'speed 0.5×');
  const slowFrom = s.step;
  await page.click('#play');
  await page.waitForTimeout(1200);
  await page.click('#pause');
  const slow = (await state(page)).step - slowFrom;
  assert(fast >= 4 && slow <= 1, `steps in 1.2 s: ${fast} at 8×, ${slow} at 0.5×`);
  await setRange(page, '#speed', 1);
});

await check('Kind: OrderedMpsc delivers by global sequence (fetch_add numbers, merge by sequence)', async () => {
  await page.selectOption('#kind', 'Ordered Mpsc');
  let s = await state(page);
  equal([s.kind, s.step, s.sequence], ['OrderedMpsc', 0, 0], 'rebuilt as OrderedMpsc');
  await pressSteps(page, 40);
  s = await state(page);
  const sub = s.subscribers[0];
  equal(sub.delivered.join(' '), '#0 #1 #2 #3 #4 #5 #6 #7 #8', 'delivered in global order');
  equal([s.sequence, sub.nextSequence, sub.received], [14, 9, 9], '[numbers taken, next wanted, received]');
  const numbers = s.frames.flat().filter((f) => f.seq !== null).map((f) => f.seq).sort((a, b) => a - b);
  equal(numbers, [...Array(14).keys()], 'every number taken is in exactly one ring');
  equal(modelPart(s), modelState({ mode: 'Ordered', topology: 'Mpsc', publishers: 2, subscribers: 1 }, 40), 'page state = model');
  assert((await page.locator('#global-sequence').textContent()) === '14', 'the control block shows the global sequence');
});

await check('Kind: FifoFanout gives every subscriber its own cursor in every ring', async () => {
  await page.selectOption('#kind', 'Fifo Fanout');
  let s = await state(page);
  equal([s.kind, s.subscribers.length], ['FifoFanout', 2], 'fanout with 2 subscribers');
  assert(!(await page.locator('#subscribers').isDisabled()), 'fanout lets the subscriber count change');
  await pressSteps(page, 30);
  s = await state(page);
  equal(s.subscribers.map((x) => x.cursors.length), [2, 2], 'a cursor per ring per subscriber');
  equal(await page.locator('#ring-0 .lane-sub').count(), 2, 'a cursor lane per subscriber in each ring');
  equal(modelPart(s), modelState({ mode: 'Fifo', topology: 'Fanout', publishers: 2, subscribers: 2 }, 30), 'page state = model');
});

await check('Publishers and subscribers: the counts change the slots, rings and lanes', async () => {
  await page.selectOption('#publishers', '3');
  await page.selectOption('#subscribers', '3');
  let s = await state(page);
  equal([s.publishers.length, s.subscribers.length], [3, 3], 'slots');
  equal(await page.locator('.ring').count(), 3, 'rings');
  equal(await page.locator('#ring-2 .lane-sub').count(), 3, 'lanes in ring 2');
  equal(await page.locator('#producer-slots tr').count(), 4, 'producer slot rows (and header)');
  await page.selectOption('#publishers', '1');
  s = await state(page);
  equal(s.publishers.length, 1, 'one publisher');
  equal(await page.locator('.ring').count(), 1, 'one ring');
  await page.selectOption('#publishers', '2');
  await page.selectOption('#subscribers', '2');
});

await check('Window: 1024 bytes bounds what is in flight and releases every 256 bytes', async () => {
  await page.selectOption('#window', '1024');
  await pressSteps(page, 60);
  const s = await state(page);
  equal([s.window, s.releaseEvery], [1024, 256], 'window and release batch');
  assertRules(s);
  equal(modelPart(s), modelState({ mode: 'Fifo', topology: 'Fanout', publishers: 2, subscribers: 2, window: 1024 }, 60), 'page state = model');
  await page.selectOption('#window', '2048');
});

await check('Backpressure: the slowest live subscriber holds publishers back; refused offers are counted', async () => {
  await page.selectOption('#scenario', 'backpressure');
  let s;
  for (let i = 0; i < 200; i++) {
    await pressSteps(page, 1);
    s = await state(page);
    if (s.totals.refused > 0) break;
  }
  const refusing = s.publishers.find((p) => p.refused > 0);
  const cursors = s.subscribers.map((x) => x.cursors[refusing.slot]);
  equal(refusing.limit, Math.min(...cursors) + 2048, 'limit = slowest cursor + window');
  equal(Math.min(...cursors), cursors[1], 'the slow subscriber (1) is the slowest');
  assert(/refused: backpressure/.test(s.caption.what), `caption: ${s.caption.what}`);
  await pressSteps(page, 120 - s.step);
  s = await state(page);
  equal(s.publishers.map((p) => [p.published, p.refused]), [[11, 15], [8, 17]], 'publishers [published, refused] after 120 steps');
  equal(s.subscribers.map((x) => x.received), [19, 7], 'received by the fast and the slow subscriber');
  assertRules(s);
  equal(modelPart(s), modelState({ mode: 'Fifo', topology: 'Fanout', publishers: 2, subscribers: 2, window: 2048, scenario: 'backpressure' }, 120), 'page state = model');
});

await check('Crash: an ordered publisher killed holding a number is a reported gap; its successor recovers the tail', async () => {
  await page.selectOption('#kind', 'Fifo Mpsc');
  await page.selectOption('#window', '4096');
  await page.selectOption('#scenario', 'ordered-gap');
  let s = await state(page);
  equal(s.kind, 'OrderedMpsc', 'the scenario switches to an ordered kind');
  await pressSteps(page, 9);
  s = await state(page);
  const dead = s.publishers[0];
  equal([dead.holder, dead.pending], ['dead', 2], 'publisher A dead, holding #2');
  const torn = s.frames[0].find((f) => f.state === 'torn');
  equal([torn.pos, torn.seq], [496, 2], 'its frame at 496 has no commit word');
  await pressSteps(page, 12);
  s = await state(page);
  equal(s.subscribers[0].gaps, { events: 1, missing: 1, last: [2, 3] }, 'gap reported (gaps())');
  assert(/gap/.test(s.caption.what), `caption: ${s.caption.what}`);
  equal(await page.locator('.chip.gap').count(), 1, 'the message after the gap is marked');
  await pressSteps(page, 19);
  s = await state(page);
  equal([s.publishers[0].holder, s.publishers[0].pid, s.publishers[0].pending, s.publishers[0].tail], ['alive', 4301, null, 496], 'successor at the last committed frame');
  await pressSteps(page, 20);
  s = await state(page);
  assert(!s.frames[0].some((f) => f.state === 'torn'), 'the torn frame was overwritten');
  assert(!s.subscribers[0].delivered.includes('#2'), 'the lost number is never delivered');
  equal(modelPart(s), modelState({ mode: 'Ordered', topology: 'Mpsc', publishers: 2, subscribers: 1, scenario: 'ordered-gap' }, 60), 'page state = model');
});

await check('Crash: a FIFO publisher killed mid-write; its frame is never delivered', async () => {
  await page.selectOption('#kind', 'Fifo Mpsc');
  let s = await state(page);
  equal(s.scenario, 'publisher-crash', 'an ordered-only scenario falls back to the FIFO crash');
  await pressSteps(page, 29);
  s = await state(page);
  equal([s.publishers[0].holder, s.subscribers[0].heads[0], s.publishers[0].tail], ['dead', 472, 472], 'subscriber stops at the uncommitted frame');
  equal([s.totals.published, s.totals.received], [7, 7], 'everything committed was delivered, nothing else');
  await pressSteps(page, 31);
  s = await state(page);
  assert(s.subscribers[0].heads[0] > 472 && s.publishers[0].holder === 'alive', 'successor publishing, subscriber past 472');
  equal([s.totals.published, s.totals.received], [16, 16], 'counts after 60 steps');
});

await check('Crash: a dead fanout subscriber is reaped by a held-back publisher; the other loses nothing', async () => {
  await page.selectOption('#scenario', 'subscriber-crash');
  let s = await state(page);
  equal([s.kind, s.subscribers.length], ['FifoFanout', 2], 'the scenario needs a fanout channel');
  await pressSteps(page, 10);
  s = await state(page);
  equal([s.subscribers[1].holder, s.subscribers[1].cursors], ['dead', [0, 0]], 'subscriber 1 dead, cursors frozen');
  let reapedAt = null;
  for (let i = 10; i < 120; i++) {
    await pressSteps(page, 1);
    s = await state(page);
    if (reapedAt === null && s.totals.reaped === 1) {
      reapedAt = s.step;
      assert(/dead subscriber/.test(s.caption.what), `caption at the reap: ${s.caption.what}`);
    }
  }
  assert(reapedAt !== null, 'never reaped');
  equal([s.subscribers[1].holder, s.subscribers[1].reaped, s.subscribers[1].cursors], ['free', true, [null, null]], 'slot freed, cursors idle');
  const live = s.subscribers[0];
  const unread = s.frames.flat().filter((f) => f.state === 'committed' && f.pos >= live.heads[s.frames.findIndex((r) => r.includes(f))]);
  equal(live.received + unread.length, s.totals.published, 'subscriber 0 received or has yet to read every committed message');
  equal([s.totals.published, live.received, s.totals.reaped], [38, 33, 1], '[published, received by subscriber 0, reaped] after 120 steps');
  assertRules(s);
  await page.screenshot({ path: path.join(shots, 'desktop-subscriber-reaped.png'), fullPage: true });
});

const trace = JSON.parse(fs.readFileSync(committedTracePath, 'utf8'));
await check('Recorded trace (trace.js): replays to the final counts the real run recorded', async () => {
  await page.click('#source-trace');
  let s = await state(page);
  equal([s.source, s.kind, s.step, s.done], ['trace', trace.channel.kind, 0, false], 'trace loaded');
  assert(await page.locator('#kind').isDisabled(), 'the trace decides the kind');
  await replayToEnd(page);
  s = await state(page);
  equal(s.step, trace.events.length, 'one step per recorded event');
  assertFinalCounts(s, trace.final);
  assert(s.totals.refused > 0 && s.totals.gapEvents === 1, 'the run had refusals and a gap');
  assert(/same final counts/.test(s.caption.why), `caption: ${s.caption.why}`);
  assert(await page.locator('#step').isDisabled(), 'Step is disabled at the end');
  await page.screenshot({ path: path.join(shots, 'desktop-trace-replayed.png'), fullPage: true });
});

await check('The trace player refuses a run that breaks the rules, and a final count it does not reach', async () => {
  const outcome = (mutate) => {
    const t = structuredClone(trace);
    mutate(t);
    try {
      const player = new Model.TracePlayer(t);
      while (!player.done) player.step();
      return player.matchesFinal() ? 'matches' : 'differs';
    } catch (error) {
      return error.message;
    }
  };
  equal(outcome(() => {}), 'matches', 'the committed trace');
  const nth = (t, type, test = () => true) => t.events.find((e) => e.type === type && test(e));
  const broken = [
    outcome((t) => (nth(t, 'release').cursor += 8)),
    outcome((t) => (nth(t, 'refused').len = 8)),
    outcome((t) => (nth(t, 'commit', (e) => e.sequence === 3).sequence = 4)),
    outcome((t) => {
      const a = t.events.findIndex((e) => e.type === 'receive' && e.sequence === 5);
      const b = t.events.findIndex((e) => e.type === 'receive' && e.sequence === 6);
      [t.events[a], t.events[b]] = [t.events[b], t.events[a]];
    }),
  ];
  broken.forEach((message) => assert(/breaks a rule/.test(message), `not refused: ${message}`));
  equal(outcome((t) => (t.final.publishers[0].published += 1)), 'differs', 'a final count off by one');
});

const freshPath = process.env.SALIAS_FRESH_TRACE;
await check(`Load a trace… (file picker): ${freshPath ? 'a freshly recorded' : 'the committed'} trace.json replays to its counts`, async () => {
  const file = freshPath || committedTracePath;
  const loaded = JSON.parse(fs.readFileSync(file, 'utf8'));
  await page.setInputFiles('#trace-file', file);
  await page.waitForFunction(() => window.saliasSim.state().step === 0 && window.saliasSim.state().source === 'trace');
  assert((await page.locator('#source-tag').textContent()).includes('trace.json'), 'the caption names the file');
  await page.click('#replay');
  await page.click('#pause');
  await replayToEnd(page);
  assertFinalCounts(await state(page), loaded.final);
  await page.click('#source-sim');
  equal((await state(page)).source, 'sim', 'back to the simulation');
});

await check('390 px wide: no component overlaps another, nothing wider than the screen', async () => {
  const narrow = await open({ width: 390, height: 844 });
  await narrow.selectOption('#kind', 'Ordered Fanout');
  await narrow.selectOption('#publishers', '3');
  await narrow.selectOption('#subscribers', '3');
  await narrow.evaluate(() => window.saliasSim.advance(50));
  await narrow.waitForTimeout(400);
  await assertNoOverlap(narrow, ['#top', '#controls', '#caption', '#publishers-panel', '#channel-panel', '#subscribers-panel', '#log-panel'], 390);
  await assertNoOverlap(narrow, ['#control-block', '#ring-0', '#ring-1', '#ring-2'], 390);
  await assertNoOverlap(narrow, ['.source', '.settings', '.playback'], 390);
  await assertNoOverlap(narrow, ['#play', '#pause', '#step', '#replay', 'label.speed'], 390);
  await assertNoOverlap(narrow, ['#publisher-0', '#publisher-1', '#publisher-2'], 390);
  const scroll = await narrow.evaluate(() => document.documentElement.scrollWidth);
  assert(scroll <= 390, `the page scrolls sideways: ${scroll} px`);
  await narrow.screenshot({ path: path.join(shots, 'narrow-390-ordered-fanout.png'), fullPage: true });
  await narrow.context().close();
});

await check('1280 px wide: the major components do not overlap', async () => {
  await page.selectOption('#kind', 'Ordered Fanout');
  await page.selectOption('#scenario', 'ordered-gap');
  await page.evaluate(() => window.saliasSim.advance(60));
  await assertNoOverlap(page, ['#top', '#controls', '#caption', '#publishers-panel', '#channel-panel', '#subscribers-panel', '#log-panel'], 1280);
  await page.screenshot({ path: path.join(shots, 'desktop-ordered-gap.png'), fullPage: true });
});

await check('prefers-reduced-motion: reduce turns transitions and animations off', async () => {
  const moving = (p) =>
    p.evaluate(() => ({
      transition: getComputedStyle(document.querySelector('.marker.tail')).transitionDuration,
      animation: getComputedStyle(document.querySelector('.frame.fresh')).animationDuration,
      flagged: document.documentElement.classList.contains('reduce-motion'),
    }));
  const normal = await moving(page);
  equal(normal, { transition: '0.32s', animation: '0.32s', flagged: false }, 'without the preference, markers and frames move');
  // Changed while the page is open: the page follows.
  await page.emulateMedia({ reducedMotion: 'reduce' });
  await page.waitForFunction(() => document.documentElement.classList.contains('reduce-motion'), null, { timeout: 3000 });
  equal(await moving(page), { transition: '0s', animation: '0s', flagged: true }, 'after the preference changed');
  await page.emulateMedia({ reducedMotion: 'no-preference' });
  // Set before the page loads.
  const still = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  still.on('pageerror', (error) => errors.push(`page error: ${error.message}`));
  await still.emulateMedia({ reducedMotion: 'reduce' });
  await still.goto(pageUrl);
  await still.evaluate(() => window.saliasSim.advance(12));
  equal(await moving(still), { transition: '0s', animation: '0s', flagged: true }, 'loaded with the preference');
  assert((await state(still)).reducedMotion, 'state() reports it');
  await still.close();
});

if (process.argv.includes('--readme-screenshot')) {
  // The README's picture: the caption and the diagram of an OrderedFanout under backpressure.
  const shot = await open({ width: 1100, height: 900 });
  await shot.selectOption('#kind', 'Ordered Fanout');
  await shot.selectOption('#scenario', 'backpressure');
  await shot.evaluate(() => window.saliasSim.advance(168));
  await shot.waitForTimeout(600);
  const top = await shot.locator('#caption').boundingBox();
  const bottom = await shot.locator('#diagram').boundingBox();
  const clip = { x: 0, y: top.y - 8, width: 1100, height: bottom.y + bottom.height - top.y + 16 };
  await shot.screenshot({ path: path.join(animation, 'screenshot.png'), clip, fullPage: true });
  await shot.context().close();
}

await check('no console errors, page errors or network requests', async () => {
  assert(errors.length === 0, errors.join('\n'));
});

await browser.close();
console.log(`screenshots in ${path.relative(process.cwd(), shots) || shots}; ${((Date.now() - started) / 1000).toFixed(1)} s`);
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
