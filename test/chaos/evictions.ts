// The run's voluntary evictions as kube-apiserver shows them, whoever asked (a drain, zonekeeper's
// zone-by-zone rollout or repair, Karpenter's termination): a pod taking the DisruptionTarget
// condition with reason EvictionByEvictionAPI, which the Eviction API writes before it deletes the
// pod. Read from a watch, so a pod the kubelet stand-in finishes at once is seen all the same.
import type { Kube, Obj } from '../e2e/kube.js';
import type { Disruption } from './promises.js';

const ZONE = 'topology.kubernetes.io/zone';
const SECOND = 1000;

/** The condition the Eviction API wrote on the pod, if it did. */
const evicted = (p: Obj): Obj | undefined => (p.status?.conditions ?? [])
  .find((c: Obj) => c.type === 'DisruptionTarget' && c.status === 'True' && c.reason === 'EvictionByEvictionAPI');

/**
 * Lists `path`, hands every object to `seen`, then watches from there; a watch that ends or
 * fails (kube-apiserver killed, a resourceVersion too old) is listed and watched again.
 */
async function listAndWatch(kube: Kube, path: string, seen: (o: Obj) => void, signal: AbortSignal): Promise<void> {
  while (!signal.aborted) {
    try {
      const list = await kube.call('GET', path);
      for (const o of list.items ?? []) seen(o);
      const res = await kube.api.stream(`${path}?watch=1&resourceVersion=${list.metadata.resourceVersion}`, signal);
      if (res.statusCode !== 200) throw new Error(`watch ${path}: ${res.statusCode}`);
      res.setEncoding('utf8');
      let buffered = '';
      for await (const chunk of res as AsyncIterable<string>) {
        buffered += chunk;
        for (let nl = buffered.indexOf('\n'); nl >= 0; nl = buffered.indexOf('\n')) {
          const event = JSON.parse(buffered.slice(0, nl));
          buffered = buffered.slice(nl + 1);
          if (event.type === 'ERROR') throw new Error(`watch ${path}: ${event.object?.message}`);
          if (event.object?.metadata) seen(event.object);
        }
      }
    } catch { /* listed and watched again below */ }
    if (!signal.aborted) await new Promise((r) => setTimeout(r, SECOND));
  }
}

/**
 * Appends each pod of `namespace` evicted through the Eviction API to `into`, once, with the zone
 * of its node (a node Karpenter deletes after its drain included). Its time is when the watch showed
 * it, or the condition's second if that is sooner (a relist after a cut): never before the eviction,
 * so a late record can hide a violation but never make one. A pod with no known zone is left out.
 */
export function watchEvictions(kube: Kube, namespace: string, into: Disruption[]): () => Promise<void> {
  const abort = new AbortController();
  const zones = new Map<string, string>();
  const recorded = new Set<string>();
  const nodes = listAndWatch(kube, '/api/v1/nodes', (n) => {
    const zone = n.metadata.labels?.[ZONE];
    if (zone) zones.set(n.metadata.name, zone);
  }, abort.signal);
  const pods = listAndWatch(kube, `/api/v1/namespaces/${namespace}/pods`, (p) => {
    const condition = evicted(p);
    if (!condition || recorded.has(p.metadata.uid)) return;
    const zone = zones.get(p.spec?.nodeName) ?? p.spec?.nodeSelector?.[ZONE];
    if (!zone) return;
    recorded.add(p.metadata.uid);
    const at = Math.min(Date.now(), Date.parse(condition.lastTransitionTime) + SECOND);
    into.push({ namespace, pod: p.metadata.name, uid: p.metadata.uid, zone, at: Number.isNaN(at) ? Date.now() : at });
    into.sort((a, b) => a.at - b.at);
  }, abort.signal);
  return async () => {
    abort.abort();
    await Promise.all([nodes, pods]);
  };
}
