import { isDnsLabel, isDnsSubdomain, LABEL_MAX, SUBDOMAIN_MAX } from '../../cluster/names.js';
import { BadRequest } from '../../common/errors.js';

export type RawObject = Record<string, any>;

// Kubernetes' own limits on what a request may carry (apimachinery's validation package).
// Lengths are checked before any pattern runs, so a long value costs one comparison; past
// these checks every string zonekeeper keeps from a request is a few hundred bytes at most.

const QUALIFIED_NAME_PART = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const KIND = /^[A-Za-z][A-Za-z0-9]*$/;

export const LIMITS = {
  subdomain: SUBDOMAIN_MAX,
  label: LABEL_MAX,
  uid: 128,
  labelValue: 63,
  /** All annotations of an object together, keys plus values. */
  annotationBytes: 256 * 1024,
  /** JSON nesting: Kubernetes objects are a dozen levels deep; re-serialising recurses. */
  depth: 64,
} as const;

const isLabelValue = (s: string) => s.length === 0 || (s.length <= LIMITS.labelValue && QUALIFIED_NAME_PART.test(s));

/** `name` or `prefix/name`: a DNS subdomain prefix and a name of at most 63 characters. */
function isQualifiedName(key: string): boolean {
  if (key.length === 0 || key.length > LIMITS.subdomain + 1 + LIMITS.label) return false;
  const slash = key.indexOf('/');
  const name = slash < 0 ? key : key.slice(slash + 1);
  if (slash >= 0 && !isDnsSubdomain(key.slice(0, slash))) return false;
  return name.length > 0 && name.length <= LIMITS.label && QUALIFIED_NAME_PART.test(name);
}

function fail(field: string, message: string): never {
  throw new BadRequest(field, message);
}

const shown = (s: string) => (s.length > 40 ? `${JSON.stringify(s.slice(0, 40))}… (${s.length} characters)` : JSON.stringify(s));

function check(ok: boolean, field: string, value: string, what: string): void {
  if (!ok) fail(field, `${shown(value)} is not ${what}`);
}

const SUBDOMAIN = 'a DNS-1123 subdomain of at most 253 characters';
const checkSubdomain = (field: string, value: string) => check(isDnsSubdomain(value), field, value, SUBDOMAIN);

function optionalString(v: unknown, field: string): string | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') fail(field, `expected string, received ${typeof v}`);
  return v;
}

function arrayOf(v: unknown, field: string): unknown[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) fail(field, 'expected an array');
  return v;
}

function objectAt(v: unknown, field: string): RawObject | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'object' || Array.isArray(v)) fail(field, 'expected an object');
  return v as RawObject;
}

function validateLabels(labels: unknown, field: string): void {
  const map = objectAt(labels, field);
  if (!map) return;
  for (const [k, v] of Object.entries(map)) {
    check(isQualifiedName(k), `${field}.${k.slice(0, 80)}`, k, 'a qualified label key (optional DNS-1123 prefix, name of at most 63 characters)');
    if (typeof v !== 'string') fail(`${field}.${k}`, `expected string, received ${typeof v}`);
    check(isLabelValue(v), `${field}.${k}`, v, 'a label value (at most 63 characters of [A-Za-z0-9-_.])');
  }
}

function validateAnnotations(annotations: unknown, field: string): void {
  const map = objectAt(annotations, field);
  if (!map) return;
  let bytes = 0;
  for (const [k, v] of Object.entries(map)) {
    if (typeof v !== 'string') fail(`${field}.${k.slice(0, 80)}`, `expected string, received ${typeof v}`);
    bytes += Buffer.byteLength(k) + Buffer.byteLength(v);
  }
  if (bytes > LIMITS.annotationBytes) fail(field, `annotations total ${bytes} bytes, over Kubernetes' limit of ${LIMITS.annotationBytes}`);
}

/** Object metadata: name, namespace, uid, labels, annotations, owner references. */
function validateMeta(meta: RawObject, field: string, o: { namespaced: boolean; uid: boolean }): void {
  checkSubdomain(`${field}.name`, typeof meta.name === 'string' ? meta.name : '');
  if (o.namespaced) {
    const ns = optionalString(meta.namespace, `${field}.namespace`);
    if (ns !== undefined && ns !== '') check(isDnsLabel(ns), `${field}.namespace`, ns, 'a DNS-1123 label of at most 63 characters');
  }
  const uid = optionalString(meta.uid, `${field}.uid`);
  if (o.uid && !uid) fail(`${field}.uid`, 'required');
  if (uid !== undefined && uid.length > LIMITS.uid) fail(`${field}.uid`, `${uid.length} characters, over ${LIMITS.uid}`);
  validateLabels(meta.labels, `${field}.labels`);
  validateAnnotations(meta.annotations, `${field}.annotations`);
  arrayOf(meta.ownerReferences, `${field}.ownerReferences`).forEach((ref, i) => {
    const f = `${field}.ownerReferences.${i}`;
    const r = objectAt(ref, f) ?? {};
    const kind = optionalString(r.kind, `${f}.kind`) ?? '';
    check(kind.length <= LIMITS.label && KIND.test(kind), `${f}.kind`, kind, 'a kind name');
    const name = optionalString(r.name, `${f}.name`) ?? '';
    checkSubdomain(`${f}.name`, name);
    const refUid = optionalString(r.uid, `${f}.uid`) ?? '';
    if (refUid.length > LIMITS.uid) fail(`${f}.uid`, `${refUid.length} characters, over ${LIMITS.uid}`);
  });
}

/** The pod of a scheduling request: everything zonekeeper reads from it and may keep. */
export function validatePod(pod: RawObject): void {
  validateMeta(pod.metadata, 'Pod.metadata', { namespaced: true, uid: true });
  const spec = objectAt(pod.spec, 'Pod.spec');
  if (!spec) return;
  const nodeName = optionalString(spec.nodeName, 'Pod.spec.nodeName');
  if (nodeName) checkSubdomain('Pod.spec.nodeName', nodeName);
  arrayOf(spec.volumes, 'Pod.spec.volumes').forEach((v, i) => {
    const f = `Pod.spec.volumes.${i}`;
    const vol = objectAt(v, f) ?? {};
    const name = optionalString(vol.name, `${f}.name`) ?? '';
    check(isDnsLabel(name), `${f}.name`, name, 'a DNS-1123 label of at most 63 characters');
    const claim = optionalString(objectAt(vol.persistentVolumeClaim, `${f}.persistentVolumeClaim`)?.claimName, `${f}.persistentVolumeClaim.claimName`);
    if (claim !== undefined) checkSubdomain(`${f}.persistentVolumeClaim.claimName`, claim);
  });
  arrayOf(spec.tolerations, 'Pod.spec.tolerations').forEach((t, i) => {
    const f = `Pod.spec.tolerations.${i}`;
    const tol = objectAt(t, f) ?? {};
    const key = optionalString(tol.key, `${f}.key`);
    if (key) check(isQualifiedName(key), `${f}.key`, key, 'a qualified name');
    const value = optionalString(tol.value, `${f}.value`);
    if (value) check(isLabelValue(value), `${f}.value`, value, 'a label value');
    for (const k of ['operator', 'effect'] as const) {
      const s = optionalString(tol[k], `${f}.${k}`);
      if (s && s.length > LIMITS.label) fail(`${f}.${k}`, `${s.length} characters, over ${LIMITS.label}`);
    }
  });
}

/** A Node of a full-Nodes request: its name and labels are what placement reads. */
export function validateNode(node: RawObject, i: number): void {
  validateMeta(node.metadata, `Nodes.items.${i}.metadata`, { namespaced: false, uid: false });
}

/**
 * NodeNames: strings of node-name length, which is what bounds what a name can cost. Their
 * characters are not checked here (the hot path: 5,000 names): a name no node has is
 * answered "not in the cache", and the encoder escapes whatever it holds.
 */
export function validateNodeNames(names: unknown[]): asserts names is string[] {
  for (let i = 0; i < names.length; i++) {
    const n = names[i];
    if (typeof n !== 'string') fail(`NodeNames.${i}`, `expected string, received ${typeof n}`);
    if (n.length === 0 || n.length > LIMITS.subdomain) fail(`NodeNames.${i}`, `${n.length} characters: a node name has 1 to ${LIMITS.subdomain}`);
  }
}

/**
 * Nesting depth of a parsed JSON value, walked without recursion and given up on past
 * `limit`: serialising a deeper value again (full-Nodes answers) would overflow the stack.
 */
export function deeperThan(value: unknown, limit: number): boolean {
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (depth > limit) return true;
    if (Array.isArray(v)) {
      for (const x of v) if (x !== null && typeof x === 'object') stack.push([x, depth + 1]);
    } else {
      for (const k in v) {
        const x = (v as RawObject)[k];
        if (x !== null && typeof x === 'object') stack.push([x, depth + 1]);
      }
    }
  }
  return false;
}
