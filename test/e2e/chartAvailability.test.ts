// End-to-end: the chart's own pods on a real API server, installed with the real Helm. There are
// no kubelets: Kube.kubelet() makes bound pods Ready and finishes deletions, and kube-scheduler and
// kube-controller-manager (its disruption controller too) are real. Installed into a namespace that
// enforces the `restricted` Pod Security Standard, the pods are admitted, and the default scheduler
// puts them on two nodes of two zones; then two `kubectl drain`s of both their nodes at once evict
// one at a time (the PodDisruptionBudget), so one replica stays Ready at every sample.
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { CHART, E2E_IMAGE, findHelm, renderChart } from '../support/helm.js';
import { ControlPlane, kubeVersions } from './controlPlane.js';
import { eventually, Kube, type Obj } from './kube.js';
import { tearDown } from './workloads.js';

const found = findHelm();
const skip = 'skip' in found ? found.skip : false;
const NS = 'zk-restricted';
const SELECTOR = 'app.kubernetes.io/name=zonekeeper';
const ZONE = 'topology.kubernetes.io/zone';

const isReady = (p: Obj) => !p.metadata.deletionTimestamp && (p.status?.conditions ?? []).some((c: Obj) => c.type === 'Ready' && c.status === 'True');

for (const k of kubeVersions()) describe(`[${k.version}] the chart's own pods: restricted, one per zone, drained one at a time`, { skip }, () => {
  const helmBin = 'helm' in found ? found.helm : '';
  const cp = new ControlPlane(k.bin);
  let kube: Kube;
  let stopKubelet: () => Promise<void>;
  const helm = (args: string[]) => execFileSync(helmBin, [...args, '--kubeconfig', cp.kubeconfig], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  const readyPods = async () => (await kube.list('v1', 'Pod', NS, SELECTOR)).filter(isReady);

  before(async () => {
    await cp.up([{ name: 'default-scheduler', extender: false }]);
    kube = new Kube(cp.api);
    for (const zone of ['zone-a', 'zone-b']) for (const i of [1, 2]) await kube.addNode(`node-${zone.slice(5)}-${i}`, zone);
    await kube.create({
      apiVersion: 'v1', kind: 'Namespace',
      metadata: { name: NS, labels: { 'pod-security.kubernetes.io/enforce': 'restricted', 'pod-security.kubernetes.io/enforce-version': 'latest' } },
    });
    stopKubelet = kube.kubelet(NS, 200);
  });
  after(async () => {
    await stopKubelet();
    await tearDown(cp);
  });

  it(`[${k.version}] installed into a namespace enforcing restricted: its pods (and helm test's) are admitted, on two nodes of two zones`, async () => {
    // The namespace does enforce: a pod without the standard's settings is refused.
    assert.throws(() => cp.kubectl(['run', 'plain', '-n', NS, '--image=busybox', '--restart=Never', '--dry-run=server']),
      (e: Obj) => /violates PodSecurity "restricted:latest"/.test(e.stderr));
    helm(['install', 'zonekeeper', CHART, '--namespace', NS, ...E2E_IMAGE]);
    const placed = await eventually('two Ready replicas', async () => {
      const pods = await readyPods();
      return pods.length === 2 && pods;
    }, 60_000, 250);
    const nodes = placed.map((p) => p.spec.nodeName as string);
    const zones = await Promise.all(nodes.map(async (n) => (await kube.get('v1', 'Node', undefined, n)).metadata.labels[ZONE] as string));
    assert.notEqual(nodes[0], nodes[1]);
    assert.deepEqual([...zones].sort(), ['zone-a', 'zone-b'], 'one replica per zone');
    const images = placed[0]!.spec.containers.map((c: Obj) => `${c.name}=${c.image}`);
    assert.ok(images.includes(`kube-scheduler=registry.k8s.io/kube-scheduler:v${k.version}`), `the cluster's own kube-scheduler: ${images.join(', ')}`);
    const rs = (await kube.list('apps/v1', 'ReplicaSet', NS))[0]!;
    assert.equal((rs.status.conditions ?? []).find((c: Obj) => c.type === 'ReplicaFailure'), undefined, 'no pod creation refused');
    // Fields a disabled feature gate would drop without a word are kept by this version.
    const stored = await kube.get('apps/v1', 'Deployment', NS, 'zonekeeper-scheduler');
    assert.equal(stored.spec.template.spec.topologySpreadConstraints[0].nodeTaintsPolicy, 'Honor');
    const pdb = await eventually('the disruption controller allows one disruption', async () => {
      const p = await kube.get('policy/v1', 'PodDisruptionBudget', NS, 'zonekeeper');
      return p.status?.disruptionsAllowed === 1 && p;
    }, 30_000, 250);
    assert.equal(pdb.spec.unhealthyPodEvictionPolicy, 'AlwaysAllow');
    // helm test's pod, of the managed mode (it mounts the webhook's CA), passes the same admission.
    const tests = renderChart(helmBin, ['scheduler.enabled=false', 'admission.enabled=true'], NS, 'zonekeeper', k.version);
    const file = join(cp.dir, 'helm-test.yaml');
    writeFileSync(file, tests.split(/^---$/m).filter((d) => /helm\.sh\/hook: test/.test(d)).join('---'));
    assert.match(cp.kubectl(['apply', '--dry-run=server', '-f', file]), /^pod\/zonekeeper-test created \(server dry run\)$/m);
    console.log(`# [${k.version}] restricted namespace: 2 pods admitted, on ${nodes.join(' and ')} (${zones.join(', ')}); kube-scheduler v${k.version}`);
  });

  it(`[${k.version}] two kubectl drains of both replicas' nodes at once evict one replica at a time: one stays Ready throughout`, async () => {
    const before = await readyPods();
    assert.equal(before.length, 2);
    const drained = before.map((p) => p.spec.nodeName as string);
    let minReady = 2, samples = 0, sampling = true;
    const sampler = (async () => {
      while (sampling) {
        minReady = Math.min(minReady, (await readyPods()).length);
        samples++;
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
    // Without a kubelet the first evicted replica stays away until the stand-in runs again: the
    // second eviction must wait for it.
    await stopKubelet();
    const started = Date.now();
    const outs = new Map<string, string>();
    const drain = (node: string) => new Promise<{ node: string; code: number | null; ms: number }>((resolve) => {
      const child = spawn('kubectl', ['--kubeconfig', cp.kubeconfig, 'drain', node, '--ignore-daemonsets', '--delete-emptydir-data', '--timeout=180s'], { stdio: ['ignore', 'pipe', 'pipe'] });
      outs.set(node, '');
      const add = (c: Buffer) => outs.set(node, outs.get(node) + String(c));
      child.stdout.on('data', add);
      child.stderr.on('data', add);
      child.on('exit', (code) => resolve({ node, code, ms: Date.now() - started }));
    });
    const drains = Promise.all(drained.map(drain));
    // kubectl retries an eviction the budget refuses (429) every 5 s, and says so.
    const refusals = () => [...outs.values()].reduce((n, out) => n + (out.match(/violate the pod's disruption budget/g) ?? []).length, 0);
    await eventually('one replica evicted, the other refused by the budget', async () => {
      const evicted = (await kube.list('v1', 'Pod', NS, SELECTOR)).filter((p) => p.metadata.deletionTimestamp).length;
      return evicted === 1 && refusals() >= 1;
    }, 60_000, 100);
    const heldMs = Date.now() - started;
    assert.equal((await readyPods()).length, 1, 'the other replica is still Ready');
    stopKubelet = kube.kubelet(NS, 200);
    const results = await drains;
    sampling = false;
    await sampler;
    for (const r of results) assert.equal(r.code, 0, `kubectl drain ${r.node}: ${outs.get(r.node)}`);
    const refused = refusals();
    assert.ok(minReady >= 1, `a Ready replica at every sample (min ${minReady} of ${samples} samples)`);
    const now = await eventually('two Ready replicas again', async () => {
      const pods = await readyPods();
      return pods.length === 2 && pods;
    }, 60_000, 250);
    const nodes = now.map((p) => p.spec.nodeName as string);
    for (const n of nodes) assert.ok(!drained.includes(n), `${n} was drained`);
    const zones = await Promise.all(nodes.map(async (n) => (await kube.get('v1', 'Node', undefined, n)).metadata.labels[ZONE] as string));
    assert.deepEqual([...zones].sort(), ['zone-a', 'zone-b'], 'one replica per zone again');
    console.log(`# [${k.version}] drained ${drained.join(' and ')} at once: ${results.map((r) => `${r.node} in ${(r.ms / 1000).toFixed(1)} s`).join(', ')}; `
      + `one evicted and the other refused by the budget at ${(heldMs / 1000).toFixed(1)} s (kubelet paused), ${refused} refusal(s) in all; `
      + `Ready replicas never below ${minReady} (${samples} samples); now on ${nodes.join(' and ')} (${zones.join(', ')})`);
  });
});
