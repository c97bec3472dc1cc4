import { Worker } from 'node:worker_threads';
import { systemClock, type Timers } from '../common/clock.js';
import { sharedPod } from './convert.js';
import type { SlimPod } from './objects.js';

// List pages decoded into slim objects: in line, or (pods, the bulk of a cold sync) in a
// worker thread while the main thread reads the next page and answers requests.

export interface DecodedPage { items: unknown[]; continue: string; resourceVersion: string }

export type PageDecoder = (body: string | Uint8Array) => Promise<DecodedPage>;

/** A page's text: as received, or its UTF-8 bytes decoded. */
export const pageText = (body: string | Uint8Array): string =>
  typeof body === 'string' ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8');

/** A page parsed and its items slimmed: what both decoders do, in line or in the worker. */
export function decodePage(body: string | Uint8Array, slim: (raw: any) => unknown): DecodedPage {
  const list = JSON.parse(pageText(body));
  const meta = list?.metadata;
  return {
    items: Array.isArray(list?.items) ? list.items.map((raw: unknown) => slim(raw)) : [],
    continue: typeof meta?.continue === 'string' ? meta.continue : '',
    resourceVersion: typeof meta?.resourceVersion === 'string' ? meta.resourceVersion : '',
  };
}

/** Parses and slims on the calling thread. */
export function inlinePages(slim: (raw: any) => unknown): PageDecoder {
  return async (body) => decodePage(body, slim);
}

/** Worker modules load from compiled JavaScript only (under tsx a worker cannot load .ts). */
export const offThreadAvailable = (): boolean => import.meta.url.endsWith('.js');

/** How long a decoder thread may sit idle before it stops (its heap holds the last pages' garbage). */
const IDLE_MS = 1000;

export interface OffThreadPages extends PageDecoder {
  /** Whether the thread is running now. */
  running(): boolean;
  close(): Promise<void>;
}

/**
 * Pod pages parsed and slimmed in one worker thread: started on first use, again after a
 * crash, and stopped after `idleMs` without a page (a list is a burst; an idle isolate would
 * keep its heap, the last pages' garbage, resident). The main thread only shares the pages'
 * repeated strings, as slimPod does. (Two threads were slower on two cores: docs/performance.md.)
 */
export function offThreadPodPages(idleMs = IDLE_MS, clock: Timers = systemClock): OffThreadPages {
  let worker: Worker | undefined;
  let seq = 0;
  let idle: (() => void) | undefined;
  const pending = new Map<number, { resolve: (p: DecodedPage) => void; reject: (e: Error) => void }>();
  const rejectPending = (err: Error) => {
    for (const p of pending.values()) p.reject(err);
    pending.clear();
  };
  const stop = async () => {
    const w = worker;
    worker = undefined;
    if (w) await w.terminate();
  };
  const settle = () => {
    if (pending.size > 0) return;
    idle?.();
    idle = clock.after(idleMs, () => { if (pending.size === 0) void stop(); });
  };
  const start = () => {
    const w = new Worker(new URL('./pageWorker.js', import.meta.url));
    w.unref();
    const fail = (err: Error) => {
      if (worker !== w) return;
      worker = undefined;
      rejectPending(err);
    };
    w.on('message', (m: { id: number; error?: string } & DecodedPage) => {
      const p = pending.get(m.id);
      if (!p) return;
      pending.delete(m.id);
      if (m.error !== undefined) p.reject(new Error(m.error));
      else p.resolve({ items: m.items.map((pod) => sharedPod(pod as SlimPod)), continue: m.continue, resourceVersion: m.resourceVersion });
      settle();
    });
    w.on('error', fail);
    w.on('exit', (code) => fail(new Error(`the page decoder thread exited (${code})`)));
    return w;
  };
  const decode = (body: string | Uint8Array) => new Promise<DecodedPage>((resolve, reject) => {
    idle?.();
    const id = ++seq;
    pending.set(id, { resolve, reject });
    // Bytes that own their whole buffer move to the worker (the caller is done with them);
    // anything else (a slice of Node's pool, text) is copied.
    const owned = typeof body !== 'string' && body.buffer instanceof ArrayBuffer && body.byteOffset === 0 && body.byteLength === body.buffer.byteLength;
    (worker ??= start()).postMessage({ id, body }, owned ? [body.buffer as ArrayBuffer] : []);
  });
  return Object.assign(decode, {
    running: () => worker !== undefined,
    async close() {
      idle?.();
      rejectPending(new Error('the page decoder is closed'));
      await stop();
    },
  });
}
