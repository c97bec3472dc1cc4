import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { FederationView } from '../../src/cluster/memberClusters.js';
import { federationProbeRoutes } from '../../src/server/federationRoutes.js';

// zonekeeper karmada's probes: ready only when its Karmada watches are healthy and it could lead.

const view = (ready: boolean) => ({ ready: () => ready, synced: () => true }) as unknown as FederationView;

describe('zonekeeper karmada /readyz', () => {
  it('a Lease the API server refuses this identity: 503 with the reason, though the watches are healthy', async () => {
    let refused = 'get the Lease zonekeeper-system/zonekeeper-karmada: 403 leases.coordination.k8s.io is forbidden';
    const app = federationProbeRoutes({ view: view(true), serving: () => true, lease: () => refused });
    const res = await app.request('/readyz');
    assert.equal(res.status, 503);
    assert.match(await res.text(), /^cannot lead: get the Lease zonekeeper-system\/zonekeeper-karmada: 403/);
    refused = '';
    assert.equal((await app.request('/readyz')).status, 200);
    assert.equal((await app.request('/healthz')).status, 200, 'alive all along: a restart would not help');
  });

  it('a failing Karmada watch: 503 stale', async () => {
    const res = await federationProbeRoutes({ view: view(false), serving: () => true, lease: () => '' }).request('/readyz');
    assert.equal(res.status, 503);
    assert.match(await res.text(), /stale/);
  });
});
