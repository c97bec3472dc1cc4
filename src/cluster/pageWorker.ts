import { parentPort } from 'node:worker_threads';
import { slimPod } from './convert.js';
import { pageText } from './podPages.js';

// The worker thread of podPages.ts: parses a list page of pods and slims its items, so that
// neither runs on the event loop that answers kube-scheduler.

parentPort?.on('message', (m: { id: number; body: string | Uint8Array }) => {
  try {
    const list = JSON.parse(pageText(m.body));
    const items = Array.isArray(list?.items) ? list.items.map((raw: unknown) => slimPod(raw as Record<string, any>)) : [];
    const meta = list?.metadata;
    parentPort!.postMessage({
      id: m.id, items,
      continue: typeof meta?.continue === 'string' ? meta.continue : '',
      resourceVersion: typeof meta?.resourceVersion === 'string' ? meta.resourceVersion : '',
    });
  } catch (err) {
    parentPort!.postMessage({ id: m.id, error: (err as Error).message });
  }
});
