import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { KARMADA_KINDS, type SlimBinding } from '../../src/cluster/karmada.js';
import { federationWatch, type FederationView } from '../../src/cluster/memberClusters.js';
import { fakeClock } from '../../src/common/clock.js';
import { memberShare } from '../../src/placement/clusterDivision.js';
import { silent } from '../support/app.js';
import { node } from '../support/builders.js';
import { FakeApiServer } from '../support/fakeApiServer.js';
import { onFakeTime } from '../support/wait.js';

// Whose pods count for a federated workload in a member (docs/security.md#across-clusters): only those whose
// owner chain is real there, by uid. Anyone who may create a pod in the member may write an ownerReference:
// a forged Pending pod must not make the member look full and push the workload's replicas away.

const NOW = Date.parse('2026-11-29T06:00:00Z');
const LONG_AGO = '2026-11-29T05:00:00Z';
type Ref = { kind: string; name: string; uid: string; apiVersion?: string };
const meta = (kind: string, name: string, uid: string, owner?: Ref) => ({
  apiVersion: 'apps/v1', kind, metadata: { name, namespace: 'shop', uid, ...(owner ? { ownerReferences: [{ apiVersion: 'apps/v1', ...owner, controller: true }] } : {}) }, spec: {},
});
const pod = (name: string, owner: Ref, nodeName?: string) => ({
  apiVersion: 'v1', kind: 'Pod',
  metadata: { name, namespace: 'shop', uid: `pod-${name}`, creationTimestamp: LONG_AGO, ownerReferences: [{ apiVersion: owner.apiVersion ?? 'apps/v1', ...owner, controller: true }] },
  spec: { nodeName, containers: [{ name: 'c', resources: { requests: { cpu: '100m' } } }] },
  status: { phase: nodeName ? 'Running' : 'Pending' },
});
const bindingOf = (kind: string, name: string): SlimBinding => KARMADA_KINDS.bindings.slim!({
  metadata: { namespace: 'shop', name: `${name}-${kind.toLowerCase()}`, uid: 'rb', generation: 1 },
  spec: { resource: { apiVersion: 'apps/v1', kind, namespace: 'shop', name }, replicas: 2, clusters: [{ name: 'm1', replicas: 2 }], schedulerName: 'zonekeeper',
    replicaRequirements: { resourceRequest: { cpu: '100m' } }, placement: { replicaScheduling: { replicaSchedulingType: 'Divided' } } },
}) as SlimBinding;

describe('a member\'s pods count for a workload only through an owner chain real in that member', () => {
  let karmada: FakeApiServer, member: FakeApiServer, view: FederationView;
  const clock = fakeClock(NOW);
  before(async () => {
    [karmada, member] = [await new FakeApiServer().start(), await new FakeApiServer().start()];
    for (const z of ['zone-a', 'zone-b', 'zone-c']) member.put({ ...node(`n-${z}`, z), status: { conditions: [{ type: 'Ready', status: 'True' }], allocatable: { cpu: '8', memory: '32Gi', pods: '110' } } });
    const web = { kind: 'Deployment', name: 'web', uid: 'dep-web' };
    const rs = { kind: 'ReplicaSet', name: 'web-5d8f', uid: 'rs-web' };
    member.put(meta('Deployment', 'web', web.uid));
    member.put(meta('ReplicaSet', rs.name, rs.uid, web));
    member.put(pod('web-5d8f-real', rs, 'n-zone-a'));
    // Forged: the real ReplicaSet's name with another uid; a ReplicaSet the member lacks; a ReplicaSet naming the Deployment with another uid.
    member.put(pod('web-5d8f-forged', { ...rs, uid: 'rs-forged' }));
    member.put(pod('web-zz9-absent', { kind: 'ReplicaSet', name: 'web-zz9', uid: 'rs-absent' }));
    member.put(meta('ReplicaSet', 'web-fake', 'rs-fake', { ...web, uid: 'dep-forged' }));
    member.put(pod('web-fake-a', { kind: 'ReplicaSet', name: 'web-fake', uid: 'rs-fake' }));
    const db = { kind: 'StatefulSet', name: 'db', uid: 'sts-db' };
    member.put(meta('StatefulSet', 'db', db.uid));
    member.put(pod('db-0', db, 'n-zone-b'));
    member.put(pod('db-1', { ...db, uid: 'sts-forged' }));
    karmada.proxies.set('m1', member);
    karmada.put({
      apiVersion: 'cluster.karmada.io/v1alpha1', kind: 'Cluster', metadata: { name: 'm1' },
      spec: { syncMode: 'Push', apiEndpoint: 'https://127.0.0.1:1', impersonatorSecretRef: { namespace: 'karmada-cluster', name: 'm1-impersonator' } },
      status: { conditions: [{ type: 'Ready', status: 'True' }] },
    });
    const watch = { pageSize: 500, watchTimeoutSeconds: 300, silenceSeconds: 360, backoffInitialMs: 100, backoffMaxMs: 1000, maxStalenessSeconds: 30, clock };
    view = federationWatch(karmada.client(), watch, silent);
    view.start();
    await onFakeTime(clock, () => view.ready() && view.members().every((m) => m.healthy), 'm1 read', 60_000);
  });
  after(async () => {
    await view.stop();
    await Promise.all([karmada.stop(), member.stop()]);
  });

  it('a Deployment\'s pods through its ReplicaSets, a StatefulSet\'s by its uid: forged ownerReferences count for none', () => {
    const names = (kind: string, name: string) => view.reading('m1', { kind, namespace: 'shop', name })!.workloadPods.map((p) => p.name).sort();
    assert.deepEqual(names('Deployment', 'web'), ['web-5d8f-real']);
    assert.deepEqual(names('StatefulSet', 'db'), ['db-0']);
    assert.deepEqual(names('Deployment', 'other'), [], 'a workload the member does not hold has no pods there');
  });

  it('forged Pending pods, waiting an hour, do not make the member look full: it keeps its room', () => {
    const cluster = view.clusters()[0]!;
    for (const kind of ['Deployment', 'StatefulSet']) {
      const b = bindingOf(kind, kind === 'Deployment' ? 'web' : 'db');
      const share = memberShare(b, { cluster, reading: view.reading('m1', b.resource) }, { pendingMs: 300_000, keepWaiting: 0, stride: undefined }, NOW);
      assert.deepEqual([share.state, share.pending, share.bound], ['ready', 0, 1], kind);
    }
  });
});
