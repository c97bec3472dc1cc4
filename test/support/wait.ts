export async function waitFor(cond: () => boolean | Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (await cond()) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
}

/**
 * Moves fake time in `stepMs` steps, a real tick between them for sockets to answer, until
 * `cond` holds; returns how much fake time passed. Fails past `limitMs` of fake time.
 */
export async function onFakeTime(
  clock: { now(): number; advance(ms: number): Promise<void> }, cond: () => boolean | Promise<boolean>, what: string, limitMs: number, stepMs = 20,
): Promise<number> {
  const from = clock.now();
  for (let real = 0; real < 5_000; real++) {
    if (await cond()) return clock.now() - from;
    if (clock.now() - from > limitMs) throw new Error(`not within ${limitMs} ms of fake time: ${what}`);
    await clock.advance(stepMs);
    await new Promise((r) => setTimeout(r, 1));
  }
  throw new Error(`${what}: never`);
}
