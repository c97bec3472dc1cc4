// What `zonekeeper audit` says of the policy transport (docs/design.md#the-policy): whether the API
// server serves MutatingAdmissionPolicies, and the seat tables found, each with the StatefulSets it
// covers; one bounded request each, and a refusal said, never an audit failed.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { auditPolicy, auditPolicyText } from '../../src/auditPolicy.js';
import { recordingApi, type RecordedRequest } from '../support/recordingApi.js';

const DISCOVERY = '/apis/admissionregistration.k8s.io/v1';
const table = (namespace: string, data: Record<string, string>) => ({ metadata: { name: 'zonekeeper-seats', namespace }, data });

function cluster(o: { served: boolean; tables?: unknown[]; listStatus?: number; more?: boolean }) {
  return recordingApi((r: RecordedRequest) => {
    if (r.path === DISCOVERY) return { status: 200, body: { resources: o.served ? [{ name: 'mutatingadmissionpolicies' }, { name: 'validatingadmissionpolicies' }] : [{ name: 'validatingadmissionpolicies' }] } };
    if (r.path.includes('/configmaps?')) {
      return o.listStatus ? { status: o.listStatus, body: { message: 'configmaps is forbidden' } }
        : { status: 200, body: { items: o.tables ?? [], metadata: o.more ? { continue: 'x' } : {} } };
    }
    return { status: 404 };
  });
}

describe('audit: the policy transport', () => {
  it('1.36+: served, and each table with the StatefulSets it covers (UID keys, not their ordinals)', async () => {
    const api = cluster({ served: true, tables: [
      table('shop', { 'uid-a': 'rr;topology.kubernetes.io/zone;0;a,b,c', 'uid-b': 'listed;topology.kubernetes.io/zone', 'uid-b.0': 'a', 'uid-b.1': '-' }),
      table('bank', { 'uid-c': 'rr;topology.kubernetes.io/zone;0;a,b' }),
    ] });
    const p = await auditPolicy(api, 'zonekeeper-seats');
    assert.deepEqual(p, { apiServed: true, seatTables: [{ namespace: 'bank', statefulSets: 1 }, { namespace: 'shop', statefulSets: 2 }], more: false });
    const list = api.requests.find((r) => r.path.includes('configmaps'))!;
    assert.equal(list.path, '/api/v1/configmaps?fieldSelector=metadata.name%3Dzonekeeper-seats&limit=100', 'one page, by name');
    assert.equal(auditPolicyText(p, 'zonekeeper-seats'),
      'MutatingAdmissionPolicy API served: yes\nSeat tables (ConfigMap zonekeeper-seats; StatefulSets of apps/v1 and apps.kruise.io): bank (1 StatefulSet), shop (2 StatefulSets)');
  });

  it('before 1.36: not served, no table; -n asks one namespace; more tables than a page say so', async () => {
    const old = cluster({ served: false });
    const p = await auditPolicy(old, 'zonekeeper-seats', 'shop');
    assert.deepEqual(p, { apiServed: false, seatTables: [], more: false });
    assert.ok(old.requests.some((r) => r.path.startsWith('/api/v1/namespaces/shop/configmaps?')));
    assert.match(auditPolicyText(p, 'zonekeeper-seats'), /served: no \(before Kubernetes 1\.36.*\nSeat tables \(ConfigMap zonekeeper-seats; StatefulSets of apps\/v1 and apps\.kruise\.io\): none$/);
    const many = await auditPolicy(cluster({ served: true, tables: [table('a', {})], more: true }), 'zonekeeper-seats');
    assert.match(auditPolicyText(many, 'zonekeeper-seats'), /a \(0 StatefulSets\), and more$/);
  });

  it('ConfigMaps it may not list: said in place of the tables, the rest of the audit unaffected', async () => {
    const p = await auditPolicy(cluster({ served: true, listStatus: 403 }), 'zonekeeper-seats');
    assert.equal(p.apiServed, true);
    assert.match(p.error!, /^ConfigMaps zonekeeper-seats not listed: 403 configmaps is forbidden/);
    assert.match(auditPolicyText(p, 'zonekeeper-seats'), /Seat tables \(ConfigMap zonekeeper-seats; StatefulSets of apps\/v1 and apps\.kruise\.io\): ConfigMaps zonekeeper-seats not listed: 403/);
  });
});
