// zonekeeper karmada beside karmada-scheduler on a real Karmada (../shared/karmada) with real members on the newest
// Kubernetes, in one run (BENCH_CASES=karmada-live; minutes, not part of the default cases):
// 1. 100 Deployments over 5 members, created and then scaled 6 → 9, rounds alternating between the two schedulers:
//    time until every member runs its share (the sum of the members' Deployments' replicas is the template's);
// 2. 1,000 bindings over 10 members for each scheduler in turn (dispatching suspended: planning only), one member tainted
//    NoExecute: time until no binding of the scheduler names it and every one is scheduled for its generation.
// BENCH_KARMADA_ROUNDS (default 4; 0 runs only part 2) and BENCH_KARMADA_BINDINGS (default 1000) size it;
// BENCH_KARMADA_WORKERS sets zonekeeper's karmada.workers (default the configuration's) and the floor's writers (32);
// BENCH_KARMADA_REPLAN=zk runs only zonekeeper's re-plan (for tuning; the comparison needs both), zk,floor it and the
// floor: the same bindings written by the bench itself, spec then status, with no plan (what the API allows at best).
import { execFileSync } from 'node:child_process';
import { kubeVersions } from '../e2e/controlPlane.js';
import { federation, karmadaDeployment, leastAccessKubeconfig, startFederationScheduler, type Federation } from '../e2e/federation.js';
import { eventually, type Obj } from '../e2e/kube.js';
import { ZONES } from '../e2e/workloads.js';
import { fmt } from './measure.js';
import { target } from './targets.js';

const NS = 'bench';
const JOIN = new URL('../../../shared/karmada/join.sh', import.meta.url).pathname;
const MEMBERS = ['m1', 'm2', 'm3', 'm4', 'm5'];
const CONFIG = {
  leaderElection: { namespace: 'zonekeeper-system', leaseName: 'zonekeeper-karmada', leaseDurationSeconds: 15, renewDeadlineSeconds: 10, retryPeriodSeconds: 2 },
  karmada: { resyncSeconds: 30, ...(process.env.BENCH_KARMADA_WORKERS ? { workers: Number(process.env.BENCH_KARMADA_WORKERS) } : {}) },
};

function policy(name: string, scheduler: string, members: string[], selector: Obj, extra: Obj = {}): Obj {
  return {
    apiVersion: 'policy.karmada.io/v1alpha1', kind: 'PropagationPolicy', metadata: { name, namespace: NS },
    spec: { schedulerName: scheduler, resourceSelectors: [{ apiVersion: 'apps/v1', kind: 'Deployment', labelSelector: { matchLabels: selector } }],
      placement: { clusterAffinity: { clusterNames: members }, replicaScheduling: { replicaSchedulingType: 'Divided', replicaDivisionPreference: 'Weighted' } }, ...extra },
  };
}

/** The template's replicas summed over every member's copy, per Deployment. */
async function running(fed: Federation, prefix: string): Promise<Map<string, number>> {
  const sums = new Map<string, number>();
  for (const m of fed.members) {
    for (const d of await m.kube.list('apps/v1', 'Deployment', NS)) {
      if (d.metadata.name.startsWith(prefix)) sums.set(d.metadata.name, (sums.get(d.metadata.name) ?? 0) + (d.spec.replicas as number));
    }
  }
  return sums;
}

const seconds = (from: number) => (performance.now() - from) / 1000;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** One round: 100 Deployments of 6 created, then scaled to 9; seconds to every member running its share, each time. */
async function round(fed: Federation, scheduler: string, tag: string, count: number): Promise<{ create: number; scale: number }> {
  const prefix = `${tag}-`;
  const names = Array.from({ length: count }, (_, i) => `${prefix}${i}`);
  await fed.karmada.create(policy(tag, scheduler, MEMBERS, { round: tag }));
  const start = performance.now();
  for (const n of names) {
    const d = karmadaDeployment(NS, n, 6);
    d.metadata.labels = { round: tag };
    await fed.karmada.create(d);
  }
  const all = (want: number) => async () => {
    const sums = await running(fed, prefix);
    return names.every((n) => sums.get(n) === want);
  };
  await eventually(`${tag}: every member runs its share of 6`, all(6), 600_000, 250);
  const create = seconds(start);
  const scaled = performance.now();
  for (const n of names) await fed.karmada.scale('Deployment', NS, n, 9);
  await eventually(`${tag}: every member runs its share of 9`, all(9), 600_000, 250);
  const scale = seconds(scaled);
  for (const n of names) await fed.karmada.delete('apps/v1', 'Deployment', NS, n, 0);
  await fed.karmada.delete('policy.karmada.io/v1alpha1', 'PropagationPolicy', NS, tag);
  await eventually(`${tag}: gone from the members`, async () => (await running(fed, prefix)).size === 0, 600_000, 500);
  return { create, scale };
}

// floor: no scheduler names these bindings; the bench itself writes what a scheduler must (the spec, then the status).
const SCHEDULERS = { zk: 'zonekeeper', ks: 'default-scheduler', floor: 'bench-floor' } as const;
type Tag = keyof typeof SCHEDULERS;

/**
 * The bench's bindings as a watch shows them: its own reads must not load the server it measures (a LIST of 1,000
 * bindings of about 5 KiB each, four times a second, took a large share of the karmada-apiserver's CPU).
 */
function watchedBindings(fed: Federation): { now(): Obj[]; stop(): void } {
  const path = `/apis/work.karmada.io/v1alpha2/namespaces/${NS}/resourcebindings`;
  const abort = new AbortController();
  const items = new Map<string, Obj>();
  void (async () => {
    while (!abort.signal.aborted) {
      try {
        const list = await fed.karmada.call('GET', `${path}?resourceVersion=0`);
        items.clear();
        for (const b of list.items as Obj[]) items.set(b.metadata.name, b);
        for await (const e of fed.karmada.watch(`${path}?resourceVersion=${list.metadata.resourceVersion}`, abort.signal)) {
          if (e.type === 'DELETED') items.delete(e.object.metadata.name);
          else if (e.type === 'ADDED' || e.type === 'MODIFIED') items.set(e.object.metadata.name, e.object);
        }
      } catch (err) {
        if (!abort.signal.aborted) console.log(`karmada-live: the bindings' watch ended (${(err as Error).message}); listed again`);
      }
    }
  })();
  return { now: () => [...items.values()], stop: () => abort.abort() };
}

/**
 * The least any scheduler must write per binding, written by the bench `workers` at a time with no plan behind it:
 * spec.clusters (one replica on each of `members`) by merge patch, then the Scheduled condition and the generation
 * it observes on the status. The time this takes is the API's floor under the phase.
 */
async function floorWrites(fed: Federation, names: string[], members: string[], workers: number): Promise<void> {
  const path = (name: string) => `/apis/work.karmada.io/v1alpha2/namespaces/${NS}/resourcebindings/${name}`;
  const merge = 'application/merge-patch+json';
  let next = 0;
  const one = async (name: string) => {
    const b = await fed.karmada.call('PATCH', path(name), { spec: { clusters: members.map((m) => ({ name: m, replicas: 1 })) } }, merge);
    const condition = { type: 'Scheduled', status: 'True', reason: 'Success', message: 'Binding has been scheduled successfully.', lastTransitionTime: new Date().toISOString() };
    await fed.karmada.call('PATCH', `${path(name)}/status`, { status: { conditions: [condition], schedulerObservedGeneration: b.metadata.generation } }, merge);
  };
  await Promise.all(Array.from({ length: workers }, async () => {
    while (next < names.length) await one(names[next++]!);
  }));
}

/**
 * One scheduler's phase: `count` bindings over the 10 Cluster objects (dispatching suspended), m3 tainted NoExecute, and the
 * seconds until every one of them is scheduled for its generation on members other than m3 (undefined: not by `capSeconds`).
 * The phases run one after the other, so each scheduler has the karmada-apiserver to itself.
 */
async function replanPhase(
  fed: Federation, tag: Tag, count: number, all: string[], capSeconds: number, progress: () => Promise<string> = async () => '',
): Promise<{ took?: number; off: number; at: number }> {
  const scheduler = SCHEDULERS[tag];
  const prefix = `replan-${tag}-`;
  await fed.karmada.create(policy(`replan-${tag}`, scheduler, all, { round: `replan-${tag}` }, { suspension: { dispatching: true } }));
  for (let i = 0; i < count; i++) {
    const d = karmadaDeployment(NS, `${prefix}${i}`, 10);
    d.metadata.labels = { round: `replan-${tag}` };
    await fed.karmada.create(d);
  }
  const watched = watchedBindings(fed);
  const mine = async () => watched.now().filter((b) => b.metadata.name.startsWith(prefix));
  const scheduled = (b: Obj) => (b.status?.conditions ?? []).some((c: Obj) => c.type === 'Scheduled' && c.status === 'True') && b.status?.schedulerObservedGeneration === b.metadata.generation;
  const onM3 = (b: Obj) => (b.spec.clusters ?? []).some((c: Obj) => c.name === 'm3');
  const names = Array.from({ length: count }, (_, i) => `${prefix}${i}-deployment`);
  const workers = Number(process.env.BENCH_KARMADA_WORKERS ?? 32);
  if (tag === 'floor') {
    await eventually(`${count} bindings of ${tag} made`, async () => (await mine()).length === count, 900_000, 1000);
    await floorWrites(fed, names, all, workers);
  }
  await eventually(`${count} bindings of ${tag} scheduled`, async () => {
    const bs = await mine();
    return bs.length === count && bs.every((b) => scheduled(b) && onM3(b));
  }, 900_000, 1000);
  const taint = (taints: Obj[] | null) => fed.karmada.patch('cluster.karmada.io/v1alpha1', 'Cluster', undefined, 'm3', { spec: { taints } });
  const tainted = performance.now();
  await taint([{ key: 'bench/lost', effect: 'NoExecute' }]);
  let measured = false;
  const floor = tag === 'floor' ? (async () => {
    const others = all.filter((m) => m !== 'm3');
    await floorWrites(fed, names, others, workers);
    // A binding Karmada's taint manager changed after its write is written again, as a scheduler would.
    while (!measured) {
      const lagging = (await mine()).filter((b) => !scheduled(b) || onM3(b)).map((b) => b.metadata.name as string);
      if (lagging.length) await floorWrites(fed, lagging, others, workers);
      else await new Promise((r) => setTimeout(r, 250));
    }
  })() : undefined;
  let off = 0;
  let took: number | undefined;
  let printed = 0;
  await eventually(`every binding of ${tag} off m3`, async () => {
    off = (await mine()).filter((b) => scheduled(b) && !onM3(b)).length;
    if (off === count) took = seconds(tainted);
    if (seconds(tainted) - printed >= 10) {
      printed = seconds(tainted);
      console.log(`karmada-live: ${tag} ${off} of ${count} off m3 at ${fmt(printed, 1)} s${await progress()}`);
    }
    return took !== undefined || seconds(tainted) > capSeconds;
  }, 900_000, 250);
  const at = seconds(tainted);
  console.log(`karmada-live: ${tag} ${took === undefined ? `${off} of ${count}` : 'all'} off m3 at ${fmt(at, 1)} s`);
  measured = true;
  await floor;
  await taint(null);
  for (let i = 0; i < count; i++) await fed.karmada.delete('apps/v1', 'Deployment', NS, `${prefix}${i}`, 0);
  await fed.karmada.delete('policy.karmada.io/v1alpha1', 'PropagationPolicy', NS, `replan-${tag}`);
  await eventually(`${tag}: its bindings gone`, async () => (await mine()).length === 0, 600_000, 1000);
  watched.stop();
  return { took, off, at };
}

/** zonekeeper's write counters and times (zonekeeper_federation_writes_total, _write_seconds) and its Events written, off its /metrics. */
async function writeFigures(admin: string): Promise<Map<string, number>> {
  const text = await (await fetch(`${admin}/metrics`)).text();
  const figures = new Map<string, number>();
  for (const m of text.matchAll(/^zonekeeper_federation_write(s_total|_seconds_sum|_seconds_count)\{([^}]*)\} (\S+)$/gm)) {
    const label = (name: string) => new RegExp(`${name}="([^"]*)"`).exec(m[2]!)?.[1] ?? '';
    const key = m[1] === 's_total' ? `${label('write')} ${label('result')}` : `${m[1]!.slice(1)} ${label('write')}`;
    figures.set(key, Number(m[3]));
  }
  for (const m of text.matchAll(/^zonekeeper_actuator_writes_total\{action="event",result="([^"]*)"\} (\S+)$/gm)) figures.set(`event ${m[1]}`, Number(m[2]));
  return figures;
}

/** Both schedulers' re-plan off a NoExecute member, one after the other, over 10 Cluster objects (two per member API server). */
async function replan(fed: Federation, count: number, admin: string): Promise<Record<Tag, { took?: number; off: number; at: number }>> {
  const extra = ['m6', 'm7', 'm8', 'm9', 'm10'];
  for (const [i, name] of extra.entries()) {
    execFileSync('bash', [JOIN, fed.kubeconfig, name, fed.members[i]!.cp.kubeconfig, ZONES.join(' ')]);
  }
  const all = [...MEMBERS, ...extra];
  const before = await writeFigures(admin);
  const zk = await replanPhase(fed, 'zk', count, all, 600, async () => {
    const now = await writeFigures(admin);
    return `; written so far: spec ${now.get('clusters ok') ?? 0}, status ${now.get('status ok') ?? 0}, Events ${now.get('event ok') ?? 0} (${now.get('event dropped') ?? 0} dropped)`;
  });
  const after = await writeFigures(admin);
  const delta = (k: string) => (after.get(k) ?? 0) - (before.get(k) ?? 0);
  const answered = (w: string) => fmt((1000 * delta(`seconds_sum ${w}`)) / Math.max(1, delta(`seconds_count ${w}`)), 0);
  console.log(`karmada-live: zonekeeper's writes in its re-plan: spec.clusters ${delta('clusters ok')} (${delta('clusters conflict')} conflicts), `
    + `status ${delta('status ok')} (${delta('status conflict')} conflicts); mean answer ${answered('clusters')} ms (clusters), ${answered('status')} ms (status)`);
  // karmada-scheduler is watched until three times zonekeeper's time (at least 2 minutes), then reported as it stands.
  const only = process.env.BENCH_KARMADA_REPLAN;
  const ks = only === 'zk' || only === 'zk,floor' ? { off: 0, at: 0 } : await replanPhase(fed, 'ks', count, all, Math.max(120, 3 * (zk.took ?? zk.at)));
  const floor = only === 'zk' ? { off: 0, at: 0 } : await replanPhase(fed, 'floor', count, all, 600);
  return { zk, ks, floor };
}

export async function karmadaLiveCase(): Promise<void> {
  const newest = kubeVersions().filter((k) => k.minor >= 31).at(-1);
  if (!newest) return void console.log('\nkarmada-live: no Kubernetes ≥ 1.31 binaries (KUBE_BIN_DIRS): skipped');
  const fed = await federation(newest.bin, MEMBERS, NS);
  try {
    const { admin } = await startFederationScheduler(fed.members[0]!.cp, 'zonekeeper-karmada-bench', leastAccessKubeconfig(fed), CONFIG);
    const rounds: Record<string, { create: number[]; scale: number[] }> = { 'default-scheduler': { create: [], scale: [] }, zonekeeper: { create: [], scale: [] } };
    const order = ['default-scheduler', 'zonekeeper', 'default-scheduler', 'zonekeeper'].slice(0, Number(process.env.BENCH_KARMADA_ROUNDS ?? 4));
    for (const [k, scheduler] of order.entries()) {
      const r = await round(fed, scheduler, `r${k}`, 100);
      rounds[scheduler]!.create.push(r.create);
      rounds[scheduler]!.scale.push(r.scale);
      console.log(`karmada-live round ${k} (${scheduler}): 100 Deployments over 5 members, every member running its share after create ${fmt(r.create, 1)} s, after 6 → 9 ${fmt(r.scale, 1)} s`);
    }
    if (order.length >= 2) {
      const ratio = (what: 'create' | 'scale') => median(rounds.zonekeeper![what]) / median(rounds['default-scheduler']![what]);
      console.log(`karmada-live: zonekeeper / karmada-scheduler, medians: create ${fmt(ratio('create'), 2)}, scale ${fmt(ratio('scale'), 2)}`);
      target('karmada-live: create, zonekeeper / karmada-scheduler', ratio('create'), 1.1, true);
      target('karmada-live: scale 6 → 9, zonekeeper / karmada-scheduler', ratio('scale'), 1.1, true);
    }
    const count = Number(process.env.BENCH_KARMADA_BINDINGS ?? 1000);
    const replanned = await replan(fed, count, admin);
    const took = (tag: Tag) => {
      const r = replanned[tag];
      return r.took === undefined ? `${r.off} of ${count} in ${fmt(r.at, 1)} s` : `all in ${fmt(r.took, 1)} s`;
    };
    console.log(`karmada-live: ${count} bindings per scheduler over 10 members, one tainted NoExecute, re-planned off it (each scheduler alone): zonekeeper ${took('zk')}, karmada-scheduler ${took('ks')}`);
    console.log(`karmada-live: the API's floor (the bench writing each binding's spec and status, no plan): ${took('floor')}`);
    target(`karmada-live: ${count} bindings re-planned off a NoExecute member`, replanned.zk.took ?? Infinity, 10, true, ' s');
  } finally {
    await fed.down();
  }
}
