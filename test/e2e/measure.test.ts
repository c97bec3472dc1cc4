// Measurement, printed (ratios of rounds held only to floors far below them): the pods of one StatefulSet over nodes in 3
// zones, through the zonekeeper scheduler, through one that uses only the in-tree
// PodTopologySpread (zone, maxSkew 1), through zonekeeper's configuration calling a bare
// echo extender instead (the floor of any extender), and through the default scheduler with
// the zone gate; then the zones left after scaling each down to 3. On 1.36+ the policy variant too:
// each pod's zone written by kube-apiserver from zonekeeper's seat table, no call at all.
// 1,500 pods over 100 nodes on every version (ZK_E2E_PODS); 1,000 pods over 5,000 Node objects (no kubelets)
// on the newest one.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { after, before, describe, it } from 'node:test';
import { startEchoExtender } from '../support/echoExtender.js';
import { loopbackPki, startEchoWebhook } from '../support/echoWebhook.js';
import { processCpuSeconds } from '../support/proc.js';
import { admissionConfig, admissionReady, webhookConfiguration } from './admissionWebhook.js';
import { ControlPlane, kubeVersions } from './controlPlane.js';
import { eventually, Kube, type Obj } from './kube.js';
import { admissionReviews, applySeatPolicy, DECIDED_BY, seated, shippedScope } from './seatPolicy.js';

const ZONES = ['zone-a', 'zone-b', 'zone-c'];

/** zonekeeper's zone gate (docs/autoscalers.md). */
const ZONE_GATE = 'zonekeeper.io/zone';
/** The gate of the one-write floor: held by the test, not by zonekeeper. */
const FLOOR_GATE = 'e2e.zonekeeper.io/hold';
// Regression guards on one loaded two-core machine, far below what it measures (zonekeeper /
// PodTopologySpread 0.8-1.2, gate-only 0.5-1.3, 2-7 ms inside zonekeeper per filter in a burst):
// a halving fails; the goals are in docs/performance.md and npm run bench.
const RATIO_FLOOR = 0.4;
const GATE_RATIO_FLOOR = 0.25;
const MEAN_MS_BOUND = 25;

/** The label that puts a pod in the scope of zonekeeper's webhook (the MutatingWebhookConfiguration's objectSelector). */
const ADMIT = 'e2e.zonekeeper.io/admission';
/** ... and of a bare echo webhook's (allowed, no patch): the floor of any webhook. */
const ECHO_ADMIT = 'e2e.zonekeeper.io/echo-admission';
/** The policy variant's namespace: labelled for the shipped binding, so the policy reads the seat table here and nowhere else. */
const POLICY_NS = 'bench-policy';

function statefulSet(name: string, schedulerName: string, spread: boolean, PODS: number, gated: false | string = false, admitted: false | string = false): Obj {
  return {
    apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name, namespace: 'bench' },
    spec: {
      replicas: PODS, serviceName: name, podManagementPolicy: 'Parallel', selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name, ...(admitted ? { [admitted]: 'enabled' } : {}) } },
        spec: {
          schedulerName, terminationGracePeriodSeconds: 0, ...(gated ? { schedulingGates: [{ name: gated }] } : {}),
          containers: [{ name: 'c', image: 'busybox', resources: { requests: { cpu: '10m' } } }],
          ...(spread ? { topologySpreadConstraints: [{ maxSkew: 1, topologyKey: 'topology.kubernetes.io/zone', whenUnsatisfiable: 'DoNotSchedule', labelSelector: { matchLabels: { app: name } } }] } : {}),
        },
      },
    },
  };
}

/**
 * Variants of the shipped scheduler configuration, measured after the rest when named in
 * ZK_E2E_VARIANTS (comma-separated, parts joined by +; each through zonekeeper as profile
 * `zk-<variant>`; `pts` and `echo` name the profiles above again), ZK_E2E_ROUNDS times in
 * turn, with the median of each printed last: what decided the shipped configuration
 * (docs/performance.md#end-to-end).
 */
const VARIANTS: Record<string, (config: Record<string, any>) => void> = {
  /** The shipped configuration. */
  shipped: () => {},
  /** zonekeeper's prioritize too (weight 5): one more HTTP round trip per pod. */
  prioritize: (c) => { for (const e of c.extenders) Object.assign(e, { prioritizeVerb: 'prioritize', weight: 5 }); },
  /** kube-scheduler's default spreading constraints on again. */
  'default-spread': (c) => { for (const p of c.profiles) delete p.pluginConfig; },
  /** kube-scheduler's adaptive sample of nodes instead of all of them. */
  sampled: (c) => { delete c.percentageOfNodesToScore; },
};
interface Variant {
  name: string; scheduler: string; spread: boolean; gated?: string; admitted?: string; policy?: boolean; configure?: (config: Record<string, any>) => void;
}
const variants: Variant[] = (process.env.ZK_E2E_VARIANTS ?? '').split(',').filter(Boolean).map((v) => {
  if (v === 'pts') return { name: 'pts', scheduler: 'spread', spread: true };
  if (v === 'echo') return { name: 'echo', scheduler: 'echo', spread: false };
  if (v === 'gate') return { name: 'gate', scheduler: 'spread', spread: false, gated: ZONE_GATE };
  // Admission mode: the default scheduler, each pod's zone written by zonekeeper's webhook as it is created.
  if (v === 'admission') return { name: 'admission', scheduler: 'spread', spread: false, admitted: ADMIT };
  // The floor of any webhook: PodTopologySpread, each create also reviewed by a bare echo webhook over TLS.
  if (v === 'admission-echo') return { name: 'admission-echo', scheduler: 'spread', spread: true, admitted: ECHO_ADMIT };
  // The policy transport (1.36+): admission's scope, but each pod's zone written by kube-apiserver
  // from the seat table (a frozen list, seated before the burst); the webhook skips what it marked.
  if (v === 'policy') return { name: 'policy', scheduler: 'spread', spread: false, admitted: ADMIT, policy: true };
  // The floor of any gate: the test lifts each pod's gate with one conditional patch writing a
  // zone (ordinal mod 3), as soon as its watch shows the pod; no decision, no cache.
  if (v === 'one-write') return { name: 'one-write', scheduler: 'spread', spread: false, gated: FLOOR_GATE };
  const configure = v.split('+').map((part) => VARIANTS[part] ?? (() => { throw new Error(`ZK_E2E_VARIANTS: no variant ${part} (${Object.keys(VARIANTS).join(', ')})`); })());
  const name = `zk-${v.replace(/\+/g, '-')}`;
  return { name, scheduler: name, spread: false, configure: (c: Record<string, any>) => { for (const f of configure) f(c); } };
});
const rounds = Number(process.env.ZK_E2E_ROUNDS ?? 1);

const versions = kubeVersions();
const newest = Math.max(...versions.map((k) => k.minor));
// ZK_E2E_SIZES=100 skips the 5,000-node case (it takes a few minutes).
const sizes = (process.env.ZK_E2E_SIZES ?? '100,5000').split(',').map(Number);
// 1,500 pods at 100 nodes: a round lasts several seconds (300 bound in about one, mostly noise).
const podsAt100 = Number(process.env.ZK_E2E_PODS ?? 1500);
const cases = versions.flatMap((k) => [{ k, NODES: 100, PODS: podsAt100 }, ...(k.minor === newest ? [{ k, NODES: 5000, PODS: 1000 }] : [])])
  .filter((c) => sizes.includes(c.NODES));

for (const { k, NODES, PODS } of cases) describe(`throughput at ${NODES} nodes: zonekeeper vs in-tree PodTopologySpread, and zones kept on scale-down on Kubernetes ${k.version}`, () => {
  const cp = new ControlPlane(k.bin);
  let kube: Kube;
  let zones: Map<string, string>;
  const results: Record<string, { seconds: number; podsPerSecond: number; zonesAt3: number }> = {};

  let echo: Awaited<ReturnType<typeof startEchoExtender>>;
  let echoWebhook: Awaited<ReturnType<typeof startEchoWebhook>> | undefined;
  let admissionPort = 0;
  const policy = variants.some((v) => v.policy) && k.minor >= 36;

  before(async () => {
    echo = await startEchoExtender();
    const webhook = await admissionConfig();
    admissionPort = webhook.port;
    await cp.up([
      { name: 'zonekeeper', extender: true }, { name: 'spread', extender: false },
      { name: 'echo', extender: true, extenderUrl: `${echo.url.origin}/third` },
      ...variants.filter((v) => v.configure).map((v) => ({ name: v.name, extender: true, configure: v.configure })),
    ], { logLevel: 'info', admission: webhook.admission, ...(policy ? { policy: { seatTable: true } } : {}) });
    kube = new Kube(cp.api);
    // The shipped matchConditions, for admission as for the policy: a pod the policy marked is not sent.
    const admitting = webhookConfiguration(admissionPort, { objectSelector: { matchLabels: { [ADMIT]: 'enabled' } } });
    shippedScope(admitting.webhooks[0]);
    await kube.create(admitting);
    if (policy) {
      applySeatPolicy(cp);
      await kube.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: POLICY_NS, labels: { 'zonekeeper.io/admission': 'enabled' } } });
    }
    if (variants.some((v) => v.admitted === ECHO_ADMIT)) {
      const pki = loopbackPki();
      echoWebhook = await startEchoWebhook(pki);
      const config = webhookConfiguration(Number(echoWebhook.url.port), { objectSelector: { matchLabels: { [ECHO_ADMIT]: 'enabled' } } });
      config.metadata.name = 'echo';
      config.webhooks[0].name = 'pods.echo.e2e.zonekeeper.io';
      config.webhooks[0].clientConfig.caBundle = Buffer.from(pki.caBundle).toString('base64');
      await kube.create(config);
    }
    await cp.diagnosed(`[${k.version}, ${NODES} nodes] setup`, async () => {
      // 50 at a time: one API server and etcd share the machine with everything else.
      for (let i = 0; i < NODES; i += 50) await Promise.all(Array.from({ length: Math.min(50, NODES - i) }, (_, j) => kube.addNode(`node-${i + j}`, ZONES[(i + j) % 3]!)));
      zones = await kube.nodeZones();
      await kube.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'bench' } });
      await eventually('zonekeeper caches the nodes', async () => {
        const cache = await (await fetch(`${cp.zonekeeper!.admin}/debug/cache`)).json() as Obj;
        return cache.kinds.find((k: Obj) => k.kind === 'nodes').objects === NODES;
      }, 120_000);
    });
  });

  after(async () => {
    echo?.child.kill();
    echoWebhook?.child.kill();
    await cp.down(!!process.env.ZK_E2E_KEEP);
  });

  /**
   * A read for the printed figures (zonekeeper's admin port, a kube-scheduler's metrics). A
   * failed attempt is printed with its cause and the control plane's state (one CI run lost
   * zonekeeper's /metrics once: 'fetch failed', cause unknown), then retried; three failures
   * fail the test.
   */
  async function figures(what: string, read: () => Promise<string>): Promise<string> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await read();
      } catch (err) {
        const cause = (err as { cause?: Error }).cause?.message ?? '';
        console.log(`# ${what} failed (attempt ${attempt}): ${(err as Error).message} ${cause}\n${cp.diagnosis().replace(/^/gm, '# ')}`);
        if (attempt === 3) throw err;
        await new Promise((r) => setTimeout(r, 500));
      }
    }
  }
  const adminText = (path: string) => figures(`GET zonekeeper ${path}`, async () => (await fetch(`${cp.zonekeeper!.admin}${path}`)).text());

  /**
   * kube-scheduler's scheduling_algorithm_duration_seconds (sum, count): it has no metric of its
   * own for extenders (none in 1.36's binary), but this histogram times the filtering and
   * scoring of a pod, the extender's calls included.
   */
  async function algorithmSeconds(scheduler: string): Promise<{ sum: number; count: number }> {
    const text = await figures(`kube-scheduler ${scheduler} /metrics`, () => cp.schedulerMetrics(scheduler));
    const read = (what: string) => Number(new RegExp(`^scheduler_scheduling_algorithm_duration_seconds_${what}(?:\\{\\})? (\\S+)$`, 'm').exec(text)?.[1] ?? NaN);
    return { sum: read('sum'), count: read('count') };
  }

  /** The API server's requests so far, by verb and resource, and those not answered 2xx by code too (apiserver_request_total), watches aside. */
  async function apiRequests(): Promise<Map<string, number>> {
    const text = (await cp.api.request('GET', '/metrics')).body;
    const out = new Map<string, number>();
    for (const m of text.matchAll(/^apiserver_request_total\{([^}]*)\} (\S+)$/gm)) {
      const label = (l: string) => new RegExp(`${l}="([^"]*)"`).exec(m[1]!)?.[1] ?? '';
      const verb = label('verb');
      if (verb === 'WATCH' || label('resource') === '') continue;
      const key = `${verb} ${label('resource')}${label('subresource') ? `/${label('subresource')}` : ''}`;
      out.set(key, (out.get(key) ?? 0) + Number(m[2]));
      // Refused requests counted apart too (a create refused as AlreadyExists was still admitted).
      if (!label('code').startsWith('2')) out.set(`${key} (${label('code')})`, (out.get(`${key} (${label('code')})`) ?? 0) + Number(m[2]));
    }
    return out;
  }

  /**
   * kube-apiserver's time in each admission plugin so far (apiserver_admission_controller_admission_duration_seconds_sum,
   * by name), and the webhooks' (by webhook): wall time, so a queue (ResourceQuota's) shows as much as CPU.
   */
  async function admissionSeconds(): Promise<Map<string, number>> {
    const text = (await cp.api.request('GET', '/metrics')).body;
    const out = new Map<string, number>();
    for (const m of text.matchAll(/^apiserver_admission_(controller|webhook)_admission_duration_seconds_sum\{([^}]*)\} (\S+)$/gm)) {
      const key = `${m[1]} ${/name="([^"]*)"/.exec(m[2]!)?.[1]} ${/type="([^"]*)"/.exec(m[2]!)?.[1]}`;
      out.set(key, (out.get(key) ?? 0) + Number(m[3]));
    }
    return out;
  }

  /**
   * With ZK_E2E_PROFILE=<folder>: a CPU profile of kube-apiserver while the burst runs
   * (ZK_E2E_PROFILE_SECONDS, default 6), saved as <folder>/<round>.pprof for go tool pprof.
   */
  function profileApiServer(name: string): Promise<void> {
    const folder = process.env.ZK_E2E_PROFILE;
    if (!folder) return Promise.resolve();
    const config = parse(readFileSync(cp.kubeconfig, 'utf8'));
    const seconds = Number(process.env.ZK_E2E_PROFILE_SECONDS ?? 6);
    const url = `${config.clusters[0].cluster.server}/debug/pprof/profile?seconds=${seconds}`;
    return new Promise((resolve) => execFile('curl', ['-sk', '-H', `Authorization: Bearer ${config.users[0].user.token}`, '-o', join(folder, `${name}.pprof`), url],
      (err) => { if (err) console.log(`# profile of ${name} failed: ${err.message}`); resolve(); }));
  }

  /** The control plane's processes and the echo extender's: the floor's own CPU is part of what it costs. */
  const cpuSeconds = (): Record<string, number> => ({
    ...cp.cpuSeconds(), 'echo extender': processCpuSeconds(echo.child.pid!), ...(echoWebhook ? { 'echo webhook': processCpuSeconds(echoWebhook.child.pid!) } : {}),
  });

  /** The zone gate keeper's decisions so far (by outcome) and how far zonekeeper's log has got. */
  async function keeperState(): Promise<{ decisions: Map<string, number>; logBytes: number }> {
    const text = await adminText('/metrics');
    const decisions = new Map([...text.matchAll(/^zonekeeper_gate_decisions_total\{outcome="([^"]+)"\} (\S+)$/gm)].map((m) => [m[1]!, Number(m[2])]));
    return { decisions, logBytes: statSync(cp.zonekeeper!.log).size };
  }

  /**
   * What the keeper did in a round: its decisions by outcome, and what its log says of leading
   * and warns of, so that a slow round says where it waited (in one CI round half were lifted only 17 s after all were created).
   */
  function keeperMeanwhile(before: Awaited<ReturnType<typeof keeperState>>, after: Awaited<ReturnType<typeof keeperState>>): string {
    const decided = [...after.decisions].map(([outcome, n]) => `${outcome} ${n - (before.decisions.get(outcome) ?? 0)}`).join(', ');
    const log = readFileSync(cp.zonekeeper!.log).subarray(before.logBytes, after.logBytes).toString('utf8').split('\n').filter(Boolean);
    const told = log.flatMap((line) => {
      try {
        const entry = JSON.parse(line) as { level: number; msg: string };
        return entry.level >= 40 || /leading/.test(entry.msg) ? [line.slice(0, 240)] : [];
      } catch { return []; }
    });
    return `gate decisions ${decided || 'none'}; ${told.length} log lines on leading or at warn and above${told.length ? `, the first: ${told.slice(0, 4).join(' | ')}` : ''}`;
  }

  /**
   * A floor on a ratio of two rounds: one shared two-core machine stalls now and then, so a
   * round below it is measured once more and the better one counts; a regression in the code
   * fails both.
   */
  async function floorHeld(over: string, under: string, floor: number, again: (name: string) => Promise<void>): Promise<void> {
    if (Number(ratio(over, under)) < floor) {
      console.log(`# [${k.version}, ${NODES} nodes] ${over} / ${under} ${ratio(over, under)} is below ${floor}: measured once more`);
      await again(`${over}-again`);
      const best = [results[over], results[`${over}-again`]].filter((r) => r !== undefined).sort((a, b) => b.podsPerSecond - a.podsPerSecond)[0];
      if (best) results[over] = best;
    }
    console.log(`# [${k.version}, ${NODES} nodes] throughput ratio ${over} / ${under}: ${ratio(over, under)} (asserted >= ${floor})`);
    assert.ok(Number(ratio(over, under)) >= floor, `${over} / ${under} ${ratio(over, under)}`);
  }

  /** One profile's throughput over another's; a profile that failed is named, not a cascade of TypeErrors. */
  function ratio(over: string, under: string): string {
    const [a, b] = [results[over], results[under]];
    if (!a || !b) return `none (the ${a ? under : over} profile failed, above)`;
    return (a.podsPerSecond / b.podsPerSecond).toFixed(2);
  }

  function run(name: string, scheduler: string, spread: boolean, gated: false | string = false, admitted: false | string = false,
    byPolicy = false): Promise<void> {
    return cp.diagnosed(`[${k.version}, ${NODES} nodes] ${name}`, () => measure(name, scheduler, spread, gated, admitted, byPolicy));
  }

  /** zonekeeper_request_duration_seconds per verb: sum (s) and count so far. */
  async function zonekeeperTime(): Promise<Record<string, { sum: number; count: number }>> {
    const metrics = await adminText('/metrics');
    const read = (what: string, verb: string) => Number(new RegExp(`zonekeeper_request_duration_seconds_${what}\\{verb="${verb}"\\} (\\S+)`).exec(metrics)?.[1] ?? 0);
    return Object.fromEntries(['filter', 'prioritize'].map((verb) => [verb, { sum: read('sum', verb), count: read('count', verb) }]));
  }

  /**
   * The one-write floor's writer: each pod created is ungated by one merge patch, conditional on
   * the version seen, writing the zone of its ordinal; 32 writes at once, as zonekeeper's keeper.
   */
  function oneWriter(): { onCreated(pod: Obj): void; failed(): number } {
    const queue: Obj[] = [];
    let inflight = 0, failures = 0;
    const next = (): void => {
      while (inflight < 32 && queue.length > 0) {
        const pod = queue.shift()!;
        inflight++;
        const zone = ZONES[Number(pod.metadata.name.split('-').pop()) % 3]!;
        kube.patch('v1', 'Pod', 'bench', pod.metadata.name, { metadata: { resourceVersion: pod.metadata.resourceVersion }, spec: { schedulingGates: null, nodeSelector: { 'topology.kubernetes.io/zone': zone } } })
          .catch(() => { failures++; }).finally(() => { inflight--; next(); });
      }
    };
    return { onCreated: (pod) => { if (pod.spec?.schedulingGates?.some((g: Obj) => g.name === FLOOR_GATE)) { queue.push(pod); next(); } },
      failed: () => failures };
  }

  /**
   * The policy's StatefulSet, created with no replicas and a frozen list, and seated (its table
   * entry published and applied by kube-apiserver) before the burst: the burst is its scale-up.
   */
  async function seatedStatefulSet(name: string, scheduler: string, admitted: false | string): Promise<Obj> {
    const template = statefulSet(name, scheduler, false, 0, false, admitted);
    const frozen = { 'zonekeeper.io/zones': ZONES.join(',') };
    const sts = await kube.create({ ...template, metadata: { ...template.metadata, namespace: POLICY_NS, annotations: frozen } });
    await seated(kube, sts, ZONES, PODS - 1);
    return sts;
  }

  /** Every pod of the policy's burst on its pin (ordinal k: zones[k mod 3]), marked by the policy, none reviewed by zonekeeper. */
  async function assertSeated(name: string, reviewsBefore: number): Promise<void> {
    const pods = await kube.podsOf(POLICY_NS, `app=${name}`);
    assert.equal(pods.length, PODS);
    const off = pods.filter((p) => zones.get(p.spec.nodeName) !== ZONES[Number(p.metadata.name.split('-').pop()) % 3]).map((p) => p.metadata.name);
    assert.deepEqual(off, [], 'pods off their pins');
    assert.deepEqual(pods.filter((p) => p.metadata.labels?.[DECIDED_BY] !== 'policy').map((p) => p.metadata.name), [], 'pods the policy did not mark');
    const reviews = await admissionReviews(cp.zonekeeper!.admin) - reviewsBefore;
    console.log(`# [${k.version}, ${NODES} nodes] ${name}: ${PODS} pods on their pins, marked by the policy; zonekeeper's admission reviews meanwhile: ${reviews}`);
    assert.equal(reviews, 0, 'no admission review for the pods the policy decided');
  }

  async function measure(name: string, scheduler: string, spread: boolean, gated: false | string, admitted: false | string, byPolicy: boolean): Promise<void> {
    const throughZonekeeper = name === 'zonekeeper' || name.startsWith('zk-');
    const namespace = byPolicy ? POLICY_NS : 'bench';
    const seatedSts = byPolicy ? await seatedStatefulSet(name, scheduler, admitted) : undefined;
    const reviewsBefore = byPolicy ? await admissionReviews(cp.zonekeeper!.admin) : 0;
    const timeBefore = throughZonekeeper ? await zonekeeperTime() : undefined;
    const started = Date.now();
    const cpuBefore = cpuSeconds();
    const algorithmBefore = await algorithmSeconds(scheduler);
    const requestsBefore = await apiRequests();
    const admissionBefore = await admissionSeconds();
    const writer = gated === FLOOR_GATE ? oneWriter() : undefined;
    const keeperBefore = gated === ZONE_GATE ? await keeperState() : undefined;
    const bound = kube.watchBound(namespace, `app=${name}`, PODS, 600_000, writer?.onCreated);
    const profiled = profileApiServer(name);
    await (seatedSts ? kube.scale('StatefulSet', namespace, name, PODS) : kube.create(statefulSet(name, scheduler, spread, PODS, gated, admitted)));
    await bound.done;
    const ended = Date.now();
    await profiled;
    assert.equal(writer?.failed() ?? 0, 0, 'every one-write patch succeeded');
    // When the watch saw half and all of the pods created, ungated and bound: where a profile waits.
    const at = (m: Map<string, number>, q: number) => {
      const xs = [...m.values()].sort((a, b) => a - b);
      return ((xs[Math.ceil(q * xs.length) - 1]! - started) / 1000).toFixed(1);
    };
    console.log(`# [${k.version}, ${NODES} nodes] ${name}: seconds to half / all of the pods: created ${at(bound.seen.created, 0.5)} / ${at(bound.seen.created, 1)}, ungated ${at(bound.seen.ungated, 0.5)} / ${at(bound.seen.ungated, 1)}, bound ${at(bound.seen.bound, 0.5)} / ${at(bound.seen.bound, 1)}`);
    const seconds = (ended - started) / 1000;
    if (keeperBefore) console.log(`# [${k.version}, ${NODES} nodes] ${name}: zonekeeper meanwhile: ${keeperMeanwhile(keeperBefore, await keeperState())}`);
    // Where the machine's CPU went meanwhile: everything shares its cores.
    const cpuAfter = cpuSeconds();
    const used = Object.entries(cpuAfter).map(([proc, s]) => [proc, s - (cpuBefore[proc] ?? 0)] as const)
      .filter(([, s]) => s >= 0.05).sort((a, b) => b[1] - a[1]);
    console.log(`# [${k.version}, ${NODES} nodes] ${name}: CPU seconds while binding: ${used.map(([proc, s]) => `${proc} ${s.toFixed(1)}`).join(', ')}`);
    const requests = [...await apiRequests()].map(([key, n]) => [key, n - (requestsBefore.get(key) ?? 0)] as const)
      .filter(([, n]) => n > 0).sort((a, b) => b[1] - a[1]);
    console.log(`# [${k.version}, ${NODES} nodes] ${name}: API requests while binding: ${requests.map(([key, n]) => `${key} ${n}`).join(', ')}`);
    const admission = [...await admissionSeconds()].map(([key, s]) => [key, s - (admissionBefore.get(key) ?? 0)] as const)
      .filter(([, s]) => s >= 0.01).sort((a, b) => b[1] - a[1]);
    console.log(`# [${k.version}, ${NODES} nodes] ${name}: kube-apiserver's admission time while binding (s, ms per pod): ${admission.map(([key, s]) => `${key} ${s.toFixed(2)} (${((s / PODS) * 1000).toFixed(2)})`).join(', ')}`);
    const algorithm = await algorithmSeconds(scheduler);
    const attempts = algorithm.count - algorithmBefore.count;
    if (timeBefore) {
      const after = await zonekeeperTime();
      for (const verb of ['filter', 'prioritize']) {
        const count = after[verb]!.count - timeBefore[verb]!.count;
        const mean = count > 0 ? (((after[verb]!.sum - timeBefore[verb]!.sum) / count) * 1000).toFixed(3) : '-';
        console.log(`# [${k.version}, ${NODES} nodes] ${name}: zonekeeper ${verb}: ${count} requests, mean ${mean} ms inside zonekeeper (asserted <= ${MEAN_MS_BOUND} ms; the bench's target is 0.5 ms at 100 names)`);
        // A regression guard on a loaded two-core machine, not the target: npm run bench holds that.
        if (count > 0) assert.ok(Number(mean) <= MEAN_MS_BOUND, `${verb}: mean ${mean} ms inside zonekeeper`);
      }
    }
    console.log(`# [${k.version}, ${NODES} nodes] ${name}: kube-scheduler's scheduling algorithm (filter and score, extender calls included): ${attempts} pods, mean ${(((algorithm.sum - algorithmBefore.sum) / attempts) * 1000).toFixed(2)} ms`);
    if (byPolicy) await assertSeated(name, reviewsBefore);
    await kube.scale('StatefulSet', namespace, name, 3);
    const left = await eventually(`${name} down to 3`, async () => {
      await kube.reapTerminating(namespace);
      const pods = await kube.podsOf(namespace, `app=${name}`);
      return pods.length === 3 && pods;
    }, 300_000);
    const zonesAt3 = new Set(left.map((p: Obj) => zones.get(p.spec.nodeName))).size;
    results[name] = { seconds, podsPerSecond: PODS / seconds, zonesAt3 };
    console.log(`# [${k.version}, ${NODES} nodes] ${name}: ${PODS} pods bound in ${seconds.toFixed(1)} s = ${(PODS / seconds).toFixed(1)} pods/s; zones covered after scaling to 3: ${zonesAt3}`);
  }

  it(`[${k.version}, ${NODES} nodes] schedules ${PODS} pods over ${NODES} nodes with the in-tree PodTopologySpread`, async () => {
    await run('spread', 'spread', true);
  });

  it(`[${k.version}, ${NODES} nodes] schedules ${PODS} pods over ${NODES} nodes with zonekeeper, and keeps 3 zones at 3 replicas`, async () => {
    await run('zonekeeper', 'zonekeeper', false);
    assert.equal(results.zonekeeper!.zonesAt3, 3);
    // The goal is 0.9 at 100 nodes, 1.0 at 5,000 (docs/performance.md); the floor is a regression guard.
    await floorHeld('zonekeeper', 'spread', RATIO_FLOOR, (again) => run(again, 'zonekeeper', false));
    const metrics = await adminText('/metrics');
    const connections = /zonekeeper_http_connections_total\{listener="extender"\} (\S+)/.exec(metrics)?.[1];
    console.log(`# [${k.version}, ${NODES} nodes] kube-scheduler opened ${connections} connections to the extender`);
  });

  // The floor of any extender: the same kube-scheduler configuration calling an extender that
  // passes every third name (as many as zonekeeper passes a pinned pod) and scores nothing.
  // What it costs is kube-scheduler's extender machinery (two HTTP round trips, JSON both
  // ways) plus the bare echo.
  it(`[${k.version}, ${NODES} nodes] schedules ${PODS} pods over ${NODES} nodes through a bare echo extender`, async () => {
    await run('echo', 'echo', false);
    console.log(`# [${k.version}, ${NODES} nodes] throughput ratio echo extender / PodTopologySpread: ${ratio('echo', 'spread')}; zonekeeper / echo extender: ${ratio('zonekeeper', 'echo')}`);
  });

  // Gate-only mode: the default scheduler (no extender, no constraint) with every pod gated;
  // zonekeeper decides each zone and writes it into the pod's spec (docs/autoscalers.md).
  it(`[${k.version}, ${NODES} nodes] schedules ${PODS} gated pods over ${NODES} nodes through the default scheduler and the zone gate, and keeps 3 zones at 3 replicas`, async () => {
    await run('gate', 'spread', false, ZONE_GATE);
    assert.equal(results.gate!.zonesAt3, 3);
    await floorHeld('gate', 'spread', GATE_RATIO_FLOOR, (again) => run(again, 'spread', false, ZONE_GATE));
    console.log(`# [${k.version}, ${NODES} nodes] throughput ratio gate-only / zonekeeper's scheduler: ${ratio('gate', 'zonekeeper')}`);
  });

  // Admission mode: the default scheduler (no extender, no constraint, no gate in the template);
  // zonekeeper's webhook writes each pod's zone into it as it is created (docs/design.md#admission).
  it(`[${k.version}, ${NODES} nodes] schedules ${PODS} pods over ${NODES} nodes through the default scheduler and zonekeeper's admission webhook, and keeps 3 zones at 3 replicas`, async () => {
    await admissionReady(kube, cp.zonekeeper!.admin);
    const connections = async () => {
      const text = await adminText('/metrics');
      const read = (re: RegExp) => Number(re.exec(text)?.[1] ?? 0);
      return {
        opened: read(/^zonekeeper_http_connections_total\{listener="admission"\} (\S+)$/m), reviews: read(/^zonekeeper_request_duration_seconds_count\{verb="admission"\} (\S+)$/m),
        dropped: read(/^zonekeeper_http_connections_dropped_total\{listener="admission"\} (\S+)$/m),
      };
    };
    const before = await connections();
    await run('admission', 'spread', false, false, ADMIT);
    const after = await connections();
    console.log(`# [${k.version}, ${NODES} nodes] admission: kube-apiserver opened ${after.opened - before.opened} TLS connections for ${after.reviews - before.reviews} reviews; ${after.dropped - before.dropped} dropped at http.maxConnections`);
    assert.equal(results.admission!.zonesAt3, 3);
    await floorHeld('admission', 'spread', GATE_RATIO_FLOOR, (again) => run(again, 'spread', false, false, ADMIT));
    console.log(`# [${k.version}, ${NODES} nodes] throughput ratio admission / gate-only: ${ratio('admission', 'gate')}`);
  });

  for (let round = 1; round <= rounds; round++) {
    for (const v of variants) {
      // MutatingAdmissionPolicy is served from 1.36 on.
      const skip = v.policy && k.minor < 36 ? `the policy needs Kubernetes 1.36+; ${k.version} keeps the webhook alone` : false;
      if (skip && round === 1) console.log(`# [${k.version}, ${NODES} nodes] ${v.name}: skipped, ${skip}`);
      it(`[${k.version}, ${NODES} nodes] round ${round}: ${PODS} pods through ${v.name}`, { skip }, async () => {
        const name = `${v.name}-${round}`;
        await run(name, v.scheduler, v.spread, v.gated, v.admitted, v.policy);
        assert.equal(results[name]!.zonesAt3 >= (v.name === 'echo' ? 1 : 3), true);
      });
    }
  }
  if (variants.length > 0) {
    it(`[${k.version}, ${NODES} nodes] the variants' medians over ${rounds} rounds`, () => {
      const roundsOf = (v: Variant) => Array.from({ length: rounds }, (_, i) => results[`${v.name}-${i + 1}`]?.podsPerSecond).filter((x): x is number => x !== undefined).sort((a, b) => a - b);
      // Of an even count, the mean of the middle two.
      const median = (v: Variant) => {
        const xs = roundsOf(v), mid = xs.length / 2;
        return xs.length === 0 ? NaN : xs.length % 2 ? xs[Math.floor(mid)]! : (xs[mid - 1]! + xs[mid]!) / 2;
      };
      const pts = variants.find((v) => v.name === 'pts');
      const base = pts ? median(pts) : results.spread?.podsPerSecond ?? NaN;
      for (const v of variants) console.log(`# [${k.version}, ${NODES} nodes] ${v.name}: median ${median(v).toFixed(1)} pods/s over ${rounds} rounds (${roundsOf(v).map((x) => x.toFixed(1)).join(', ')}); / PodTopologySpread ${(median(v) / base).toFixed(2)}`);
    });
  }
});
