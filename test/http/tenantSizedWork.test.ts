// What a tenant's annotation can size stays bounded (docs/security.md#what-a-hostile-pod-or-request-cannot-do):
// zonekeeper.io/topology-key: kubernetes.io/hostname over 1,000 nodes and 1,999 replicas, its pods
// held unevenly, is answered within KEPT_WORK_LIMIT zone-steps (counted, not timed; the
// timing is in test/bench/tenantLayout.ts).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { KEPT_WORK_LIMIT, sequenceWork } from '../../src/placement/zoneSequence.js';
import { testApp } from '../support/app.js';
import { deployment, node, rsPod, storeOf } from '../support/builders.js';

const HOSTS = Array.from({ length: 1000 }, (_, i) => `host-${String(i).padStart(4, '0')}`);
const TENANT = {
  'zonekeeper.io/topology-key': 'kubernetes.io/hostname',
  // A maximum per host: the sequence is simulated, seat by seat, over every host.
  'zonekeeper.io/zone-preferences': '{"zones":{"*":{"weight":1,"maxReplicas":4}}}',
};

describe('a 1,000-value topology key, 1,999 replicas', () => {
  it('one filter is answered within KEPT_WORK_LIMIT zone-steps (counted, not timed)', async () => {
    // 600 pods already on the first 150 hosts (4 each, over a share of 2): every round keeps some and plans the rest again.
    const held = Array.from({ length: 600 }, (_, i) => rsPod('web', `h${i}`, { nodeName: HOSTS[Math.floor(i / 4)]! }));
    const app = testApp(storeOf([...HOSTS.map((h) => node(h, 'zone-a')), ...deployment('web', 1999, TENANT), ...held]));
    const before = sequenceWork.steps;
    const res = await app.post('/filter', { Pod: rsPod('web', 'new'), NodeNames: HOSTS });
    const work = sequenceWork.steps - before;
    assert.equal(res.status, 200);
    const body = await res.json();
    assert.ok(body.NodeNames.length > 0, 'placed: the hosts under their share pass');
    assert.ok(work <= KEPT_WORK_LIMIT, `${work} zone-steps for one decision (limit ${KEPT_WORK_LIMIT})`);
  });
});
