import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { kubeActuator } from '../../src/actuator/actuator.js';
import { kubeApiClient } from '../../src/cluster/apiClient.js';
import { loadClusterAccess } from '../../src/cluster/kubeconfig.js';
import type { SnapshotSource } from '../../src/cluster/source.js';
import { watchCache } from '../../src/cluster/watchCache.js';
import { createMetrics } from '../../src/metrics/metrics.js';
import { pino } from 'pino';
import { slimPod } from '../../src/cluster/convert.js';
import { slimWorkloadSpread } from '../../src/cluster/convertWorkloadSpread.js';
import { parseConfig } from '../../src/common/config.js';
import { podModel } from '../../src/placement/model.js';
import { advancedStatefulSet, astsPod, clonePod, cloneSet, nodes, pod, statefulSet, stsPod, workloadSpread, zoneSubset } from '../support/builders.js';
import { silent } from '../support/app.js';
import { FakeApiServer } from '../support/fakeApiServer.js';
import { onFakeTime } from '../support/wait.js';
import { fakeClock } from '../../src/common/clock.js';

const START = Date.parse('2026-11-25T12:00:00Z');

/** The cache's timers (backoff, watchdog, discovery, staleness) on fake time, moved while a test waits. */
function fakeTime() {
  const clock = fakeClock(START);
  const until = (cond: () => boolean, what: string, limitMs = 30_000) => onFakeTime(clock, cond, what, limitMs);
  /** Lets `ms` of fake time pass, the API server answering meanwhile. */
  const passes = (ms: number) => {
    const at = clock.now() + ms;
    return until(() => clock.now() >= at, `${ms} ms passing`, ms + 100);
  };
  return { clock, until, passes };
}

describe('watch cache against a list/watch server on 127.0.0.1', () => {
  let api: FakeApiServer;
  let cache: SnapshotSource;
  const { clock, until } = fakeTime();
  const restarts: string[] = [];
  const status = (kind: string) => cache.status().kinds.find((k) => k.kind === kind)!;

  before(async () => {
    api = await new FakeApiServer().start();
    for (const n of nodes(['zone-a', 'zone-b', 'zone-c'], 2)) api.put(n);
    api.put(statefulSet('db', 3));
    api.put(stsPod('db', 0, { nodeName: 'node-a-1' }));
    api.put(stsPod('db', 1));
    cache = watchCache(api.client(), {
      pageSize: 2, watchTimeoutSeconds: 300, silenceSeconds: 1.5, backoffInitialMs: 20, backoffMaxMs: 200, crdRecheckSeconds: 0.3, maxStalenessSeconds: 60,
      clock,
    }, silent, (kind, reason) => restarts.push(`${kind}:${reason}`));
    cache.start();
    await until(() => cache.synced(), 'initial sync');
  });

  after(async () => {
    await cache.stop();
    await api.stop();
  });

  it('lists every kind in pages, then watches; the absent WorkloadSpread CRD is not an error', async () => {
    assert.equal(cache.snapshot.nodeCount(), 6);
    assert.deepEqual(cache.snapshot.zones('topology.kubernetes.io/zone'), ['zone-a', 'zone-b', 'zone-c']);
    assert.ok(api.requests.some((r) => r.startsWith('GET /api/v1/nodes?limit=2&continue=2')), 'paged with continue');
    assert.equal(cache.status().workloadSpreadCRD, 'absent');
    assert.equal(cache.status().healthy, true);
    // Watches restart on 1.5 s of silence here, so count the kinds watched, not those open at one instant.
    const expected = ['/api/v1/nodes', '/api/v1/persistentvolumeclaims', '/api/v1/persistentvolumes', '/api/v1/pods', '/apis/apps/v1/deployments',
      '/apis/apps/v1/replicasets', '/apis/apps/v1/statefulsets', '/apis/batch/v1/jobs', '/apis/storage.k8s.io/v1/storageclasses'];
    const watched = () => [...new Set(api.requests.filter((r) => r.startsWith('GET ') && r.includes('watch=')).map((r) => r.slice(4, r.indexOf('?'))))].sort();
    await until(() => watched().length >= expected.length, 'a watch per core kind');
    assert.deepEqual(watched(), expected, 'every core kind watched, the absent CRD not');
  });

  it('applies ADDED, MODIFIED and DELETED events', async () => {
    api.put(stsPod('db', 2));
    await until(() => !!cache.snapshot.pod('default', 'db-2'), 'db-2 added');
    api.put(stsPod('db', 2, { nodeName: 'node-c-1' }));
    await until(() => cache.snapshot.pod('default', 'db-2')?.nodeName === 'node-c-1', 'db-2 bound');
    assert.equal([...cache.snapshot.podsOwnedBy('StatefulSet', 'default', 'db')].length, 3, 'owner index');
    api.delete(stsPod('db', 2));
    await until(() => !cache.snapshot.pod('default', 'db-2'), 'db-2 deleted');
    assert.equal([...cache.snapshot.podsOwnedBy('StatefulSet', 'default', 'db')].length, 2);
  });

  it('resumes after a dropped watch without losing the events sent meanwhile', async () => {
    api.dropWatches();
    api.put(pod('while-down', undefined));
    await until(() => !!cache.snapshot.pod('default', 'while-down'), 'event from while the watch was down');
    await until(() => api.openWatches('/api/v1/pods') === 1, 'pods watch reopened');
    assert.ok(restarts.includes('pods:error'));
  });

  it('relists after 410 Gone and forgets an object deleted while the watch was down', async () => {
    api.dropWatches();
    api.delete(pod('while-down', undefined), { silently: true });
    await until(() => !cache.snapshot.pod('default', 'while-down'), 'deletion seen by relist');
    assert.ok(restarts.includes('pods:gone'), `restarts: ${restarts.join(' ')}`);
    assert.ok(status('pods').restarts.gone >= 1);
  });

  it('relists on a 410 ERROR event inside an open watch', async () => {
    await until(() => api.openWatches('/api/v1/pods') === 1, 'pods watch open');
    const gone = status('nodes').restarts.gone;
    api.expireWatches();
    await until(() => status('nodes').restarts.gone > gone, 'nodes relisted');
    api.put(pod('after-expiry', undefined));
    await until(() => !!cache.snapshot.pod('default', 'after-expiry'), 'watching again');
  });

  it('a watchdog relists a watch that has gone silent', async () => {
    await until(() => api.openWatches('/api/v1/pods') === 1, 'pods watch open');
    const stale = status('pods').restarts.stale;
    api.silent = true;
    api.put(pod('during-silence', undefined));
    await until(() => status('pods').restarts.stale > stale, 'stale watch detected');
    api.silent = false;
    await until(() => !!cache.snapshot.pod('default', 'during-silence'), 'relist picked up the silent change');
  });

  it('starts watching WorkloadSpreads, CloneSets and Advanced StatefulSets when their CRDs appear, each at its preferred served version', async () => {
    assert.deepEqual(cache.status().openKruise, { workloadspreads: 'absent', clonesets: 'absent', advancedstatefulsets: 'absent' });
    api.crdServed = true;
    api.put(workloadSpread('ws', { kind: 'Deployment', name: 'web' }, [zoneSubset('a', 'zone-a', 2)]));
    api.put(cloneSet('web', 4));
    api.put(advancedStatefulSet('db', 3, { reserveOrdinals: [1] }));
    api.put(astsPod('db', 2));
    await until(() => cache.status().workloadSpreadCRD === 'present' && [...cache.snapshot.workloadSpreads('default')].length === 1, 'WorkloadSpread cached');
    await until(() => !!cache.snapshot.workload('CloneSet', 'default', 'web') && !!cache.snapshot.workload('AdvancedStatefulSet', 'default', 'db'), 'Kruise workloads cached');
    assert.deepEqual(cache.status().openKruise, { workloadspreads: 'apps.kruise.io/v1alpha1', clonesets: 'apps.kruise.io/v1alpha1', advancedstatefulsets: 'apps.kruise.io/v1beta1' });
    assert.equal(cache.snapshot.workload('StatefulSet', 'default', 'db')?.reservedOrdinals.singles.size, 0, 'apps/v1 db is another object');
    assert.deepEqual([...cache.snapshot.workload('AdvancedStatefulSet', 'default', 'db')!.reservedOrdinals.singles], [1]);
    assert.deepEqual([...cache.snapshot.podsOwnedBy('AdvancedStatefulSet', 'default', 'db')].map((p) => p.name), ['db-2']);
    assert.equal(cache.synced(), true);
  });

  it('the actuator freezes an Advanced StatefulSet\'s list at Kruise\'s path and version', async () => {
    const actuator = kubeActuator(api.client(), silent, createMetrics(), 2000, clock);
    actuator.freezeZones(cache.snapshot.workload('AdvancedStatefulSet', 'default', 'db')!, ['zone-b', 'zone-c', 'zone-a']);
    await actuator.settle();
    assert.equal(api.patches.at(-1)!.path, '/apis/apps.kruise.io/v1beta1/namespaces/default/statefulsets/db');
    await until(() => cache.snapshot.workload('AdvancedStatefulSet', 'default', 'db')?.annotations['zonekeeper.io/zones'] === 'zone-b,zone-c,zone-a', 'annotation watched back');
    assert.equal(cache.snapshot.workload('StatefulSet', 'default', 'db')?.annotations['zonekeeper.io/zones'], undefined);
    api.patches.length = 0;
  });

  it('stops watching and forgets a kind whose CRD is removed', async () => {
    api.crdServed = false;
    await until(() => cache.status().openKruise.clonesets === 'absent' && !cache.snapshot.workload('CloneSet', 'default', 'web'), 'CloneSets forgotten');
    assert.equal([...cache.snapshot.workloadSpreads('default')].length, 0);
    api.crdServed = true;
    await until(() => !!cache.snapshot.workload('CloneSet', 'default', 'web'), 'CloneSets back');
  });

  it('the actuator writes the zone list with a merge patch, and the watch brings it back', async () => {
    const actuator = kubeActuator(api.client(), silent, createMetrics(), 2000, clock);
    const sts = cache.snapshot.workload('StatefulSet', 'default', 'db')!;
    actuator.freezeZones(sts, ['zone-a', 'zone-b', 'zone-c']);
    actuator.freezeZones(sts, ['zone-a', 'zone-b', 'zone-c']);
    assert.deepEqual(actuator.pendingFreezes.get('default/StatefulSet/db')?.zones, ['zone-a', 'zone-b', 'zone-c']);
    await actuator.settle();
    assert.equal(api.patches.length, 1, 'deduplicated');
    const { 'zonekeeper.io/zones-frozen-at': frozenAt, ...annotations } = api.patches[0]!.body.metadata.annotations;
    assert.deepEqual(annotations, { 'zonekeeper.io/zones': 'zone-a,zone-b,zone-c' });
    assert.equal(frozenAt, new Date(clock.now()).toISOString(), 'the time of the freeze beside it');
    assert.match(api.patches[0]!.body.metadata.resourceVersion, /^\d+$/, 'conditional on the workload\'s resourceVersion');
    await until(() => cache.snapshot.workload('StatefulSet', 'default', 'db')?.annotations['zonekeeper.io/zones'] === 'zone-a,zone-b,zone-c', 'annotation watched back');
  });
});

describe('watch cache when the API server is unreachable', () => {
  it('is not synced, keeps retrying with backoff, and syncs once the server is back', async () => {
    const api = await new FakeApiServer().start();
    const kubeconfig = api.kubeconfig();
    const port = api.port;
    await api.stop();
    const { clock, until } = fakeTime();
    const cache = watchCache(kubeApiClient(loadClusterAccess({ kind: 'kubeconfig', path: kubeconfig })), {
      pageSize: 100, watchTimeoutSeconds: 300, silenceSeconds: 5, backoffInitialMs: 20, backoffMaxMs: 100, crdRecheckSeconds: 0.2, maxStalenessSeconds: 60,
      clock,
    }, silent);
    cache.start();
    await until(() => cache.status().kinds.every((k) => k.restarts.error > 1), 'every kind failed, and failed again after its backoff');
    assert.equal(cache.synced(), false);
    assert.ok(cache.status().kinds.every((k) => k.restarts.error > 0 && k.lastError !== ''));
    const back = new FakeApiServer();
    (back as unknown as { port: number }).port = port;
    await new Promise<void>((r) => (back as any).server.listen(port, '127.0.0.1', r));
    back.put(nodes(['zone-a'], 1)[0]!);
    await until(() => cache.synced(), 'sync after the server came back');
    assert.equal(cache.snapshot.nodeCount(), 1);
    await cache.stop();
    await back.stop();
  });
});

describe('watch cache when an OpenKruise kind is served but RBAC forbids it', () => {
  it('leaves that kind out (forbidden, its pods wait), stays ready, and watches it once allowed', async () => {
    const api = await new FakeApiServer().start();
    api.crdServed = true;
    for (const n of nodes(['zone-a'], 1)) api.put(n);
    api.put(cloneSet('web', 2));
    api.put(advancedStatefulSet('db', 1));
    const denied = { match: (_m: string, path: string) => path.endsWith('/clonesets'), status: 403, remaining: Infinity };
    api.faults.push(denied);
    const { clock, until } = fakeTime();
    const cache = watchCache(api.client(), {
      pageSize: 100, watchTimeoutSeconds: 300, silenceSeconds: 5, backoffInitialMs: 20, backoffMaxMs: 100, crdRecheckSeconds: 0.2, maxStalenessSeconds: 60,
      clock,
    }, silent);
    cache.start();
    try {
      await until(() => cache.ready(), 'ready without the forbidden kind');
      assert.equal(cache.status().openKruise.clonesets, 'forbidden');
      assert.equal(cache.status().openKruise.advancedstatefulsets, 'apps.kruise.io/v1beta1');
      assert.ok(cache.snapshot.workload('AdvancedStatefulSet', 'default', 'db'));
      // A CloneSet's pod waits, and says which permission to grant.
      const waiting = podModel(slimPod(clonePod('web', 'x')), cache.snapshot, parseConfig({}).placement)!;
      assert.equal(waiting.policy, 'wait');
      assert.match((waiting as { why: string }).why, /CloneSet default\/web is not in the cache yet: CloneSets are off: zonekeeper may not list apps\.kruise\.io\/clonesets \(grant list and watch/);
      denied.remaining = 0;
      await until(() => !!cache.snapshot.workload('CloneSet', 'default', 'web'), 'CloneSets watched once allowed');
      assert.equal(cache.status().openKruise.clonesets, 'apps.kruise.io/v1alpha1');
      assert.equal(cache.snapshot.kindOff('clonesets'), undefined);
    } finally {
      await cache.stop();
      await api.stop();
    }
  });

  it('drops a kind whose RBAC is revoked while it is watched (its pods wait), stays ready past the staleness limit, and watches it again once granted', async () => {
    const api = await new FakeApiServer().start();
    api.crdServed = true;
    for (const n of nodes(['zone-a'], 1)) api.put(n);
    api.put(cloneSet('web', 2));
    const { clock, until, passes } = fakeTime();
    const cache = watchCache(api.client(), {
      // Discovery looks again only every 2 s: readiness must not wait for it.
      pageSize: 100, watchTimeoutSeconds: 300, silenceSeconds: 5, backoffInitialMs: 20, backoffMaxMs: 100, crdRecheckSeconds: 2, maxStalenessSeconds: 0.3,
      clock,
    }, silent);
    cache.start();
    try {
      await until(() => cache.ready() && !!cache.snapshot.workload('CloneSet', 'default', 'web'), 'CloneSets watched');
      const revoked = { match: (_m: string, path: string) => path.endsWith('/clonesets'), status: 403, remaining: Infinity };
      api.faults.push(revoked);
      api.dropWatches();
      await until(() => cache.status().openKruise.clonesets === 'forbidden', 'the refused kind said forbidden');
      // Past maxStalenessSeconds: a stale kind would have made the cache unready by now.
      await passes(600);
      assert.equal(cache.ready(), true);
      assert.equal(cache.status().healthy, true);
      assert.equal(cache.status().openKruise.clonesets, 'forbidden');
      await until(() => !cache.snapshot.workload('CloneSet', 'default', 'web'), 'its objects no longer served stale');
      assert.equal(cache.ready(), true);
      revoked.remaining = 0;
      await until(() => !!cache.snapshot.workload('CloneSet', 'default', 'web'), 'CloneSets watched again once granted');
      assert.equal(cache.status().openKruise.clonesets, 'apps.kruise.io/v1alpha1');
      assert.equal(cache.ready(), true);
    } finally {
      await cache.stop();
      await api.stop();
    }
  });
});

describe('watch cache when Jobs may not be listed (an upgrade without its RBAC)', () => {
  it('is ready without them, says once that WorkloadSpreads on Jobs are off and why; a Job pod under a WorkloadSpread waits naming the permission, others are not managed; on again once granted', async () => {
    const api = await new FakeApiServer().start();
    for (const n of nodes(['zone-a'], 1)) api.put(n);
    api.put({ apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'batch', namespace: 'default', uid: 'job-batch' }, spec: { parallelism: 2 } });
    const denied = { match: (_m: string, path: string) => path.startsWith('/apis/batch/v1/jobs'), status: 403, remaining: Infinity };
    api.faults.push(denied);
    const lines: string[] = [];
    const log = pino({ level: 'debug' }, { write: (l: string) => { lines.push(l); } });
    const { clock, until, passes } = fakeTime();
    const cache = watchCache(api.client(), {
      pageSize: 100, watchTimeoutSeconds: 300, silenceSeconds: 5, backoffInitialMs: 20, backoffMaxMs: 40, crdRecheckSeconds: 0.2, maxStalenessSeconds: 60,
      clock,
    }, log);
    cache.start();
    try {
      await until(() => cache.ready(), 'ready without Jobs');
      const jobs = cache.status().kinds.find((k) => k.kind === 'jobs')!;
      assert.match(jobs.off!, /^WorkloadSpreads that target Jobs are off: zonekeeper may not list batch\/jobs \(grant list and watch/);
      await passes(300); // several retries at the 40 ms backoff
      const warned = lines.filter((l) => l.includes('"level":40') && l.includes('WorkloadSpreads that target Jobs are off'));
      assert.equal(warned.length, 1, 'said once, not at every retry');
      const settings = parseConfig({}).placement;
      const jobPod = slimPod(pod('batch-x', { kind: 'Job', name: 'batch', apiVersion: 'batch/v1' }));
      assert.equal(podModel(jobPod, cache.snapshot, settings)!.policy, 'none');
      cache.store.upsert('workloadspreads', slimWorkloadSpread(workloadSpread('ws', { kind: 'Job', name: 'batch', apiVersion: 'batch/v1' }, [zoneSubset('a', 'zone-a', 1)])));
      const waiting = podModel(jobPod, cache.snapshot, settings)!;
      assert.equal(waiting.policy, 'wait');
      assert.match((waiting as { why: string }).why, /Job default\/batch is not in the cache yet: WorkloadSpreads that target Jobs are off: zonekeeper may not list batch\/jobs/);
      denied.remaining = 0;
      await until(() => !!cache.snapshot.workload('Job', 'default', 'batch'), 'Jobs listed once allowed');
      // On again once the watch after that list is proven (an event, or a second of streaming):
      // asserted at once, this passed only when the list had been answered a second earlier.
      await until(() => cache.status().kinds.find((k) => k.kind === 'jobs')!.off === undefined, 'the feature said on again');
      assert.equal(cache.snapshot.kindOff('jobs'), undefined);
      const on = lines.filter((l) => l.includes('WorkloadSpreads that target Jobs are on again'));
      assert.equal(on.length, 1, 'said once');
    } finally {
      await cache.stop();
      await api.stop();
    }
  });
});

describe('watch cache when the API server cannot be reached', () => {
  it('says so once for every kind, not once per kind per retry, and keeps retrying', async () => {
    const api = await new FakeApiServer().start();
    const client = api.client();
    await api.stop();
    const lines: string[] = [];
    const log = pino({ level: 'debug' }, { write: (l: string) => { lines.push(l); } });
    const { clock, passes } = fakeTime();
    const cache = watchCache(client, {
      pageSize: 100, watchTimeoutSeconds: 300, silenceSeconds: 5, backoffInitialMs: 10, backoffMaxMs: 20, crdRecheckSeconds: 0.2, maxStalenessSeconds: 60,
      clock,
    }, log);
    cache.start();
    await passes(400);
    await cache.stop();
    const warned = lines.filter((l) => l.includes('"level":40'));
    assert.equal(warned.filter((l) => l.includes('cannot reach the API server')).length, 1, warned.join('\n'));
    assert.equal(warned.filter((l) => l.includes('watch failed')).length, 0);
    assert.ok(lines.filter((l) => l.includes('API server still not reached')).length >= 8, 'every kind retried');
    assert.equal(cache.ready(), false);
  });
});
