// An OnDelete StatefulSet pinned round-robin over three zones, in a store, with a stand-in for its
// controller and kubelets on fake time: an evicted pod terminates and is gone after `goneMs`, the
// controller makes a missing ordinal again on the update revision, and the kubelet makes a bound
// pod Ready after `readyMs` (never, for the pods `stuck` names). The API answers evictions and
// the StatefulSet's GET and PATCH from the same objects.
import { addObject } from '../../src/cluster/source.js';
import type { ClusterStore } from '../../src/cluster/store.js';
import type { Timers } from '../../src/common/clock.js';
import { nodes, storeOf, type Raw } from './builders.js';
import { applyMergePatch } from './mergePatch.js';
import { recordingApi } from './recordingApi.js';

export const ZONES = ['zone-a', 'zone-b', 'zone-c'];
const iso = (ms: number) => new Date(ms).toISOString();

export interface RolloutClusterOptions {
  replicas: number;
  annotations?: Record<string, string>;
  minReadySeconds?: number;
  readyMs?: number;
  goneMs?: number;
  /** Pods the kubelet never makes Ready: by name, or by name and revision. */
  stuck?: Set<string> | ((name: string, revision: string) => boolean);
}

export function rolloutCluster(clock: Timers, o: RolloutClusterOptions) {
  const readyMs = o.readyMs ?? 2_000, goneMs = o.goneMs ?? 500;
  let generation = 1;
  let uids = 0;
  const sts: Raw = {
    apiVersion: 'apps/v1', kind: 'StatefulSet',
    metadata: {
      name: 'db', namespace: 'default', uid: 'sts-db', generation, resourceVersion: '1',
      annotations: { 'zonekeeper.io/zones': ZONES.join(','), 'zonekeeper.io/zones-frozen-at': iso(0), 'zonekeeper.io/zone-rollout': 'true', ...o.annotations },
    },
    spec: { replicas: o.replicas, minReadySeconds: o.minReadySeconds ?? 0, updateStrategy: { type: 'OnDelete' } },
    status: { observedGeneration: generation, updateRevision: 'db-r1', currentRevision: 'db-r1' },
  };
  const pods = new Map<string, Raw>();
  const zoneOf = (ordinal: number) => ZONES[ordinal % ZONES.length]!;
  const store: ClusterStore = storeOf([...nodes(ZONES, 1), sts]);
  const put = (raw: Raw) => addObject(store, raw);

  function makePod(ordinal: number, revision: string, readyAt?: number): Raw {
    const now = clock.now();
    const name = `db-${ordinal}`;
    const p: Raw = {
      apiVersion: 'v1', kind: 'Pod',
      metadata: {
        name, namespace: 'default', uid: `${name}-${++uids}`, creationTimestamp: iso(now),
        labels: { 'controller-revision-hash': revision, 'apps.kubernetes.io/pod-index': String(ordinal) },
        ownerReferences: [{ apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'db', uid: 'sts-db', controller: true }],
      },
      spec: { nodeName: `node-${zoneOf(ordinal).slice(5)}-1` },
      status: { phase: 'Running', conditions: [{ type: 'Ready', status: readyAt !== undefined ? 'True' : 'False', lastTransitionTime: iso(readyAt ?? now) }] },
    };
    pods.set(name, p);
    put(p);
    return p;
  }
  for (let i = 0; i < o.replicas; i++) makePod(i, 'db-r1', 0);

  const isStuck = (name: string, revision: string) => (typeof o.stuck === 'function' ? o.stuck(name, revision) : o.stuck?.has(name) === true);
  /** The stand-in's round: terminating pods gone, missing ordinals made, bound pods Ready. */
  function round(): void {
    const now = clock.now();
    for (const [name, p] of pods) {
      if (p.metadata.deletionTimestamp && now - Date.parse(p.metadata.deletionTimestamp) >= goneMs) {
        pods.delete(name);
        store.delete('pods', `default/${name}`);
      }
    }
    for (let i = 0; i < o.replicas; i++) if (!pods.has(`db-${i}`)) makePod(i, sts.status.updateRevision);
    for (const [name, p] of pods) {
      const ready = p.status.conditions[0];
      if (ready.status === 'True' || p.metadata.deletionTimestamp || isStuck(name, p.metadata.labels['controller-revision-hash'])) continue;
      if (now - Date.parse(p.metadata.creationTimestamp) >= readyMs) {
        p.status.conditions = [{ type: 'Ready', status: 'True', lastTransitionTime: iso(now) }];
        put(p);
      }
    }
  }
  let stopped = false;
  const tick = () => { if (stopped) return; round(); clock.after(250, tick); };
  clock.after(250, tick);

  const evictions: { name: string; uid: string; at: number }[] = [];
  const api = recordingApi((r) => {
    const m = /\/pods\/([^/]+)\/eviction$/.exec(r.path);
    if (m && r.method === 'POST') {
      const p = pods.get(m[1]!);
      if (!p) return { status: 404, body: { message: 'not found' } };
      const uid = r.body?.deleteOptions?.preconditions?.uid;
      if (uid && uid !== p.metadata.uid) return { status: 409, body: { message: 'uid precondition' } };
      evictions.push({ name: p.metadata.name, uid: p.metadata.uid, at: clock.now() });
      if (!p.metadata.deletionTimestamp) {
        p.metadata.deletionTimestamp = iso(clock.now());
        put(p);
      }
      return { status: 201, body: {} };
    }
    const read = /\/pods\/([^/]+)$/.exec(r.path);
    if (read && r.method === 'GET') {
      const p = pods.get(read[1]!);
      return p ? { status: 200, body: p } : { status: 404, body: { message: 'not found' } };
    }
    if (r.path.endsWith('/statefulsets/db')) {
      if (r.method === 'GET') return { status: 200, body: sts };
      if (r.body?.metadata?.resourceVersion !== sts.metadata.resourceVersion) return { status: 409, body: { message: 'conflict' } };
      sts.metadata = applyMergePatch(sts.metadata, { annotations: r.body.metadata.annotations });
      sts.metadata.resourceVersion = String(Number(sts.metadata.resourceVersion) + 1);
      put(sts);
      return { status: 200, body: sts };
    }
    return { status: 404, body: { message: `no ${r.method} ${r.path}` } };
  });

  return {
    store, api, evictions, sts, pods,
    /** Puts a raw object changed by the test back into the store. */
    put,
    /** A new pod template: a new update revision, observed by the controller at once. */
    update(revision: string) {
      sts.metadata.generation = ++generation;
      sts.status = { ...sts.status, observedGeneration: generation, updateRevision: revision };
      sts.metadata.resourceVersion = String(Number(sts.metadata.resourceVersion) + 1);
      put(sts);
    },
    /** Sets (a value) or removes (undefined) one of the StatefulSet's annotations, as a user would. */
    annotate(key: string, value: string | undefined) {
      sts.metadata = applyMergePatch(sts.metadata, { annotations: { [key]: value ?? null } });
      sts.metadata.resourceVersion = String(Number(sts.metadata.resourceVersion) + 1);
      put(sts);
    },
    /** Zones with a pod down (not Ready, terminating, or an ordinal with no pod) now. */
    zonesDown(): string[] {
      const down = new Set<string>();
      for (let i = 0; i < o.replicas; i++) {
        const p = pods.get(`db-${i}`);
        if (!p || p.metadata.deletionTimestamp || p.status.conditions[0].status !== 'True') down.add(zoneOf(i));
      }
      return [...down];
    },
    revisions: () => [...pods.values()].map((p) => p.metadata.labels['controller-revision-hash'] as string),
    stop() { stopped = true; },
  };
}
