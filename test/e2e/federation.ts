// A real federation for the e2e: Karmada (../shared/karmada, on loopback, no containers) and member
// clusters, each a ControlPlane with its default kube-scheduler and zonekeeper in admission mode, joined
// as `karmadactl join` does in Push mode (with the impersonator Karmada's cluster proxy needs).
import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parse, stringify } from 'yaml';
import { kubeApiClient } from '../../src/cluster/apiClient.js';
import { loadClusterAccess } from '../../src/cluster/kubeconfig.js';
import { admissionConfig, admissionReady, webhookConfiguration, ADMISSION_LABEL } from './admissionWebhook.js';
import { ControlPlane, freePort, type Zonekeeper } from './controlPlane.js';
import { eventually, Kube, type Obj } from './kube.js';
import { deployment, ZONES } from './workloads.js';

const run = promisify(execFile);
const SHARED = new URL('../../../shared/karmada/', import.meta.url).pathname;
const ROOT = new URL('../../', import.meta.url).pathname;

export interface Member { name: string; cp: ControlPlane; kube: Kube; zonekeeper: Zonekeeper }

export interface Federation {
  dir: string;
  kubeconfig: string;
  karmada: Kube;
  members: Member[];
  /** Stops Karmada's processes (last first). */
  down(): Promise<void>;
}

/**
 * The first of `n` ports in a row that are free now (up.sh's metrics and health ports): below Linux's
 * ephemeral range, so no port another process of the run asks the system for can land in it.
 */
async function portRun(n: number): Promise<number> {
  const free = (port: number) => new Promise<boolean>((resolve) => {
    const s = net.createServer().once('error', () => resolve(false)).listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });
  for (let attempt = 0; attempt < 50; attempt++) {
    const first = 20_000 + Math.floor(Math.random() * 12_000);
    let ok = true;
    for (let i = 0; i < n && ok; i++) ok = await free(first + i);
    if (ok) return first;
  }
  throw new Error(`no ${n} free ports in a row`);
}

/** Karmada's binaries, unpacked once into the same cache as the control planes'. */
export function karmadaFolder(): string {
  const dir = join(homedir(), '.cache', 'zonekeeper', 'karmada');
  return execFileSync('bash', [join(SHARED, 'unpack.sh'), dir], { encoding: 'utf8' }).trim().split('\n').pop()!;
}

/** A member: control plane, one general node per zone, zonekeeper's webhook for the namespace `ns`. */
async function member(name: string, bin: string, ns: string): Promise<Member> {
  const cp = new ControlPlane(bin);
  try {
    const { port, admission } = await admissionConfig('default/zonekeeper-webhook-tls');
    await cp.up([{ name: 'default-scheduler', extender: false }], { admission, leaderElection: { namespace: 'default' } });
    const kube = new Kube(cp.api);
    for (const z of ZONES) await kube.addNode(`${name}-${z.slice(5)}-1`, z);
    await kube.create(webhookConfiguration(port));
    await kube.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns, labels: { [ADMISSION_LABEL]: 'enabled' } } });
    await admissionReady(kube, cp.zonekeeper!.admin);
    return { name, cp, kube, zonekeeper: cp.zonekeeper! };
  } catch (err) {
    await cp.down();
    throw err;
  }
}

/** Karmada up, `names` members up and joined, the namespace `ns` in Karmada (labelled as in the members). */
export async function federation(bin: string, names: string[], ns: string): Promise<Federation> {
  const karmadaDir = karmadaFolder();
  const dir = mkdtempSync(join(tmpdir(), 'zk-karmada-'));
  const [etcd, api, agg, wh] = [await freePort(), await freePort(), await freePort(), await freePort()];
  const mport = await portRun(6);
  const ports = { ETCD_PORT: etcd, API_PORT: api, AGG_PORT: agg, WH_PORT: wh, MPORT: mport };
  const env = { ...process.env, KUBE_BIN: bin, KARMADA: karmadaDir, ...Object.fromEntries(Object.entries(ports).map(([k, v]) => [k, String(v)])) };
  const started: Member[] = [];
  const [up] = await Promise.allSettled([
    run('bash', [join(SHARED, 'up.sh'), dir], { env, encoding: 'utf8' }),
    Promise.all(names.map(async (n) => started.push(await member(n, bin, ns)))),
  ]).then(async (results) => {
    const failed = results.find((r) => r.status === 'rejected');
    if (failed) {
      await stopAll(dir, started);
      throw (failed as PromiseRejectedResult).reason;
    }
    return results.map((r) => (r as PromiseFulfilledResult<any>).value);
  });
  const members = names.map((n) => started.find((m) => m.name === n)!);
  const kubeconfig = up.stdout.trim().split('\n').pop()!;
  const karmada = new Kube(kubeApiClient(loadClusterAccess({ kind: 'kubeconfig', path: kubeconfig })));
  try {
    for (const m of members) await run('bash', [join(SHARED, 'join.sh'), kubeconfig, m.name, m.cp.kubeconfig, ZONES.join(' ')], { encoding: 'utf8' });
  } catch (err) {
    await stopAll(dir, members);
    throw new Error(`${(err as Error).message}\n${readFileSync(join(dir, 'logs', 'karmada-controller-manager.log'), 'utf8').split('\n').slice(-5).join('\n')}`);
  }
  await karmada.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns, labels: { [ADMISSION_LABEL]: 'enabled' } } });
  return {
    dir, kubeconfig, karmada, members,
    down: () => stopAll(dir, members),
  };
}

/** Karmada's processes (last first), then the members'. */
async function stopAll(dir: string, members: Member[]): Promise<void> {
  let pids: number[] = [];
  try {
    pids = readFileSync(join(dir, 'pids'), 'utf8').trim().split('\n').map(Number).filter(Boolean).reverse();
  } catch { /* up.sh never started */ }
  const signal = (pid: number, s: NodeJS.Signals | 0) => {
    try {
      process.kill(pid, s);
      return true;
    } catch { return false; /* gone */ }
  };
  for (const pid of pids) signal(pid, 'SIGTERM');
  // karmada-apiserver can outlive its etcd in a graceful shutdown that never ends: what is left after 10 s is killed.
  for (let waited = 0; waited < 10_000 && pids.some((pid) => signal(pid, 0)); waited += 200) await new Promise((r) => setTimeout(r, 200));
  for (const pid of pids) if (signal(pid, 0)) signal(pid, 'SIGKILL');
  await Promise.all(members.map((m) => m.cp.down(!!process.env.ZK_E2E_KEEP)));
  if (process.env.ZK_E2E_KEEP) console.log(`karmada logs kept in ${dir}`);
  else rmSync(dir, { recursive: true, force: true });
}

/** `zonekeeper karmada` as a child of `cp` (stopped with it), its admin URL once ready. */
export async function startFederationScheduler(cp: ControlPlane, name: string, kubeconfig: string, config: Obj): Promise<{ admin: string; pid: number }> {
  const port = await freePort();
  const file = join(cp.dir, `${name}.yaml`);
  writeFileSync(file, stringify(config));
  const child = cp.start(name, process.execPath, [join(ROOT, 'dist', 'cli.js'), 'karmada', '--kubeconfig', kubeconfig, '--config', file, '--admin-listen', `127.0.0.1:${port}`]);
  const admin = `http://127.0.0.1:${port}`;
  await eventually(`${name} ready`, async () => (await fetch(`${admin}/readyz`)).ok, 60_000, 250);
  return { admin, pid: child.pid! };
}

/**
 * A kubeconfig for the Karmada control plane as the ServiceAccount of manifests/karmada/rbac.yaml
 * (applied first with admission-policy.yaml, and member-rbac.yaml in each member): zonekeeper karmada runs with that least
 * access, members read through Karmada's cluster proxy, as the docs install it.
 */
export function leastAccessKubeconfig(f: Federation): string {
  const kubectl = (args: string[], kubeconfig = f.kubeconfig) => execFileSync('kubectl', ['--kubeconfig', kubeconfig, ...args], { encoding: 'utf8' });
  kubectl(['apply', '-f', join(ROOT, 'manifests', 'karmada', 'rbac.yaml')]);
  kubectl(['apply', '-f', join(ROOT, 'manifests', 'karmada', 'admission-policy.yaml')]);
  for (const m of f.members) kubectl(['apply', '-f', join(ROOT, 'manifests', 'karmada', 'member-rbac.yaml')], m.cp.kubeconfig);
  const token = kubectl(['-n', 'zonekeeper-system', 'create', 'token', 'zonekeeper-karmada', '--duration=2h']).trim();
  const config = parse(readFileSync(f.kubeconfig, 'utf8')) as Obj;
  config.users = [{ name: 'zonekeeper-karmada', user: { token } }];
  config.contexts = config.contexts.map((c: Obj) => ({ ...c, context: { ...c.context, user: 'zonekeeper-karmada' } }));
  const path = join(f.dir, 'zonekeeper-karmada.kubeconfig');
  writeFileSync(path, stringify(config));
  return path;
}

/** A binding's spec.clusters as `{member: replicas}`. */
export async function clustersOf(karmada: Kube, namespace: string, binding: string): Promise<Record<string, number>> {
  const b = await karmada.get('work.karmada.io/v1alpha2', 'ResourceBinding', namespace, binding);
  return Object.fromEntries(((b.spec?.clusters ?? []) as Obj[]).map((c) => [c.name as string, c.replicas as number]));
}

/** A PropagationPolicy that names zonekeeper, with seed 002's preferences in its annotation. */
export function propagation(namespace: string, name: string, kind: string, prefs: object, members: string[], extra: Obj = {}): Obj {
  return {
    apiVersion: 'policy.karmada.io/v1alpha1', kind: 'PropagationPolicy',
    metadata: { name, namespace, annotations: { 'zonekeeper.io/cluster-preferences': JSON.stringify(prefs) } },
    spec: {
      schedulerName: 'zonekeeper', resourceSelectors: [{ apiVersion: 'apps/v1', kind, name }],
      placement: { clusterAffinity: { clusterNames: members }, replicaScheduling: { replicaSchedulingType: 'Divided', replicaDivisionPreference: 'Weighted' } },
      ...extra,
    },
  };
}

/** A Deployment for the default scheduler of each member (no schedulerName): admission writes its zone. */
export const karmadaDeployment = (namespace: string, name: string, replicas: number): Obj => deployment(namespace, name, replicas, null);
