// The layout page's data at 150,000 pods: one GET /debug/layouts, in process. Its time is time
// the extender waits (same event loop), at every 3 s poll of an open page.
import { addObject } from '../../src/cluster/source.js';
import { ClusterStore } from '../../src/cluster/store.js';
import { testApp } from '../support/app.js';
import { nodeName, rawNode, rawPod } from './cluster.js';
import { target } from './targets.js';
import { fmt } from './measure.js';

const NODES = 5000;
const PODS = 150_000;

function layoutCluster(statefulSets: number): ClusterStore {
  const store = new ClusterStore();
  for (let i = 0; i < NODES; i++) addObject(store, rawNode(i));
  const per = PODS / statefulSets;
  for (let s = 0; s < statefulSets; s++) {
    const name = `store-${s}`;
    const namespace = `team-${s % 20}`;
    addObject(store, { apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name, namespace, uid: `sts-${s}` }, spec: { replicas: per } });
    for (let i = 0; i < per; i++) {
      const p = rawPod(s * per + i, { kind: 'StatefulSet', name }, nodeName((s * 7 + i) % NODES));
      p.metadata.namespace = namespace;
      p.metadata.name = `${name}-${i}`;
      p.metadata.labels['apps.kubernetes.io/pod-index'] = String(i);
      p.metadata.ownerReferences[0].uid = `sts-${s}`;
      addObject(store, p);
    }
  }
  return store;
}

export async function layoutsCase(): Promise<void> {
  console.log(`\nlayout page data: GET /debug/layouts over ${PODS} pods, in process (the extender's event loop waits this long), median of 7 after one cold`);
  for (const statefulSets of [50, 5000]) {
    const app = testApp(layoutCluster(statefulSets));
    const times: number[] = [];
    let bytes = 0;
    let cold = 0;
    for (let round = 0; round < 8; round++) {
      const t = performance.now();
      const res = await app.adminApp.request('/debug/layouts');
      bytes = (await res.text()).length;
      if (round === 0) cold = performance.now() - t;
      else times.push(performance.now() - t);
    }
    times.sort((a, b) => a - b);
    const median = times[3]!;
    console.log(`${`${statefulSets} StatefulSets of ${PODS / statefulSets}`.padEnd(28)} ${fmt(median, 1).padStart(7)} ms (cold ${fmt(cold, 0)} ms), ${fmt(bytes / 1024, 0)} KB`);
    target(`/debug/layouts, ${statefulSets} StatefulSets of ${PODS / statefulSets}`, median, 100, true, ' ms');
  }
}
