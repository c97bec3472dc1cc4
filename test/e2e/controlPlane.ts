// A real Kubernetes control plane (1.30, 1.36) on 127.0.0.1 for the end-to-end tests: etcd,
// kube-apiserver, kube-controller-manager, and kube-scheduler processes, plus zonekeeper.
// Nodes have no kubelets: pods are bound and stay Pending, which is all the tests need.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { kubeApiClient, type ApiClient } from '../../src/cluster/apiClient.js';
import { loadClusterAccess } from '../../src/cluster/kubeconfig.js';
import { processCpuSeconds } from '../support/proc.js';

const ROOT = new URL('../../', import.meta.url).pathname;

/** Ports handed out in this process: a port closed after the probe can come back from the next probe. */
const handedOut = new Set<number>();

/**
 * A port free now and never handed out before in this process. Two probes before either process
 * binds can get the same port (CI once gave kube-apiserver's port to zonekeeper's extender too).
 */
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 100; attempt++) {
    const port = await new Promise<number>((resolve, reject) => {
      const s = net.createServer();
      s.once('error', reject);
      s.listen(0, '127.0.0.1', () => {
        const p = (s.address() as net.AddressInfo).port;
        s.close(() => resolve(p));
      });
    });
    if (!handedOut.has(port)) {
      handedOut.add(port);
      return port;
    }
  }
  throw new Error('no port free that was not handed out already (100 probes)');
}

/** Polls `check` until it holds; stops at once if the process it waits for has ended. */
async function until(what: string, check: () => Promise<boolean>, timeoutMs: number, child?: ChildProcess): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child && (child.exitCode !== null || child.signalCode !== null)) throw new Error(`${what}: the process ended before it was ready`);
    try {
      if (await check()) return;
    } catch { /* not up yet */ }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** Unpacks or reuses the shipped control planes (test/e2e/kube-binaries.sh), or checks `dir`: their directories. */
export function kubeBinaries(dir?: string): string[] {
  const env = dir ? { ...process.env, KUBE_BIN_DIR: dir } : process.env;
  const out = execFileSync('bash', [join(ROOT, 'test/e2e/kube-binaries.sh')], { encoding: 'utf8', env, stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 1 << 24 });
  return out.trim().split('\n').filter(Boolean);
}

/**
 * Every Kubernetes the e2e runs against: KUBE_BIN_DIRS (directories, ':'-separated), else
 * KUBE_BIN_DIR, else the control planes shipped beside the checkout. Each comes with its version.
 */
export function kubeVersions(): { bin: string; version: string; minor: number }[] {
  const dirs = (process.env.KUBE_BIN_DIRS ?? '').split(':').filter(Boolean);
  return (dirs.length > 0 ? dirs.flatMap((d) => kubeBinaries(d)) : kubeBinaries()).map((bin) => {
    const version = /v(1\.\d+\.\d+)/.exec(execFileSync(join(bin, 'kube-apiserver'), ['--version'], { encoding: 'utf8' }))?.[1] ?? 'unknown';
    return { bin, version, minor: Number(version.split('.')[1] ?? 0) };
  });
}

const SHIPPED_SCHEDULER_CONFIG = join(ROOT, 'config/scheduler-config.yaml');

/**
 * Everything that differs between the Kubernetes versions the e2e runs, in one place.
 * From 1.25 on, the zonekeeper scheduler reads config/scheduler-config.yaml as shipped, with
 * only its kubeconfig, leader election and extender port overridden.
 */
function versionProfile(minor: number) {
  return {
    apiServerFlags: minor < 24 ? ['--insecure-port=0'] : [],
    controllerManagerFlags: minor < 24 ? ['--port=0', '--secure-port=0'] : ['--bind-address=127.0.0.1', '--secure-port=0'],
    /** kube-scheduler < 1.21 ignores FailedAndUnresolvableNodes. */
    legacyFailedNodes: minor < 21,
    /** Honours controller.kubernetes.io/pod-deletion-cost (on by default from 1.22). */
    deletionCost: minor >= 22,
    schedulerConfig(s: SchedulerSpec, kubeconfig: string, extenderPort: number, healthPort: number): { config: Record<string, unknown>; flags: string[] } {
      const urlPrefix = s.extenderUrl ?? `http://127.0.0.1:${extenderPort}`;
      const extender = { urlPrefix, filterVerb: 'filter', prioritizeVerb: 'prioritize', weight: 5, nodeCacheCapable: true, httpTimeout: '5s', enableHTTPS: false };
      if (minor < 25) {
        // kube-scheduler 1.20 reads v1beta1; the values come from config/scheduler-config.yaml.
        return {
          config: {
            apiVersion: 'kubescheduler.config.k8s.io/v1beta1', kind: 'KubeSchedulerConfiguration',
            clientConnection: { kubeconfig, qps: 500, burst: 1000 }, leaderElection: { leaderElect: false },
            healthzBindAddress: `127.0.0.1:${healthPort}`, metricsBindAddress: `127.0.0.1:${healthPort}`,
            percentageOfNodesToScore: 100, profiles: [{ schedulerName: s.name }], extenders: s.extender ? [extender] : [],
          },
          flags: ['--secure-port=0'],
        };
      }
      // /metrics without credentials, as /healthz: the measurement reads kube-scheduler's own latencies.
      const flags = ['--bind-address=127.0.0.1', `--secure-port=${healthPort}`, '--authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics'];
      if (!s.extender) {
        return {
          config: { apiVersion: 'kubescheduler.config.k8s.io/v1', kind: 'KubeSchedulerConfiguration', clientConnection: { kubeconfig, qps: 500, burst: 1000 }, leaderElection: { leaderElect: false }, percentageOfNodesToScore: 100, profiles: [{ schedulerName: s.name }] },
          flags,
        };
      }
      const shipped = parse(readFileSync(SHIPPED_SCHEDULER_CONFIG, 'utf8'));
      // The same API client limits as the scheduler without the extender: at the default 50 QPS
      // binding alone caps a profile at ~50 pods/s after a burst of 100, which measured the limit,
      // not zonekeeper (1.36, 300 pods: 4.1 s against 0.9 s).
      shipped.clientConnection = { ...shipped.clientConnection, kubeconfig, qps: 500, burst: 1000 };
      shipped.leaderElection = { leaderElect: false };
      for (const e of shipped.extenders) e.urlPrefix = urlPrefix;
      // The shipped profile, under this scheduler's name (another extender's scheduler must not take zonekeeper's pods).
      for (const p of shipped.profiles) p.schedulerName = s.name;
      s.configure?.(shipped);
      return { config: shipped, flags };
    },
  };
}

/** GET over HTTPS to a component's self-signed health endpoint. */
function healthy(url: string): Promise<boolean> {
  return new Promise((resolve) => {
    const req = https.get(url, { rejectUnauthorized: false, timeout: 2000 }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.on('error', () => resolve(false));
  });
}

export interface SchedulerSpec {
  /** The profile's schedulerName. */
  name: string;
  /** Call zonekeeper as an extender (extenders are global to a 1.20 scheduler process). */
  extender: boolean;
  /** Call this extender instead of zonekeeper, with the same configuration. */
  extenderUrl?: string;
  /** Changes the shipped configuration for this scheduler (a variant measured beside it). */
  configure?: (config: Record<string, any>) => void;
}

export interface Zonekeeper {
  extender: string;
  admin: string;
  pid: number;
  /** Its log file (pino's JSON lines). */
  log: string;
  /** How it ended (a signal or an exit code), or undefined while it runs. */
  ended(): string | undefined;
  stop(signal?: NodeJS.Signals): Promise<void>;
}

export class ControlPlane {
  readonly dir = mkdtempSync(join(tmpdir(), 'zk-e2e-'));
  readonly minor: number;
  readonly profile: ReturnType<typeof versionProfile>;
  readonly kubeconfig = join(this.dir, 'kubeconfig');
  api!: ApiClient;
  private procs: { name: string; child: ChildProcess }[] = [];
  /** How each process that has ended ended: a setup failure is told with it. */
  private ended = new Map<ChildProcess, string>();
  private apiServerArgs: string[] = [];
  /** More kube-apiserver flags, set before `up` (an AdmissionConfiguration for webhook client certificates). */
  apiServerExtraFlags: string[] = [];
  private extenderPort = 0;
  private schedulerPorts = new Map<string, number>();
  private schedulerSpecs = new Map<string, SchedulerSpec>();
  zonekeeper: Zonekeeper | undefined;

  constructor(private readonly bin: string) {
    this.minor = this.minorVersion('kube-apiserver');
    this.profile = versionProfile(this.minor);
  }

  /** Minor version of a control-plane binary ("Kubernetes v1.20.2" → 20). */
  minorVersion(binary: 'kube-apiserver' | 'kube-scheduler' | 'kube-controller-manager'): number {
    const out = execFileSync(join(this.bin, binary), ['--version'], { encoding: 'utf8' });
    return Number(/v1\.(\d+)\./.exec(out)?.[1] ?? 0);
  }

  /** Starts a process beside the control plane (its log in `dir`), stopped with it. */
  start(name: string, cmd: string, args: string[], env: NodeJS.ProcessEnv = process.env): ChildProcess {
    const log = openSync(join(this.dir, `${name}.log`), 'a');
    const child = spawn(cmd, args, { stdio: ['ignore', log, log], env });
    closeSync(log);
    child.once('exit', (code, signal) => this.ended.set(child, signal ? `killed by ${signal}` : `exited with ${code}`));
    this.procs.push({ name, child });
    return child;
  }

  logPath(name: string): string {
    return join(this.dir, `${name}.log`);
  }

  /**
   * Every process's state and the last lines of its log, for a failure's message: CI shows only
   * part of its output, so the cause must travel with the error.
   */
  diagnosis(lines = 3): string {
    return this.procs.map(({ name, child }) => {
      let tail = '';
      try {
        tail = readFileSync(this.logPath(name), 'utf8').trimEnd().split('\n').slice(-lines).map((l) => `\n    ${l.slice(0, 300)}`).join('');
      } catch { /* no log yet */ }
      return `  ${name} (pid ${child.pid}): ${this.ended.get(child) ?? 'running'}${tail}`;
    }).join('\n');
  }

  /** Runs a step; if it fails, the error carries the control plane's diagnosis (and it is printed). */
  async diagnosed<T>(step: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      const told = `${step} failed: ${(err as Error).message}\n${this.diagnosis()}`;
      console.log(told.split('\n').map((l) => `# ${l}`).join('\n'));
      throw new Error(told, { cause: err });
    }
  }

  async up(schedulers: SchedulerSpec[], zonekeeperConfig: Record<string, unknown> = {}): Promise<void> {
    await this.diagnosed('control plane start', () => this.bringUp(schedulers, zonekeeperConfig));
  }

  private async bringUp(schedulers: SchedulerSpec[], zonekeeperConfig: Record<string, unknown>): Promise<void> {
    const [etcdClient, etcdPeer, apiPort] = [await freePort(), await freePort(), await freePort()];
    this.extenderPort = await freePort();
    this.start('etcd', 'etcd', [
      '--data-dir', join(this.dir, 'etcd'), '--listen-client-urls', `http://127.0.0.1:${etcdClient}`,
      '--advertise-client-urls', `http://127.0.0.1:${etcdClient}`, '--listen-peer-urls', `http://127.0.0.1:${etcdPeer}`,
      '--initial-advertise-peer-urls', `http://127.0.0.1:${etcdPeer}`, '--initial-cluster', `default=http://127.0.0.1:${etcdPeer}`,
      '--log-level', 'warn',
    ]);
    execFileSync('openssl', ['genrsa', '-out', join(this.dir, 'sa.key'), '2048'], { stdio: 'ignore' });
    execFileSync('openssl', ['rsa', '-in', join(this.dir, 'sa.key'), '-pubout', '-out', join(this.dir, 'sa.pub')], { stdio: 'ignore' });
    const token = 'zonekeeper-e2e-admin-token';
    writeFileSync(join(this.dir, 'tokens.csv'), `${token},admin,admin,"system:masters"\n`);
    mkdirSync(join(this.dir, 'certs'));
    this.apiServerArgs = [
      `--etcd-servers=http://127.0.0.1:${etcdClient}`, '--bind-address=127.0.0.1', '--advertise-address=127.0.0.1',
      `--secure-port=${apiPort}`, ...this.profile.apiServerFlags, `--cert-dir=${join(this.dir, 'certs')}`,
      `--token-auth-file=${join(this.dir, 'tokens.csv')}`, '--authorization-mode=RBAC',
      `--service-account-key-file=${join(this.dir, 'sa.pub')}`, `--service-account-signing-key-file=${join(this.dir, 'sa.key')}`,
      '--service-account-issuer=https://kubernetes.default.svc', '--disable-admission-plugins=ServiceAccount',
      '--service-cluster-ip-range=10.96.0.0/24', '--max-requests-inflight=2000', '--max-mutating-requests-inflight=1000',
      ...this.apiServerExtraFlags,
    ];
    const apiServer = this.start('kube-apiserver', join(this.bin, 'kube-apiserver'), this.apiServerArgs);
    writeFileSync(this.kubeconfig, stringify({
      apiVersion: 'v1', kind: 'Config', 'current-context': 'e2e',
      clusters: [{ name: 'e2e', cluster: { server: `https://127.0.0.1:${apiPort}`, 'insecure-skip-tls-verify': true } }],
      users: [{ name: 'admin', user: { token } }],
      contexts: [{ name: 'e2e', context: { cluster: 'e2e', user: 'admin' } }],
    }));
    this.api = kubeApiClient(loadClusterAccess({ kind: 'kubeconfig', path: this.kubeconfig }));
    await until('kube-apiserver /readyz', async () => (await this.api.request('GET', '/readyz', { timeoutMs: 2000 })).status === 200, 90_000, apiServer);

    this.start('kube-controller-manager', join(this.bin, 'kube-controller-manager'), [
      `--kubeconfig=${this.kubeconfig}`, '--controllers=statefulset,replicaset,deployment,garbagecollector,persistentvolume-binder,disruption',
      '--leader-elect=false', ...this.profile.controllerManagerFlags, '--kube-api-qps=500', '--kube-api-burst=1000',
      '--concurrent-replicaset-syncs=10', '--concurrent-deployment-syncs=10', ...(process.env.ZK_E2E_KCM_FLAGS ?? '').split(' ').filter(Boolean),
    ]);
    for (const s of schedulers) await this.startScheduler(s);
    await this.startZonekeeper(zonekeeperConfig);
  }

  private async startScheduler(s: SchedulerSpec): Promise<void> {
    this.schedulerSpecs.set(s.name, s);
    const healthz = await freePort();
    const { config, flags } = this.profile.schedulerConfig(s, this.kubeconfig, this.extenderPort, healthz);
    const path = join(this.dir, `scheduler-${s.name}.yaml`);
    writeFileSync(path, stringify(config));
    const child = this.start(`kube-scheduler-${s.name}`, join(this.bin, 'kube-scheduler'), [`--config=${path}`, ...flags, '--v=2']);
    const ok = this.minor < 25
      ? async () => (await fetch(`http://127.0.0.1:${healthz}/healthz`)).ok
      : () => healthy(`https://127.0.0.1:${healthz}/healthz`);
    await until(`kube-scheduler ${s.name} healthz`, ok, 60_000, child);
    this.schedulerPorts.set(s.name, healthz);
  }

  /** A process of the control plane by name (the latest of that name): whether it runs, and how it ended. */
  processState(name: string): { pid: number; ended: string | undefined } | undefined {
    const found = this.procs.findLast((p) => p.name === name);
    return found && { pid: found.child.pid!, ended: this.ended.get(found.child) };
  }

  /** SIGKILLs one kube-scheduler (if it still runs) and starts it again with the same configuration. */
  async restartScheduler(name: string): Promise<void> {
    const spec = this.schedulerSpecs.get(name);
    if (!spec) throw new Error(`no kube-scheduler ${name}`);
    await this.stopScheduler(name);
    await this.startScheduler(spec);
  }

  /** SIGKILLs one kube-scheduler, if it runs: its pods stay Pending until `restartScheduler`. */
  async stopScheduler(name: string): Promise<void> {
    const i = this.procs.findLastIndex((p) => p.name === `kube-scheduler-${name}`);
    if (i >= 0) {
      const { child } = this.procs[i]!;
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGKILL');
        await exited;
      }
      this.procs.splice(i, 1);
    }
  }

  /** A kube-scheduler's Prometheus metrics, as text. */
  schedulerMetrics(name: string): Promise<string> {
    const port = this.schedulerPorts.get(name);
    if (port === undefined) throw new Error(`no kube-scheduler ${name}`);
    if (this.minor < 25) return fetch(`http://127.0.0.1:${port}/metrics`).then((r) => r.text());
    return new Promise((resolve, reject) => {
      https.get(`https://127.0.0.1:${port}/metrics`, { rejectUnauthorized: false, timeout: 10_000 }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c) => (text += c));
        res.on('end', () => (res.statusCode === 200 ? resolve(text) : reject(new Error(`kube-scheduler ${name} /metrics: ${res.statusCode} ${text.slice(0, 200)}`))));
      }).on('error', reject);
    });
  }

  /** Starts (or restarts) zonekeeper on the extender port the schedulers call. */
  async startZonekeeper(config: Record<string, unknown> = {}, kubeconfig = this.kubeconfig): Promise<Zonekeeper> {
    this.zonekeeper = await this.launchZonekeeper('zonekeeper', this.extenderPort, config, kubeconfig);
    return this.zonekeeper;
  }

  /** Another zonekeeper replica against the same API server, on ports no scheduler calls; as admin unless given a kubeconfig. */
  async startReplica(name: string, config: Record<string, unknown> = {}, kubeconfig = this.kubeconfig): Promise<Zonekeeper> {
    return this.launchZonekeeper(name, await freePort(), config, kubeconfig);
  }

  /** A ServiceAccount's token from the TokenRequest API, as a pod of it would have. */
  async serviceAccountToken(namespace: string, name: string, audiences?: string[]): Promise<string> {
    const res = await this.api.request('POST', `/api/v1/namespaces/${namespace}/serviceaccounts/${name}/token`, {
      body: JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 3600, ...(audiences ? { audiences } : {}) } }), contentType: 'application/json', timeoutMs: 30_000,
    });
    if (res.status !== 201 && res.status !== 200) throw new Error(`TokenRequest for ${namespace}/${name}: ${res.status} ${res.body.slice(0, 300)}`);
    return JSON.parse(res.body).status.token;
  }

  /**
   * Applies `rbac` (a manifest's ServiceAccount and roles) and restarts zonekeeper as the
   * ServiceAccount zonekeeper-system/zonekeeper, its Lease in that namespace: only what it is granted.
   */
  async restartZonekeeperAs(rbac: Record<string, unknown>[], config: Record<string, unknown> = {}): Promise<Zonekeeper> {
    const file = join(this.dir, 'rbac.yaml');
    writeFileSync(file, rbac.map((o) => stringify(o)).join('---\n'));
    this.kubectl(['apply', '-f', file]);
    await this.zonekeeper?.stop();
    return this.startZonekeeper({ ...config, leaderElection: { namespace: 'zonekeeper-system' } }, await this.serviceAccountKubeconfig('zonekeeper-system', 'zonekeeper'));
  }

  /** A kubeconfig for a ServiceAccount, with a token from the TokenRequest API: zonekeeper with only the RBAC it is granted. */
  async serviceAccountKubeconfig(namespace: string, name: string): Promise<string> {
    const config = parse(readFileSync(this.kubeconfig, 'utf8'));
    config.users = [{ name: 'admin', user: { token: await this.serviceAccountToken(namespace, name) } }];
    const path = join(this.dir, `kubeconfig-${namespace}-${name}`);
    writeFileSync(path, stringify(config));
    return path;
  }

  private async launchZonekeeper(name: string, extenderPort: number, config: Record<string, unknown>, kubeconfig = this.kubeconfig): Promise<Zonekeeper> {
    const adminPort = await freePort();
    const path = join(this.dir, `${name}.yaml`);
    writeFileSync(path, stringify({
      logLevel: 'debug',
      ...config,
      extender: { listen: `127.0.0.1:${extenderPort}`, legacyFailedNodes: this.profile.legacyFailedNodes, ...(config.extender as object) },
      admin: { ...(config.admin as object), listen: `127.0.0.1:${adminPort}` },
      cluster: { crdRecheckSeconds: 1, ...(config.cluster as object) },
      // Short leases, so that a killed replica's lease expires within a scenario.
      leaderElection: { leaseDurationSeconds: 4, renewDeadlineSeconds: 3, retryPeriodSeconds: 0.5, ...(config.leaderElection as object) },
    }));
    // Node's flags as the image runs it; ZK_E2E_NODE_FLAGS adds more (--cpu-prof, --trace-gc).
    const nodeFlags = ['--max-semi-space-size=32', ...(process.env.ZK_E2E_NODE_FLAGS ?? '').split(' ').filter(Boolean)];
    const child = this.start(name, process.execPath, [...nodeFlags, join(ROOT, 'dist/cli.js'), 'serve', '--config', path, '--kubeconfig', kubeconfig]);
    const admin = `http://127.0.0.1:${adminPort}`;
    try {
      await until(`${name} /readyz`, async () => (await fetch(`${admin}/readyz`)).ok, 60_000, child);
    } catch (err) {
      // Not ready in time (kube-apiserver down meanwhile): it must not live on untracked, holding its ports.
      child.kill('SIGKILL');
      throw err;
    }
    return {
      extender: `http://127.0.0.1:${extenderPort}`,
      admin,
      pid: child.pid!,
      log: this.logPath(name),
      ended: () => this.ended.get(child),
      stop: async (signal: NodeJS.Signals = 'SIGTERM') => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        const exited = new Promise((r) => child.once('exit', r));
        child.kill(signal);
        await exited;
      },
    };
  }

  /** CPU seconds (user + system) each running process of the control plane has used, by name. */
  cpuSeconds(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const { name, child } of this.procs) {
      try {
        out[name] = (out[name] ?? 0) + processCpuSeconds(child.pid!);
      } catch {
        // exited
      }
    }
    return out;
  }

  /** kubectl against this control plane; throws with its output when it fails. */
  kubectl(args: string[]): string {
    return execFileSync('kubectl', ['--kubeconfig', this.kubeconfig, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  }

  /** SIGKILLs kube-apiserver, as a crashed control-plane node would lose it; etcd keeps the state. */
  async killApiServer(): Promise<void> {
    const i = this.procs.findIndex((p) => p.name === 'kube-apiserver');
    const { child } = this.procs[i]!;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGKILL');
    await exited;
    this.procs.splice(i, 1);
  }

  /** Starts kube-apiserver again on the same port and etcd; resolves once it is ready. */
  async startApiServer(): Promise<void> {
    const child = this.start('kube-apiserver', join(this.bin, 'kube-apiserver'), this.apiServerArgs);
    await until('kube-apiserver /readyz after the restart', async () => (await this.api.request('GET', '/readyz', { timeoutMs: 2000 })).status === 200, 90_000, child);
  }

  /** Stops every process this harness started, by pid, pass or fail. */
  async down(keepDir = false): Promise<void> {
    const alive = this.procs.filter(({ child }) => child.exitCode === null && child.signalCode === null);
    const stop = (procs: typeof alive) => Promise.all(procs.map(({ child }) => new Promise<void>((resolve) => {
      const t = setTimeout(() => child.kill('SIGKILL'), 10_000);
      child.once('exit', () => { clearTimeout(t); resolve(); });
      child.kill('SIGTERM');
    })));
    // zonekeeper first, while the API server still answers: its shutdown (the Lease's release) ends cleanly.
    await stop(alive.filter(({ name }) => name.startsWith('zonekeeper')));
    await stop(alive.filter(({ name }) => !name.startsWith('zonekeeper')));
    this.procs = [];
    if (!keepDir) rmSync(this.dir, { recursive: true, force: true });
  }
}
