import { parentPort } from 'node:worker_threads';
import { slimPod } from './convert.js';
import { decodePage } from './podPages.js';

// The worker thread of podPages.ts: parses a list page of pods and slims its items, so that
// neither runs on the event loop that answers kube-scheduler.

parentPort?.on('message', (m: { id: number; body: string | Uint8Array }) => {
  try {
    parentPort!.postMessage({ id: m.id, ...decodePage(m.body, (raw) => slimPod(raw)) });
  } catch (err) {
    parentPort!.postMessage({ id: m.id, error: (err as Error).message });
  }
});
