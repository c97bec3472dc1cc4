// End-to-end: workload health (docs/design.md#health) against a real kube-apiserver and
// kube-controller-manager: `zonekeeper audit` on the live cluster and on a `kubectl get -o yaml`
// file, the metrics, and the LayoutAtRisk / LayoutRestored Events of the running zonekeeper.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ControlPlane, kubeVersions } from './controlPlane.js';
import { eventually, type Kube, type Obj } from './kube.js';
import { SCHEDULER, statefulSet as sharedStatefulSet, tearDown, threeZoneCluster } from './workloads.js';

const cli = new URL('../../dist/cli.js', import.meta.url).pathname;

/** A StatefulSet of zonekeeper's scheduler; `nodeName` puts every pod on that node without any scheduler. */
const statefulSet = (namespace: string, name: string, replicas: number, nodeName?: string): Obj =>
  sharedStatefulSet(namespace, name, replicas, { schedulerName: SCHEDULER, nodeName });

/** `kubectl get nodes,pods,pv,pvc,sts,rs,deploy -A -o yaml`, with Debian's kubectl. */
function kubectlGetYaml(kubeconfig: string): string {
  const out = spawnSync('kubectl', ['--kubeconfig', kubeconfig, 'get', 'nodes,pods,pv,pvc,sts,rs,deploy', '-A', '-o', 'yaml'], { encoding: 'utf8', maxBuffer: 1 << 28 });
  if (out.status !== 0) throw new Error(`kubectl get: ${out.stderr}`);
  return out.stdout;
}

const audit = (...args: string[]) => spawnSync(process.execPath, [cli, 'audit', ...args], { encoding: 'utf8', timeout: 120_000 });

for (const k of kubeVersions()) describe(`workload health with kube-scheduler ${k.version} and a real kube-apiserver`, () => {
  const cp = new ControlPlane(k.bin);
  let kube: Kube;
  let zones: Map<string, string>;
  let stopKubelet: () => Promise<void>;
  const metric = async (name: string, labels: string) => {
    const text = await (await fetch(`${cp.zonekeeper!.admin}/metrics`)).text();
    const line = text.split('\n').find((l) => l.startsWith(`${name}{`) && l.includes(labels));
    return line === undefined ? undefined : Number(line.split(' ').pop());
  };
  const events = async (namespace: string, name: string) => (await kube.list('v1', 'Event', namespace)).filter((e) => e.involvedObject?.name === name);

  before(async () => {
    ({ kube, zones } = await threeZoneCluster(cp));
    await kube.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'h1' } });
    stopKubelet = kube.kubelet('h1');
  });

  after(async () => {
    await stopKubelet?.();
    await tearDown(cp);
  });

  it(`[${k.version}] 22. audit: a StatefulSet put in one zone before zonekeeper (pod template nodeName) exits 1 naming it, on the live cluster and from a kubectl get -o yaml file`, async () => {
    await kube.create(statefulSet('h1', 'piled', 3, 'node-a-1'));
    await kube.create(statefulSet('h1', 'spread', 3));
    const piled = await kube.bound('h1', 'app=piled', 3, zones);
    assert.deepEqual([...new Set(piled.values())], ['zone-a']);
    const spread = await kube.bound('h1', 'app=spread', 3, zones);
    assert.equal(new Set(spread.values()).size, 3, 'zonekeeper placed the other one over 3 zones');

    const live = audit('--kubeconfig', cp.kubeconfig, '-n', 'h1');
    console.log(live.stdout.split('\n').map((l) => `# ${l}`).join('\n'));
    assert.equal(live.status, 1, live.stderr);
    const rows = live.stdout.trim().split('\n');
    assert.match(rows[1]!, /^h1\s+piled\s+StatefulSet\s+3\s+1\s+3\s+2\s+yes\s+1 of 3 zones hold pods/);
    assert.match(rows[2]!, /^h1\s+spread\s+StatefulSet\s+3\s+3\s+3\s+0\s+no\s+ok$/);

    const file = join(cp.dir, 'cluster.yaml');
    writeFileSync(file, kubectlGetYaml(cp.kubeconfig));
    const offline = audit('--snapshot', file, '-n', 'h1', '-o', 'json');
    assert.equal(offline.status, 1, offline.stderr);
    const body = JSON.parse(offline.stdout) as { workloads: { key: string; atRisk: boolean; causes: Record<string, number> }[] };
    assert.deepEqual(body.workloads.map((h) => [h.key, h.atRisk]), [['h1/StatefulSet/piled', true], ['h1/StatefulSet/spread', false]]);
    assert.equal(body.workloads[0]!.causes['placed-before'], 2);
  });

  it(`[${k.version}] 23. the running zonekeeper says so too: the at-risk metric and a LayoutAtRisk Event; fixed by a rollout through the scheduler, LayoutRestored`, async () => {
    assert.equal(await eventually('zonekeeper_workload_at_risk of piled', () => metric('zonekeeper_workload_at_risk', 'name="piled"').then((v) => v === 1)), true);
    assert.equal(await metric('zonekeeper_workload_zones', 'name="piled"'), 1);
    assert.equal(await metric('zonekeeper_workload_zones_wanted', 'name="piled"'), 3);
    assert.equal(await metric('zonekeeper_workload_at_risk', 'name="spread"'), 0);
    const risk = await eventually('a LayoutAtRisk Event on piled', async () => (await events('h1', 'piled')).find((e) => e.reason === 'LayoutAtRisk'));
    assert.equal(risk.type, 'Warning');
    assert.match(risk.message, /1 of 3 zones hold pods \(zone-b, zone-c empty\)/);
    assert.equal((await events('h1', 'spread')).filter((e) => e.reason === 'LayoutAtRisk').length, 0);

    // The template without nodeName: the StatefulSet controller replaces the pods one by one, and
    // kube-scheduler (with zonekeeper) places them.
    await kube.patch('apps/v1', 'StatefulSet', 'h1', 'piled', { spec: { template: { spec: { nodeName: null } } } });
    const placed = await eventually('piled over 3 zones', async () => {
      const pods = await kube.podsOf('h1', 'app=piled');
      const where = new Set(pods.map((p) => zones.get(p.spec.nodeName)));
      return pods.length === 3 && where.size === 3 && !where.has(undefined) && pods;
    }, 120_000);
    assert.equal(placed.length, 3);
    const restored = await eventually('a LayoutRestored Event on piled', async () => (await events('h1', 'piled')).find((e) => e.reason === 'LayoutRestored'), 30_000);
    assert.equal(restored.type, 'Normal');
    assert.equal(await eventually('the metric back to 0', () => metric('zonekeeper_workload_at_risk', 'name="piled"').then((v) => v === 0)), true);
    const atRisk = (await events('h1', 'piled')).filter((e) => e.reason === 'LayoutAtRisk');
    assert.equal(atRisk.length, 1, 'one Event for the one transition');
    assert.equal(atRisk[0]!.count ?? 1, 1);
  });
});
