// End-to-end: a high-priority pinned pod on a full cluster preempts only in its own zone
// (docs/design.md#preemption), through zonekeeper's scheduler (preemptVerb) and through the
// default scheduler with the zone gate.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ControlPlane, kubeVersions } from './controlPlane.js';
import { eventually, Kube, type Obj } from './kube.js';
import { SCHEDULER, tearDown, ZONES } from './workloads.js';

const NS = 'full';

/** A low-priority pod bound by hand that takes 3 of its node's 4 CPUs. */
const filler = (zone: string): Obj => ({
  apiVersion: 'v1', kind: 'Pod', metadata: { name: `filler-${zone.slice(5)}`, namespace: NS, labels: { app: 'filler' } },
  spec: { nodeName: `node-${zone.slice(5)}`, terminationGracePeriodSeconds: 0, containers: [{ name: 'c', image: 'busybox', resources: { requests: { cpu: '3' } } }] },
});

/** A high-priority StatefulSet of one pod pinned by its list's first zone, needing 2 CPUs. */
function pinned(name: string, firstZone: string, podSpec: Obj): Obj {
  const list = [firstZone, ...ZONES.filter((z) => z !== firstZone)].join(',');
  return {
    apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name, namespace: NS, annotations: { 'zonekeeper.io/zones': list } },
    spec: {
      replicas: 1, serviceName: name, selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { priorityClassName: 'high', terminationGracePeriodSeconds: 0, containers: [{ name: 'c', image: 'busybox', resources: { requests: { cpu: '2' } } }], ...podSpec },
      },
    },
  };
}

for (const k of kubeVersions()) describe(`[${k.version}] preemption on a full cluster stays in the pinned zone`, () => {
  const cp = new ControlPlane(k.bin);
  let kube: Kube;

  before(async () => {
    await cp.up([{ name: SCHEDULER, extender: true }, { name: 'default-scheduler', extender: false }]);
    kube = new Kube(cp.api);
    for (const z of ZONES) await kube.addNode(`node-${z.slice(5)}`, z, {}, null, '4');
    await kube.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
    await kube.create({ apiVersion: 'scheduling.k8s.io/v1', kind: 'PriorityClass', metadata: { name: 'high' }, value: 1000 });
    for (const z of ZONES) await kube.create(filler(z));
  });
  after(() => tearDown(cp));

  const fillers = async () => (await kube.podsOf(NS, 'app=filler')).map((p) => p.metadata.name as string).sort();
  // No kubelets: the test finishes the victims' deletion, as a kubelet would.
  const boundTo = (app: string) => eventually(`${app}-0 bound`, async () => {
    await kube.reapTerminating(NS);
    return (await kube.podsOf(NS, `app=${app}`)).find((p) => p.spec.nodeName)?.spec.nodeName as string | undefined;
  }, 90_000);

  it('through zonekeeper\'s scheduler (preemptVerb): pinned to zone-c, only zone-c\'s low-priority pod is preempted', async () => {
    await kube.create(pinned('ext', 'zone-c', { schedulerName: SCHEDULER }));
    assert.equal(await boundTo('ext'), 'node-c');
    await kube.reapTerminating(NS);
    assert.deepEqual(await fillers(), ['filler-a', 'filler-b']);
  });

  it('through the default scheduler with the gate: pinned to zone-a, only zone-a\'s low-priority pod is preempted', async () => {
    await kube.create(pinned('gated', 'zone-a', { schedulingGates: [{ name: 'zonekeeper.io/zone' }] }));
    assert.equal(await boundTo('gated'), 'node-a');
    await kube.reapTerminating(NS);
    assert.deepEqual(await fillers(), ['filler-b']);
  });
});
