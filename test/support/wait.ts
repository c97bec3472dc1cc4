// Waiting in tests without reading the time: a condition is checked once per turn of the event
// loop (ready sockets, threads and child processes are heard between turns), a bounded number of
// turns; fake time moves only when a test moves it.

/** One turn of the event loop: I/O that is ready is handled before it ends. */
export const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Lets `n` turns of the event loop run: what is ready by then has been answered. */
export async function turns(n: number): Promise<void> {
  for (let i = 0; i < n; i++) await nextTurn();
}

/** Resolves once `cond` holds; fails after `turns` turns of the event loop in which it did not. */
export async function waitFor(cond: () => boolean | Promise<boolean>, what: string, turns = 200_000): Promise<void> {
  for (let i = 0; i < turns; i++) {
    if (await cond()) return;
    await nextTurn();
  }
  throw new Error(`not after ${turns} turns of the event loop: ${what}`);
}

/**
 * Moves fake time in `stepMs` steps, letting the I/O it starts be answered between them (up to
 * `turnsPerStep` turns, fewer once `cond` holds), until `cond` holds; returns how much fake time
 * passed. Fails past `limitMs` of fake time.
 */
export async function onFakeTime(
  clock: { now(): number; advance(ms: number): Promise<void> }, cond: () => boolean | Promise<boolean>, what: string, limitMs: number, stepMs = 20,
  turnsPerStep = 200,
): Promise<number> {
  const from = clock.now();
  for (;;) {
    for (let i = 0; i < turnsPerStep; i++) {
      if (await cond()) return clock.now() - from;
      await nextTurn();
    }
    if (clock.now() - from > limitMs) throw new Error(`not within ${limitMs} ms of fake time: ${what}`);
    await clock.advance(stepMs);
  }
}

/** Moves fake time to `untilMs` in `stepMs` steps; returns the step (ms from now) at which each write `count` shows first appeared. */
export async function writeTimes(clock: { advance(ms: number): Promise<void> }, count: () => number, untilMs: number, stepMs: number): Promise<number[]> {
  const at: number[] = [];
  for (let t = 0; t <= untilMs; t += stepMs) {
    await clock.advance(t === 0 ? 0 : stepMs);
    while (at.length < count()) at.push(t);
  }
  return at;
}
