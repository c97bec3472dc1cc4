// Hostile requests shared by their test (test/http/hostile.test.ts: the answer) and the bench
// (test/bench/hostile.ts: the time).
import { deployment, node, storeOf, workloadSpread, zoneSubset } from './builders.js';
import { fixture, testApp } from './app.js';

const ZONES = ['zone-a', 'zone-b', 'zone-c'];

/** 5,000 tainted nodes under a WorkloadSpread and a filter whose pod carries 60,000 tolerations (one of them the nodes'). */
export function toleratedNodesCase() {
  const zoneNodes = ZONES.flatMap((z) => Array.from({ length: 1667 }, (_, i) => node(`node-${z.slice(5)}-${i}`, z, { taints: [{ key: 'dedicated', value: 'db', effect: 'NoSchedule' }] })));
  const [deploy, rs] = deployment('web', 5);
  rs!.metadata.name = 'web-6c7d8bd9bc';
  const app = testApp(storeOf([...zoneNodes, deploy!, rs!, workloadSpread('ws', { kind: 'Deployment', name: 'web' }, [zoneSubset('a', 'zone-a', 2), zoneSubset('b', 'zone-b')])]));
  const req = fixture('filter-fullnodes-deployment-pod.json').body;
  req.Nodes = null;
  req.NodeNames = zoneNodes.map((n) => n.metadata.name);
  req.Pod.spec.tolerations = [
    ...Array.from({ length: 60_000 }, (_, i) => ({ key: `other-${i}`, operator: 'Exists', effect: 'NoSchedule' })),
    { key: 'dedicated', operator: 'Equal', value: 'db', effect: 'NoSchedule' },
  ];
  return { app, req };
}
