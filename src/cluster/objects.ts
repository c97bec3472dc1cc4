// Slim, typed copies of the Kubernetes objects the policies read. Everything else a
// list or watch returns (managedFields, container specs, status noise) is dropped on
// arrival so that 50,000 cached pods stay small.

export const ANNOTATION = {
  zones: 'zonekeeper.io/zones',
  topologyKey: 'zonekeeper.io/topology-key',
  ignore: 'zonekeeper.io/ignore',
  zonePreferences: 'zonekeeper.io/zone-preferences',
  instanceIds: 'zonekeeper.io/instance-ids',
  deletionCost: 'controller.kubernetes.io/pod-deletion-cost',
  instanceAssignment: 'zonekeeper.io/instance-assignment',
  instanceId: 'zonekeeper.io/instance-id',
  kruiseMatched: 'apps.kruise.io/matched-workloadspread',
} as const;

export const POD_INDEX_LABEL = 'apps.kubernetes.io/pod-index';
export const ZONE_LABEL = 'topology.kubernetes.io/zone';
export const LEGACY_ZONE_LABELS = [ZONE_LABEL, 'failure-domain.beta.kubernetes.io/zone'];

export interface OwnerRef { kind: string; name: string; uid: string }

export interface NodeSelectorRequirement { key: string; operator: string; values: string[] }
export interface NodeSelectorTerm { matchExpressions: NodeSelectorRequirement[]; matchFields: NodeSelectorRequirement[] }
export interface TopologySelectorTerm { matchLabelExpressions: { key: string; values: string[] }[] }
export interface Taint { key: string; value: string; effect: string }
export interface Toleration { key: string; operator: string; value: string; effect: string }

export interface SlimNode {
  name: string;
  labels: Record<string, string>;
  /** labels[ZONE_LABEL], a field of its own: the filter reads it for each of thousands of candidates. */
  zone: string | undefined;
  /** Allocatable CPU (millicores), memory (bytes) and pod slots. */
  allocatable: { cpuMilli: number; memory: number; pods: number };
  /** NoSchedule and NoExecute taints only: PreferNoSchedule never excludes a node. */
  taints: Taint[];
  unschedulable: boolean;
  ready: boolean;
}

export interface SlimPod {
  uid: string;
  namespace: string;
  name: string;
  /** '' while the pod is not bound. */
  nodeName: string;
  owner: OwnerRef | undefined;
  /** StatefulSet ordinal from the pod-index label or the name suffix; -1 when there is none. */
  ordinal: number;
  /** Names of the PVCs the pod mounts, ephemeral volumes included. */
  claims: readonly string[];
  terminating: boolean;
  /** Succeeded or Failed: the pod no longer occupies a seat. */
  finished: boolean;
  ready: boolean;
  createdAt: number;
  ignore: boolean;
  /** From zonekeeper.io/instance-id; -1 when the pod has none. */
  instanceId: number;
  /** controller.kubernetes.io/pod-deletion-cost as written; undefined when absent. */
  deletionCost: string | undefined;
  /** Summed container requests: what the pod takes from its node. */
  cpuMilli: number;
  memory: number;
  /** Set by the OpenKruise webhook: the subset this pod already belongs to. */
  kruiseMatch: { workloadSpread: string; subset: string } | undefined;
  /**
   * For WorkloadSpread subsets with taints (and /debug/explain). Cached pods share equal lists
   * (most carry the same two defaults) and keep at most CACHED_TOLERATIONS of them.
   */
  tolerations: readonly Toleration[];
}

/** The pod in a scheduling request: all of its tolerations, nothing shared. */
export type PendingPod = SlimPod;

/** Tolerations a cached pod keeps: a pod with more is rare, and its extra ones only matter to explain. */
export const CACHED_TOLERATIONS = 64;

/**
 * Workload kinds by the name zonekeeper gives them. OpenKruise's Advanced StatefulSet is a
 * `StatefulSet` of apps.kruise.io on the wire: here it is `AdvancedStatefulSet`, so that an
 * owner reference, a store key and a message never confuse it with apps/v1's.
 */
export type WorkloadKind = 'StatefulSet' | 'ReplicaSet' | 'Deployment' | 'CloneSet' | 'AdvancedStatefulSet';

export const KRUISE_GROUP = 'apps.kruise.io';

/** The API group each workload kind's wire name belongs to. */
const WIRE_GROUP: Readonly<Record<string, string>> = { StatefulSet: 'apps', ReplicaSet: 'apps', Deployment: 'apps', CloneSet: KRUISE_GROUP };

/**
 * The kind zonekeeper knows an owner or target by: `AdvancedStatefulSet` for Kruise's
 * StatefulSet, `<kind>.<group>` for a known kind name in another group (not a workload of
 * ours), else the kind as written. Without an apiVersion the kind is taken as written.
 */
export function workloadKindOf(apiVersion: string, kind: string): string {
  if (!apiVersion) return kind;
  const group = apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '';
  if (group === KRUISE_GROUP && kind === 'StatefulSet') return 'AdvancedStatefulSet';
  const expected = Object.hasOwn(WIRE_GROUP, kind) ? WIRE_GROUP[kind] : undefined;
  return expected !== undefined && expected !== group ? `${kind}.${group || 'core'}` : kind;
}

export interface SlimWorkload {
  kind: WorkloadKind;
  /** The version it was read at: writes go to the same. */
  apiVersion: string;
  namespace: string;
  name: string;
  uid: string;
  replicas: number;
  /** Only the zonekeeper.io/* annotations are kept. */
  annotations: Record<string, string>;
  owner: OwnerRef | undefined;
  /** spec.ordinals.start of a StatefulSet, 0 otherwise. */
  ordinalsStart: number;
  /** An Advanced StatefulSet's spec.reserveOrdinals: ordinals its controller never creates. */
  reservedOrdinals: ReservedOrdinals;
}

/** Single ordinals and inclusive ranges ("3-5" in Kruise ≥ 1.8), kept as written: never expanded. */
export interface ReservedOrdinals { singles: ReadonlySet<number>; ranges: readonly (readonly [number, number])[] }

export interface SlimPVC {
  namespace: string;
  name: string;
  volumeName: string;
  storageClassName: string;
}

export interface SlimPV {
  name: string;
  /** Zones named by the legacy zone labels, `__`-joined values split. */
  labelZones: string[];
  nodeAffinity: NodeSelectorTerm[] | undefined;
  claim: { namespace: string; name: string } | undefined;
}

export interface SlimStorageClass {
  name: string;
  waitForFirstConsumer: boolean;
  allowedTopologies: TopologySelectorTerm[];
}

export interface WorkloadSpreadSubset {
  name: string;
  requiredNodeSelectorTerm: NodeSelectorTerm | undefined;
  preferredNodeSelectorTerms: { weight: number; preference: NodeSelectorTerm }[];
  tolerations: Toleration[];
  /** An integer, a percent string such as "20%", or null for unlimited. */
  maxReplicas: number | string | null;
}

export interface SlimWorkloadSpread {
  namespace: string;
  name: string;
  uid: string;
  targetRef: { apiVersion: string; kind: string; name: string };
  subsets: WorkloadSpreadSubset[];
  strategy: 'Fixed' | 'Adaptive';
  rescheduleCriticalSeconds: number;
}

// ---- conversion from raw JSON -------------------------------------------------------

type Raw = Record<string, any>;
const EMPTY: readonly string[] = Object.freeze([]);

// Repeated strings (namespaces, node names, owner names) are shared, not copied per pod.
const interned = new Map<string, string>();
export function intern(s: string): string {
  const hit = interned.get(s);
  if (hit !== undefined) return hit;
  if (interned.size > 200_000) interned.clear();
  interned.set(s, s);
  return s;
}

/** For objects of a request: nothing of theirs outlives it in the shared table. */
export const unshared = (s: string) => s;

function str(v: unknown, fallback = ''): string {
  return typeof v === 'string' ? v : fallback;
}

function stringMap(v: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) if (typeof x === 'string') out[k] = x;
  return out;
}

function controllerOf(meta: Raw | undefined, share = intern): OwnerRef | undefined {
  const refs = Array.isArray(meta?.ownerReferences) ? meta.ownerReferences : [];
  const ref = refs.find((r: Raw) => r?.controller === true) ?? undefined;
  if (!ref || typeof ref.kind !== 'string' || typeof ref.name !== 'string') return undefined;
  return { kind: share(workloadKindOf(str(ref.apiVersion), ref.kind)), name: share(ref.name), uid: str(ref.uid) };
}

function timestamp(v: unknown): number {
  if (v instanceof Date) return v.getTime();
  const t = typeof v === 'string' ? Date.parse(v) : NaN;
  return Number.isFinite(t) ? t : 0;
}

/** Ordinals and replica counts are int32 in Kubernetes: a larger index was not written by a controller. */
export const MAX_INDEX = 2 ** 31 - 1;

/** A decimal index as Kubernetes would write it, or -1. */
export function parseIndex(text: string | undefined): number {
  if (text === undefined || !/^\d{1,10}$/.test(text)) return -1;
  const n = Number(text);
  return n <= MAX_INDEX ? n : -1;
}

const isIndex = (v: unknown): v is number => Number.isInteger(v) && (v as number) >= 0 && (v as number) <= MAX_INDEX;

export function ordinalOf(name: string, labels: Record<string, string> | undefined): number {
  const fromLabel = labels?.[POD_INDEX_LABEL];
  if (fromLabel !== undefined && /^\d+$/.test(fromLabel)) return parseIndex(fromLabel);
  return parseIndex(/-(\d+)$/.exec(name)?.[1]);
}

function requirements(v: unknown): NodeSelectorRequirement[] {
  if (!Array.isArray(v)) return [];
  return v.filter((r) => r && typeof r.key === 'string').map((r) => ({
    key: r.key,
    operator: str(r.operator, 'In'),
    values: Array.isArray(r.values) ? r.values.map(String) : [],
  }));
}

export function nodeSelectorTerm(v: unknown): NodeSelectorTerm | undefined {
  if (!v || typeof v !== 'object') return undefined;
  const t = v as Raw;
  return { matchExpressions: requirements(t.matchExpressions), matchFields: requirements(t.matchFields) };
}

export function tolerations(v: unknown): Toleration[] {
  if (!Array.isArray(v)) return [];
  return v.filter((t) => t && typeof t === 'object').map((t) => ({
    key: str(t.key), operator: str(t.operator, 'Equal'), value: str(t.value), effect: str(t.effect),
  }));
}

const SUFFIX: Record<string, number> = {
  '': 1, m: 1e-3, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18,
  Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60,
};

/** A Kubernetes quantity ("100m", "1.5", "128Mi", "1e3") as a number; 0 when unreadable. */
export function quantity(v: unknown): number {
  if (typeof v === 'number') return v;
  if (typeof v !== 'string') return 0;
  const m = /^([+-]?[0-9.]+(?:[eE][+-]?\d+)?)([a-zA-Z]*)$/.exec(v.trim());
  if (!m || !Object.hasOwn(SUFFIX, m[2]!)) return 0;
  const n = Number(m[1]) * SUFFIX[m[2]!]!;
  return Number.isFinite(n) ? n : 0;
}

function podRequests(spec: Raw | undefined): { cpuMilli: number; memory: number } {
  let cpuMilli = 0, memory = 0;
  for (const c of Array.isArray(spec?.containers) ? spec.containers : []) {
    cpuMilli += Math.round(quantity(c?.resources?.requests?.cpu) * 1000);
    memory += quantity(c?.resources?.requests?.memory);
  }
  return { cpuMilli, memory };
}

/** Holds a seat of its workload: not terminating, not finished (what placement and the store count). */
export function holdsSeat(pod: Pick<SlimPod, 'terminating' | 'finished'>): boolean {
  return !pod.terminating && !pod.finished;
}

/** A node's value of a topology label (the zone label has a field of its own). */
export function zoneOf(node: SlimNode, topologyKey: string): string | undefined {
  return topologyKey === ZONE_LABEL ? node.zone : node.labels[topologyKey];
}

export function slimNode(o: Raw, share = intern): SlimNode {
  const taints: Taint[] = (Array.isArray(o.spec?.taints) ? o.spec.taints : [])
    .filter((t: Raw) => t?.effect === 'NoSchedule' || t?.effect === 'NoExecute')
    .map((t: Raw) => ({ key: str(t.key), value: str(t.value), effect: str(t.effect) }));
  const conditions: Raw[] = Array.isArray(o.status?.conditions) ? o.status.conditions : [];
  const labels = stringMap(o.metadata?.labels);
  return {
    name: share(str(o.metadata?.name)),
    labels,
    zone: labels[ZONE_LABEL],
    taints,
    unschedulable: o.spec?.unschedulable === true,
    ready: conditions.some((c) => c?.type === 'Ready' && c?.status === 'True'),
    allocatable: {
      cpuMilli: Math.round(quantity(o.status?.allocatable?.cpu) * 1000),
      memory: quantity(o.status?.allocatable?.memory),
      pods: quantity(o.status?.allocatable?.pods),
    },
  };
}

function claimNames(podName: string, spec: Raw | undefined): readonly string[] {
  const volumes: Raw[] = Array.isArray(spec?.volumes) ? spec.volumes : [];
  let out: Set<string> | undefined;
  for (const v of volumes) {
    const claim = v?.persistentVolumeClaim?.claimName;
    // A generic ephemeral volume's PVC is named <pod>-<volume>.
    const name = typeof claim === 'string' ? claim : v?.ephemeral ? `${podName}-${str(v.name)}` : undefined;
    // Once each: a claim named twice constrains once, and costs one lookup.
    if (name) (out ??= new Set()).add(name);
  }
  return out ? [...out] : EMPTY;
}

function kruiseMatch(annotations: Raw | undefined): SlimPod['kruiseMatch'] {
  const raw = annotations?.[ANNOTATION.kruiseMatched];
  if (typeof raw !== 'string') return undefined;
  try {
    const v = JSON.parse(raw);
    const ws = str(v?.name ?? v?.Name), subset = str(v?.subset ?? v?.Subset);
    return ws && subset ? { workloadSpread: ws, subset } : undefined;
  } catch {
    return undefined;
  }
}

export function slimPod(o: Raw, share = intern): SlimPod {
  const meta: Raw = o.metadata ?? {};
  const name = str(meta.name);
  const phase = o.status?.phase;
  const conditions: Raw[] = Array.isArray(o.status?.conditions) ? o.status.conditions : [];
  const id = meta.annotations?.[ANNOTATION.instanceId];
  const { cpuMilli, memory } = podRequests(o.spec);
  return {
    uid: str(meta.uid),
    namespace: share(str(meta.namespace, 'default')),
    name,
    nodeName: share(str(o.spec?.nodeName)),
    owner: controllerOf(meta, share),
    ordinal: ordinalOf(name, meta.labels),
    claims: claimNames(name, o.spec),
    terminating: meta.deletionTimestamp != null,
    finished: phase === 'Succeeded' || phase === 'Failed',
    ready: conditions.some((c) => c?.type === 'Ready' && c?.status === 'True'),
    createdAt: timestamp(meta.creationTimestamp),
    ignore: meta.annotations?.[ANNOTATION.ignore] === 'true',
    instanceId: typeof id === 'string' ? parseIndex(id) : -1,
    deletionCost: typeof meta.annotations?.[ANNOTATION.deletionCost] === 'string' ? share(meta.annotations[ANNOTATION.deletionCost]) : undefined,
    cpuMilli,
    memory,
    kruiseMatch: kruiseMatch(meta.annotations),
    tolerations: share === unshared ? tolerations(o.spec?.tolerations) : sharedTolerations(o.spec?.tolerations),
  };
}

const NO_TOLERATIONS: readonly Toleration[] = Object.freeze([]);
const tolerationLists = new Map<string, readonly Toleration[]>();

/** A cached pod's tolerations: capped, and one frozen list per distinct value. */
function sharedTolerations(v: unknown): readonly Toleration[] {
  const list = tolerations(v).slice(0, CACHED_TOLERATIONS);
  if (list.length === 0) return NO_TOLERATIONS;
  const key = JSON.stringify(list);
  let shared = tolerationLists.get(key);
  if (!shared) {
    if (tolerationLists.size > 10_000) tolerationLists.clear();
    tolerationLists.set(key, (shared = Object.freeze(list)));
  }
  return shared;
}

/** The pod of a scheduling request: validated, kept out of the shared tables, every toleration. */
export function pendingPod(o: Raw): PendingPod {
  return slimPod(o, unshared);
}

function zonekeeperAnnotations(meta: Raw | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(stringMap(meta?.annotations))) if (k.startsWith('zonekeeper.io/')) out[k] = v;
  return out;
}

export function slimWorkload(kind: WorkloadKind, o: Raw, apiVersion = 'apps/v1'): SlimWorkload {
  const meta: Raw = o.metadata ?? {};
  const replicas = o.spec?.replicas;
  const start = o.spec?.ordinals?.start;
  // Instance-ID opt-in may sit on the pod template (design §6); keep it visible on the workload.
  const annotations = zonekeeperAnnotations(meta);
  const templateOptIn = o.spec?.template?.metadata?.annotations?.[ANNOTATION.instanceIds];
  if (typeof templateOptIn === 'string' && !(ANNOTATION.instanceIds in annotations)) annotations[ANNOTATION.instanceIds] = templateOptIn;
  return {
    kind,
    apiVersion,
    namespace: intern(str(meta.namespace, 'default')),
    name: str(meta.name),
    uid: str(meta.uid),
    replicas: isIndex(replicas) ? replicas : 1,
    annotations,
    owner: controllerOf(meta),
    ordinalsStart: isIndex(start) ? start : 0,
    reservedOrdinals: reservedOrdinals(o.spec?.reserveOrdinals),
  };
}

const NO_RESERVED: ReservedOrdinals = { singles: new Set(), ranges: [] };
/** More entries than this are not a controller's list: the rest is ignored (the object is still cached). */
const MAX_RESERVED_ENTRIES = 10_000;

function reservedOrdinals(v: unknown): ReservedOrdinals {
  if (!Array.isArray(v) || v.length === 0) return NO_RESERVED;
  const singles = new Set<number>();
  const ranges: [number, number][] = [];
  for (const e of v.slice(0, MAX_RESERVED_ENTRIES)) {
    if (isIndex(e)) singles.add(e);
    else if (typeof e === 'string') {
      const m = /^(\d{1,10})(?:-(\d{1,10}))?$/.exec(e.trim());
      const lo = parseIndex(m?.[1]), hi = m?.[2] === undefined ? lo : parseIndex(m[2]);
      if (lo >= 0 && hi >= lo) (lo === hi ? singles.add(lo) : ranges.push([lo, hi]));
    }
  }
  return { singles, ranges };
}

export function slimPVC(o: Raw): SlimPVC {
  return {
    namespace: intern(str(o.metadata?.namespace, 'default')),
    name: str(o.metadata?.name),
    volumeName: str(o.spec?.volumeName),
    storageClassName: str(o.spec?.storageClassName),
  };
}

export function slimPV(o: Raw): SlimPV {
  const labels = stringMap(o.metadata?.labels);
  const labelZones = LEGACY_ZONE_LABELS.flatMap((k) => (labels[k] ? labels[k].split('__') : []));
  const terms = o.spec?.nodeAffinity?.required?.nodeSelectorTerms;
  const claim = o.spec?.claimRef;
  return {
    name: str(o.metadata?.name),
    labelZones: [...new Set(labelZones)],
    nodeAffinity: Array.isArray(terms) ? terms.map(nodeSelectorTerm).filter((t): t is NodeSelectorTerm => !!t) : undefined,
    claim: claim && typeof claim.name === 'string' ? { namespace: str(claim.namespace, 'default'), name: claim.name } : undefined,
  };
}

export function slimStorageClass(o: Raw): SlimStorageClass {
  const topologies: Raw[] = Array.isArray(o.allowedTopologies) ? o.allowedTopologies : [];
  return {
    name: str(o.metadata?.name),
    waitForFirstConsumer: o.volumeBindingMode === 'WaitForFirstConsumer',
    allowedTopologies: topologies.map((t) => ({
      matchLabelExpressions: (Array.isArray(t?.matchLabelExpressions) ? t.matchLabelExpressions : [])
        .filter((e: Raw) => typeof e?.key === 'string')
        .map((e: Raw) => ({ key: e.key, values: Array.isArray(e.values) ? e.values.map(String) : [] })),
    })),
  };
}

function maxReplicas(v: unknown): number | string | null {
  if (typeof v === 'number' && Number.isInteger(v) && v >= 0) return v;
  if (typeof v === 'string' && /^\d+%$/.test(v)) return v;
  if (typeof v === 'string' && /^\d+$/.test(v)) return Number(v);
  return null;
}

/** Accepts both v1alpha1 and v1beta1 field names (design §5). */
export function slimWorkloadSpread(o: Raw): SlimWorkloadSpread {
  const spec: Raw = o.spec ?? {};
  const subsets: Raw[] = Array.isArray(spec.subsets) ? spec.subsets : [];
  const strategy: Raw = spec.scheduleStrategy ?? {};
  return {
    namespace: intern(str(o.metadata?.namespace, 'default')),
    name: str(o.metadata?.name),
    uid: str(o.metadata?.uid),
    // The kind as owners name it: an Advanced StatefulSet target is `AdvancedStatefulSet`.
    targetRef: { apiVersion: str(spec.targetRef?.apiVersion), kind: workloadKindOf(str(spec.targetRef?.apiVersion), str(spec.targetRef?.kind)), name: str(spec.targetRef?.name) },
    subsets: subsets.map((s) => ({
      name: str(s?.name),
      requiredNodeSelectorTerm: nodeSelectorTerm(s?.requiredNodeSelectorTerm ?? s?.requiredNodeSelector),
      preferredNodeSelectorTerms: (Array.isArray(s?.preferredNodeSelectorTerms ?? s?.preferredNodeSelector)
        ? (s.preferredNodeSelectorTerms ?? s.preferredNodeSelector) : [])
        .map((p: Raw) => ({ weight: typeof p?.weight === 'number' ? p.weight : 1, preference: nodeSelectorTerm(p?.preference) }))
        .filter((p: { preference?: NodeSelectorTerm }) => p.preference !== undefined),
      tolerations: tolerations(s?.tolerations),
      maxReplicas: maxReplicas(s?.maxReplicas),
    })),
    strategy: strategy.type === 'Adaptive' ? 'Adaptive' : 'Fixed',
    rescheduleCriticalSeconds: typeof strategy.adaptive?.rescheduleCriticalSeconds === 'number'
      ? strategy.adaptive.rescheduleCriticalSeconds : 30,
  };
}
