// The run's voluntary evictions as kube-apiserver shows them, whoever asked (a drain, zonekeeper's
// zone-by-zone rollout or repair, Karpenter's termination): a pod taking the DisruptionTarget
// condition with reason EvictionByEvictionAPI, which the Eviction API writes before it deletes the
// pod. Read from a watch, in the API server's order, so each eviction is judged against the seats
// earlier ones emptied as they were at that moment, however fast the kubelet stand-in is.
import type { Kube, Obj } from '../e2e/kube.js';
import type { Disruption } from './promises.js';

const ZONE = 'topology.kubernetes.io/zone';
const SECOND = 1000;

/** The condition the Eviction API wrote on the pod, if it did. */
const evictedBy = (p: Obj): Obj | undefined => (p.status?.conditions ?? [])
  .find((c: Obj) => c.type === 'DisruptionTarget' && c.status === 'True' && c.reason === 'EvictionByEvictionAPI');
const ready = (p: Obj) => !p.metadata.deletionTimestamp && (p.status?.conditions ?? []).some((c: Obj) => c.type === 'Ready' && c.status === 'True');

/**
 * What the watches have shown so far. An eviction empties its pod's seat until a pod of the same
 * name (another UID) is Ready, or its StatefulSet is scaled below its ordinal; each eviction is
 * recorded with the seats of its workload in other zones still empty at that point. A pod in no
 * known zone (neither its node's nor its nodeSelector's) is left out.
 */
export function evictionLedger(namespace: string, into: Disruption[], now: () => number = Date.now) {
  const zones = new Map<string, string>();
  const replicas = new Map<string, number>();
  const recorded = new Set<string>();
  let empty: Disruption[] = [];
  const ordinal = (pod: string) => Number(/-(\d+)$/.exec(pod)?.[1] ?? NaN);
  return {
    node(n: Obj) {
      const zone = n.metadata.labels?.[ZONE];
      if (zone) zones.set(n.metadata.name, zone);
    },
    statefulSet(s: Obj) {
      const count = Number(s.spec?.replicas ?? 1);
      replicas.set(s.metadata.name, count);
      empty = empty.filter((d) => !(d.app === s.metadata.name && ordinal(d.pod) >= count));
    },
    pod(p: Obj) {
      if (ready(p)) empty = empty.filter((d) => !(d.pod === p.metadata.name && d.uid !== p.metadata.uid));
      const condition = evictedBy(p);
      if (!condition || recorded.has(p.metadata.uid)) return;
      const zone = zones.get(p.spec?.nodeName) ?? p.spec?.nodeSelector?.[ZONE];
      if (!zone) return;
      recorded.add(p.metadata.uid);
      const app = String(p.metadata.labels?.app ?? '');
      // When the watch showed it, or the condition's second if that is sooner (a relist): never before the eviction.
      const at = Math.min(now(), Date.parse(condition.lastTransitionTime) + SECOND);
      const d: Disruption = {
        namespace, app, pod: p.metadata.name, uid: p.metadata.uid, zone, at: Number.isNaN(at) ? now() : at,
        emptyElsewhere: empty.filter((e) => e.app === app && e.zone !== zone).map((e) => `${e.pod} (${e.zone})`),
      };
      into.push(d);
      if (!(ordinal(d.pod) >= (replicas.get(app) ?? Infinity))) empty.push(d);
    },
  };
}

/**
 * Lists `path`, hands every object to `seen` (in `order`), then watches from there (with the
 * event's type); a watch that ends or fails (kube-apiserver killed, a resourceVersion too old) is
 * listed and watched again.
 */
export async function listAndWatch(
  kube: Kube, path: string, seen: (o: Obj, type?: string) => void, signal: AbortSignal, order?: (a: Obj, b: Obj) => number,
): Promise<void> {
  while (!signal.aborted) {
    try {
      const list = await kube.call('GET', path);
      for (const o of [...list.items ?? []].sort(order)) seen(o);
      for await (const event of kube.watch(`${path}?resourceVersion=${list.metadata.resourceVersion}`, signal)) if (event.object?.metadata) seen(event.object, event.type);
    } catch { /* listed and watched again below */ }
    if (!signal.aborted) await new Promise((r) => setTimeout(r, SECOND));
  }
}

/**
 * Appends each pod of `namespace` evicted through the Eviction API to `into`, once. After a cut
 * the relist hands over the pods not evicted first: a successor made Ready in the gap is counted
 * before an eviction shown in the same list (a late record can hide a violation, never make one).
 */
export function watchEvictions(kube: Kube, namespace: string, into: Disruption[]): () => Promise<void> {
  const abort = new AbortController();
  const ledger = evictionLedger(namespace, into);
  const watches = [
    listAndWatch(kube, '/api/v1/nodes', ledger.node, abort.signal),
    listAndWatch(kube, `/apis/apps/v1/namespaces/${namespace}/statefulsets`, ledger.statefulSet, abort.signal),
    listAndWatch(kube, `/api/v1/namespaces/${namespace}/pods`, ledger.pod, abort.signal, (a, b) => Number(!!evictedBy(a)) - Number(!!evictedBy(b))),
  ];
  return async () => {
    abort.abort();
    await Promise.all(watches);
  };
}
