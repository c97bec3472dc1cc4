// The promises a robustness run checks (docs/operations.md#robustness-runs), judged from the API
// server's objects alone: a pure function of one observation, so a test can hold it to cases.
type Obj = Record<string, any>;

const ZONE = 'topology.kubernetes.io/zone';
const ZONES_ANNOTATION = 'zonekeeper.io/zones';
const INSTANCE_ID = 'zonekeeper.io/instance-id';

/** What the run asks of each workload it created. */
export type RunPromise =
  /** Each bound pod of a StatefulSet in its ordinal's zone of the frozen list, or its bound volume's. */
  | { kind: 'pinned'; namespace: string; name: string; claim?: string }
  /**
   * At most `max[zone]` live, bound pods of the app in each zone named (a maxReplicas, a subset's
   * quota); `perRevision`: of each pod-template revision (a WorkloadSpread's quota, as OpenKruise counts it).
   */
  | { kind: 'maximum'; namespace: string; name: string; max: Readonly<Record<string, number>>; perRevision?: boolean }
  /** Instance IDs unique among the live pods; once the run has settled, in [0, replicas) too. */
  | { kind: 'instance-ids'; namespace: string; name: string }
  /** Never evicted by repair: its pods are held by their bound volumes. */
  | { kind: 'never-evicted'; namespace: string; name: string }
  /**
   * Once quiet, no pod unbound for longer than `afterSeconds` without a reason naming what it waits
   * for: a `ZoneGateWaiting` Event while the zone gate holds it, else kube-scheduler's
   * PodScheduled=False (Unschedulable) message, which carries the extender's filter reasons.
   */
  | { kind: 'pending-reason'; namespace: string; name: string; afterSeconds: number }
  /**
   * Repair (opted in): never a second eviction while a pod created since the first is not Ready
   * yet, and evictions within a token bucket of `perMinute` (refilled by `perMinute`/60 a second,
   * full again in a new Lease holder).
   */
  | { kind: 'repair-disruptions'; namespace: string; name: string; perMinute: number }
  /**
   * Opted in to the zone disruption budget: no voluntary eviction of a pod in one zone while a seat
   * of another zone, emptied by an earlier eviction, had no Ready pod again.
   */
  | { kind: 'zone-at-a-time'; namespace: string; name: string };

/**
 * A voluntary eviction the API server showed (evictions.ts): a drain's, a zone-by-zone rollout's,
 * Karpenter's, repair's; `emptyElsewhere`: the seats of its workload (`app`) in other zones that
 * earlier evictions had emptied and no Ready pod filled yet, in the API server's order.
 */
export interface Disruption { namespace: string; app: string; pod: string; uid: string; zone: string; at: number; emptyElsewhere: string[] }

/** One read of the cluster: the objects of the run's namespaces. */
export interface Observation {
  pods: readonly Obj[];
  nodes: readonly Obj[];
  workloads: readonly Obj[];
  volumes: readonly Obj[];
  claims: readonly Obj[];
  /** zonekeeper's `Rebalanced` Events. */
  evictions: readonly Obj[];
  /** zonekeeper's `ZoneGateWaiting` Events. */
  gateWaits: readonly Obj[];
  /** When each Lease holder seen so far acquired it (ms since the epoch). */
  handovers: readonly number[];
  /** When the read was made (ms since the epoch). */
  at: number;
  /** The run's voluntary evictions so far, oldest first. */
  disruptions?: readonly Disruption[];
}

export interface Violation {
  /** The promise broken; `no-crash`: a zonekeeper process ended by itself; `no-5xx`: it answered a request 500. */
  promise: RunPromise['kind'] | 'no-crash' | 'no-5xx';
  /** What it is about (namespace/pod, or namespace/workload): the same violation seen twice has the same subject. */
  subject: string;
  detail: string;
}

const live = (p: Obj) => !p.metadata.deletionTimestamp && p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed';
const appOf = (p: Obj) => p.metadata.labels?.app as string | undefined;

/** How far the run has calmed down: its faults over since `since` (ms); `settled`: every workload at its layout too. */
export interface Calm { since: number; settled: boolean }

/** Every broken promise in one observation; `calm`: the run's faults are over (undefined: they are not). */
export function brokenPromises(promises: readonly RunPromise[], o: Observation, calm?: Calm): Violation[] {
  const quiet = calm?.settled === true;
  const zoneOfNode = new Map(o.nodes.map((n) => [n.metadata.name as string, n.metadata.labels?.[ZONE] as string | undefined]));
  const podsOf = (namespace: string, name: string) => o.pods.filter((p) => p.metadata.namespace === namespace && appOf(p) === name);
  const out: Violation[] = [];
  for (const pr of promises) {
    const pods = podsOf(pr.namespace, pr.name);
    const subject = (p: Obj) => `${p.metadata.namespace}/${p.metadata.name}`;
    if (pr.kind === 'pinned') {
      const w = o.workloads.find((x) => x.kind === 'StatefulSet' && x.metadata.namespace === pr.namespace && x.metadata.name === pr.name);
      const list = String(w?.metadata.annotations?.[ZONES_ANNOTATION] ?? '').split(',').filter(Boolean);
      for (const p of pods) {
        const zone = p.spec.nodeName ? zoneOfNode.get(p.spec.nodeName) : undefined;
        if (zone === undefined) continue;
        const ordinal = Number(String(p.metadata.name).split('-').pop());
        const volumeZone = pr.claim ? boundVolumeZone(o, pr.namespace, `${pr.claim}-${p.metadata.name}`) : undefined;
        const allowed = volumeZone ?? (list.length > 0 ? list[ordinal % list.length] : undefined);
        // A pod bound before its list is seen frozen cannot be judged yet; the next observation will.
        if (allowed !== undefined && zone !== allowed) {
          out.push({ promise: 'pinned', subject: subject(p), detail: `ordinal ${ordinal} bound in ${zone}, allowed ${allowed} (${volumeZone ? 'its volume' : `list ${list.join(',')}`})` });
        }
      }
    } else if (pr.kind === 'maximum') {
      const counts = new Map<string, string[]>();
      for (const p of pods) {
        const zone = p.spec.nodeName && live(p) ? zoneOfNode.get(p.spec.nodeName) : undefined;
        const revision = pr.perRevision ? `/${p.metadata.labels?.['pod-template-hash'] ?? ''}` : '';
        if (zone !== undefined) counts.set(zone + revision, [...(counts.get(zone + revision) ?? []), p.metadata.name]);
      }
      for (const [zone, max] of Object.entries(pr.max)) {
        for (const [where, names] of counts) {
          if ((where === zone || where.startsWith(`${zone}/`)) && names.length > max) {
            out.push({ promise: 'maximum', subject: `${pr.namespace}/${pr.name}@${where}`, detail: `${names.length} pods in ${where}, at most ${max}: ${names.join(', ')}` });
          }
        }
      }
    } else if (pr.kind === 'instance-ids') {
      const holders = new Map<string, string[]>();
      for (const p of pods.filter(live)) {
        const id = p.metadata.annotations?.[INSTANCE_ID];
        if (id !== undefined) holders.set(id, [...(holders.get(id) ?? []), p.metadata.name]);
      }
      for (const [id, names] of holders) {
        if (names.length > 1) out.push({ promise: 'instance-ids', subject: `${pr.namespace}/${pr.name}#${id}`, detail: `ID ${id} held by ${names.join(', ')}` });
      }
      const w = o.workloads.find((x) => x.kind === 'Deployment' && x.metadata.namespace === pr.namespace && x.metadata.name === pr.name);
      const replicas = Number(w?.spec.replicas ?? 0);
      if (quiet) {
        for (const [id, names] of holders) {
          if (!(Number(id) >= 0 && Number(id) < replicas)) out.push({ promise: 'instance-ids', subject: `${pr.namespace}/${pr.name}#${id}`, detail: `ID ${id} of ${names.join(', ')} outside [0, ${replicas})` });
        }
      }
    } else if (pr.kind === 'pending-reason') {
      if (calm) out.push(...unexplainedPending(pr, pods, o, calm.since));
    } else if (pr.kind === 'repair-disruptions') {
      out.push(...repairBeyondLimits(pr, pods, o));
    } else if (pr.kind === 'zone-at-a-time') {
      out.push(...twoZonesDisrupted(pr, o.disruptions ?? []));
    } else {
      for (const e of o.evictions) {
        const pod = e.involvedObject;
        if (pod?.kind === 'Pod' && pod.namespace === pr.namespace && String(pod.name).startsWith(`${pr.name}-`)) {
          out.push({ promise: 'never-evicted', subject: `${pr.namespace}/${pod.name}`, detail: `evicted by repair (${e.message}) though its volume holds it` });
        }
      }
    }
  }
  return out;
}

const time = (t: string | undefined) => (t ? Date.parse(t) : NaN);
const GATE = 'zonekeeper.io/zone';

/** Pods unbound for longer than the promise allows since the run went quiet, without a reason that names what they wait for. */
function unexplainedPending(pr: Extract<RunPromise, { kind: 'pending-reason' }>, pods: readonly Obj[], o: Observation, quietSince: number): Violation[] {
  const out: Violation[] = [];
  for (const p of pods.filter((x) => live(x) && !x.spec.nodeName)) {
    const since = Math.max(time(p.metadata.creationTimestamp), quietSince);
    if (!(o.at - since > pr.afterSeconds * 1000)) continue;
    const name = `${p.metadata.namespace}/${p.metadata.name}`;
    const waited = `Pending ${Math.round((o.at - since) / 1000)}s since the run went quiet`;
    if ((p.spec.schedulingGates ?? []).some((g: Obj) => g.name === GATE)) {
      const told = o.gateWaits.some((e) => e.involvedObject?.kind === 'Pod' && e.involvedObject.namespace === p.metadata.namespace
        && (e.involvedObject.uid ? e.involvedObject.uid === p.metadata.uid : e.involvedObject.name === p.metadata.name));
      if (!told) out.push({ promise: 'pending-reason', subject: name, detail: `${waited}, held by the zone gate without a ZoneGateWaiting Event` });
      continue;
    }
    const scheduled = (p.status?.conditions ?? []).find((c: Obj) => c.type === 'PodScheduled');
    if (scheduled?.status !== 'False' || scheduled.reason !== 'Unschedulable' || !String(scheduled.message ?? '').trim()) {
      const said = scheduled ? `PodScheduled ${scheduled.status} ${scheduled.reason ?? ''}: "${scheduled.message ?? ''}"` : 'no PodScheduled condition';
      out.push({ promise: 'pending-reason', subject: name, detail: `${waited}, no reason kube-scheduler gives (${said})` });
    }
  }
  return out;
}

/** One second: Event and creation times are in whole seconds. */
const SECOND = 1000;

/** Repair's evictions of the workload's pods (its `Rebalanced` Events on them) past its budget, or one while the previous one's replacement was not Ready. */
function repairBeyondLimits(pr: Extract<RunPromise, { kind: 'repair-disruptions' }>, pods: readonly Obj[], o: Observation): Violation[] {
  const out: Violation[] = [];
  const evictions = o.evictions
    .filter((e) => e.involvedObject?.kind === 'Pod' && e.involvedObject.namespace === pr.namespace && String(e.involvedObject.name).startsWith(`${pr.name}-`))
    .map((e) => ({ pod: String(e.involvedObject.name), at: time(e.firstTimestamp ?? e.eventTime) }))
    .filter((e) => !Number.isNaN(e.at))
    .sort((a, b) => a.at - b.at);
  // The budget: a token bucket of perMinute, spent one an eviction; the Event's whole second may be up to one early.
  const rate = pr.perMinute / 60_000;
  let tokens = pr.perMinute;
  let last = -Infinity;
  const handovers = [...o.handovers].sort((a, b) => a - b);
  for (const e of evictions) {
    if (handovers.some((h) => h > last && h <= e.at + SECOND)) tokens = pr.perMinute;
    else tokens = Math.min(pr.perMinute, tokens + (e.at - last) * rate);
    last = e.at;
    tokens -= 1;
    if (tokens < -rate * SECOND) {
      out.push({ promise: 'repair-disruptions', subject: `${pr.namespace}/${pr.name}@${new Date(e.at).toISOString()}`, detail: `eviction of ${e.pod} beyond rebalance.evictionsPerMinute (${pr.perMinute}): ${evictions.filter((x) => x.at > e.at - 60_000 && x.at <= e.at).length} in the minute up to it` });
    }
  }
  // One at a time: a pod created between two evictions (the first one's replacement, or any) Ready before the second.
  for (const [i, e] of evictions.entries()) {
    const previous = evictions[i - 1];
    if (!previous) continue;
    for (const p of pods.filter(live)) {
      const created = time(p.metadata.creationTimestamp);
      // zonekeeper's cache may show a pod a moment after the API server made it.
      if (!(created >= previous.at && created <= e.at - 2 * SECOND)) continue;
      const ready = (p.status?.conditions ?? []).find((c: Obj) => c.type === 'Ready' && c.status === 'True');
      const readyAt = ready ? time(ready.lastTransitionTime) : Infinity;
      if (readyAt > e.at + SECOND) {
        out.push({ promise: 'repair-disruptions', subject: `${pr.namespace}/${e.pod}`, detail: `evicted while ${p.metadata.name}, created after the eviction of ${previous.pod}, was not Ready (${ready ? `Ready at ${ready.lastTransitionTime}` : 'not Ready yet'})` });
        break;
      }
    }
  }
  return out;
}

/** Evictions of the workload's pods in a zone while a seat of another zone, emptied by an earlier eviction, had no Ready pod again. */
export function twoZonesDisrupted(pr: Extract<RunPromise, { kind: 'zone-at-a-time' }>, disruptions: readonly Disruption[]): Violation[] {
  return disruptions.filter((d) => d.namespace === pr.namespace && d.app === pr.name && d.emptyElsewhere.length > 0).map((d) => ({
    promise: 'zone-at-a-time', subject: `${pr.namespace}/${d.pod}`,
    detail: `evicted in ${d.zone} at ${new Date(d.at).toISOString()} while the seats of ${d.emptyElsewhere.join(', ')}, emptied by earlier evictions, had no Ready pod yet`,
  }));
}

/** The zone of the volume a claim is bound to, if it is. */
function boundVolumeZone(o: Observation, namespace: string, claim: string): string | undefined {
  const pvc = o.claims.find((c) => c.metadata.namespace === namespace && c.metadata.name === claim);
  const pv = pvc?.spec.volumeName ? o.volumes.find((v) => v.metadata.name === pvc.spec.volumeName) : undefined;
  const terms = pv?.spec.nodeAffinity?.required?.nodeSelectorTerms ?? [];
  for (const t of terms) for (const e of t.matchExpressions ?? []) if (e.key === ZONE && e.operator === 'In' && e.values?.length === 1) return e.values[0];
  return undefined;
}

/** Violations seen in both of two reads: a second read before anything is called a violation. */
export function confirmed(first: readonly Violation[], second: readonly Violation[]): Violation[] {
  const again = new Set(second.map((v) => `${v.promise}\u0000${v.subject}`));
  return first.filter((v) => again.has(`${v.promise}\u0000${v.subject}`));
}
