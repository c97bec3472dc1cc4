import type { Logger } from 'pino';
import { statusMessage, type ApiClient } from '../cluster/apiClient.js';
import type { EventRecorder } from '../actuator/events.js';
import type { SnapshotSource } from '../cluster/source.js';
import { systemClock, type Timers } from '../common/clock.js';
import type { WorkResult } from '../common/workQueue.js';
import type { Metrics } from '../metrics/metrics.js';
import { GENERATION_KEY, seatedKind, seatTable, type SeatOf, type SeatTableData } from './seatTable.js';
import type { PlacementSettings } from '../placement/settings.js';
import { reconciler } from '../common/reconciler.js';

// The policy transport's writer (docs/design.md#the-policy): in the Lease holder, one ConfigMap per
// namespace (`policy.configMapName`) holds the seat table the MutatingAdmissionPolicy reads as its
// param. Keyed by namespace, queued by the events that change a table: a StatefulSet written
// (replicas, its list frozen, opted out), a claim or volume bound.

const POLICY_API = '/apis/admissionregistration.k8s.io/v1';

/** Whether the API server serves MutatingAdmissionPolicies (admissionregistration.k8s.io/v1, Kubernetes 1.36+); undefined: could not tell. */
export async function servesMutatingPolicies(api: ApiClient): Promise<boolean | undefined> {
  const res = await api.request('GET', POLICY_API, { timeoutMs: 10_000 }).catch(() => undefined);
  if (!res || (res.status !== 200 && res.status !== 404)) return undefined;
  if (res.status === 404) return false;
  try {
    const list = JSON.parse(res.body) as { resources?: { name?: string }[] };
    return (list.resources ?? []).some((r) => r.name === 'mutatingadmissionpolicies');
  } catch {
    return undefined;
  }
}

export interface SeatTableOptions {
  configMapName: string;
  maxBytes: number;
  patchesPerSecond: number;
}

const RESYNC_MS = 5 * 60_000;
/** The same seats: the generation aside. */
const sameData = (have: Record<string, string>, want: Record<string, string>) => {
  const ka = Object.keys(have).filter((k) => k !== GENERATION_KEY);
  return ka.length === Object.keys(want).length && ka.every((k) => want[k] === have[k]);
};

/** A table's generation as zonekeeper writes it (digits, a label value), or 0: anything else is not built upon. */
const generationOf = (v: string | undefined): number => (v !== undefined && /^[1-9][0-9]{0,14}$/.test(v) ? Number(v) : 0);
/** The generation's key and value, at most. */
const GENERATION_BYTES = 64;
/** Table writes remembered per namespace: a pod is checked within seconds of its creation. */
const WRITES_KEPT = 4;
/** Tables read a page at a time at start: 16 of at most 900 KiB (policy.maxBytes) fit in cluster.responseMaxBytes. */
const TABLES_A_PAGE = 16;

/** The tables this process wrote or read (the last few per namespace): what tells a pod the policy decided from an older one. */
export function tableWrites() {
  const byNamespace = new Map<string, { generation: number; at: number }[]>();
  const wrote = (namespace: string, generation: number, at: number): void => {
    byNamespace.set(namespace, [...(byNamespace.get(namespace) ?? []), { generation, at }].slice(-WRITES_KEPT));
  };
  return {
    wrote,
    /**
     * A table read from the cluster, another holder's after a hand-over: known as written when its
     * generation says (ms, the writer's clock), unless a table as new is known already.
     */
    found(namespace: string, generation: number): void {
      if (generation > 0 && (byNamespace.get(namespace) ?? []).every((w) => w.generation < generation)) wrote(namespace, generation, generation);
    },
    /** The newest table written in `namespace` at least `graceMs` before `createdAt` with a generation above `generation`; undefined: none known. */
    newerBefore(namespace: string, generation: number, createdAt: number, graceMs: number): { generation: number; at: number } | undefined {
      return (byNamespace.get(namespace) ?? []).filter((w) => w.generation > generation && w.at + graceMs <= createdAt).pop();
    },
  };
}
export type TableWrites = ReturnType<typeof tableWrites>;

export function seatTableController(
  api: ApiClient, source: SnapshotSource, settings: PlacementSettings, seatOf: SeatOf, opts: SeatTableOptions,
  events: Pick<EventRecorder, 'record'>,
  log: Logger, metrics: Metrics, clock: Timers = systemClock, writes: Pick<TableWrites, 'wrote' | 'found'> = tableWrites(),
) {
  const path = (ns: string, name?: string) => `/api/v1/namespaces/${encodeURIComponent(ns)}/configmaps${name ? `/${encodeURIComponent(name)}` : ''}`;
  /** StatefulSets left out for size, by namespace: an Event when one is newly left out. */
  const leftOut = new Map<string, Set<string>>();

  function namespaces(): Set<string> {
    const out = new Set<string>();
    for (const w of source.snapshot.allWorkloads()) if (seatedKind(w.kind)) out.add(w.namespace);
    // A namespace whose table exists keeps its key until its table is emptied.
    for (const ns of written) out.add(ns);
    return out;
  }
  /** Namespaces holding a table: those this process wrote, and those found at start (another holder's). */
  const written = new Set<string>();

  /** The tables already in the cluster (a previous holder's), so that one whose StatefulSets all went while no holder ran is emptied too. */
  async function findTables(): Promise<void> {
    const url = `/api/v1/configmaps?fieldSelector=${encodeURIComponent(`metadata.name=${opts.configMapName}`)}&limit=${TABLES_A_PAGE}`;
    try {
      for (let next = ''; ;) {
        const res = await api.request('GET', next ? `${url}&continue=${encodeURIComponent(next)}` : url, { timeoutMs: 10_000 });
        if (res.status !== 200) throw new Error(`${res.status} ${statusMessage(res.body)}`);
        const list = JSON.parse(res.body) as { metadata?: { continue?: string }; items?: { metadata?: { namespace?: string } }[] };
        for (const ns of (list.items ?? []).map((i) => i.metadata?.namespace)) {
          if (!ns || written.has(ns)) continue;
          written.add(ns);
          // Before the cache is synced the first resync queues it: a table is never computed from a cache not synced.
          if (source.ready()) queue.add(ns);
        }
        next = list.metadata?.continue ?? '';
        if (!next) break;
      }
    } catch (err) {
      log.warn({ err: (err as Error).message }, 'existing seat tables not listed: a table whose StatefulSets all went while no holder ran stays as it is');
    }
  }

  async function reconcile(namespace: string): Promise<WorkResult> {
    // What the generation takes is kept out of the seats' budget.
    const table = seatTable(namespace, source.snapshot, settings, opts.maxBytes - GENERATION_BYTES, seatOf);
    noteOverflow(namespace, table.overflow);
    const got = await api.request('GET', path(namespace, opts.configMapName), { timeoutMs: 10_000 });
    if (got.status === 404) {
      if (Object.keys(table.data).length === 0) {
        written.delete(namespace);
        return;
      }
      return write('POST', path(namespace), namespace, table.data, undefined, 0);
    }
    if (got.status !== 200) throw new Error(`GET ConfigMap ${namespace}/${opts.configMapName}: ${got.status} ${statusMessage(got.body)}`);
    const have = JSON.parse(got.body) as { metadata?: { resourceVersion?: string }; data?: Record<string, string> };
    // After a hand-over, the table the old holder wrote is what the check compares pods with.
    writes.found(namespace, generationOf(have.data?.[GENERATION_KEY]));
    if (sameData(have.data ?? {}, table.data)) {
      if (Object.keys(table.data).length === 0) written.delete(namespace);
      return;
    }
    return write('PUT', path(namespace, opts.configMapName), namespace, table.data, have.metadata?.resourceVersion, generationOf(have.data?.[GENERATION_KEY]));
  }

  async function write(method: 'POST' | 'PUT', url: string, namespace: string, seats: SeatTableData, resourceVersion: string | undefined,
    replaced: number): Promise<WorkResult> {
    // Above the one it replaces, whatever the clock of the holder that wrote that one.
    const generation = Math.max(clock.now(), replaced + 1);
    const data = { ...seats, [GENERATION_KEY]: String(generation) };
    // Conditional: a PUT carries the resourceVersion read; a 409 means reading again.
    const body = JSON.stringify({
      apiVersion: 'v1', kind: 'ConfigMap',
      metadata: { name: opts.configMapName, namespace, labels: { 'app.kubernetes.io/managed-by': 'zonekeeper' }, ...(resourceVersion ? { resourceVersion } : {}) },
      data,
    });
    const res = await api.request(method, url, { body, contentType: 'application/json', timeoutMs: 10_000 });
    const ok = res.status === 200 || res.status === 201;
    metrics.actuatorWrites.inc({ action: 'seat-table', result: ok ? 'ok' : res.status === 409 ? 'conflict' : 'error' });
    if (res.status === 409) return 'retry';
    if (!ok) throw new Error(`${method} ConfigMap ${namespace}/${opts.configMapName}: ${res.status} ${statusMessage(res.body)}`);
    written.add(namespace);
    writes.wrote(namespace, generation, clock.now());
    return;
  }

  function noteOverflow(namespace: string, names: string[]): void {
    const before = leftOut.get(namespace) ?? new Set();
    const now = new Set(names);
    metrics.seatTableLeftOut.set({ namespace }, now.size);
    for (const name of now) {
      if (before.has(name)) continue;
      const w = source.snapshot.workload('StatefulSet', namespace, name) ?? source.snapshot.workload('AdvancedStatefulSet', namespace, name);
      if (w) events.record(w, 'Warning', 'SeatTableFull',
        `the seat table ${opts.configMapName} is full (${opts.maxBytes} bytes): admission or the gate decides this StatefulSet's pods`);
    }
    if (now.size > 0) leftOut.set(namespace, now);
    else leftOut.delete(namespace);
  }

  const queue = reconciler({
    keys: namespaces, reconcile, resyncMs: RESYNC_MS, ready: () => source.ready(), clock, retryBaseMs: 200, retryMaxMs: 60_000,
    // Each namespace queued takes its turn (its read and its write) from the queue's token bucket.
    pace: { perSecond: opts.patchesPerSecond, burst: opts.patchesPerSecond },
    onError: (namespace, err) => log.warn({ namespace, err: err.message }, 'seat table not written; will retry'),
  });
  // What changes a namespace's table: a StatefulSet written or removed, a claim created or bound.
  source.store.onWorkload((w) => { if (seatedKind(w.kind)) queue.addAfter(w.namespace, 100); });
  source.store.onClaim((namespace) => queue.addAfter(namespace, 100));
  // Which class is the default decides whether a claim template's claims bind where their pods go.
  source.store.onStorageClass(() => { for (const namespace of namespaces()) queue.addAfter(namespace, 100); });
  const control = queue.controller(() => leftOut.clear());
  return {
    ...control,
    start() {
      control.start();
      void findTables();
    },
    resync: () => queue.resync(),
  };
}
