// What a robustness run that did not converge says of each unsettled workload
// (docs/operations.md#robustness-runs): what an operator would look at, so that whoever reads it
// can say whose move is missing, and the one rule that tells an upstream behaviour from a failure.
import type { Kube, Obj } from '../e2e/kube.js';

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
/** kube-controller-manager's ReplicaSet expectation of a pod it made that its pod informer never saw (made and gone while it listed again). */
const LOST_EXPECTATION = 'kubernetes#129795';
/** How long kube-controller-manager waits on an expectation before it lapses (its ExpectationsTimeout). */
const EXPECTATION_LAPSES_MS = 5 * 60_000;
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

/** A ReplicaSet that stopped moving: its live pods, its spec, the pod it made that is gone, and when it made it (ms). */
interface StalledReplicaSet { name: string; live: number; want: number; lost: string; madeAt: number }

/**
 * A Deployment's ReplicaSets that stopped moving: off their spec.replicas in live pods, each made
 * a pod that is gone without its deleting it, and has made, deleted or failed none since.
 * kube-controller-manager waits to see every pod it made; one made and gone while its pod informer
 * listed again (after kube-apiserver restarts) is never seen, so the ReplicaSet waits until the
 * expectation lapses (5 minutes) and then until something queues it again.
 */
function stalledReplicaSets(e: Pick<WorkloadEvidence, 'replicaSets' | 'pods' | 'events'>): StalledReplicaSet[] {
  const out: StalledReplicaSet[] = [];
  for (const rs of e.replicaSets) {
    const name = String(rs.metadata.name);
    const mine = e.events.filter((x) => x.involvedObject?.kind === 'ReplicaSet' && x.involvedObject.name === name);
    const podOf = (x: Obj, reason: string) => x.reason === reason ? /pod: (\S+)/.exec(String(x.message))?.[1] : undefined;
    const deleted = new Set(mine.map((x) => podOf(x, 'SuccessfulDelete')).filter(Boolean));
    const present = new Set(e.pods.map((p) => p.metadata.name));
    const lost = mine.filter((x) => { const p = podOf(x, 'SuccessfulCreate'); return p && !present.has(p) && !deleted.has(p); })
      .sort((a, b) => eventTime(b) - eventTime(a))[0];
    if (!lost || mine.some((x) => eventTime(x) > eventTime(lost) && ['SuccessfulCreate', 'SuccessfulDelete', 'FailedCreate', 'FailedDelete'].includes(x.reason))) continue;
    const live = e.pods.filter((p) => !p.metadata.deletionTimestamp && (p.metadata.ownerReferences ?? []).some((r: Obj) => r.kind === 'ReplicaSet' && r.name === name)).length;
    const want = rs.spec?.replicas ?? 0;
    if (live !== want) out.push({ name, live, want, lost: podOf(lost, 'SuccessfulCreate')!, madeAt: eventTime(lost) });
  }
  return out;
}

/**
 * What an operator does for a Deployment's stalled ReplicaSet once its expectation has lapsed: an
 * annotation queues it again, and it makes or deletes its pods. Returns `namespace/name: why` of
 * each Deployment retried.
 */
export async function retryStalledReplicaSets(kube: Kube, deployments: WorkloadName[], now: number): Promise<string[]> {
  const out: string[] = [];
  for (const w of deployments) {
    const object = await kube.get('apps/v1', 'Deployment', w.namespace, w.name).catch(() => undefined);
    if (!object) continue;
    const [sets, pods, events] = await Promise.all([kube.list('apps/v1', 'ReplicaSet', w.namespace), kube.list('v1', 'Pod', w.namespace, `app=${w.name}`), kube.list('v1', 'Event', w.namespace)]);
    const replicaSets = sets.filter((rs) => (rs.metadata.ownerReferences ?? []).some((r: Obj) => r.uid === object.metadata.uid));
    const lapsed = stalledReplicaSets({ replicaSets, pods, events: aboutWorkload(events, w) }).filter((s) => now - s.madeAt >= EXPECTATION_LAPSES_MS);
    for (const s of lapsed) {
      await kube.patch('apps/v1', 'ReplicaSet', w.namespace, s.name, { metadata: { annotations: { 'chaos.zonekeeper.io/retried-at': String(now) } } });
    }
    if (lapsed.length > 0) out.push(`${w.namespace}/${w.name}: ${lapsed.map((s) => `ReplicaSet ${s.name} at ${s.live} of ${s.want} pods since it made ${s.lost} ${ago(now, s.madeAt)}`).join(', ')}`);
  }
  return out;
}

/**
 * The rule: an unsettled workload is upstream's only when the run's own evidence names the
 * behaviour; every other one is unexplained, and fails the run. Two are known: a StatefulSet
 * short of pods whose creates the webhook could not be called for before the heal, with no create
 * since (kube-controller-manager's backoff, which the run retried by hand 60 s after the heal); a
 * Deployment with a ReplicaSet that stopped moving (stalledReplicaSets: an expectation never met).
 */
export function classify(e: WorkloadEvidence, retriedByHand: boolean): Unconverged['upstream'] {
  if (e.workload.kind === 'Deployment' && e.object) {
    const stalled = stalledReplicaSets(e);
    if (stalled.length === 0) return undefined;
    return {
      issue: LOST_EXPECTATION,
      evidence: stalled.map((s) => `ReplicaSet ${s.name} at ${s.live} of ${s.want} pods, made ${s.lost} ${ago(e.now, s.madeAt)} (gone, not deleted by it), `
        + 'no create or delete since').join('; ') + `; ${retriedByHand ? 'retried by hand' : 'not retried by hand'}`,
    };
  }
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
