import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { gateWrite } from '../../src/decision/gatedSubsetPatch.js';
import type { SpecDecision } from '../../src/decision/spec.js';
import { rsPod, type Raw } from '../support/builders.js';
import { applyMergePatch } from '../support/mergePatch.js';

// A subset's `patch` for a pod the zone gate decides after its creation (docs/design.md#the-zone-gate):
// the gate writes with zonekeeper's rights, so only what narrows where the pod runs is written with the
// decision; labels, annotations, images and tolerations apply at admission only, and are named.

const ZONE = 'topology.kubernetes.io/zone';
const term = { matchExpressions: [{ key: ZONE, operator: 'In', values: ['zone-a'] }], matchFields: [] };
const subset = (patch: Raw | undefined, tolerations: Raw[] = []): Exclude<SpecDecision, { kind: 'wait' }> => ({
  kind: 'subset', workloadSpread: 'arch', subset: 'x86', term, preferred: [], tolerations: tolerations as never, why: '', patch,
});
/** A stored pod as the gate reads it: gated, with one container and the scheduler's defaults. */
function stored(spec: Raw = {}): Raw {
  const p = rsPod('web', 'x', { labels: { app: 'web' }, tolerations: [{ key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 }] });
  return {
    ...p, metadata: { ...p.metadata, resourceVersion: '42' },
    spec: { ...p.spec, schedulingGates: [{ name: 'zonekeeper.io/zone' }], priority: 0, containers: [{ name: 'c', image: 'app:1', resources: { requests: { cpu: '10m' } } }], ...spec },
  };
}
/** The stored pod after the gate's one merge patch. */
const written = (pod: Raw, d = subset(undefined)) => {
  const w = gateWrite(pod, d);
  return { pod: applyMergePatch(pod, { ...w.patch, metadata: { ...w.patch.metadata, resourceVersion: null } }), notApplied: w.patchNotApplied };
};

describe('a subset patch on a pod the gate decides', () => {
  it('a hostile WorkloadSpread editor gets no pod-patch power: labels, annotations, an image, tolerations (the patch\'s and the subset\'s own) and a deadline are not written, each is named; the decision is', () => {
    const patch = {
      metadata: { labels: { role: 'db-client', app: null }, annotations: { 'cluster-autoscaler.kubernetes.io/safe-to-evict': 'false' } },
      spec: {
        containers: [{ name: 'c', image: 'attacker/payload:latest', resources: { requests: { cpu: '10m' } } }],
        tolerations: [{ key: 'node-role.kubernetes.io/control-plane', operator: 'Exists' }],
        activeDeadlineSeconds: 1,
      },
    };
    const pod = stored();
    const { pod: after, notApplied } = written(pod, subset(patch, [{ key: 'node-role.kubernetes.io/master', operator: 'Exists' }]));
    assert.deepEqual(after.metadata.labels, pod.metadata.labels);
    assert.equal(after.metadata.annotations['cluster-autoscaler.kubernetes.io/safe-to-evict'], undefined);
    assert.deepEqual(after.spec.containers, pod.spec.containers);
    assert.deepEqual(after.spec.tolerations, pod.spec.tolerations);
    assert.equal(after.spec.activeDeadlineSeconds, undefined);
    assert.deepEqual(notApplied!.split(', '), ["tolerations (the subset's)", 'metadata.labels', 'metadata.annotations', 'spec.tolerations', 'spec.containers', 'spec.activeDeadlineSeconds']);
    assert.equal(after.metadata.annotations['zonekeeper.io/subset-patch-not-applied'], notApplied, 'kept on the pod for zonekeeper audit');
    // The decision itself, in the same write.
    assert.deepEqual(JSON.parse(after.metadata.annotations['apps.kruise.io/matched-workloadspread']), { name: 'arch', subset: 'x86' });
    const required = after.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution;
    assert.deepEqual(required.nodeSelectorTerms, [{ matchExpressions: term.matchExpressions }]);
    assert.equal(after.spec.schedulingGates, undefined);
    // Nothing else of the spec changed.
    const { affinity: _a, schedulingGates: _g, ...rest } = after.spec;
    const { affinity: _a0, schedulingGates: _g0, ...rest0 } = pod.spec;
    assert.deepEqual(rest, rest0);
  });

  it('a subset toleration the pod already has is not named; node selector keys added, preferred and narrowed required node affinity: all written, nothing named', () => {
    const gen = { nodeSelectorTerms: [{ matchExpressions: [{ key: 'gen', operator: 'Gt', values: ['4'] }] }] };
    const own = { nodeSelector: { disk: 'ssd' }, affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: gen } } };
    const patch = { spec: {
      nodeSelector: { arch: 'amd64' },
      affinity: { nodeAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 5, preference: { matchExpressions: [{ key: 'fast', operator: 'Exists' }] } }] } },
    } };
    const { pod: after, notApplied } = written(stored(own), subset(patch, [{ key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute' }]));
    assert.equal(notApplied, undefined);
    assert.equal(after.metadata.annotations['zonekeeper.io/subset-patch-not-applied'], undefined);
    assert.deepEqual(after.spec.nodeSelector, { disk: 'ssd', arch: 'amd64' });
    assert.equal(after.spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight, 5);
    assert.deepEqual(after.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions.map((e: Raw) => e.key), ['gen', ZONE]);
  });

  it('what the API server refuses on a stored pod is named and left as it was: a node selector value changed, a toleration removed, pod affinity, a priority class', () => {
    const patch = { spec: {
      nodeSelector: { disk: 'hdd' }, tolerations: [{ key: 'spot', operator: 'Exists' }], priorityClassName: 'high',
      affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ topologyKey: 'kubernetes.io/hostname', labelSelector: { matchLabels: { app: 'web' } } }] } },
    } };
    const pod = stored({ nodeSelector: { disk: 'ssd' } });
    const { pod: after, notApplied } = written(pod, subset(patch));
    assert.deepEqual(notApplied!.split(', ').sort(), ['spec.affinity.podAntiAffinity', 'spec.nodeSelector', 'spec.priorityClassName', 'spec.tolerations'], 'priority follows its class: not named');
    assert.deepEqual([after.spec.nodeSelector, after.spec.tolerations, after.spec.priorityClassName, after.spec.priority], [{ disk: 'ssd' }, pod.spec.tolerations, undefined, 0]);
    assert.equal(after.spec.affinity.podAntiAffinity, undefined);
  });

  it('a patch admission would refuse: the decision is written, the whole patch named; no patch: the decision alone, as before', () => {
    const { pod: after, notApplied } = written(stored(), subset({ spec: { nodeName: 'node-a-1' } }));
    assert.match(notApplied!, /^the whole patch \(it sets spec.nodeName, which zonekeeper and the scheduler own\)$/);
    assert.equal(after.spec.nodeName, undefined);
    assert.ok(after.metadata.annotations['apps.kruise.io/matched-workloadspread']);
    const plain = written(stored());
    assert.equal(plain.notApplied, undefined);
    assert.equal(plain.pod.metadata.annotations['zonekeeper.io/subset-patch-not-applied'], undefined);
  });
});
