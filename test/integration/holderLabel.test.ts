import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { fakeClock } from '../../src/common/clock.js';
import { HOLDER_LABEL, holderLabel, ownPod } from '../../src/controllers/holderLabel.js';
import { createMetrics } from '../../src/metrics/metrics.js';
import { silent } from '../support/app.js';
import { pod } from '../support/builders.js';
import { FakeApiServer } from '../support/fakeApiServer.js';

// The Lease holder's pod label, which the admission webhook's Service selects (docs/design.md#admission).

describe('the lease-holder label on zonekeeper\'s own pod', () => {
  let api: FakeApiServer;
  const path = '/api/v1/namespaces/zonekeeper-system/pods/zonekeeper-0';
  const self = ownPod({ POD_NAME: 'zonekeeper-0', POD_NAMESPACE: 'zonekeeper-system' })!;
  const sent = () => api.patches.filter((p) => p.path === path).map((p) => p.body.metadata.labels[HOLDER_LABEL]);
  before(async () => {
    api = await new FakeApiServer().start();
    api.put(pod('zonekeeper-0', undefined, { namespace: 'zonekeeper-system' }));
  });
  after(() => api.stop());

  it('set while holding the Lease, removed when not (and at start)', async () => {
    const label = holderLabel(api.client(), self, silent, createMetrics(), fakeClock(0));
    const before = sent().length;
    label.clear();
    await label.idle();
    label.start();
    await label.idle();
    await label.stop();
    // Each change of state written once at least (the start's own resync may write "off" twice).
    assert.deepEqual(sent().slice(before).filter((v, i, all) => i === 0 || v !== all[i - 1]), [null, 'true', null]);
    await label.close();
    assert.equal(ownPod({ POD_NAME: 'x' }), undefined, 'outside a pod (no downward API): no label');
  });

  it('a refused write is retried after a backoff step until the label is on: a holder without it would get no reviews', async () => {
    const clock = fakeClock(0);
    const label = holderLabel(api.client(), self, silent, createMetrics(), clock);
    await label.idle();
    const before = sent().length;
    api.faults.push({ match: (m, p) => m === 'PATCH' && p === path, status: 500, remaining: 2 });
    label.start();
    await clock.advance(0);
    assert.deepEqual(sent().slice(before), [], 'refused (the fake API server records only what it applied)');
    await clock.advance(500);
    await clock.advance(1000);
    await label.idle();
    assert.deepEqual(sent().slice(before), ['true'], 'written once the API server takes it');
    await label.close();
  });
});
