import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { systemClock, type Timers } from './clock.js';

// A request near the body limit leaves hundreds of MiB of parsed JSON behind. An idle
// process runs no major GC, so that garbage would stay resident until the next busy spell;
// one collection after the answer has gone out gives it back to the system.

/** Bodies at least this large are followed by a full collection. */
export const LARGE_BODY_BYTES = 16 * 1024 * 1024;

/** Quiet time after the last large body before collecting: steady large traffic is left to V8. */
const QUIET_MS = 1000;

let collect: (() => void) | undefined;
let cancel: (() => void) | undefined;

function collector(): (() => void) | undefined {
  if (collect) return collect;
  const exposed = (globalThis as { gc?: () => void }).gc;
  if (exposed) return (collect = exposed);
  try {
    // The documented way to reach V8's gc without a command-line flag.
    setFlagsFromString('--expose-gc');
    collect = runInNewContext('gc') as () => void;
  } catch {
    collect = undefined;
  }
  return collect;
}

/**
 * After a large body: one full collection once no large body has come for a second. Under
 * steady full-Nodes traffic V8 collects on its own and this never fires; it is for the idle
 * time after a burst (or after one hostile request), when nothing else would.
 */
export function releaseAfterLargeBody(bytes: number, clock: Timers = systemClock): void {
  if (bytes < LARGE_BODY_BYTES) return;
  const gc = collector();
  if (!gc) return;
  cancel?.();
  cancel = clock.after(QUIET_MS, () => {
    cancel = undefined;
    gc();
  });
}
