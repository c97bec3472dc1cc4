import { readFileSync } from 'node:fs';
import { parseAllDocuments } from 'yaml';
import { UnreadableFileError, yamlProblem, ZonekeeperError } from '../common/errors.js';
import type { ReflectorStatus } from './reflector.js';
import { slimOf } from './convert.js';
import { ALL_KIND_NAMES, kindOfObject, KRUISE_GROUP, OPTIONAL_KINDS } from './kinds.js';
import { forEachListSlice } from './listSlices.js';
import { ClusterStore, type Snapshot } from './store.js';
import { systemClock } from '../common/clock.js';

interface KindStatus extends ReflectorStatus { objects: number }

export interface ClusterSourceStatus {
  source: string;
  synced: boolean;
  healthy: boolean;
  workloadSpreadCRD: 'present' | 'absent' | 'forbidden' | 'unknown' | 'static';
  /** Each OpenKruise kind: the apiVersion watched, or absent/forbidden/unknown/static. */
  openKruise: Record<string, string>;
  /** Karpenter's NodePools: the API version watched, or absent / forbidden. */
  karpenter: Record<string, string>;
  /** Where the Cluster Autoscaler's status ConfigMap was found (namespace/name): zones can grow by its word (placement.growInto: auto). */
  clusterAutoscaler: string | null;
  kinds: KindStatus[];
}

/** Where decisions get their view of the cluster: a watch cache or a static file. */
export interface SnapshotSource {
  readonly snapshot: Snapshot;
  /** The store behind the snapshot, for listeners (reservations) and static writes. */
  readonly store: ClusterStore;
  /** False for files: the actuator then writes to the in-memory store only. */
  readonly writable: boolean;
  /** A file (the demo, --snapshot): nothing binds its pods, and its times are as of its reading. */
  readonly fromFile?: true;
  describe(): string;
  start(): void;
  stop(): Promise<void>;
  synced(): boolean;
  /** Synced and not stale: what a decision may be made on. Cheap: called per request. */
  ready(now?: number): boolean;
  status(now?: number): ClusterSourceStatus;
}

/** What a file held: objects kept, objects of other kinds by kind, and items that are no Kubernetes object (no kind or no metadata.name). */
export interface LoadedObjects { loaded: number; skipped: Record<string, number>; notObjects: number }

/** Slims one raw object into the store; false for kinds zonekeeper does not keep. */
export function addObject(store: ClusterStore, raw: any): boolean {
  const k = kindOfObject(typeof raw?.kind === 'string' ? raw.kind : '', typeof raw?.apiVersion === 'string' ? raw.apiVersion : '',
    typeof raw?.metadata?.name === 'string' ? raw.metadata.name : '');
  if (!k) return false;
  store.upsert(k.plural, slimOf(k)(raw));
  return true;
}

export const isListKind = (kind: unknown) => kind === 'List' || String(kind ?? '').endsWith('List');

/** Keys whose RFC 3339 values a demo's shift moves: metadata.creationTimestamp, an Event's times, conditions', a frozen list's. */
const TIME_KEY = /(Timestamp|Time)$|^zonekeeper\.io\/zones-frozen-at$/;

/** Moves every time in `o` (and what it holds) by `byMs`, in place. */
function shiftTimes(o: any, byMs: number): void {
  for (const [k, v] of Object.entries(o)) {
    if (v && typeof v === 'object') shiftTimes(v, byMs);
    else if (typeof v === 'string' && TIME_KEY.test(k)) {
      const t = Date.parse(v);
      if (Number.isFinite(t)) o[k] = new Date(t + byMs).toISOString();
    }
  }
}

/** Visits a parsed value: a List's items, an array's elements, or one object; `shiftMs` moves its times. */
function objectVisitor(store: ClusterStore, result: LoadedObjects, shiftMs = 0): (o: any) => void {
  const visit = (o: any): void => {
    if (!o || typeof o !== 'object') return;
    if (Array.isArray(o)) {
      for (const item of o) visit(item);
      return;
    }
    if (Array.isArray(o.items) && isListKind(o.kind)) {
      for (const item of o.items) visit(item);
      return;
    }
    const named = typeof o.metadata?.name === 'string' && o.metadata.name !== '';
    // No kind, or a kind zonekeeper reads without a name (a template's {{ }}, a hand-cut object): no object at all.
    if (typeof o.kind !== 'string' || !o.kind || (!named && kindOfObject(o.kind, String(o.apiVersion ?? '')))) {
      result.notObjects++;
      return;
    }
    if (named && shiftMs !== 0) shiftTimes(o, shiftMs);
    if (named && addObject(store, o)) {
      result.loaded++;
      return;
    }
    result.skipped[o.kind] = (result.skipped[o.kind] ?? 0) + 1;
  };
  return visit;
}

export interface LoadedStore { store: ClusterStore; loaded: LoadedObjects }

/** A JSON List's items a slice at a time, or undefined when it is not one (see listSlices.ts). */
function loadListSlices(bytes: Uint8Array, shiftMs: number): LoadedStore | undefined {
  const store = new ClusterStore();
  const loaded: LoadedObjects = { loaded: 0, skipped: {}, notObjects: 0 };
  const visit = objectVisitor(store, loaded, shiftMs);
  const frame = forEachListSlice(bytes, (items) => { for (const item of items) visit(item); });
  return frame && isListKind(frame.kind) ? { store, loaded } : undefined;
}

/** Parses a `List` or a multi-document YAML/JSON of objects into a new store; `shiftMs` moves every time the objects hold. */
export function loadObjects(content: string | Uint8Array, origin: string, shiftMs = 0): LoadedStore {
  if (typeof content !== 'string') {
    const sliced = loadListSlices(content, shiftMs);
    if (sliced) return nonEmpty(sliced, origin);
    content = Buffer.from(content.buffer, content.byteOffset, content.byteLength).toString('utf8');
  }
  const store = new ClusterStore();
  const loaded: LoadedObjects = { loaded: 0, skipped: {}, notObjects: 0 };
  forEachDocument(content, origin, objectVisitor(store, loaded, shiftMs));
  return nonEmpty({ store, loaded }, origin);
}

/** Each document of a JSON file or a multi-document YAML, parsed; a file that is neither is a SnapshotFileError. */
export function forEachDocument(content: string, origin: string, visit: (value: unknown) => void): void {
  // `kubectl get -o json` prints one JSON document: JSON.parse reads it many times faster than
  // YAML. A file that opens like JSON and is no YAML either (JSON documents between `---` are)
  // gets JSON's error: that is what its content calls for.
  let jsonError: Error | undefined;
  if (/^\s*[{[]/.test(content)) {
    let value: unknown;
    try {
      value = JSON.parse(content);
    } catch (err) {
      jsonError = err as Error;
    }
    if (!jsonError) {
      visit(value);
      return;
    }
  }
  // logLevel error: a templated key ({{ .Values.x }}) is counted as no object, not warned about on stderr.
  for (const doc of parseAllDocuments(content, { logLevel: 'error' })) {
    if (doc.errors.length > 0) {
      throw new SnapshotFileError(jsonError ? `${origin}: not valid JSON (${jsonError.message})` : `${origin}: not valid YAML: ${yamlProblem(doc.errors[0]!.message)}`);
    }
    visit(doc.toJS());
  }
}

/** A snapshot file that is not what it claims: unreadable, not JSON or YAML, or no Kubernetes objects. */
export class SnapshotFileError extends ZonekeeperError {}

const EXPECTED = "expected a List of Kubernetes objects, as 'kubectl get nodes,pods,pv,pvc,sc,sts,rs,deploy -A -o json' prints it, or YAML documents of such objects";

/** A file that holds none of the objects zonekeeper reads is refused, not served as an empty cluster. */
function nonEmpty(l: LoadedStore, origin: string): LoadedStore {
  if (l.loaded.loaded > 0) return l;
  const skipped = Object.keys(l.loaded.skipped);
  const held = skipped.length > 0 ? `only kinds zonekeeper does not read (${skipped.slice(0, 5).join(', ')})` : 'no Kubernetes objects';
  throw new SnapshotFileError(`${origin}: ${held}; ${EXPECTED}`);
}

/** A fixed set of objects held in memory: behind file sources and tests. */
export function memorySource(store: ClusterStore, label: string): SnapshotSource {
  const at = systemClock.now();
  return {
    snapshot: store,
    store,
    writable: false,
    describe: () => label,
    start() {},
    async stop() {},
    synced: () => true,
    ready: () => true,
    status: () => ({
      source: label, synced: true, healthy: true, workloadSpreadCRD: 'static',
      openKruise: Object.fromEntries(OPTIONAL_KINDS.filter((k) => k.group === KRUISE_GROUP).map((k) => [k.plural, 'static'])),
      karpenter: { nodepools: 'static' },
      clusterAutoscaler: store.clusterAutoscaler() ?? null,
      kinds: ALL_KIND_NAMES.map((kind) => ({
        kind, apiVersion: 'file', required: !OPTIONAL_KINDS.some((k) => k.plural === kind), synced: true, watching: false,
        resourceVersion: '', lastContactAt: at, restarts: { error: 0, gone: 0, stale: 0, decode: 0 }, lastError: '', lastErrorStatus: 0, failingSince: 0,
        objects: store.count(kind),
      })),
    }),
  };
}

/** The demo cluster and offline replay: the objects of a file; `shiftMs` moves their times (the demo's, to its start). */
export function fileSource(path: string, label = path, flag = '--snapshot', shiftMs = 0): SnapshotSource & { loaded: LoadedObjects } {
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (err) {
    throw new UnreadableFileError(flag, path, err as NodeJS.ErrnoException);
  }
  const { store, loaded } = loadObjects(bytes, path, shiftMs);
  return { ...memorySource(store, label), loaded, fromFile: true };
}
