// End-to-end: seed 002's scenarios (the Federated ReplicaSet preferences) at 10 replicas on a
// real control plane, zones taken offline as a real outage looks (NotReady, unreachable
// taints), each beside `zonekeeper plan` for the same input: the bound counts per zone are
// the layout the planner prints for zonekeeper (docs/user-guide.md#zone-preferences).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { ControlPlane, kubeVersions } from './controlPlane.js';
import type { Kube, Obj } from './kube.js';
import { deployment, tearDown, threeZoneCluster, ZONES } from './workloads.js';

const CLI = new URL('../../dist/cli.js', import.meta.url).pathname;

interface Scenario {
  name: string;
  preferences: Obj;
  offline?: string[];
  /** Replicas placed before the preferences apply (scenario 7): the Deployment starts with these in zone-a. */
  existingInA?: number;
}

const star = (zone: Obj) => ({ zones: { '*': zone } });
const SCENARIOS: Scenario[] = [
  { name: '1. even', preferences: { rebalance: true, ...star({ weight: 1 }) } },
  { name: '1. even, B and C offline', preferences: { rebalance: true, ...star({ weight: 1 }) }, offline: ['zone-b', 'zone-c'] },
  { name: '2. max 2 per zone', preferences: { rebalance: true, ...star({ maxReplicas: 2, weight: 1 }) } },
  { name: '2. min 2, weight 0', preferences: { rebalance: true, ...star({ minReplicas: 2, weight: 0 }) } },
  { name: '2. min = max = 2', preferences: { rebalance: true, ...star({ minReplicas: 2, maxReplicas: 2 }) } },
  { name: '3. min 20, weight 0', preferences: { rebalance: true, ...star({ minReplicas: 20, weight: 0 }) } },
  { name: '4. C max 3, B offline', preferences: { rebalance: true, zones: { '*': { weight: 1 }, 'zone-c': { maxReplicas: 3, weight: 1 } } }, offline: ['zone-b'] },
  { name: '4. C max 3, A and B offline', preferences: { rebalance: true, zones: { '*': { weight: 1 }, 'zone-c': { maxReplicas: 3, weight: 1 } } }, offline: ['zone-a', 'zone-b'] },
  { name: '5. A first, A offline', preferences: { zones: { 'zone-a': { weight: 1_000_000 }, 'zone-b': { weight: 1 }, 'zone-c': { weight: 1 } } }, offline: ['zone-a'] },
  { name: '6. A twice B and C', preferences: { zones: { 'zone-a': { weight: 2 }, 'zone-b': { weight: 1 }, 'zone-c': { weight: 1 } } } },
  { name: '7. A has 4 already, no rebalance', preferences: { rebalance: false, ...star({ weight: 1 }) }, existingInA: 4 },
];

for (const k of kubeVersions()) describe(`seed 002's zone preferences with kube-scheduler ${k.version} and a real kube-apiserver`, () => {
  const cp = new ControlPlane(k.bin);
  let kube: Kube;
  let zones: Map<string, string>;
  const nodesOf = (zone: string) => [...zones].filter(([, z]) => z === zone).map(([n]) => n);

  before(async () => {
    ({ kube, zones } = await threeZoneCluster(cp));
  });

  after(() => tearDown(cp));

  SCENARIOS.forEach((sc, i) => it(`[${k.version}] 20.${i + 1} scenario ${sc.name}: 10 replicas bound as zonekeeper plan lays them out`, async () => {
    const ns = `pref${i + 1}`;
    await kube.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    for (const z of sc.offline ?? []) for (const n of nodesOf(z)) await kube.setOffline(n, true);
    try {
      const d = deployment(ns, 'app', sc.existingInA ?? 10);
      let existing: Record<string, number> = {};
      if (sc.existingInA) {
        // Placed before the preferences: zone-a only.
        d.metadata.annotations = { 'zonekeeper.io/zone-preferences': JSON.stringify({ zones: { 'zone-a': { weight: 1 } } }) };
        await kube.create(d);
        await kube.bound(ns, 'app=app', sc.existingInA, zones);
        existing = { 'zone-a': sc.existingInA };
        await kube.patch('apps/v1', 'Deployment', ns, 'app', { metadata: { annotations: { 'zonekeeper.io/zone-preferences': JSON.stringify(sc.preferences) } }, spec: { replicas: 10 } });
      } else {
        d.metadata.annotations = { 'zonekeeper.io/zone-preferences': JSON.stringify(sc.preferences) };
        await kube.create(d);
      }
      const capacity = Object.fromEntries((sc.offline ?? []).map((z) => [z, 0]));
      const plan = JSON.parse(execFileSync(process.execPath, [CLI, 'plan', '--replicas', '10', '--zones', ZONES.join(','),
        '--preferences', JSON.stringify(sc.preferences), '--capacity', JSON.stringify(capacity), '--existing', JSON.stringify(existing),
        '--key', `${ns}/Deployment/app`], { encoding: 'utf8' }));
      const want: Record<string, number> = plan.zonekeeper;
      const total = Object.values(want).reduce((a, b) => a + b, 0);
      // Every pod the layout places is bound; the rest stay pending (asked again after 5 s).
      const countBound = async () => {
        const pods = await kube.podsOf(ns, 'app=app');
        const per = Object.fromEntries(ZONES.map((z) => [z, 0]));
        for (const p of pods) if (p.spec.nodeName) per[zones.get(p.spec.nodeName)!]!++;
        return { per, pending: pods.filter((p) => !p.spec.nodeName).length, pods: pods.length };
      };
      let got = await countBound();
      const deadline = Date.now() + 90_000;
      while (Date.now() < deadline && (got.pods < 10 || Object.values(got.per).reduce((a, b) => a + b, 0) < total)) {
        await new Promise((r) => setTimeout(r, 250));
        got = await countBound();
      }
      if (total < 10) {
        await new Promise((r) => setTimeout(r, 5000));
        got = await countBound();
      }
      const show = (m: Record<string, number>) => ZONES.map((z) => `${z.slice(5)}=${m[z] ?? 0}`).join(' ');
      console.log(`# [${k.version}] scenario ${sc.name}: bound ${show(got.per)} (${got.pending} pending); zonekeeper plan: ${show(want)}; Federated plan: ${show(plan.plan)}`);
      assert.deepEqual(got.per, Object.fromEntries(ZONES.map((z) => [z, want[z] ?? 0])));
      assert.equal(got.pending, 10 - total);
    } finally {
      for (const z of sc.offline ?? []) for (const n of nodesOf(z)) await kube.setOffline(n, false);
    }
  }));
});
