// Raw JSON from the API server (or a file, or a request) to the slim objects of objects.ts:
// everything a policy does not read is dropped on arrival, repeated strings are shared.

import { ANNOTATION, DECIDED_BY_LABEL, POD_INDEX_LABEL, REVISION_LABEL, SEAT_TABLE_LABEL, ZONE_GATE, ZONE_LABEL, ZONE_LABELS } from './annotations.js';
import { parsePreferences, type ParsedPreferences } from './zonePreferences.js';
import { isWorkloadKindName, workloadKindOf, WORKLOAD_KINDS, type KindSpec, type WorkloadKind } from './kinds.js';
import {
  MAX_INDEX, SCALE_REPORT_MESSAGE, type StatefulUpdate,
  type NodeSelectorTerm, type SlimAutoscalerStatus, type SlimNodePool, type SlimScaleReport, type OwnerRef, type PendingPod,
  type ReservedOrdinals, type SlimNode, type SlimPod, type SlimPV, type SlimPVC, type SlimStorageClass,
  type SlimWorkload, type Taint,
} from './objects.js';
import { nodeSelection, nodeSelectorTerm, NO_TOLERATIONS, sharedList, sharedSelection, sharedTolerations, templateNeeds, tolerationKey, tolerations } from './nodeNeeds.js';
import { intern, str, stringMap, type Raw } from './rawFields.js';
import { slimWorkloadSpread } from './convertWorkloadSpread.js';

const EMPTY: readonly string[] = Object.freeze([]);

/** For objects of a request: nothing of theirs outlives it in the shared table. */
export const unshared = (s: string) => s;

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

/** A decimal index as Kubernetes would write it, or -1. */
function parseIndex(text: string | undefined): number {
  if (text === undefined || !/^\d{1,10}$/.test(text)) return -1;
  const n = Number(text);
  return n <= MAX_INDEX ? n : -1;
}

const isIndex = (v: unknown): v is number => Number.isInteger(v) && (v as number) >= 0 && (v as number) <= MAX_INDEX;

function ordinalOf(name: string, labels: Record<string, string> | undefined): number {
  const fromLabel = labels?.[POD_INDEX_LABEL];
  if (fromLabel !== undefined && /^\d+$/.test(fromLabel)) return parseIndex(fromLabel);
  return parseIndex(/-(\d+)$/.exec(name)?.[1]);
}

const SUFFIX: Record<string, number> = {
  '': 1, m: 1e-3, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18,
  Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60,
};

// Cached pods' requests repeat across a fleet ("100m", "128Mi"): each short text is read once.
const quantities = new Map<string, number>();

/** A Kubernetes quantity ("100m", "1.5", "128Mi", "1e3") as a number; 0 when unreadable. */
export function quantity(v: unknown, remember = false): number {
  if (typeof v === 'number') return v;
  if (typeof v !== 'string') return 0;
  if (!remember || v.length > 32) return readQuantity(v);
  let n = quantities.get(v);
  if (n === undefined) {
    if (quantities.size > 10_000) quantities.clear();
    quantities.set(v, (n = readQuantity(v)));
  }
  return n;
}

function readQuantity(v: string): number {
  const m = /^([+-]?[0-9.]+(?:[eE][+-]?\d+)?)([a-zA-Z]*)$/.exec(v.trim());
  if (!m || !Object.hasOwn(SUFFIX, m[2]!)) return 0;
  const n = Number(m[1]) * SUFFIX[m[2]!]!;
  return Number.isFinite(n) ? n : 0;
}

function podRequests(spec: Raw | undefined, remember: boolean): { cpuMilli: number; memory: number } {
  let cpuMilli = 0, memory = 0;
  for (const c of Array.isArray(spec?.containers) ? spec.containers : []) {
    cpuMilli += Math.round(quantity(c?.resources?.requests?.cpu, remember) * 1000);
    memory += quantity(c?.resources?.requests?.memory, remember);
  }
  return { cpuMilli, memory };
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
  const { cpuMilli, memory } = podRequests(o.spec, share !== unshared);
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
    deletionCost: integerAnnotation(meta.annotations?.[ANNOTATION.deletionCost], share),
    instanceCount: integerAnnotation(meta.annotations?.[ANNOTATION.instanceCount], share),
    cpuMilli,
    memory,
    kruiseMatch: kruiseMatch(meta.annotations),
    tolerations: share === unshared ? tolerations(o.spec?.tolerations) : sharedTolerations(o.spec?.tolerations),
    selection: nodeSelection(o.spec, share !== unshared),
    ...gateOf(meta, o.spec),
    ...(!o.spec?.nodeName && conditions.some((c) => c?.type === 'PodScheduled' && c?.status === 'False' && c?.reason === 'Unschedulable')
      ? { unschedulable: true } : {}),
    ...(meta.labels?.[DECIDED_BY_LABEL] === 'policy' ? { decidedByPolicy: true, ...tableGeneration(meta.labels[SEAT_TABLE_LABEL]) } : {}),
    ...(typeof meta.annotations?.[ANNOTATION.subsetPatchNotApplied] === 'string'
      ? { subsetPatchNotApplied: share(clipped(meta.annotations[ANNOTATION.subsetPatchNotApplied])) } : {}),
    ...revisionOf(meta.labels?.[REVISION_LABEL], conditions, share),
  };
}

/** What an integer annotation zonekeeper writes holds: the value when it is one, else NOT_AN_INTEGER (a different value: it is written again). */
export const NOT_AN_INTEGER = '(not an integer)';
function integerAnnotation(v: unknown, share: (s: string) => string): string | undefined {
  if (typeof v !== 'string') return undefined;
  return /^-?[0-9]{1,10}$/.test(v) ? share(v) : NOT_AN_INTEGER;
}

/** Text zonekeeper wrote for people, kept at most this long: a tenant may write 256 KiB there. */
const KEPT_TEXT_LENGTH = 1024;
const clipped = (s: string) => (s.length > KEPT_TEXT_LENGTH ? `${s.slice(0, KEPT_TEXT_LENGTH)}…` : s);

/** A pod's template revision and when its Ready condition last changed: what a zone-by-zone rollout reads; nothing kept for a pod without them. */
function revisionOf(label: unknown, conditions: readonly Raw[], share: (s: string) => string): Pick<SlimPod, 'revision' | 'readyChangedAt'> {
  const out: Pick<SlimPod, 'revision' | 'readyChangedAt'> = {};
  if (typeof label === 'string' && label.length > 0 && label.length <= 253) out.revision = share(label);
  const changed = timestamp(conditions.find((c) => c?.type === 'Ready')?.lastTransitionTime);
  if (changed > 0) out.readyChangedAt = changed;
  return out;
}

/** The seat table generation a policy-decided pod carries: digits as zonekeeper writes them (ms since the epoch). */
function tableGeneration(v: unknown): Pick<SlimPod, 'seatTableGeneration'> {
  return typeof v === 'string' && /^[1-9][0-9]{0,14}$/.test(v) ? { seatTableGeneration: Number(v) } : {};
}

/** Whether the pod is gated by zonekeeper.io/zone, and for such a pod what its patch needs. */
function gateOf(meta: Raw, spec: Raw | undefined): Pick<SlimPod, 'gated' | 'gate'> {
  const gates: Raw[] = Array.isArray(spec?.schedulingGates) ? spec.schedulingGates : [];
  if (!gates.some((g) => g?.name === ZONE_GATE)) return { gated: false };
  const otherGates = gates.map((g) => str(g?.name)).filter((n) => n && n !== ZONE_GATE);
  return { gated: true, gate: { resourceVersion: str(meta.resourceVersion), otherGates } };
}

/** A cached pod slimmed on another thread (podPages.ts): its strings and lists shared as slimPod shares them. */
export function sharedPod(p: SlimPod): SlimPod {
  p.namespace = intern(p.namespace);
  p.nodeName = intern(p.nodeName);
  if (p.owner) {
    p.owner.kind = intern(p.owner.kind);
    p.owner.name = intern(p.owner.name);
  }
  if (p.deletionCost !== undefined) p.deletionCost = intern(p.deletionCost);
  if (p.instanceCount !== undefined) p.instanceCount = intern(p.instanceCount);
  if (p.revision !== undefined) p.revision = intern(p.revision);
  if (p.claims.length === 0) p.claims = EMPTY;
  if (p.selection) p.selection = sharedSelection(p.selection);
  const list = p.tolerations;
  p.tolerations = list.length === 0 ? NO_TOLERATIONS : sharedList(list.map(tolerationKey).join(''), () => [...list]);
  return p;
}

/** The pod of a scheduling request: validated, kept out of the shared tables, every toleration. */
export function pendingPod(o: Raw): PendingPod {
  return slimPod(o, unshared);
}

/** The zonekeeper.io/* annotations zonekeeper reads; any other (a typo, a tenant's filler) is not kept. */
const KNOWN_ANNOTATIONS: ReadonlySet<string> = new Set(Object.values(ANNOTATION).filter((k) => k.startsWith('zonekeeper.io/')));

function zonekeeperAnnotations(meta: Raw | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(stringMap(meta?.annotations))) if (KNOWN_ANNOTATIONS.has(k)) out[k] = v;
  return out;
}

/** Workloads that share one preferences value share its parse (most of a fleet's are alike); the cache is bounded in bytes of its keys. */
const parsedPreferences = new Map<string, ParsedPreferences>();
const PREFERENCES_CACHE_BYTES = 4 * 1024 * 1024;
let preferencesBytes = 0;
function preferencesOf(value: string | undefined): ParsedPreferences | undefined {
  if (value === undefined) return undefined;
  let parsed = parsedPreferences.get(value);
  if (!parsed) {
    parsed = parsePreferences(value);
    // A value too long to share is parsed for its workload alone.
    if (2 * value.length > PREFERENCES_CACHE_BYTES / 16) return parsed;
    if (parsedPreferences.size > 1000 || preferencesBytes + 2 * value.length > PREFERENCES_CACHE_BYTES) {
      parsedPreferences.clear();
      preferencesBytes = 0;
    }
    parsedPreferences.set(value, parsed);
    preferencesBytes += 2 * value.length;
  }
  return parsed;
}

export function slimWorkload(kind: WorkloadKind, o: Raw, apiVersion = 'apps/v1'): SlimWorkload {
  const meta: Raw = o.metadata ?? {};
  const replicas = o.spec?.[WORKLOAD_KINDS[kind].replicasField];
  const start = o.spec?.ordinals?.start;
  // Instance-ID opt-in may sit on the pod template (docs/design.md#instance-ids); keep it visible on the workload.
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
    zonePreferences: preferencesOf(annotations[ANNOTATION.zonePreferences]),
    owner: controllerOf(meta),
    ordinalsStart: isIndex(start) ? start : 0,
    reservedOrdinals: reservedOrdinals(o.spec?.reserveOrdinals),
    ...claimTemplates(o.spec?.volumeClaimTemplates),
    templateClaims: claimNames('', o.spec?.template?.spec).length > 0,
    template: templateNeeds(o.spec?.template?.spec),
    revision: kind === 'ReplicaSet' ? Math.max(0, parseIndex(str(meta.annotations?.[ANNOTATION.deploymentRevision]))) : 0,
    ...(kind === 'StatefulSet' || kind === 'AdvancedStatefulSet' ? { update: statefulUpdate(o) } : {}),
  };
}

/** A StatefulSet's update strategy and revision as its controller reports them (Kruise's minReadySeconds may sit under rollingUpdate). */
function statefulUpdate(o: Raw): StatefulUpdate {
  const generation = o.metadata?.generation, observed = o.status?.observedGeneration;
  const minReady = o.spec?.minReadySeconds ?? o.spec?.updateStrategy?.rollingUpdate?.minReadySeconds;
  return {
    onDelete: o.spec?.updateStrategy?.type === 'OnDelete',
    updateRevision: str(o.status?.updateRevision),
    // Objects without generations (a snapshot file) are taken as observed.
    observed: !Number.isInteger(generation) || (Number.isInteger(observed) && observed >= generation),
    minReadySeconds: Number.isInteger(minReady) && minReady > 0 ? Math.min(minReady, 86_400) : 0,
  };
}

/** More templates than this are not a real StatefulSet's: the rest are ignored. */
const MAX_CLAIM_TEMPLATES = 16;

const NO_TEMPLATES = { claimTemplates: [], claimTemplateClasses: [] };

function claimTemplates(v: unknown): Pick<SlimWorkload, 'claimTemplates' | 'claimTemplateClasses'> {
  if (!Array.isArray(v) || v.length === 0) return NO_TEMPLATES;
  const kept = v.slice(0, MAX_CLAIM_TEMPLATES).filter((t) => typeof t?.metadata?.name === 'string' && t.metadata.name.length > 0 && t.metadata.name.length <= 253);
  return {
    claimTemplates: kept.map((t) => intern(t.metadata.name as string)),
    claimTemplateClasses: kept.map((t) => (typeof t.spec?.storageClassName === 'string' ? intern(t.spec.storageClassName as string) : undefined)),
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
      if (lo >= 0 && hi === lo) singles.add(lo);
      else if (lo >= 0 && hi > lo) ranges.push([lo, hi]);
    }
  }
  return { singles, ranges };
}

function slimPVC(o: Raw): SlimPVC {
  return {
    namespace: intern(str(o.metadata?.namespace, 'default')),
    name: str(o.metadata?.name),
    volumeName: str(o.spec?.volumeName),
    storageClassName: str(o.spec?.storageClassName),
  };
}

function slimPV(o: Raw): SlimPV {
  const labels = stringMap(o.metadata?.labels);
  const labelZones = ZONE_LABELS.flatMap((k) => (labels[k] ? labels[k].split('__') : []));
  const terms = o.spec?.nodeAffinity?.required?.nodeSelectorTerms;
  const claim = o.spec?.claimRef;
  return {
    name: str(o.metadata?.name),
    labelZones: [...new Set(labelZones)],
    nodeAffinity: Array.isArray(terms) ? terms.map(nodeSelectorTerm).filter((t): t is NodeSelectorTerm => !!t) : undefined,
    claim: claim && typeof claim.name === 'string' ? { namespace: str(claim.namespace, 'default'), name: claim.name } : undefined,
  };
}

function slimStorageClass(o: Raw): SlimStorageClass {
  const topologies: Raw[] = Array.isArray(o.allowedTopologies) ? o.allowedTopologies : [];
  return {
    name: str(o.metadata?.name),
    waitForFirstConsumer: o.volumeBindingMode === 'WaitForFirstConsumer',
    isDefault: o.metadata?.annotations?.['storageclass.kubernetes.io/is-default-class'] === 'true',
    allowedTopologies: topologies.map((t) => ({
      matchLabelExpressions: (Array.isArray(t?.matchLabelExpressions) ? t.matchLabelExpressions : [])
        .filter((e: Raw) => typeof e?.key === 'string')
        .map((e: Raw) => ({ key: e.key, values: Array.isArray(e.values) ? e.values.map(String) : [] })),
    })),
  };
}

function slimNodePool(o: Raw): SlimNodePool {
  const name = str(o.metadata?.name);
  const spec: Raw = o.spec?.template?.spec ?? {};
  return {
    name,
    labels: { ...stringMap(o.spec?.template?.metadata?.labels), 'karpenter.sh/nodepool': name },
    requirements: nodeSelectorTerm({ matchExpressions: spec.requirements })?.matchExpressions ?? [],
    taints: slimNode({ spec: { taints: spec.taints } }).taints,
  };
}

function slimAutoscalerStatus(o: Raw): SlimAutoscalerStatus {
  return { namespace: str(o.metadata?.namespace), name: str(o.metadata?.name) };
}

/** An autoscaler's Event about a pod; its source from the Event's reason. */
function slimScaleReport(o: Raw): SlimScaleReport {
  const time = Date.parse(str(o.lastTimestamp) || str(o.eventTime) || str(o.metadata?.creationTimestamp));
  return {
    namespace: str(o.metadata?.namespace), name: str(o.metadata?.name),
    pod: { name: str(o.involvedObject?.name), uid: str(o.involvedObject?.uid) },
    source: o.reason === 'NotTriggerScaleUp' ? 'cluster-autoscaler' : 'karpenter',
    message: str(o.message).slice(0, SCALE_REPORT_MESSAGE),
    at: Number.isFinite(time) ? time : 0,
  };
}

const CORE_CONVERTERS: Readonly<Record<string, (raw: Raw) => unknown>> = {
  nodes: slimNode, pods: slimPod, persistentvolumes: slimPV, persistentvolumeclaims: slimPVC,
  storageclasses: slimStorageClass, workloadspreads: slimWorkloadSpread, nodepools: slimNodePool,
  scaleupreports: slimScaleReport, karpenterreports: slimScaleReport, autoscalerstatus: slimAutoscalerStatus,
};

/** The converter for a kind's raw objects: a workload kind's records the version it was read at. */
export function slimOf(k: KindSpec): (raw: Raw) => unknown {
  if (isWorkloadKindName(k.plural)) {
    const kind = k.kind as WorkloadKind;
    const apiVersion = `${k.group}/${k.version}`;
    return (o) => slimWorkload(kind, o, apiVersion);
  }
  const slim = CORE_CONVERTERS[k.plural];
  if (!slim) throw new Error(`no converter for ${k.plural}`);
  return slim;
}
