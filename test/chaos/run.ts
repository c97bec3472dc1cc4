// A robustness run (docs/operations.md#robustness-runs): a real control plane driven through a
// seeded random walk of operations and faults while every promise is checked, then healed and
// given time to converge. Prints its seed and figures; the history goes to a file.
//   npm run test:chaos -- --seed 7 --seconds 3600 [--version 1.30] [--history FILE]
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { seededRandom } from '../support/random.js';
import { ControlPlane, kubeVersions } from '../e2e/controlPlane.js';
import type { Kube } from '../e2e/kube.js';
import { recordPodHistory } from './podHistory.js';
import { brokenPromises, confirmed, type Calm, type Observation, type Violation } from './promises.js';
import { aboutWorkload, classify, describeUnsettled, printUnconverged, refusedCreates, retryStalledReplicaSets, type Unconverged, type WorkloadName } from './unconverged.js';
import { federationRun } from './federationRun.js';
import { walker } from './walk.js';
import { ADMITTED_NS, buildWorld, failedRequests, internalErrors, leads, NS, type World } from './world.js';

export interface RunOptions {
  seed: number;
  /** How long the walk lasts. */
  seconds: number;
  /** A kube-apiserver binary folder (kubeVersions()). */
  bin: string;
  history: string;
  /** How long the healed cluster has to reach every layout. */
  convergeSeconds?: number;
}

export interface RunFigures {
  seed: number;
  version: string;
  operations: number;
  faults: number;
  checks: number;
  violations: Violation[];
  /** Seconds from the last heal until every workload held its layout, or undefined: not within convergeSeconds. */
  convergedAfter: number | undefined;
  /** What was still wrong when the time to converge ran out, each with what an operator would look at and the rule's verdict (unconverged.ts). */
  unconverged: Unconverged[];
  /** Repair's evictions (pods with its `Rebalanced` Event) and the pods the zone gate said it kept waiting (`ZoneGateWaiting`), seen in the run. */
  repairEvictions: number;
  gateWaits: number;
  /** The Cluster Autoscaler in the run, or why none is. */
  autoscaler: string;
  /** Karpenter in the run, or why none is. */
  karpenter: string;
  /** Voluntary evictions the API server showed (evictions.ts), by workload: what the zone-at-a-time promise judged. */
  voluntaryEvictions: Record<string, number>;
  /** StatefulSets the run retried by hand after an admission outage (retryRefusedCreates), as operations tells an operator. */
  retriedByHand: string[];
  /** Processes that ended by themselves and were started again (kube-scheduler's "cache is corrupted"). */
  selfExits: string[];
  maxRssMiB: number;
  history: string;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** zonekeeper's resident memory above this is a leak, not a working set (a run's cluster is small). */
const RSS_LIMIT_MIB = 512;

/** One read; `handovers` gathers when each Lease holder seen acquired it (a new holder starts with a full eviction budget). */
async function observe(kube: Kube, handovers: Set<number>, disruptions: Observation['disruptions']): Promise<Observation> {
  const [pods, admittedPods, nodes, sets, admittedSets, deployments, volumes, claims, events, admittedEvents, leases] = await Promise.all([
    kube.list('v1', 'Pod', NS), kube.list('v1', 'Pod', ADMITTED_NS), kube.list('v1', 'Node'),
    kube.list('apps/v1', 'StatefulSet', NS), kube.list('apps/v1', 'StatefulSet', ADMITTED_NS), kube.list('apps/v1', 'Deployment', NS),
    kube.list('v1', 'PersistentVolume'), kube.list('v1', 'PersistentVolumeClaim', NS), kube.list('v1', 'Event', NS), kube.list('v1', 'Event', ADMITTED_NS),
    kube.list('coordination.k8s.io/v1', 'Lease', 'zonekeeper-system'),
  ]);
  for (const l of leases) if (l.spec?.acquireTime) handovers.add(Date.parse(l.spec.acquireTime));
  const kinded = (kind: string) => (o: Record<string, unknown>) => ({ ...o, kind });
  const allEvents = [...events, ...admittedEvents];
  return {
    pods: [...pods, ...admittedPods], nodes,
    workloads: [...sets.map(kinded('StatefulSet')), ...admittedSets.map(kinded('StatefulSet')), ...deployments.map(kinded('Deployment'))],
    volumes, claims, evictions: allEvents.filter((e) => e.reason === 'Rebalanced'), gateWaits: allEvents.filter((e) => e.reason === 'ZoneGateWaiting'),
    handovers: [...handovers], at: Date.now(), disruptions,
  };
}

function rssMiB(pid: number): number {
  try {
    const kb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
    return Math.round(kb / 1024);
  } catch {
    return 0;
  }
}

/** A workload of the run as observed: its object and its live pods. */
function observed(w: World['workloads'][number], o: Observation) {
  return {
    spec: o.workloads.find((x) => x.kind === w.kind && x.metadata.namespace === w.namespace && x.metadata.name === w.name),
    pods: o.pods.filter((p) => p.metadata.namespace === w.namespace && p.metadata.labels?.app === w.name && !p.metadata.deletionTimestamp),
  };
}

/** The replica holding the Lease (the primary when neither says so). */
async function holderOf(world: World) {
  return (await leads(world.replicas.primary)) || !(await leads(world.replicas.standby)) ? world.replicas.primary : world.replicas.standby;
}

/** A workload keeping the cluster from its layout, and why (undefined workload: the check itself could not tell). */
interface Unsettled { workload?: WorkloadName; what: string }
const lineOf = (u: Unsettled) => u.workload ? `${u.workload.namespace}/${u.workload.name}: ${u.what}` : u.what;

/**
 * What keeps a healed cluster from its layout: a workload short of live pods bound to nodes that
 * exist, or, where repair is opted in, pods off their seats by zonekeeper's own record (those a
 * volume holds excepted: data does not move). Without repair a pod placed during an outage stays.
 */
async function unsettled(world: World, o: Observation): Promise<Unsettled[]> {
  const out: Unsettled[] = [];
  const nodes = new Set(o.nodes.map((n) => n.metadata.name as string));
  for (const w of world.workloads) {
    const { spec, pods } = observed(w, o);
    const bound = pods.filter((p) => nodes.has(p.spec.nodeName)).length;
    if (bound !== spec?.spec.replicas || pods.length !== spec?.spec.replicas) out.push({ workload: w, what: `${bound} bound of ${pods.length} pods, ${spec?.spec.replicas} replicas` });
  }
  const health = await (await fetch(`${(await holderOf(world)).admin}/debug/health`)).json() as { workloads?: { key: string; offPin: number; causes: Record<string, number>; reason: string }[] };
  for (const w of world.workloads.filter((x) => x.repaired)) {
    const h = health.workloads?.find((x) => x.key === `${w.namespace}/${w.kind}/${w.name}`);
    if (h && h.offPin - (h.causes.volume ?? 0) > 0) out.push({ workload: w, what: h.reason });
  }
  return out;
}

/** For each workload still unsettled, what an operator would look at, read now, and the rule's verdict on it (unconverged.ts). */
async function explainUnsettled(world: World, left: Unsettled[], healedAt: number, retried: string[]): Promise<Unconverged[]> {
  const { kube } = world;
  const holder = await holderOf(world);
  const nodes = (await kube.list('v1', 'Node')).map((n) => n.metadata.name as string);
  const byWorkload = new Map<string, { workload: WorkloadName; what: string[] }>();
  const out: Unconverged[] = left.filter((u) => !u.workload).map((u) => ({ what: u.what, detail: [] }));
  for (const u of left.filter((x) => x.workload)) {
    const key = `${u.workload!.namespace}/${u.workload!.kind}/${u.workload!.name}`;
    byWorkload.set(key, { workload: u.workload!, what: [...byWorkload.get(key)?.what ?? [], u.what] });
  }
  for (const [key, { workload: w, what }] of byWorkload) {
    const [object, sets, pods, events, health] = await Promise.all([
      kube.get('apps/v1', w.kind, w.namespace, w.name).catch(() => undefined),
      w.kind === 'Deployment' ? kube.list('apps/v1', 'ReplicaSet', w.namespace) : [],
      kube.list('v1', 'Pod', w.namespace, `app=${w.name}`),
      kube.list('v1', 'Event', w.namespace),
      fetch(`${holder.admin}/debug/health?namespace=${w.namespace}`).then((r) => r.json() as Promise<{ workloads?: { key: string }[] }>)
        .then((b) => b.workloads?.find((h) => h.key === key) ?? 'no health record for it on the Lease holder')
        .catch((err: Error) => `health not read from the Lease holder: ${err.message}`),
    ]);
    const evidence = {
      workload: w, object, pods, nodes, health, events: aboutWorkload(events, w), healedAt, now: Date.now(),
      replicaSets: sets.filter((rs) => (rs.metadata.ownerReferences ?? []).some((r: { uid: string }) => r.uid === object?.metadata.uid)),
    };
    out.push({ what: `${w.namespace}/${w.name}: ${what.join('; ')}`, upstream: classify(evidence, retried.includes(`${w.namespace}/${w.name}`)), detail: describeUnsettled(evidence) });
  }
  return out;
}

/** How long after the heal a StatefulSet without its pods is retried by hand. */
const RETRY_BY_HAND_MS = 60_000;

/**
 * Pod creates the webhook refused during an admission outage, each pod event retrying at once,
 * can push kube-controller-manager's backoff for a StatefulSet to 1000 s (kubernetes#132805).
 * A StatefulSet still short of pods a minute after the heal, with a FailedCreate saying the
 * webhook could not be called (not a denial), is annotated as docs/operations.md tells an
 * operator to: an update is retried at once.
 */
async function retryRefusedCreates(world: World, o: Observation, retried: string[]): Promise<string[]> {
  const out: string[] = [];
  for (const w of world.workloads.filter((x) => x.kind === 'StatefulSet' && !retried.includes(`${x.namespace}/${x.name}`))) {
    const { spec, pods } = observed(w, o);
    if (!spec || pods.length >= spec.spec.replicas) continue;
    if (refusedCreates(await world.kube.list('v1', 'Event', w.namespace), w).length === 0) continue;
    await world.kube.patch('apps/v1', 'StatefulSet', w.namespace, w.name, { metadata: { annotations: { 'chaos.zonekeeper.io/retried-at': String(Date.now()) } } });
    out.push(`${w.namespace}/${w.name}`);
  }
  return out;
}

/** Each pod not bound and why, by kube-scheduler's condition and zonekeeper's explanation: what a run that did not converge waits on. */
async function pendingReasons(world: World): Promise<string[]> {
  const holder = await holderOf(world);
  const out: string[] = [];
  for (const ns of [NS, ADMITTED_NS]) {
    for (const p of await world.kube.list('v1', 'Pod', ns)) {
      if (p.spec.nodeName) continue;
      const scheduled = (p.status?.conditions ?? []).find((c: { type: string }) => c.type === 'PodScheduled');
      const explain = await (await fetch(`${holder.admin}/debug/explain?pod=${ns}/${p.metadata.name}`)).json().catch(() => ({})) as { summary?: string };
      out.push(`${ns}/${p.metadata.name} (created ${p.metadata.creationTimestamp}, gates ${JSON.stringify(p.spec.schedulingGates ?? [])}, `
        + `nodeSelector ${JSON.stringify(p.spec.nodeSelector ?? {})}): kube-scheduler: ${scheduled?.message ?? 'no PodScheduled condition'}; zonekeeper: ${explain.summary ?? '?'}`);
    }
  }
  return out;
}

export async function robustnessRun(o: RunOptions): Promise<RunFigures> {
  const rng = seededRandom(o.seed);
  const cp = new ControlPlane(o.bin);
  const version = kubeVersions().find((k) => k.bin === o.bin)?.version ?? o.bin;
  writeFileSync(o.history, '');
  const log = (kind: string, what: unknown) => appendFileSync(o.history, `${JSON.stringify({ t: Date.now(), kind, what })}\n`);
  log('start', { seed: o.seed, seconds: o.seconds, version });
  const figures: RunFigures = {
    seed: o.seed, version, operations: 0, faults: 0, checks: 0, violations: [], convergedAfter: undefined, unconverged: [], repairEvictions: 0, gateWaits: 0, autoscaler: 'not started', karpenter: 'not started', voluntaryEvictions: {}, retriedByHand: [], selfExits: [], maxRssMiB: 0,
    history: o.history,
  };
  let world: World | undefined;
  const kubelets: (() => Promise<void>)[] = [];
  try {
    world = await buildWorld(cp, rng.below);
    const { kube, disruptions } = world;
    // The run's pods, change by change, next to the history: what a violation is read against.
    writeFileSync(`${o.history}.pods`, '');
    kubelets.push(recordPodHistory(kube, NS, `${o.history}.pods`));
    figures.autoscaler = typeof world.autoscaler === 'string' ? `none (${world.autoscaler})` : 'the Cluster Autoscaler (kwok provider) grows the pool grow';
    figures.karpenter = typeof world.karpenter === 'string' ? `none (${world.karpenter})` : 'Karpenter (kwok provider) grows the pool kp';
    kubelets.push(kube.kubelet(NS), kube.kubelet(ADMITTED_NS));
    // What kube-controller-manager's pod GC does (this control plane runs none): a pod bound to a node that is gone, deleted after 10 s.
    const orphanedSince = new Map<string, number>();
    const evicted = new Set<string>();
    const waited = new Set<string>();
    const handovers = new Set<number>();
    const collectOrphans = async (o: Observation) => {
      const nodes = new Set(o.nodes.map((n) => n.metadata.name as string));
      for (const p of o.pods) {
        const key = `${p.metadata.namespace}/${p.metadata.name}/${p.metadata.uid}`;
        if (!p.spec.nodeName || nodes.has(p.spec.nodeName)) continue;
        if (!orphanedSince.has(key)) orphanedSince.set(key, Date.now());
        else if (Date.now() - orphanedSince.get(key)! > 10_000) {
          await kube.delete('v1', 'Pod', p.metadata.namespace, p.metadata.name, 0).catch(() => undefined);
          log('pod-gc', `${p.metadata.namespace}/${p.metadata.name} bound to ${p.spec.nodeName}, which is gone`);
        }
      }
    };
    /** Checks every promise (`calm`: how far the run has calmed down, if its faults are over); returns the first read. */
    const check = async (calm?: Calm): Promise<Observation | undefined> => {
      let first: Observation;
      try {
        first = await observe(kube, handovers, disruptions);
      } catch {
        return undefined; // kube-apiserver down: nothing to judge by
      }
      await collectOrphans(first);
      for (const e of first.evictions) if (e.involvedObject?.kind === 'Pod') evicted.add(`${e.involvedObject.namespace}/${e.involvedObject.name}`);
      for (const e of first.gateWaits) waited.add(String(e.involvedObject?.uid));
      figures.repairEvictions = evicted.size;
      figures.gateWaits = waited.size;
      figures.checks += world!.promises.length;
      const seen = brokenPromises(world!.promises, first, calm);
      if (seen.length === 0) return first;
      await sleep(2000);
      const again = await observe(kube, handovers, disruptions).catch(() => undefined);
      for (const v of again ? confirmed(seen, brokenPromises(world!.promises, again, calm)) : []) {
        if (figures.violations.some((x) => x.promise === v.promise && x.subject === v.subject)) continue;
        figures.violations.push(v);
        log('violation', v);
        console.log(`# VIOLATION ${v.promise} ${v.subject}: ${v.detail}`);
      }
    };
    /** Requests answered 500 so far, by zonekeeper process. */
    const answered500 = new Map<number, number>();
    let apiServerExit: number | undefined;
    const watchProcesses = async () => {
      // kube-apiserver is started again only by the walk's heal; one that ended by itself is told, not restarted.
      const api = cp.processState('kube-apiserver');
      if (api?.ended && !api.ended.includes('SIGKILL') && apiServerExit !== api.pid) {
        apiServerExit = api.pid;
        figures.selfExits.push(`kube-apiserver ${api.ended}`);
        log('self-exit', `kube-apiserver (pid ${api.pid}) ${api.ended}: not started again (${cp.logPath('kube-apiserver')})`);
      }
      for (const name of ['default-scheduler', 'zonekeeper']) {
        const state = cp.processState(`kube-scheduler-${name}`);
        if (state?.ended && !state.ended.includes('SIGKILL')) {
          figures.selfExits.push(`kube-scheduler ${name} ${state.ended}`);
          log('self-exit', `kube-scheduler ${name} ${state.ended}: started again`);
          await cp.restartScheduler(name).catch(() => undefined);
        }
      }
      for (const [name, controller] of [['cluster-autoscaler', world!.autoscaler], ['karpenter', world!.karpenter]] as const) {
        const ended = typeof controller === 'string' ? undefined : controller.revive();
        if (ended) {
          figures.selfExits.push(`${name} ${ended}`);
          log('self-exit', `${name} ${ended}: started again`);
        }
      }
      for (const which of ['primary', 'standby'] as const) {
        const z = world!.replicas[which];
        const ended = z.ended();
        if (ended && !ended.startsWith('killed')) {
          const v: Violation = { promise: 'no-crash', subject: `zonekeeper ${which}`, detail: `zonekeeper ${which} ${ended}` };
          figures.violations.push(v);
          log('violation', v);
          await world!.restart(which);
        }
        figures.maxRssMiB = Math.max(figures.maxRssMiB, rssMiB(z.pid));
        // No 5xx: a replica's count of requests answered 500, read while it runs (a count lost to a kill is not seen).
        const errors = await internalErrors(z);
        if (errors && errors > (answered500.get(z.pid) ?? 0)) {
          answered500.set(z.pid, errors);
          const v: Violation = { promise: 'no-5xx', subject: `zonekeeper ${which} (pid ${z.pid})`, detail: `${errors} request(s) answered 500: ${failedRequests(z).join('; ')}` };
          figures.violations.push(v);
          log('violation', v);
        }
      }
    };

    // Every workload placed before the walk begins: what is broken later is the walk's doing.
    const settledBy = Date.now() + 180_000;
    for (let left = ['not observed yet']; left.length > 0; await sleep(2000)) {
      const obs = await observe(kube, handovers, disruptions).catch(() => undefined);
      left = obs ? (await unsettled(world, obs).catch((err: Error) => [{ what: err.message }])).map(lineOf) : ['kube-apiserver not answering'];
      if (left.length > 0 && Date.now() > settledBy) throw new Error(`the workloads did not settle before the walk: ${left.join('; ')}\n${cp.diagnosis()}`);
    }
    await check({ since: Date.now(), settled: true });
    log('settled', {});

    const started = Date.now();
    const walk = walker(world, rng);
    while (Date.now() - started < o.seconds * 1000) {
      for (const h of await walk.heal(Date.now())) log('heal', h);
      try {
        log('step', await walk.step(Date.now()));
      } catch (err) {
        log('step-failed', (err as Error).message.slice(0, 300));
      }
      await watchProcesses();
      await check();
      await sleep(500 + rng.below(2500));
    }
    figures.operations = walk.counts.operations;
    figures.faults = walk.counts.faults;
    // Heal everything, then give the cluster its time to converge, checking all along.
    while (walk.pending() > 0) {
      for (const h of await walk.heal(Date.now(), true)) log('heal', h);
      if (walk.pending() > 0) await sleep(1000);
    }
    const healed = Date.now();
    log('healed', {});
    const limit = (o.convergeSeconds ?? 300) * 1000;
    let left: Unsettled[] = [{ what: 'not observed after the heal' }];
    while (Date.now() - healed < limit) {
      await watchProcesses();
      const obs = await check({ since: healed, settled: false });
      left = obs ? await unsettled(world, obs).catch((err: Error) => [{ what: err.message }]) : [{ what: 'kube-apiserver not answering' }];
      if (left.length === 0) {
        figures.convergedAfter = Math.round((Date.now() - healed) / 1000);
        break;
      }
      if (obs && Date.now() - healed >= RETRY_BY_HAND_MS) {
        for (const name of await retryRefusedCreates(world, obs, figures.retriedByHand)) {
          figures.retriedByHand.push(name);
          log('retried-by-hand', `${name}: short of pods ${Math.round((Date.now() - healed) / 1000)}s after the heal, its creates refused by the webhook before`);
        }
        const stalled = left.flatMap((u) => u.workload?.kind === 'Deployment' && !figures.retriedByHand.includes(`${u.workload.namespace}/${u.workload.name}`) ? [u.workload] : []);
        for (const line of await retryStalledReplicaSets(world.kube, stalled, Date.now()).catch(() => [])) {
          figures.retriedByHand.push(line.slice(0, line.indexOf(':')));
          log('retried-by-hand', `${line}: its expectation lapsed`);
        }
      }
      await sleep(2000);
    }
    if (figures.convergedAfter === undefined) {
      for (const line of await pendingReasons(world).catch((err: Error) => [err.message])) log('pending', line);
      figures.unconverged = await explainUnsettled(world, left, healed, figures.retriedByHand)
        .catch((err: Error) => left.map((u) => ({ what: lineOf(u), detail: [`not read: ${err.message}`] })));
      for (const u of figures.unconverged) log('unconverged', u);
    }
    await check({ since: healed, settled: true });
    for (const d of disruptions) figures.voluntaryEvictions[d.app] = (figures.voluntaryEvictions[d.app] ?? 0) + 1;
    log('end', figures);
    return figures;
  } finally {
    for (const stop of kubelets) await stop();
    await world?.stop();
    // A run that broke a promise keeps its control plane's logs (zonekeeper's among them); ZK_E2E_KEEP=1 keeps every run's.
    const keep = !!process.env.ZK_E2E_KEEP || figures.violations.length > 0;
    if (keep) log('kept', cp.dir);
    await cp.down(keep);
  }
}

/** One line per figure, as the run prints them. */
export function printFigures(f: RunFigures): string {
  return [
    `seed ${f.seed} on ${f.version}: ${f.operations} operations, ${f.faults} faults, ${f.checks} promise checks, ${f.violations.length} violations`,
    ...(f.convergedAfter === undefined ? ['converged NOT within the time given', ...printUnconverged(f.unconverged)] : [`converged ${f.convergedAfter}s after the last heal`]),
    `retried by hand (a StatefulSet after an admission outage, kubernetes#132805; a Deployment's stalled ReplicaSet once its expectation lapsed, kubernetes#129795): ${f.retriedByHand.join(', ') || 'none'}`,
    `repair evictions ${f.repairEvictions}; pods the zone gate kept waiting (ZoneGateWaiting) ${f.gateWaits}; autoscaler: ${f.autoscaler}; Karpenter: ${f.karpenter}`,
    `voluntary evictions the API server showed: ${Object.entries(f.voluntaryEvictions).map(([app, n]) => `${app} ${n}`).join(', ') || 'none'}`,
    `zonekeeper's largest resident memory ${f.maxRssMiB} MiB (limit ${RSS_LIMIT_MIB}); processes that ended by themselves: ${f.selfExits.length === 0 ? 'none' : f.selfExits.join(', ')}`,
    `history: ${f.history}`,
  ].join('\n');
}

/**
 * The run's verdict: violations (a crash among them), memory past its limit, or no convergence,
 * unless every workload left unsettled is one the run's evidence attributes to a named upstream
 * behaviour (classify in unconverged.ts), which is printed instead.
 */
export function failed(f: RunFigures): boolean {
  const unexplained = f.convergedAfter === undefined && (f.unconverged.length === 0 || f.unconverged.some((u) => !u.upstream));
  return f.violations.length > 0 || unexplained || f.maxRssMiB > RSS_LIMIT_MIB;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({ options: { seed: { type: 'string' }, seconds: { type: 'string', default: '300' }, version: { type: 'string' }, history: { type: 'string' },
    profile: { type: 'string', default: 'cluster' } } });
  const seed = values.seed === undefined ? Math.floor(Math.random() * 2 ** 31) : Number(values.seed);
  const versions = kubeVersions();
  if (values.profile === 'federation') {
    const k = versions.filter((v) => v.minor >= 31).at(-1);
    if (!k) throw new Error('the federation profile needs Kubernetes 1.31 or later (KUBE_BIN_DIRS)');
    console.log(`robustness run, federation profile: seed ${seed}, ${values.seconds}s on ${k.version}; replay with --profile federation --seed ${seed}`);
    const f = await federationRun(k.bin, seed, Number(values.seconds));
    process.exit(f.violations.length > 0 || f.calmAfter === undefined ? 1 : 0);
  }
  const k = values.version ? versions.find((v) => v.version.startsWith(values.version!)) : versions.at(-1);
  if (!k) throw new Error(`no Kubernetes ${values.version ?? ''} among ${versions.map((v) => v.version).join(', ')}`);
  const history = values.history ?? join(tmpdir(), `zonekeeper-chaos-${seed}.jsonl`);
  console.log(`robustness run: seed ${seed}, ${values.seconds}s on ${k.version}; replay with --seed ${seed}`);
  const f = await robustnessRun({ seed, seconds: Number(values.seconds), bin: k.bin, history });
  console.log(printFigures(f));
  process.exitCode = failed(f) ? 1 : 0;
}
