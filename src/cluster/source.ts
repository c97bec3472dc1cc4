import { readFileSync } from 'node:fs';
import { parseAllDocuments } from 'yaml';
import type { ReflectorStatus } from './reflector.js';
import { resourceForKind } from './resources.js';
import { ClusterStore, type KindName, type Snapshot } from './store.js';

export interface KindStatus extends ReflectorStatus { objects: number }

export interface ClusterSourceStatus {
  source: string;
  synced: boolean;
  healthy: boolean;
  workloadSpreadCRD: 'present' | 'absent' | 'unknown' | 'static';
  kinds: KindStatus[];
}

/** Where decisions get their view of the cluster: a watch cache or a static file. */
export interface SnapshotSource {
  readonly snapshot: Snapshot;
  /** The store behind the snapshot, for listeners (reservations) and static writes. */
  readonly store: ClusterStore;
  /** False for files: the actuator then writes to the in-memory store only. */
  readonly writable: boolean;
  describe(): string;
  start(): void;
  stop(): Promise<void>;
  synced(): boolean;
  status(now?: number): ClusterSourceStatus;
}

const KINDS: KindName[] = [
  'nodes', 'pods', 'persistentvolumes', 'persistentvolumeclaims', 'storageclasses',
  'statefulsets', 'replicasets', 'deployments', 'workloadspreads',
];

export interface LoadedObjects { loaded: number; skipped: Record<string, number> }

/** Parses a `List` or a multi-document YAML/JSON of objects into the store. */
export function loadObjects(store: ClusterStore, text: string, origin: string): LoadedObjects {
  const result: LoadedObjects = { loaded: 0, skipped: {} };
  const docs = parseAllDocuments(text);
  const visit = (o: any): void => {
    if (!o || typeof o !== 'object') return;
    if (Array.isArray(o.items) && (o.kind === 'List' || String(o.kind ?? '').endsWith('List'))) {
      for (const item of o.items) visit(item);
      return;
    }
    const kind = typeof o.kind === 'string' ? o.kind : '';
    const r = resourceForKind(kind);
    if (!r) {
      result.skipped[kind || '(no kind)'] = (result.skipped[kind || '(no kind)'] ?? 0) + 1;
      return;
    }
    store.upsert(r.name, r.slim(o));
    result.loaded++;
  };
  for (const doc of docs) {
    if (doc.errors.length > 0) throw new Error(`${origin}: ${doc.errors[0]!.message}`);
    visit(doc.toJS());
  }
  return result;
}

/** A fixed set of objects from a file: the demo cluster and offline replay. */
export function fileSource(path: string, label = path): SnapshotSource & { loaded: LoadedObjects } {
  const store = new ClusterStore();
  const loaded = loadObjects(store, readFileSync(path, 'utf8'), path);
  const at = Date.now();
  return {
    snapshot: store,
    store,
    writable: false,
    loaded,
    describe: () => label,
    start() {},
    async stop() {},
    synced: () => true,
    status: () => ({
      source: label, synced: true, healthy: true, workloadSpreadCRD: 'static',
      kinds: KINDS.map((kind) => ({
        kind, apiVersion: 'file', required: kind !== 'workloadspreads', synced: true, watching: false,
        resourceVersion: '', lastContactAt: at, restarts: { error: 0, gone: 0, stale: 0 }, lastError: '',
        objects: store.count(kind),
      })),
    }),
  };
}
