// A WorkloadSpread subset's `patch` applied to a pod being created, as OpenKruise's webhook
// applies it (a strategic merge patch), then written as JSONPatch operations. Pure: the pod
// and the patch in, the patched pod and its operations (or why it cannot be applied) out.

type Raw = Record<string, any>;

/** One RFC 6902 operation, as an AdmissionReview's JSONPatch carries it (a subset's patch and admission build them). */
export type JsonPatchOp = { op: 'add' | 'replace'; path: string; value: unknown } | { op: 'remove'; path: string };

/** List fields merged element by element on a key, as the Pod's strategic-merge schema says; any other list is replaced. */
const MERGE_KEYS: Readonly<Record<string, string>> = {
  containers: 'name', initContainers: 'name', ephemeralContainers: 'name', volumes: 'name', env: 'name',
  volumeMounts: 'mountPath', volumeDevices: 'devicePath', ports: 'containerPort', imagePullSecrets: 'name',
  hostAliases: 'ip', resourceClaims: 'name', readinessGates: 'conditionType',
};

/** Where a subset's patch may write: what a pod's creator sets, nothing the API or the scheduler owns. */
const WRITABLE_METADATA = new Set(['labels', 'annotations']);
const FORBIDDEN_SPEC: Readonly<Record<string, string>> = {
  nodeName: 'which zonekeeper and the scheduler own',
  schedulingGates: 'which zonekeeper and the scheduler own',
  priority: 'which the API server computes from spec.priorityClassName (patch priorityClassName instead)',
  preemptionPolicy: 'which the API server computes from spec.priorityClassName (patch priorityClassName instead)',
  overhead: 'which the API server computes from spec.runtimeClassName (patch runtimeClassName instead)',
  ephemeralContainers: 'which a pod may not have at creation',
};

/**
 * Fields built-in admission computed from another field before this webhook ran: when the patch
 * changes the source, the computed value is dropped and the API server computes it again
 * (it reinvokes its own plugins after a webhook's change). Kruise does so for priority alone.
 */
const COMPUTED_FROM: readonly { source: string; computed: readonly string[] }[] = [
  { source: 'priorityClassName', computed: ['priority', 'preemptionPolicy'] },
  { source: 'runtimeClassName', computed: ['overhead'] },
];

const isObject = (x: unknown): x is Raw => x !== null && typeof x === 'object' && !Array.isArray(x);

function mergeList(have: unknown, patch: unknown[], key: string | undefined): unknown[] {
  if (!key || !Array.isArray(have)) return patch.filter((x) => !(isObject(x) && x.$patch === 'delete'));
  const out = [...have];
  for (const item of patch) {
    if (!isObject(item) || item[key] === undefined) {
      out.push(item);
      continue;
    }
    const at = out.findIndex((x) => isObject(x) && x[key] === item[key]);
    if (item.$patch === 'delete') {
      if (at >= 0) out.splice(at, 1);
    } else if (at >= 0) out[at] = merged(out[at], item);
    else out.push(item);
  }
  return out;
}

/** RFC 7386 for objects (null deletes), lists by MERGE_KEYS. */
function merged(have: unknown, patch: unknown, field = ''): unknown {
  if (Array.isArray(patch)) return mergeList(have, patch, MERGE_KEYS[field]);
  if (!isObject(patch)) return patch;
  const out: Raw = isObject(have) ? { ...have } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (k === '$patch') continue;
    if (v === null) delete out[k];
    else out[k] = merged(out[k], v, k);
  }
  return out;
}

/** Why `patch` may not be applied to a pod at creation, or undefined. */
function forbidden(patch: Raw): string | undefined {
  for (const k of Object.keys(patch)) if (k !== 'metadata' && k !== 'spec') return `it sets ${k}: a subset's patch may set metadata.labels, metadata.annotations and spec`;
  if (patch.metadata !== undefined) {
    if (!isObject(patch.metadata)) return 'its metadata is not an object';
    for (const k of Object.keys(patch.metadata)) if (!WRITABLE_METADATA.has(k)) return `it sets metadata.${k}: only labels and annotations may be patched`;
  }
  if (patch.spec !== undefined && !isObject(patch.spec)) return 'its spec is not an object';
  for (const k of Object.keys(patch.spec ?? {})) if (Object.hasOwn(FORBIDDEN_SPEC, k)) return `it sets spec.${k}, ${FORBIDDEN_SPEC[k]}`;
  return undefined;
}

/** What the API would refuse in the patched pod that the patch brought in: a container without a name or an image. */
function invalid(pod: Raw): string | undefined {
  for (const field of ['containers', 'initContainers']) {
    const list: unknown = pod.spec?.[field];
    if (list === undefined) continue;
    if (!Array.isArray(list)) return `spec.${field} is not a list`;
    for (const c of list) {
      if (!isObject(c) || typeof c.name !== 'string' || !c.name) return `an entry of spec.${field} has no name`;
      if (typeof c.image !== 'string' || !c.image) return `spec.${field} ${c.name} has no image (the patch names a container the pod does not have)`;
    }
  }
  return undefined;
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** Operations that turn `pod`'s object at `path` into `after`'s, one per top-level field changed. */
function fieldOps(path: string, before: Raw | undefined, after: Raw): JsonPatchOp[] {
  if (!before) return [{ op: 'add', path, value: after }];
  const ops: JsonPatchOp[] = [];
  for (const k of new Set([...Object.keys(before), ...Object.keys(after)])) {
    if (same(before[k], after[k])) continue;
    const at = `${path}/${k.replace(/~/g, '~0').replace(/\//g, '~1')}`;
    ops.push(after[k] === undefined ? { op: 'remove', path: at } : { op: 'add', path: at, value: after[k] });
  }
  return ops;
}

export type SubsetPatched = { pod: Raw; ops: JsonPatchOp[]; error?: undefined } | { error: string };

/** `patch` (a subset's, as stored on the WorkloadSpread) applied to `pod`: the pod after it and the JSONPatch that gets there. */
export function subsetPatched(pod: Raw, patch: unknown): SubsetPatched {
  if (!isObject(patch)) return { error: 'its patch is not an object' };
  const why = forbidden(patch);
  if (why) return { error: why };
  const metadata: Raw = isObject(pod.metadata) ? pod.metadata : {};
  const spec: Raw = isObject(pod.spec) ? pod.spec : {};
  const after = {
    ...pod,
    metadata: patch.metadata ? merged(metadata, patch.metadata) as Raw : metadata,
    spec: patch.spec ? merged(spec, patch.spec) as Raw : spec,
  };
  for (const { source, computed } of COMPUTED_FROM) {
    if (same(spec[source], after.spec[source])) continue;
    for (const field of computed) delete after.spec[field];
  }
  const bad = invalid(after);
  if (bad) return { error: bad };
  const ops = [
    ...fieldOps('/metadata', isObject(pod.metadata) ? pod.metadata : undefined, after.metadata).filter((op) => op.path !== '/metadata' || Object.keys(after.metadata).length > 0),
    ...fieldOps('/spec', isObject(pod.spec) ? pod.spec : undefined, after.spec),
  ];
  return { pod: after, ops };
}
