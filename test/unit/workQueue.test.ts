import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fakeClock } from '../../src/common/clock.js';
import { workQueue, type WorkResult } from '../../src/common/workQueue.js';
import { reconciler } from '../../src/common/reconciler.js';

// The work queue's client-go semantics, on fake time: nothing here waits on the wall clock.

/** A worker whose calls the test finishes by hand. */
function heldWorker() {
  const calls: string[] = [];
  const open = new Map<string, (r: WorkResult) => void>();
  const work = (key: string) => {
    calls.push(key);
    return new Promise<WorkResult>((resolve) => open.set(key, resolve));
  };
  const finish = async (key: string, r: WorkResult = undefined) => {
    const done = open.get(key);
    assert.ok(done, `${key} is in hand`);
    open.delete(key);
    done(r);
    await new Promise((resolve) => setImmediate(resolve));
  };
  return { calls, open, work, finish };
}

describe('work queue', () => {
  it('a key queued twice is worked once; keys run in the order they came', async () => {
    const clock = fakeClock();
    const seen: string[] = [];
    const q = workQueue(async (k) => { seen.push(k); }, { clock });
    q.add('a'); q.add('b'); q.add('a');
    q.start();
    await clock.advance(0);
    assert.deepEqual(seen, ['a', 'b']);
    assert.equal(q.length(), 0);
  });

  it('never two workers on one key: a key added while in hand runs once more after, not beside it', async () => {
    const clock = fakeClock();
    const w = heldWorker();
    const q = workQueue(w.work, { clock, workers: 4 });
    q.start();
    q.add('a');
    await clock.advance(0);
    q.add('a'); q.add('a');
    await clock.advance(0);
    assert.deepEqual(w.calls, ['a'], 'not started again while in hand');
    await w.finish('a');
    assert.deepEqual(w.calls, ['a', 'a'], 'once more after');
    await w.finish('a');
    assert.equal(q.length(), 0);
  });

  it('at most `workers` keys in hand; the next starts as one finishes', async () => {
    const clock = fakeClock();
    const w = heldWorker();
    const q = workQueue(w.work, { clock, workers: 2 });
    for (const k of ['a', 'b', 'c']) q.add(k);
    q.start();
    await clock.advance(0);
    assert.deepEqual(w.calls, ['a', 'b']);
    await w.finish('b');
    assert.deepEqual(w.calls, ['a', 'b', 'c']);
  });

  it('retries are rate-limited per key, doubling, and reset by success or forget', async () => {
    const clock = fakeClock();
    const at: number[] = [];
    let fail = 3;
    const q = workQueue(async () => {
      at.push(clock.now());
      if (fail-- > 0) throw new Error('refused');
    }, { clock, retryBaseMs: 100, retryMaxMs: 250 });
    q.add('a');
    q.start();
    await clock.advance(1000);
    assert.deepEqual(at, [0, 100, 300, 550], '100, then 200, then capped at 250');
    assert.equal(q.delayed(), 0);
  });

  it('a key backing off is not run sooner by an add, a delayed add or its own re-add; retryDelay says its next step', async () => {
    const clock = fakeClock();
    const at: number[] = [];
    let fail = 2;
    const q = workQueue(async () => {
      at.push(clock.now());
      if (fail-- > 0) return 'retry';
    }, { clock, retryBaseMs: 1000, retryMaxMs: 60_000 });
    assert.equal(q.retryDelay('a'), 1000);
    q.start();
    q.add('a');
    await clock.advance(0);
    assert.equal(q.retryDelay('a'), 2000, 'one failure: the next step doubles');
    q.add('a');
    q.addAfter('a', 10);
    await clock.advance(999);
    assert.deepEqual(at, [0], 'the events of a resync or a watch wait for the backoff');
    await clock.advance(1);
    assert.deepEqual(at, [0, 1000]);
    await clock.advance(2000);
    assert.deepEqual(at, [0, 1000, 3000]);
    assert.equal(q.retryDelay('a'), 1000, 'a success resets it');
    q.add('a');
    await clock.advance(0);
    assert.deepEqual(at, [0, 1000, 3000, 3000], 'and adds run it at once again');
  });

  it('paced: each key takes its turn from the bucket as it is queued (the burst at once, then one per 1/rate); the worker takes nothing', async () => {
    const clock = fakeClock();
    const ran: [string, number][] = [];
    const q = workQueue<string>(async (key) => { ran.push([key, clock.now()]); }, { clock, workers: 4, pace: { perSecond: 10, burst: 2 } });
    q.start();
    for (const k of ['a', 'b', 'c', 'd', 'c', 'e']) q.add(k);
    assert.equal(q.delayed(), 3, 'c, d and e wait for their turns; c queued twice takes one');
    await clock.advance(0);
    assert.deepEqual(ran, [['a', 0], ['b', 0]], 'the burst at once');
    q.forget('d');
    await clock.advance(1000);
    assert.deepEqual(ran, [['a', 0], ['b', 0], ['c', 100], ['e', 300]], 'one each 100 ms; d forgotten does not run, its turn spent (the pace holds)');
    assert.equal(q.delayed(), 0);
    q.add('f');
    await clock.advance(0);
    assert.deepEqual(ran.at(-1), ['f', 1000], 'the bucket refilled while idle');
  });

  it('paced: a key added while in hand takes its turn when it is queued again after', async () => {
    const clock = fakeClock();
    const w = heldWorker();
    const q = workQueue(w.work, { clock, pace: { perSecond: 1, burst: 1 } });
    q.start();
    q.add('a');
    await clock.advance(0);
    q.add('a');
    await w.finish('a');
    assert.deepEqual(w.calls, ['a'], 'not at once: the burst was spent');
    await clock.advance(999);
    assert.deepEqual(w.calls, ['a']);
    await clock.advance(1);
    assert.deepEqual(w.calls, ['a', 'a'], 'a second later, its turn');
    await w.finish('a');
  });

  it('paced retries wait the longer of the key\'s backoff and its turn (client-go\'s max of the two limiters); requeues counts them, forget ends them', async () => {
    const clock = fakeClock();
    const at: [string, number][] = [];
    let fails = 3;
    const q = workQueue<string>(async (key) => {
      at.push([key, clock.now()]);
      if (key === 'a' && fails-- > 0) return 'retry';
    }, { clock, retryBaseMs: 100, retryMaxMs: 10_000, pace: { perSecond: 2, burst: 1 } });
    q.start();
    q.add('a');
    await clock.advance(0);
    assert.equal(q.requeues('a'), 1);
    await clock.advance(500);
    assert.deepEqual(at, [['a', 0], ['a', 500]], 'the backoff (100 ms) is shorter than its turn (500 ms): the turn');
    await clock.advance(600);
    assert.deepEqual(at.at(-1), ['a', 1000], 'then 200 ms against 500: the turn again');
    assert.equal(q.requeues('a'), 3);
    q.forget('a');
    assert.equal(q.requeues('a'), 0, 'forget ends its failures');
    assert.equal(q.delayed(), 0, 'and its retry');
    fails = 0;
    q.add('a');
    await clock.advance(10_000);
    assert.deepEqual(at.at(-1), ['a', 2000], 'an add after forget runs at the next turn: the forgotten retry\'s (1500) stays spent');
    assert.equal(q.requeues('a'), 0, 'a success keeps it at 0');
  });

  it('againAfterMs: the key comes back at its time; an earlier delayed add wins; forget drops it', async () => {
    const clock = fakeClock();
    const at: number[] = [];
    let again = true;
    const q = workQueue(async () => {
      at.push(clock.now());
      if (again) {
        again = false;
        return { againAfterMs: 5000 };
      }
    }, { clock });
    q.start();
    q.add('a');
    await clock.advance(0);
    q.addAfter('a', 1000);
    await clock.advance(10_000);
    assert.deepEqual(at, [0, 1000], 'the 1 s add replaced the 5 s one');
    q.addAfter('a', 100);
    q.forget('a');
    await clock.advance(1000);
    assert.deepEqual(at, [0, 1000]);
  });

  it('shutdown lets the keys in hand finish, drops the rest, and takes no more', async () => {
    const clock = fakeClock();
    const w = heldWorker();
    const q = workQueue(w.work, { clock });
    q.add('a'); q.add('b'); q.addAfter('c', 10);
    q.start();
    await clock.advance(0);
    let down = false;
    const stopping = q.shutDown().then(() => { down = true; });
    q.add('d');
    await clock.advance(100);
    assert.equal(down, false, 'waits for a');
    await w.finish('a');
    await stopping;
    assert.deepEqual(w.calls, ['a']);
    assert.equal(clock.pending(), 0, 'no timer left behind');
  });
});

describe('reconciler (a work queue, a resync)', () => {
  it('queues every key at start and each resync, waits while not ready, and takes nothing once stopped', async () => {
    const clock = fakeClock();
    let ready = false;
    let keys = ['a', 'b'];
    const seen: string[] = [];
    const r = reconciler({ keys: () => keys, reconcile: async (k) => { seen.push(k); }, resyncMs: 60_000, ready: () => ready, notReadyMs: 1000, clock });
    r.add('early');
    r.start();
    await r.idle();
    assert.equal(seen.length, 0, 'not ready: no key, and an add before start is dropped');
    ready = true;
    await clock.advance(1000);
    await r.idle();
    assert.deepEqual(seen, ['a', 'b'], 'ready: the resync it waited for queues every key');
    keys = ['b', 'c'];
    await clock.advance(59_999);
    assert.deepEqual(seen, ['a', 'b'], 'not before the resync period');
    await clock.advance(1);
    await r.idle();
    assert.deepEqual(seen, ['a', 'b', 'b', 'c']);
    r.addAfter('d', 500);
    await clock.advance(500);
    await r.idle();
    assert.deepEqual(seen.at(-1), 'd', 'an event between resyncs');
    await r.stop();
    r.add('e');
    await clock.advance(120_000);
    assert.equal(seen.includes('e'), false);
    assert.equal(seen.length, 5, 'no resync after stop');
    assert.equal(clock.pending(), 0, 'no timer left behind');
  });
});
