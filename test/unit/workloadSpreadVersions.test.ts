// WorkloadSpread v1alpha1 ⇄ v1beta1 (openkruise/kruise PR #2466): Kruise's field mapping, exact
// round trips over every field, and one slim object for both versions.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { slimWorkloadSpread } from '../../src/cluster/convertWorkloadSpread.js';
import { CONVERSION_ANNOTATION, convertWorkloadSpread, userVersion } from '../../src/cluster/workloadSpreadVersions.js';
import type { Raw } from '../../src/cluster/rawFields.js';

const ZONE = 'topology.kubernetes.io/zone';
const required = { matchExpressions: [{ key: ZONE, operator: 'In', values: ['zone-a'] }], matchFields: [{ key: 'metadata.name', operator: 'NotIn', values: ['n9'] }] };
const preferred = [{ weight: 30, preference: { matchExpressions: [{ key: 'disk', operator: 'In', values: ['ssd'] }] } }];
const subsetStatus = (conditions: Raw[]): Raw => ({
  name: 'a', replicas: 2, missingReplicas: 1, conditions,
  creatingPods: { 'web-1': '2026-06-01T10:00:00Z' }, deletingPods: { 'web-0': '2026-06-01T10:00:01Z' },
});

/** Every field of Kruise's v1alpha1 types, conditions with and without reason and message. */
const alpha: Raw = {
  apiVersion: 'apps.kruise.io/v1alpha1', kind: 'WorkloadSpread',
  metadata: { name: 'web', namespace: 'default', uid: 'u1', generation: 3, labels: { app: 'web' }, annotations: { keep: 'me' } },
  spec: {
    targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' },
    targetFilter: { selector: { matchLabels: { role: 'worker' } }, replicasPathList: ['spec.replicas'] },
    scheduleStrategy: { type: 'Adaptive', adaptive: { disableSimulationSchedule: true, rescheduleCriticalSeconds: 20 } },
    subsets: [
      { name: 'a', requiredNodeSelectorTerm: required, preferredNodeSelectorTerms: preferred, tolerations: [{ key: 'k', operator: 'Exists', effect: 'NoSchedule' }],
        maxReplicas: 3, patch: { metadata: { labels: { subset: 'a' } }, spec: { priorityClassName: 'high' } } },
      { name: 'b', maxReplicas: '50%' },
    ],
  },
  status: {
    observedGeneration: 3,
    subsetStatuses: [
      subsetStatus([{ type: 'Schedulable', status: 'False', reason: 'PodUnschedulable', message: 'no room', lastTransitionTime: '2026-06-01T09:00:00Z' }]),
      { name: 'b', replicas: 0, missingReplicas: -1, conditions: [{ type: 'Schedulable', status: 'True', lastTransitionTime: '2026-06-01T09:00:00Z' }] },
    ],
    versionedSubsetStatuses: { 'rev-1': [subsetStatus([{ type: 'Schedulable', status: 'True', reason: '', message: '', lastTransitionTime: '2026-06-01T09:00:00Z' }])] },
  },
};

/** Every field of Kruise's v1beta1 types, conditions as metav1.Condition (one with observedGeneration). */
const beta: Raw = {
  apiVersion: 'apps.kruise.io/v1beta1', kind: 'WorkloadSpread',
  metadata: { name: 'web', namespace: 'default', uid: 'u1', generation: 4 },
  spec: {
    targetRef: { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'CloneSet', name: 'web' },
    targetFilter: { selector: { matchExpressions: [{ key: 'role', operator: 'In', values: ['w'] }] }, replicasPathList: ['spec.a', 'spec.b'] },
    scheduleStrategy: { type: 'Fixed' },
    subsets: [{ name: 'a', requiredNodeSelector: required, preferredNodeSelector: preferred, tolerations: [], maxReplicas: '20%', patch: {} }],
  },
  status: {
    observedGeneration: 4,
    subsetStatuses: [subsetStatus([
      { type: 'Schedulable', status: 'True', reason: 'Sufficient', message: '', lastTransitionTime: '2026-06-01T09:00:00Z', observedGeneration: 4 },
      { type: 'Other', status: 'Unknown', reason: 'Unknown', message: 'm', lastTransitionTime: '2026-06-01T09:00:00Z' },
    ])],
  },
};

describe('WorkloadSpread v1alpha1 ⇄ v1beta1', () => {
  it('maps the fields as Kruise\'s ConvertTo does: renamed node terms, metav1.Condition with a reason and a message', () => {
    const b = convertWorkloadSpread(alpha, 'v1beta1');
    assert.equal(b.apiVersion, 'apps.kruise.io/v1beta1');
    assert.deepEqual(b.spec.subsets[0], {
      name: 'a', requiredNodeSelector: required, preferredNodeSelector: preferred, tolerations: alpha.spec.subsets[0].tolerations,
      maxReplicas: 3, patch: alpha.spec.subsets[0].patch,
    });
    assert.deepEqual(b.spec.subsets[1], { name: 'b', maxReplicas: '50%' });
    assert.deepEqual(b.spec.targetFilter, alpha.spec.targetFilter);
    assert.deepEqual(b.spec.scheduleStrategy, alpha.spec.scheduleStrategy);
    assert.deepEqual(b.status.subsetStatuses[1].conditions, [{ type: 'Schedulable', status: 'True', reason: 'Unknown', message: '', lastTransitionTime: '2026-06-01T09:00:00Z' }]);
    assert.equal(b.status.versionedSubsetStatuses['rev-1'][0].conditions[0].reason, 'Unknown');
    assert.deepEqual(b.status.subsetStatuses[0].creatingPods, alpha.status.subsetStatuses[0].creatingPods);
    assert.deepEqual(b.metadata.labels, alpha.metadata.labels);
    assert.equal(b.metadata.annotations.keep, 'me');
  });

  it('maps v1beta1 to v1alpha1 as Kruise\'s ConvertFrom does: old names, no observedGeneration on a condition', () => {
    const a = convertWorkloadSpread(beta, 'v1alpha1');
    assert.deepEqual(Object.keys(a.spec.subsets[0]), ['name', 'requiredNodeSelectorTerm', 'preferredNodeSelectorTerms', 'tolerations', 'maxReplicas', 'patch']);
    assert.equal(a.status.subsetStatuses[0].conditions[0].observedGeneration, undefined);
    assert.equal(a.status.subsetStatuses[0].conditions[0].reason, 'Sufficient');
    assert.equal(a.status.subsetStatuses[0].conditions[1].reason, 'Unknown', 'a reason v1beta1 wrote stays');
    assert.equal('message' in a.status.subsetStatuses[0].conditions[0], false, 'an empty message left out, as Kruise\'s v1alpha1 types serialize it');
    assert.equal(a.status.subsetStatuses[0].conditions[1].message, 'm');
  });

  it('is exact both ways over every field, conditions included', () => {
    assert.deepEqual(convertWorkloadSpread(convertWorkloadSpread(alpha, 'v1beta1'), 'v1alpha1'), alpha);
    assert.deepEqual(convertWorkloadSpread(convertWorkloadSpread(beta, 'v1alpha1'), 'v1beta1'), beta);
    // And again: what one trip keeps does not pile up.
    const twice = convertWorkloadSpread(convertWorkloadSpread(convertWorkloadSpread(convertWorkloadSpread(alpha, 'v1beta1'), 'v1alpha1'), 'v1beta1'), 'v1alpha1');
    assert.deepEqual(twice, alpha);
  });

  it('keeps what the other version cannot hold in one annotation, and only then', () => {
    const b = convertWorkloadSpread(alpha, 'v1beta1');
    assert.deepEqual(JSON.parse(b.metadata.annotations[CONVERSION_ANNOTATION]), {
      'subsetStatuses/b/Schedulable': { reason: null },
      'versionedSubsetStatuses/rev-1/a/Schedulable': { reason: '', emptyMessage: true },
    });
    const plain = { ...alpha, status: { observedGeneration: 1, subsetStatuses: [{ name: 'a', replicas: 0, missingReplicas: 0, conditions: [{ type: 'Schedulable', status: 'True', reason: 'Sufficient', message: 'ok' }] }] } };
    assert.equal(convertWorkloadSpread(plain, 'v1beta1').metadata.annotations[CONVERSION_ANNOTATION], undefined);
    const { annotations: _, ...noAnnotations } = alpha.metadata;
    assert.deepEqual(convertWorkloadSpread(convertWorkloadSpread({ ...plain, metadata: noAnnotations }, 'v1beta1'), 'v1alpha1').metadata, noAnnotations);
  });

  it('passes an object already at the version through, and refuses another kind\'s apiVersion', () => {
    assert.equal(convertWorkloadSpread(beta, 'v1beta1'), beta);
    assert.throws(() => convertWorkloadSpread({ apiVersion: 'apps/v1', kind: 'Deployment' }, 'v1beta1'), /not a WorkloadSpread/);
  });

  it('reads both versions into the same slim object', () => {
    const fromAlpha = slimWorkloadSpread(alpha);
    const fromBeta = slimWorkloadSpread(convertWorkloadSpread(alpha, 'v1beta1'));
    // Only the version, and a reasonless condition's reason (Kruise's "Unknown" in v1beta1), differ.
    const blank = { apiVersion: '', userVersion: '', statusDigest: '', schedulable: new Map() };
    assert.deepEqual({ ...fromBeta, ...blank }, { ...fromAlpha, ...blank });
    assert.deepEqual(fromBeta.schedulable.get('a'), fromAlpha.schedulable.get('a'));
    assert.equal(fromBeta.userVersion, 'v1beta1');
    assert.equal(fromAlpha.userVersion, 'v1alpha1');
    assert.equal(fromBeta.subsets[0]!.requiredNodeSelectorTerm?.matchExpressions[0]?.values[0], 'zone-a');
    assert.equal(fromBeta.subsets[0]!.preferredNodeSelectorTerms[0]?.weight, 30);
    assert.equal(fromBeta.schedulable.get('a')?.reason, 'PodUnschedulable');
    // v1beta1's names under v1alpha1 are not v1alpha1's fields (the API server prunes them there).
    assert.equal(slimWorkloadSpread({ ...beta, apiVersion: 'apps.kruise.io/v1alpha1' }).subsets[0]!.requiredNodeSelectorTerm, undefined);
  });

  it('remembers the version the user wrote the spec in, from managedFields', () => {
    const entry = (apiVersion: string, time: string, fields: Raw, subresource?: string) => ({ manager: 'kubectl', operation: 'Update', apiVersion, time, fieldsType: 'FieldsV1', fieldsV1: fields, subresource });
    const read = (managedFields: Raw[]) => userVersion({ ...beta, metadata: { ...beta.metadata, managedFields } }, 'v1beta1');
    assert.equal(read([]), 'v1beta1', 'nothing recorded: the version read at');
    assert.equal(read([entry('apps.kruise.io/v1alpha1', '2026-06-01T10:00:00Z', { 'f:spec': {} })]), 'v1alpha1');
    assert.equal(read([entry('apps.kruise.io/v1alpha1', '2026-06-01T10:00:00Z', { 'f:spec': {} }), entry('apps.kruise.io/v1beta1', '2026-06-01T11:00:00Z', { 'f:spec': {} })]), 'v1beta1', 'the latest write');
    assert.equal(read([entry('apps.kruise.io/v1alpha1', '2026-06-01T10:00:00Z', { 'f:spec': {} }), entry('apps.kruise.io/v1beta1', '2026-06-01T11:00:00Z', { 'f:status': {} }, 'status')]), 'v1alpha1',
      'a status write is not the user\'s spec');
    assert.equal(slimWorkloadSpread({ ...beta, metadata: { ...beta.metadata, managedFields: [entry('apps.kruise.io/v1alpha1', 't', { 'f:spec': {} })] } }).userVersion, 'v1alpha1');
  });
});
