// The run's pods as the API server showed them, one line per change that matters to a placement
// promise (created, bound, marked with a subset, deleted): what a violation is read against.
import { appendFileSync } from 'node:fs';
import type { Kube, Obj } from '../e2e/kube.js';
import { listAndWatch } from './evictions.js';

const SUBSET = 'apps.kruise.io/matched-workloadspread';

/** The fields of a pod a promise judges by, as one comparable line. */
function podFacts(p: Obj): Record<string, unknown> {
  return {
    pod: p.metadata.name, uid: p.metadata.uid, created: p.metadata.creationTimestamp, node: p.spec?.nodeName,
    subset: p.metadata.annotations?.[SUBSET], revision: p.metadata.labels?.['pod-template-hash'],
    deleting: p.metadata.deletionTimestamp, phase: p.status?.phase,
  };
}

/** Appends to `file` each pod of `namespace` whose facts changed (`type` DELETED too), with the time seen; returns its stop. */
export function recordPodHistory(kube: Kube, namespace: string, file: string): () => Promise<void> {
  const abort = new AbortController();
  const last = new Map<string, string>();
  const seen = (p: Obj, type = 'LISTED') => {
    const facts = JSON.stringify(podFacts(p));
    if (type !== 'DELETED' && last.get(p.metadata.uid) === facts) return;
    last.set(p.metadata.uid, facts);
    appendFileSync(file, `${JSON.stringify({ t: Date.now(), type, ...podFacts(p) })}\n`);
  };
  const watch = listAndWatch(kube, `/api/v1/namespaces/${namespace}/pods`, seen, abort.signal);
  return async () => {
    abort.abort();
    await watch;
  };
}
