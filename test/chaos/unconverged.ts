// What a robustness run that did not converge says of each unsettled workload
// (docs/operations.md#robustness-runs): what an operator would look at, so that whoever reads it
// can say whose move is missing, and the one rule that tells an upstream behaviour from a failure.
import type { Obj } from '../e2e/kube.js';

/** A workload of the run, as its health record keys it (`namespace/Kind/name`). */
export interface WorkloadName { namespace: string; kind: string; name: string }

/** What the run read of an unsettled workload once its time to converge ran out. */
export interface WorkloadEvidence {
  workload: WorkloadName;
  /** The workload object (undefined: not found), and the ReplicaSets it owns (a Deployment's). */
  object: Obj | undefined;
  replicaSets: Obj[];
  /** Its pods, terminating ones too. */
  pods: Obj[];
  /** Names of the nodes that exist. */
  nodes: string[];
  /** zonekeeper's health record (/debug/health), or why there is none. */
  health: Obj | string;
  /** Events of its namespace about it, its ReplicaSets or its pods, of any age. */
  events: Obj[];
  /** When the last fault was healed, and when it was read (ms). */
  healedAt: number;
  now: number;
}

/** A workload the run could not settle: unexplained (the run fails), or an upstream behaviour its evidence shows. */
export interface Unconverged {
  /** `namespace/name: why`, as the convergence check said. */
  what: string;
  upstream?: { issue: string; evidence: string };
  /** The printout: what an operator would look at. */
  detail: string[];
}

/** kube-controller-manager's create backoff for a StatefulSet after an admission outage. */
const CREATE_BACKOFF = 'kubernetes#132805';
/** How far back the printout's Events go. */
const EVENTS_SECONDS = 60;
/** At most this many pods, ReplicaSets and Events per workload in the printout. */
const PODS_SHOWN = 12;
const REPLICA_SETS_SHOWN = 6;
const EVENTS_SHOWN = 15;

const eventTime = (e: Obj): number => Date.parse(e.lastTimestamp ?? e.eventTime ?? e.metadata?.creationTimestamp ?? '') || 0;
const ago = (now: number, at: string | number | undefined): string => at === undefined ? '?' : `${Math.round((now - (typeof at === 'number' ? at : Date.parse(at))) / 1000)}s ago`;

/** Events about the workload, its ReplicaSets or its pods (theirs by name: `<workload>-…`). */
export function aboutWorkload(events: Obj[], w: WorkloadName): Obj[] {
  return events.filter((e) => e.involvedObject?.namespace === w.namespace && (e.involvedObject.name === w.name
    || (['Pod', 'ReplicaSet'].includes(e.involvedObject.kind) && String(e.involvedObject.name).startsWith(`${w.name}-`))));
}

/** The StatefulSet's pod creates a webhook could not be called for: refused by an outage, not denied by a decision. */
export function refusedCreates(events: Obj[], w: WorkloadName): Obj[] {
  return events.filter((e) => e.involvedObject?.kind === 'StatefulSet' && e.involvedObject.name === w.name && e.involvedObject.namespace === w.namespace
    && e.reason === 'FailedCreate' && String(e.message).includes('failed calling webhook "pods.zonekeeper.io"'));
}

/**
 * The rule: an unsettled workload is upstream's only when the run's own evidence names the
 * behaviour; every other one is unexplained, and fails the run. Today one is known: a StatefulSet
 * short of pods whose creates the webhook could not be called for before the heal, with no create
 * since (kube-controller-manager's backoff, which the run retried by hand 60 s after the heal).
 */
export function classify(e: WorkloadEvidence, retriedByHand: boolean): Unconverged['upstream'] {
  if (e.workload.kind !== 'StatefulSet' || !e.object) return undefined;
  const live = e.pods.filter((p) => !p.metadata.deletionTimestamp).length;
  if (live >= (e.object.spec?.replicas ?? 0)) return undefined;
  const refused = refusedCreates(e.events, e.workload);
  const last = Math.max(0, ...refused.map(eventTime));
  if (refused.length === 0 || last > e.healedAt) return undefined; // none, or the webhook unreachable after the heal: zonekeeper's side
  const created = e.events.some((x) => x.involvedObject?.kind === 'StatefulSet' && x.involvedObject.name === e.workload.name
    && x.reason === 'SuccessfulCreate' && eventTime(x) >= last);
  if (created) return undefined;
  return {
    issue: CREATE_BACKOFF,
    evidence: `${live} of ${e.object.spec.replicas} pods; FailedCreate (webhook not called) ×${refused.reduce((n, x) => n + (x.count ?? 1), 0)}, `
      + `the last ${Math.round((e.healedAt - last) / 1000)}s before the heal, no SuccessfulCreate since; ${retriedByHand ? 'retried by hand' : 'not retried by hand'}`,
  };
}

function statusLine(o: Obj): string {
  const s = o.status ?? {};
  const counts = ['replicas', 'readyReplicas', 'availableReplicas', 'updatedReplicas'].filter((k) => k !== 'updatedReplicas' || o.kind !== 'ReplicaSet')
    .map((k) => `${k} ${s[k] ?? 0}`).join(', ');
  const revisions = s.updateRevision ? `; revisions current ${s.currentRevision}, update ${s.updateRevision}` : '';
  const conditions = (s.conditions ?? []).map((c: Obj) => `${c.type}=${c.status} ${c.reason ?? ''}${c.status === 'True' || !c.message ? '' : ` (${c.message})`}`.trim());
  return `spec.replicas ${o.spec?.replicas ?? '?'}; ${counts}; generation ${o.metadata?.generation} observed ${s.observedGeneration ?? '?'}${revisions}`
    + `${conditions.length > 0 ? `; ${conditions.join(', ')}` : ''}`;
}

function podLine(p: Obj, nodes: Set<string>, now: number): string {
  const owner = p.metadata.ownerReferences?.[0];
  const labels = p.metadata.labels ?? {};
  const revision = labels['controller-revision-hash'] ? `controller-revision-hash ${labels['controller-revision-hash']}`
    : labels['pod-template-hash'] ? `pod-template-hash ${labels['pod-template-hash']}` : 'no revision label';
  const node = p.spec?.nodeName ? `node ${p.spec.nodeName}${nodes.has(p.spec.nodeName) ? '' : ' (gone)'}` : `unbound${p.spec?.schedulingGates?.length ? ', gated' : ''}`;
  const ready = (p.status?.conditions ?? []).find((c: Obj) => c.type === 'Ready')?.status ?? 'unknown';
  const deleting = p.metadata.deletionTimestamp
    ? `, deleting since ${ago(now, p.metadata.deletionTimestamp)}${p.metadata.finalizers?.length ? ` (finalizers ${p.metadata.finalizers.join(', ')})` : ''}` : '';
  return `pod ${p.metadata.name} (made ${ago(now, p.metadata.creationTimestamp)}): ${owner ? `${owner.kind} ${owner.name}` : 'no owner'}, ${revision}, ${node}, `
    + `${p.status?.phase ?? 'no phase'}, Ready=${ready}${deleting}`;
}

function healthLine(h: Obj | string): string {
  if (typeof h === 'string') return `zonekeeper: ${h}`;
  const causes = Object.entries(h.causes ?? {}).filter(([, n]) => Number(n) > 0).map(([c, n]) => `${c} ${n}`).join(', ');
  const zones = Object.entries(h.perZone ?? {}).map(([z, c]) => `${z} ${(c as Obj).pods}/${(c as Obj).want}`).join(', ');
  const down = (h.disruption?.down ?? []).map((d: Obj) => `${d.zone} ×${d.count}`).join(', ');
  return `zonekeeper: ${h.reason}; atRisk ${h.atRisk}; replicas ${h.replicas}, pending ${h.pending}, missing ${h.missing}, settling ${h.settling}, `
    + `off-pin ${h.offPin}${causes ? ` (${causes})` : ''}; ${h.domain ?? 'zone'}s ${zones || 'none'}${down ? `; seats down ${down}` : ''}`;
}

/** Shows the first `cap` lines, then how many more there were (`last`: the last ones, after how many came before). */
function capped(lines: string[], cap: number, what: string, last = false): string[] {
  if (lines.length <= cap) return lines;
  const more = `… ${lines.length - cap} ${last ? 'earlier' : 'more'} ${what}`;
  return last ? [more, ...lines.slice(-cap)] : [...lines.slice(0, cap), more];
}

/**
 * The printout for one unsettled workload: its owner chain's counts and conditions (a
 * Deployment's live ReplicaSets, the newest first), each pod, zonekeeper's health record, and the
 * last minute's Events about it, oldest first. Bounded: a cap on each list.
 */
export function describeUnsettled(e: WorkloadEvidence): string[] {
  const { workload: w, now } = e;
  const nodes = new Set(e.nodes);
  const object = e.object ? `${w.kind} ${w.name}: ${statusLine(e.object)}` : `${w.kind} ${w.name}: not found`;
  const sets = [...e.replicaSets].sort((a, b) => Number(b.metadata.annotations?.['deployment.kubernetes.io/revision'] ?? 0) - Number(a.metadata.annotations?.['deployment.kubernetes.io/revision'] ?? 0));
  const live = sets.filter((rs) => (rs.spec?.replicas ?? 0) > 0 || (rs.status?.replicas ?? 0) > 0);
  const setLines = live.map((rs) => `ReplicaSet ${rs.metadata.name} (revision ${rs.metadata.annotations?.['deployment.kubernetes.io/revision'] ?? '?'}): ${statusLine({ kind: 'ReplicaSet', ...rs })}`);
  const idle = sets.length - live.length;
  const pods = [...e.pods].sort((a, b) => String(a.metadata.name).localeCompare(String(b.metadata.name))).map((p) => podLine(p, nodes, now));
  const events = e.events.filter((x) => now - eventTime(x) <= EVENTS_SECONDS * 1000).sort((a, b) => eventTime(a) - eventTime(b))
    .map((x) => `event ${ago(now, eventTime(x))} ${x.type} ${x.reason} ${x.involvedObject?.kind}/${x.involvedObject?.name}`
      + ` by ${x.reportingComponent || x.source?.component || '?'}${(x.count ?? 1) > 1 ? ` ×${x.count}` : ''}: ${String(x.message ?? '').slice(0, 200)}`);
  return [
    object,
    ...capped(setLines, REPLICA_SETS_SHOWN, 'ReplicaSets'),
    ...(idle > 0 ? [`ReplicaSets at 0: ${idle}`] : []),
    ...(pods.length === 0 ? ['no pods'] : capped(pods, PODS_SHOWN, 'pods')),
    healthLine(e.health),
    ...(events.length === 0 ? [`no Events about it in the last ${EVENTS_SECONDS}s`] : capped(events, EVENTS_SHOWN, 'Events', true)),
  ];
}

/** The run's lines for what did not converge: each workload, the rule's verdict on it, then its printout indented. */
export function printUnconverged(list: Unconverged[]): string[] {
  const unexplained = list.filter((u) => !u.upstream).length;
  return [
    `${list.length} unsettled: ${unexplained} unexplained (the run fails), ${list.length - unexplained} upstream's by the run's evidence`,
    ...list.flatMap((u) => [
      `  ${u.what}: ${u.upstream ? `upstream: ${u.upstream.issue} (${u.upstream.evidence})` : 'unexplained'}`,
      ...u.detail.map((l) => `    ${l}`),
    ]),
  ];
}
