// The hostile requests of test/http/hostile.test.ts, timed: their answers are asserted there,
// their speed here (a seat far into a sequence, reserved ordinal ranges, tolerations × nodes).
import { slimWorkload } from '../../src/cluster/convert.js';
import { expectedOrdinals } from '../../src/placement/workload.js';
import { advancedStatefulSet, nodes, pvc, statefulSet, storeOf, type Raw } from '../support/builders.js';
import { toleratedNodesCase } from '../support/hostile.js';
import { fixture, testApp } from '../support/app.js';
import { fmt } from './measure.js';
import { target } from './targets.js';

const ZONES = ['zone-a', 'zone-b', 'zone-c'];

const filterBody = (name: string, labels?: Record<string, string>) => {
  const b = fixture('filter-nodenames-statefulset-pod.json').body;
  b.Pod.spec.volumes = [];
  b.Pod.metadata.name = name;
  b.Pod.metadata.labels = labels ?? {};
  b.NodeNames = ['node-a-1', 'node-b-1', 'node-c-1'];
  return b;
};

async function ms(f: () => unknown): Promise<number> {
  const t = performance.now();
  await f();
  return performance.now() - t;
}

export async function hostileCase(): Promise<void> {
  const plain = testApp(storeOf([...nodes(ZONES, 2), statefulSet('db', 3), pvc('data-db-0', { volumeName: '' })]));
  const weighted = (prefs: Raw) => testApp(storeOf([...nodes(ZONES, 2), statefulSet('db', 3, { annotations: { 'zonekeeper.io/zone-preferences': JSON.stringify(prefs) } })]));
  const heavy = weighted({ zones: { 'zone-a': { weight: 2 }, 'zone-b': { weight: 1 }, 'zone-c': { weight: 1 } } });
  const limited = weighted({ zones: { 'zone-a': { weight: 1, minReplicas: 1 }, '*': { weight: 1 } } });
  const cases: [string, () => unknown][] = [
    ['filter: ordinal 1,000,000,000 from the name', () => plain.post('/filter', filterBody('db-1000000000'))],
    ['filter: pod-index 2,147,483,646', () => plain.post('/filter', filterBody('db-x', { 'apps.kubernetes.io/pod-index': '2147483646' }))],
    ['filter: weighted preferences, ordinal 1,000,000,001', () => heavy.post('/filter', filterBody('db-1000000001'))],
    ['filter: minimums beyond the work limit, ordinal 2,000,000,000', () => limited.post('/filter', filterBody('db-2000000000'))],
    ['reserveOrdinals 0-2147483645: the next ordinals', () => expectedOrdinals(slimWorkload('AdvancedStatefulSet', advancedStatefulSet('x', 2, { reserveOrdinals: ['0-2147483645'] })), 100)],
  ];
  console.log('\nhostile requests (answers asserted in test/http/hostile.test.ts)');
  for (const [what, run] of cases) {
    await run();
    const t = await ms(run);
    console.log(`${what.padEnd(64)} ${fmt(t).padStart(8)} ms`);
    target(`hostile: ${what}`, t, 50, true, ' ms');
  }
  const { app, req } = toleratedNodesCase();
  const t = await ms(() => app.post('/filter', req));
  console.log(`${'filter: 60,000 tolerations × 5,000 tainted nodes'.padEnd(64)} ${fmt(t, 0).padStart(8)} ms`);
  target('hostile: 60,000 tolerations × 5,000 tainted nodes', t, 1000, true, ' ms');
}
