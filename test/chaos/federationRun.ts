// The robustness run's federation profile (docs/operations.md#robustness-runs): a real Karmada and three members on
// the newest Kubernetes, zonekeeper karmada in two replicas, driven through a seeded random walk (workloads scaled,
// policies edited mid-run, a member's kube-apiserver stopped and back, the karmada-apiserver restarted, the Lease
// holder SIGKILLed), then healed. Checked all along: no StatefulSet pod name in two members, no member above its
// maximum; once calm: every minimum held, the sum is the replicas wherever room allows, no binding unscheduled
// without a reason. Prints its seed and figures; the same seed walks the same way.
import { spawn } from 'node:child_process';
import { appendFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { federation, leastAccessKubeconfig, propagation, startFederationScheduler, type Federation } from '../e2e/federation.js';
import { eventually, type Kube, type Obj } from '../e2e/kube.js';
import { statefulSet } from '../e2e/workloads.js';
import { seededRandom } from '../support/random.js';

const NS = 'fedchaos';
const MEMBERS = ['m1', 'm2', 'm3'];
const CONFIG = {
  leaderElection: { namespace: 'zonekeeper-system', leaseName: 'zonekeeper-karmada', leaseDurationSeconds: 4, renewDeadlineSeconds: 3, retryPeriodSeconds: 1 },
  karmada: { pendingSeconds: 15, keepWaiting: 1, ordinalStride: 1000, overrideSettleSeconds: 2, resyncSeconds: 5, memberStalenessSeconds: 10 },
  cluster: { backoffMaxMs: 2000 },
};

type Entry = { weight?: number; minReplicas?: number; maxReplicas?: number };
interface Workload { name: string; kind: 'StatefulSet'; replicas: number; prefs: { rebalance: boolean; clusters: Record<string, Entry> }; editedAt: number }

/** After a policy edit, the plan made before it may stand this long (zonekeeper plans again within a couple of seconds). */
const EDIT_GRACE_MS = 15_000;

export interface FederationFigures { seed: number; operations: string[]; checks: number; violations: string[]; calmAfter: number | undefined }

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

/** The karmada-apiserver stopped and started again with the same command line (up.sh started it; its pid is in WORKDIR/pids). */
async function restartKarmadaApiServer(fed: Federation): Promise<void> {
  const pidsFile = join(fed.dir, 'pids');
  const pid = readFileSync(pidsFile, 'utf8').trim().split('\n').map(Number).find((p) => {
    try {
      return readFileSync(`/proc/${p}/cmdline`, 'utf8').split('\0')[0]!.endsWith('kube-apiserver');
    } catch { return false; }
  });
  if (!pid) throw new Error('no karmada-apiserver among the pids');
  const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
  // Killed, as a crash or an OOM would end it (a graceful stop of a kube-apiserver can take minutes here).
  process.kill(pid, 'SIGKILL');
  await eventually('karmada-apiserver stopped', async () => {
    try { process.kill(pid, 0); return false; } catch { return true; }
  }, 30_000, 200);
  const child = spawn(argv[0]!, argv.slice(1), { detached: true, stdio: 'ignore' });
  child.unref();
  appendFileSync(pidsFile, `${child.pid}\n`);
  await eventually('karmada-apiserver back', async () => !!(await fed.karmada.list('v1', 'Namespace').catch(() => undefined)), 60_000, 500);
}

/** One read, no retry (the checker reads on through outages; what it cannot read it skips). */
async function read(kube: Kube, path: string): Promise<Obj | undefined> {
  const res = await kube.api.request('GET', path, { timeoutMs: 5000 }).catch(() => undefined);
  return res?.status === 200 ? JSON.parse(res.body) as Obj : undefined;
}

/** Each member's replicas of a binding, as its spec.clusters says. */
async function plans(fed: Federation, w: Workload): Promise<{ clusters: Record<string, number>; binding: Obj | undefined }> {
  const b = await read(fed.karmada, `/apis/work.karmada.io/v1alpha2/namespaces/${NS}/resourcebindings/${w.name}-statefulset`);
  return { binding: b, clusters: Object.fromEntries(((b?.spec?.clusters ?? []) as Obj[]).map((c) => [c.name, c.replicas])) };
}

const entryOf = (w: Workload, m: string) => w.prefs.clusters[m] ?? w.prefs.clusters['*'];

export async function federationRun(bin: string, seed: number, seconds: number, log: (line: string) => void = console.log): Promise<FederationFigures> {
  const random = seededRandom(seed);
  const figures: FederationFigures = { seed, operations: [], checks: 0, violations: [], calmAfter: undefined };
  const fed = await federation(bin, MEMBERS, NS);
  const violate = (what: string) => {
    if (figures.violations.length < 50) figures.violations.push(what);
    log(`# VIOLATION: ${what}`);
  };
  try {
    const kubeconfig = leastAccessKubeconfig(fed);
    const host = fed.members[0]!.cp;
    const replicas = [await startFederationScheduler(host, 'zk-fed-1', kubeconfig, CONFIG), await startFederationScheduler(host, 'zk-fed-2', kubeconfig, CONFIG)];
    let started = 2;
    const workloads: Workload[] = [
      { name: 'db', kind: 'StatefulSet', replicas: 5, prefs: { rebalance: true, clusters: { '*': { weight: 1 }, m2: { weight: 1, maxReplicas: 2 } } }, editedAt: 0 },
      { name: 'kv', kind: 'StatefulSet', replicas: 4, prefs: { rebalance: false, clusters: { '*': { weight: 1, minReplicas: 1 } } }, editedAt: 0 },
    ];
    for (const w of workloads) {
      await fed.karmada.create(statefulSet(NS, w.name, w.replicas));
      await fed.karmada.create(propagation(NS, w.name, w.kind, w.prefs, MEMBERS));
    }
    // Checked all along: one pod name in one member at a time, no member above its maximum.
    let checking = true;
    const seenIn = new Map<string, string>();
    const checker = (async () => {
      while (checking) {
        for (const w of workloads) {
          const where = new Map<string, string>();
          for (const m of fed.members) {
            for (const p of (await read(m.kube, `/api/v1/namespaces/${NS}/pods?labelSelector=app%3D${w.name}`))?.items ?? []) {
              const other = where.get(p.metadata.name);
              if (other && other !== m.name) violate(`${p.metadata.name} in ${other} and ${m.name} at once`);
              where.set(p.metadata.name, m.name);
              seenIn.set(p.metadata.name, m.name);
            }
          }
          const { clusters } = await plans(fed, w);
          if (Date.now() - w.editedAt < EDIT_GRACE_MS) continue;
          for (const [m, n] of Object.entries(clusters)) {
            const max = entryOf(w, m)?.maxReplicas;
            if (max !== undefined && n > max) violate(`${w.name}: ${m} planned ${n}, above its maximum ${max}`);
          }
        }
        figures.checks++;
        await sleep(300);
      }
    })();
    const stopped = new Set<string>();
    const end = Date.now() + seconds * 1000;
    while (Date.now() < end) {
      const w = workloads[random.below(workloads.length)]!;
      const op = random.below(6);
      let what: string;
      if (op <= 1) {
        w.replicas = 1 + random.below(9);
        await fed.karmada.scale('StatefulSet', NS, w.name, w.replicas);
        what = `scale ${w.name} to ${w.replicas}`;
      } else if (op === 2) {
        const m = MEMBERS[random.below(MEMBERS.length)]!;
        w.prefs.clusters[m] = { weight: 1 + random.below(3), ...(random.below(2) ? { maxReplicas: 1 + random.below(4) } : {}) };
        w.editedAt = Date.now();
        await fed.karmada.patch('policy.karmada.io/v1alpha1', 'PropagationPolicy', NS, w.name,
          { metadata: { annotations: { 'zonekeeper.io/cluster-preferences': JSON.stringify(w.prefs) } } });
        what = `policy ${w.name}: ${m} ${JSON.stringify(w.prefs.clusters[m])}`;
      } else if (op === 3) {
        const m = fed.members[random.below(fed.members.length)]!;
        if (stopped.has(m.name)) {
          await m.cp.startApiServer();
          stopped.delete(m.name);
          what = `member ${m.name}'s kube-apiserver back`;
        } else if (stopped.size === 0) {
          await m.cp.killApiServer();
          stopped.add(m.name);
          what = `member ${m.name}'s kube-apiserver stopped`;
        } else what = 'nothing (one member down at a time)';
      } else if (op === 4) {
        await restartKarmadaApiServer(fed);
        what = 'karmada-apiserver restarted';
      } else {
        const victim = replicas.shift()!;
        process.kill(victim.pid, 'SIGKILL');
        replicas.push(await startFederationScheduler(host, `zk-fed-${++started}`, kubeconfig, CONFIG));
        what = `zonekeeper karmada ${victim.pid} SIGKILLed, another started`;
      }
      figures.operations.push(what);
      log(`# op ${figures.operations.length}: ${what}`);
      await sleep(1000 + random.below(3000));
    }
    // Healed: every member back; then calm: every binding planned for its generation, or refused with a reason.
    for (const m of fed.members) if (stopped.has(m.name)) await m.cp.startApiServer();
    const healed = Date.now();
    // Calm: every member Ready in Karmada again, and every binding planned for its generation as the promises say.
    const calm = await eventually('calm: every binding settled', async () => {
      const clusters = (await read(fed.karmada, '/apis/cluster.karmada.io/v1alpha1/clusters'))?.items as Obj[] | undefined;
      if (!clusters || !clusters.every((c) => (c.status?.conditions ?? []).some((x: Obj) => x.type === 'Ready' && x.status === 'True'))) return false;
      for (const w of workloads) {
        const { binding, clusters: plan } = await plans(fed, w);
        const cond = (binding?.status?.conditions ?? []).find((c: Obj) => c.type === 'Scheduled');
        if (!binding || !cond || (cond.status === 'True' && binding.status?.schedulerObservedGeneration !== binding.metadata.generation)) return false;
        if (cond.status !== 'True') continue;
        const cap = sum(MEMBERS.map((m) => entryOf(w, m)?.maxReplicas ?? Infinity));
        if (sum(Object.values(plan)) !== Math.min(w.replicas, cap)) return false;
        const mins = sum(MEMBERS.map((m) => entryOf(w, m)?.minReplicas ?? 0));
        if (mins <= w.replicas && MEMBERS.some((m) => (plan[m] ?? 0) < (entryOf(w, m)?.minReplicas ?? 0))) return false;
      }
      return true;
    }, 240_000, 1000).then(() => true, () => false);
    figures.calmAfter = calm ? (Date.now() - healed) / 1000 : undefined;
    for (const w of workloads) {
      const { binding, clusters } = await plans(fed, w);
      const cond = (binding?.status?.conditions ?? []).find((c: Obj) => c.type === 'Scheduled');
      if (!cond) violate(`${w.name}: no Scheduled condition after the heal`);
      else if (cond.status !== 'True' && !cond.message) violate(`${w.name}: unscheduled without a reason`);
      const cap = sum(MEMBERS.map((m) => entryOf(w, m)?.maxReplicas ?? Infinity));
      if (cond?.status === 'True' && sum(Object.values(clusters)) !== Math.min(w.replicas, cap)) {
        violate(`${w.name}: planned ${JSON.stringify(clusters)} for ${w.replicas} replicas (room for ${cap})`);
      }
      const mins = sum(MEMBERS.map((m) => entryOf(w, m)?.minReplicas ?? 0));
      for (const m of MEMBERS) {
        const min = entryOf(w, m)?.minReplicas ?? 0;
        if (mins <= w.replicas && (clusters[m] ?? 0) < min) violate(`${w.name}: ${m} has ${clusters[m] ?? 0}, below its minimum ${min}`);
      }
    }
    checking = false;
    await checker;
    log(`# federation run seed ${seed}: ${figures.operations.length} operations, ${figures.checks} checks, ${seenIn.size} pod names seen, `
      + `calm ${figures.calmAfter === undefined ? 'not reached' : `${figures.calmAfter.toFixed(1)} s after the heal`}, ${figures.violations.length} violations`);
    return figures;
  } finally {
    await fed.down();
  }
}
