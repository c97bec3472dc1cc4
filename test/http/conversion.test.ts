// The WorkloadSpread CRD's conversion webhook (/convert on the admission listener): a
// ConversionReview in, every object at the desired version out, over the real routes.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { conversionRoute } from '../../src/admission/conversion.js';
import { admissionRoutes } from '../../src/admission/admissionRoutes.js';
import { trustedCaller } from '../../src/http/callers.js';
import { silent, testApp } from '../support/app.js';
import { storeOf, workloadSpread, zoneSubset, type Raw } from '../support/builders.js';

function routes() {
  const app = testApp(storeOf([]));
  const deps = { service: app.service, leading: () => true, gateEnabled: false, caller: trustedCaller, log: silent };
  const r = admissionRoutes(deps, app.metrics, silent, 1 << 20, [conversionRoute(app.metrics, 1 << 20)]);
  return async (body: unknown) => {
    const res = await r.request('/convert', { method: 'POST', headers: { 'content-type': 'application/json' }, body: typeof body === 'string' ? body : JSON.stringify(body) });
    return { status: res.status, json: await res.json() as Raw };
  };
}

const review = (desiredAPIVersion: string, objects: Raw[], apiVersion = 'apiextensions.k8s.io/v1') =>
  ({ apiVersion, kind: 'ConversionReview', request: { uid: 'conv-1', desiredAPIVersion, objects } });

const alpha: Raw = JSON.parse(JSON.stringify({ ...workloadSpread('web-ws', { kind: 'Deployment', name: 'web' }, [zoneSubset('a', 'zone-a', 2, { preferredNodeSelectorTerms: [{ weight: 5, preference: { matchExpressions: [] } }] })]),
  status: { observedGeneration: 1, subsetStatuses: [{ name: 'a', replicas: 1, missingReplicas: 1, conditions: [{ type: 'Schedulable', status: 'True', reason: 'Sufficient', lastTransitionTime: '2026-06-01T00:00:00Z' }] }] } }));

describe('the WorkloadSpread conversion webhook', () => {
  it('converts every object to v1beta1 and back, answering in the review\'s own apiVersion with its uid', async () => {
    const post = routes();
    const up = await post(review('apps.kruise.io/v1beta1', [alpha, alpha]));
    assert.equal(up.status, 200);
    assert.equal(up.json.apiVersion, 'apiextensions.k8s.io/v1');
    assert.equal(up.json.kind, 'ConversionReview');
    assert.equal(up.json.response.uid, 'conv-1');
    assert.deepEqual(up.json.response.result, { status: 'Success' });
    const [beta] = up.json.response.convertedObjects;
    assert.equal(up.json.response.convertedObjects.length, 2);
    assert.equal(beta.apiVersion, 'apps.kruise.io/v1beta1');
    assert.deepEqual(Object.keys(beta.spec.subsets[0]).sort(), ['maxReplicas', 'name', 'preferredNodeSelector', 'requiredNodeSelector']);
    assert.equal(beta.status.subsetStatuses[0].conditions[0].message, '');
    const down = await post(review('apps.kruise.io/v1alpha1', [beta], 'apiextensions.k8s.io/v1beta1'));
    assert.equal(down.json.apiVersion, 'apiextensions.k8s.io/v1beta1');
    assert.deepEqual(down.json.response.convertedObjects, [alpha], 'the round trip is exact');
  });

  it('answers a version or an object it cannot convert with a Failure the API server reports', async () => {
    const post = routes();
    const other = await post(review('apps.kruise.io/v1', [alpha]));
    assert.equal(other.status, 200);
    assert.equal(other.json.response.result.status, 'Failure');
    assert.match(other.json.response.result.message, /not apps\.kruise\.io\/v1$/);
    const notOurs = await post(review('apps.kruise.io/v1beta1', [{ apiVersion: 'apps/v1', kind: 'Deployment' }]));
    assert.equal(notOurs.json.response.result.status, 'Failure');
    assert.deepEqual(notOurs.json.response.convertedObjects, []);
  });

  it('refuses what is not a ConversionReview with 400, and other methods with 405', async () => {
    const post = routes();
    assert.equal((await post('{')).status, 400);
    assert.equal((await post({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: {} })).status, 400);
    const app = testApp(storeOf([]));
    const deps = { service: app.service, leading: () => true, gateEnabled: false, caller: trustedCaller, log: silent };
    const r = admissionRoutes(deps, app.metrics, silent, 1 << 20, [conversionRoute(app.metrics, 1 << 20)]);
    assert.equal((await r.request('/convert', { method: 'GET' })).status, 405);
  });
});
