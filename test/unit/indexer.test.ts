import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Indexer } from '../../src/cluster/indexer.js';
import { slimPod } from '../../src/cluster/convert.js';
import { addObject } from '../../src/cluster/source.js';
import { ClusterStore } from '../../src/cluster/store.js';
import { deployment, node, rsPod, statefulSet } from '../support/builders.js';

interface Item { ns: string; name: string; node?: string }

describe('indexer (client-go tools/cache)', () => {
  it('keeps each object under its key and named indexes; a replace moves it between buckets; a delete empties them', () => {
    const ix = new Indexer<Item, 'node' | 'ns', 'id'>((o) => `${o.ns}/${o.name}`, { node: (o) => o.node, ns: (o) => o.ns }, { id: (o) => `id-${o.name}-${o.ns}` });
    ix.upsert({ ns: 'a', name: 'p1', node: 'n1' });
    ix.upsert({ ns: 'a', name: 'p2', node: 'n1' });
    ix.upsert({ ns: 'b', name: 'p1' });
    assert.deepEqual([...ix.byIndex('node', 'n1')].map((o) => o.name), ['p1', 'p2']);
    assert.equal([...ix.byIndex('ns', 'b')].length, 1);
    const old = ix.upsert({ ns: 'a', name: 'p1', node: 'n2' });
    assert.equal(old?.node, 'n1', 'the replaced object is returned');
    assert.deepEqual([...ix.byIndex('node', 'n1')].map((o) => o.name), ['p2']);
    assert.equal(ix.first('node', 'n2')?.name, 'p1');
    assert.equal(ix.delete('a/p2')?.name, 'p2');
    assert.equal(ix.delete('a/p2'), undefined);
    assert.deepEqual([...ix.indexValues('node')], ['n2'], 'an empty bucket is dropped');
    assert.equal(ix.size, 2);
    assert.equal(ix.byUnique('id', 'id-p1-a')?.node, 'n2', 'a unique index follows the replace');
    assert.equal(ix.byUnique('id', 'id-p2-a'), undefined, 'and the delete');
  });

  it('the store: keys and counts per kind, pods by owner, node and UID, ReplicaSets by Deployment', () => {
    const store = new ClusterStore();
    const [d, rs] = deployment('web', 2);
    for (const o of [d!, rs!, statefulSet('db', 1)]) addObject(store, o);
    const pod = slimPod(rsPod('web', 'a', { nodeName: 'node-1' }));
    store.upsert('pods', pod);
    assert.deepEqual(store.keys('replicasets'), [`ReplicaSet/default/${rs!.metadata.name}`]);
    assert.equal(store.count('deployments'), 1);
    assert.equal(store.count('statefulsets'), 1);
    assert.deepEqual([...store.ownedWorkloads('Deployment', 'default', 'web')].map((w) => w.name), [rs!.metadata.name]);
    assert.equal(store.podByUid(pod.uid)?.name, pod.name);
    assert.deepEqual([...store.podsOnNode('node-1')].map((p) => p.name), [pod.name]);
    assert.equal(store.nodeUsage('node-1').pods, 1);
    store.upsert('pods', { ...pod, nodeName: 'node-2' });
    assert.deepEqual([...store.podsOnNode('node-1')], [], 'moved with its node');
    assert.equal(store.nodeUsage('node-1').pods, 0);
    const seen: string[] = [];
    store.onPod((type, p) => seen.push(`${type} ${p.name}`));
    store.delete('pods', `default/${pod.name}`);
    assert.deepEqual(seen, [`delete ${pod.name}`]);
    assert.equal(store.podByUid(pod.uid), undefined);
    assert.equal(store.nodeUsage('node-2').pods, 0);
  });

  it('the store\'s nodes version: new when a node comes, goes or has its labels or taints changed, never when its readiness does', () => {
    const store = new ClusterStore();
    const versions = [store.nodesVersion()];
    const changed = () => {
      versions.push(store.nodesVersion());
      return versions.at(-1) !== versions.at(-2);
    };
    addObject(store, node('node-1', 'zone-a'));
    assert.ok(changed(), 'a node came');
    addObject(store, { ...node('node-1', 'zone-a'), status: { conditions: [{ type: 'Ready', status: 'False' }] } });
    assert.ok(!changed(), 'its readiness changed only');
    addObject(store, node('node-1', 'zone-b'));
    assert.ok(changed(), 'its zone label changed');
    addObject(store, node('node-1', 'zone-b', { taints: [{ key: 'k', effect: 'NoSchedule' }] }));
    assert.ok(changed(), 'it was tainted');
    store.delete('nodes', 'node-1');
    assert.ok(changed(), 'it went');
    const again = new ClusterStore();
    addObject(again, node('node-1', 'zone-a'));
    assert.ok(!versions.includes(again.nodesVersion()), 'a store built anew (a member connected again) reuses no version');
  });
});
