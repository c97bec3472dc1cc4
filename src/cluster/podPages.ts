import { Worker } from 'node:worker_threads';
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

/**
 * Pod pages parsed and slimmed in one worker thread (started on first use, restarted after a
 * crash); the main thread only shares their repeated strings, as slimPod does.
 */
export function offThreadPodPages(): PageDecoder & { close(): Promise<void> } {
  let worker: Worker | undefined;
  let seq = 0;
  const pending = new Map<number, { resolve: (p: DecodedPage) => void; reject: (e: Error) => void }>();
  const fail = (w: Worker, err: Error) => {
    if (worker !== w) return;
    worker = undefined;
    for (const p of pending.values()) p.reject(err);
    pending.clear();
  };
  const start = () => {
    const w = new Worker(new URL('./pageWorker.js', import.meta.url));
    w.unref();
    w.on('message', (m: { id: number; error?: string } & DecodedPage) => {
      const p = pending.get(m.id);
      if (!p) return;
      pending.delete(m.id);
      if (m.error !== undefined) p.reject(new Error(m.error));
      else p.resolve({ items: m.items.map((pod) => sharedPod(pod as SlimPod)), continue: m.continue, resourceVersion: m.resourceVersion });
    });
    w.on('error', (err) => fail(w, err));
    w.on('exit', (code) => fail(w, new Error(`the page decoder thread exited (${code})`)));
    return w;
  };
  const decode = (body: string | Uint8Array) => new Promise<DecodedPage>((resolve, reject) => {
    const id = ++seq;
    pending.set(id, { resolve, reject });
    // Bytes that own their whole buffer move to the worker (the caller is done with them);
    // anything else (a slice of Node's pool, text) is copied.
    const owned = typeof body !== 'string' && body.buffer instanceof ArrayBuffer && body.byteOffset === 0 && body.byteLength === body.buffer.byteLength;
    (worker ??= start()).postMessage({ id, body }, owned ? [body.buffer as ArrayBuffer] : []);
  });
  return Object.assign(decode, {
    async close() {
      const w = worker;
      worker = undefined;
      for (const p of pending.values()) p.reject(new Error('the page decoder is closed'));
      pending.clear();
      if (w) await w.terminate();
    },
  });
}
