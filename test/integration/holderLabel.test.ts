import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { HOLDER_LABEL, holderLabel, ownPod } from '../../src/controllers/holderLabel.js';
import { createMetrics } from '../../src/metrics/metrics.js';
import { silent } from '../support/app.js';
import { pod } from '../support/builders.js';
import { FakeApiServer } from '../support/fakeApiServer.js';

// The Lease holder's pod label, which the admission webhook's Service selects (docs/design.md#admission).

describe('the lease-holder label on zonekeeper\'s own pod', () => {
  let api: FakeApiServer;
  before(async () => {
    api = await new FakeApiServer().start();
  });
  after(() => api.stop());

  it('set while holding the Lease, removed when not (and at start)', async () => {
    api.put(pod('zonekeeper-0', undefined, { namespace: 'zonekeeper-system' }));
    const label = holderLabel(api.client(), ownPod({ POD_NAME: 'zonekeeper-0', POD_NAMESPACE: 'zonekeeper-system' })!, silent, createMetrics());
    await label.clear();
    label.start();
    await label.stop();
    const sent = api.patches.filter((p) => p.path === '/api/v1/namespaces/zonekeeper-system/pods/zonekeeper-0').map((p) => p.body.metadata.labels[HOLDER_LABEL]);
    assert.deepEqual(sent, [null, 'true', null]);
    assert.equal(ownPod({ POD_NAME: 'x' }), undefined, 'outside a pod (no downward API): no label');
  });
});
