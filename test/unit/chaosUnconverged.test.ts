import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { failed, type RunFigures } from '../chaos/run.js';
import { aboutWorkload, classify, describeUnsettled, printUnconverged, type WorkloadEvidence } from '../chaos/unconverged.js';

// What a robustness run that did not converge prints of each unsettled workload
// (test/chaos/unconverged.ts), and the rule that lets an upstream behaviour pass and fails the rest.

type Obj = Record<string, any>;
const NOW = Date.parse('2026-11-27T12:00:00Z');
const HEALED = NOW - 240_000;
const at = (msAgo: number) => new Date(NOW - msAgo).toISOString();

interface PodOpts { owner?: [string, string]; hash?: Record<string, string>; node?: string; ready?: string; deleting?: boolean; finalizers?: string[] }
const pod = (name: string, o: PodOpts = {}): Obj => ({
  metadata: {
    name, namespace: 'chaos', creationTimestamp: at(30_000), labels: { app: name.split('-')[0], ...o.hash },
    ownerReferences: o.owner ? [{ kind: o.owner[0], name: o.owner[1], uid: 'x' }] : undefined,
    ...(o.deleting ? { deletionTimestamp: at(5_000) } : {}), ...(o.finalizers ? { finalizers: o.finalizers } : {}),
  },
  spec: { nodeName: o.node },
  status: { phase: o.node ? 'Running' : 'Pending', conditions: o.ready ? [{ type: 'Ready', status: o.ready }] : [] },
});
interface EventOpts { count?: number; type?: string; namespace?: string }
const event = (msAgo: number, reason: string, kind: string, name: string, message: string, o: EventOpts = {}): Obj => ({
  type: o.type ?? 'Normal', reason, message, count: o.count, lastTimestamp: at(msAgo),
  source: { component: kind === 'Pod' ? 'default-scheduler' : `${kind.toLowerCase()}-controller` },
  involvedObject: { kind, name, namespace: o.namespace ?? 'chaos' },
});

const spread = {
  kind: 'Deployment', metadata: { name: 'spread', namespace: 'chaos', uid: 'dep-1', generation: 9 }, spec: { replicas: 3 },
  status: {
    observedGeneration: 9, replicas: 4, readyReplicas: 4, availableReplicas: 4, updatedReplicas: 3,
    conditions: [{ type: 'Available', status: 'True', reason: 'MinimumReplicasAvailable' }, { type: 'Progressing', status: 'False', reason: 'ProgressDeadlineExceeded', message: 'ReplicaSet "spread-new" has timed out progressing.' }],
  },
};
const replicaSet = (name: string, revision: number, replicas: number, ready: number): Obj => ({
  metadata: { name, namespace: 'chaos', generation: 2, annotations: { 'deployment.kubernetes.io/revision': String(revision) }, ownerReferences: [{ kind: 'Deployment', name: 'spread', uid: 'dep-1' }] },
  spec: { replicas }, status: { observedGeneration: 2, replicas, readyReplicas: ready, availableReplicas: ready },
});
const spreadEvidence = (events: Obj[]): WorkloadEvidence => ({
  workload: { namespace: 'chaos', kind: 'Deployment', name: 'spread' }, object: spread,
  replicaSets: [replicaSet('spread-old', 4, 1, 1), replicaSet('spread-new', 5, 3, 3), replicaSet('spread-older', 3, 0, 0)],
  pods: [
    pod('spread-new-c', { owner: ['ReplicaSet', 'spread-new'], hash: { 'pod-template-hash': 'new' }, node: 'general-zone-a-1', ready: 'True' }),
    pod('spread-new-a', { owner: ['ReplicaSet', 'spread-new'], hash: { 'pod-template-hash': 'new' }, node: 'general-zone-b-1', ready: 'True' }),
    pod('spread-old-x', { owner: ['ReplicaSet', 'spread-old'], hash: { 'pod-template-hash': 'old' }, node: 'general-zone-z-9', ready: 'True' }),
    pod('spread-old-y', { owner: ['ReplicaSet', 'spread-old'], hash: { 'pod-template-hash': 'old' }, node: 'general-zone-a-1', ready: 'False', deleting: true, finalizers: ['chaos/hold'] }),
    pod('spread-new-b'),
  ],
  nodes: ['general-zone-a-1', 'general-zone-b-1'],
  health: {
    key: 'chaos/Deployment/spread', reason: '3 of 3 wanted subsets', atRisk: false, replicas: 3, pending: 1, missing: 0, settling: 1, offPin: 0,
    causes: { volume: 0 }, domain: 'subset', perZone: { a: { pods: 2, want: 2 }, b: { pods: 1, want: 1 } },
  },
  events, healedAt: HEALED, now: NOW,
});

describe('the printout of an unsettled workload', () => {
  it('shows the owner chain\'s counts and conditions, each pod, zonekeeper\'s health and the last minute\'s Events', () => {
    const lines = describeUnsettled(spreadEvidence([
      event(90_000, 'ScalingReplicaSet', 'Deployment', 'spread', 'too old to show'),
      event(20_000, 'ScalingReplicaSet', 'Deployment', 'spread', 'Scaled down replica set spread-old from 2 to 1'),
      event(10_000, 'FailedScheduling', 'Pod', 'spread-new-b', '0/9 nodes are available', { type: 'Warning', count: 3 }),
    ]));
    assert.deepEqual(lines, [
      'Deployment spread: spec.replicas 3; replicas 4, readyReplicas 4, availableReplicas 4, updatedReplicas 3; generation 9 observed 9; '
      + 'Available=True MinimumReplicasAvailable, Progressing=False ProgressDeadlineExceeded (ReplicaSet "spread-new" has timed out progressing.)',
      'ReplicaSet spread-new (revision 5): spec.replicas 3; replicas 3, readyReplicas 3, availableReplicas 3; generation 2 observed 2',
      'ReplicaSet spread-old (revision 4): spec.replicas 1; replicas 1, readyReplicas 1, availableReplicas 1; generation 2 observed 2',
      'ReplicaSets at 0: 1',
      'pod spread-new-a (made 30s ago): ReplicaSet spread-new, pod-template-hash new, node general-zone-b-1, Running, Ready=True',
      'pod spread-new-b (made 30s ago): no owner, no revision label, unbound, Pending, Ready=unknown',
      'pod spread-new-c (made 30s ago): ReplicaSet spread-new, pod-template-hash new, node general-zone-a-1, Running, Ready=True',
      'pod spread-old-x (made 30s ago): ReplicaSet spread-old, pod-template-hash old, node general-zone-z-9 (gone), Running, Ready=True',
      'pod spread-old-y (made 30s ago): ReplicaSet spread-old, pod-template-hash old, node general-zone-a-1, Running, Ready=False, deleting since 5s ago (finalizers chaos/hold)',
      'zonekeeper: 3 of 3 wanted subsets; atRisk false; replicas 3, pending 1, missing 0, settling 1, off-pin 0; subsets a 2/2, b 1/1',
      'event 20s ago Normal ScalingReplicaSet Deployment/spread by deployment-controller: Scaled down replica set spread-old from 2 to 1',
      'event 10s ago Warning FailedScheduling Pod/spread-new-b by default-scheduler ×3: 0/9 nodes are available',
    ]);
  });

  it('is bounded: the last Events and the first pods, saying how many more', () => {
    const e = spreadEvidence(Array.from({ length: 40 }, (_, i) => event(59_000 - i * 1000, 'Killing', 'Pod', `spread-old-${i}`, `stop ${i}`)));
    e.pods = Array.from({ length: 30 }, (_, i) => pod(`spread-new-${String(i).padStart(2, '0')}`, { owner: ['ReplicaSet', 'spread-new'] }));
    const lines = describeUnsettled(e);
    assert.ok(lines.length <= 35, `${lines.length} lines`);
    assert.ok(lines.includes('… 18 more pods'));
    assert.ok(lines.includes('… 25 earlier Events'));
    assert.match(lines.at(-1)!, /stop 39$/, 'the newest Event last');
    assert.equal(describeUnsettled({ ...e, health: 'no health record for it on the Lease holder' }).filter((l) => l.startsWith('zonekeeper: no health record')).length, 1);
  });

  it('takes the Events about the workload, its ReplicaSets and its pods, in its namespace only', () => {
    const events = [
      event(1, 'A', 'Deployment', 'spread', ''), event(1, 'B', 'ReplicaSet', 'spread-new', ''), event(1, 'C', 'Pod', 'spread-new-a', ''),
      event(1, 'D', 'WorkloadSpread', 'spread', ''), event(1, 'E', 'Pod', 'spreadsheet-0', ''), event(1, 'F', 'Deployment', 'web', ''),
      event(1, 'G', 'Deployment', 'spread', '', { namespace: 'other' }), event(1, 'H', 'Deployment', 'spread-x', ''),
    ];
    assert.deepEqual(aboutWorkload(events, { namespace: 'chaos', kind: 'Deployment', name: 'spread' }).map((e) => e.reason), ['A', 'B', 'C', 'D']);
  });
});

describe('the rule: upstream by the run\'s evidence, or unexplained', () => {
  const refused = (msAgo: number) => event(msAgo, 'FailedCreate', 'StatefulSet', 'admitted',
    'create Pod admitted-1 in StatefulSet admitted failed error: Internal error occurred: failed calling webhook "pods.zonekeeper.io": failed to call webhook: connect: connection refused',
    { type: 'Warning', count: 4, namespace: 'chaos-admitted' });
  const admitted = (events: Obj[], pods = 1): WorkloadEvidence => ({
    workload: { namespace: 'chaos-admitted', kind: 'StatefulSet', name: 'admitted' },
    object: { kind: 'StatefulSet', metadata: { name: 'admitted', generation: 3 }, spec: { replicas: 3 }, status: { replicas: pods } },
    replicaSets: [], pods: Array.from({ length: pods }, (_, i) => pod(`admitted-${i}`)), nodes: [], health: 'x', events, healedAt: HEALED, now: NOW,
  });

  it('a StatefulSet short of pods whose creates the webhook could not take before the heal, none made since, is kube-controller-manager\'s backoff', () => {
    const upstream = classify(admitted([refused(250_000)]), true);
    assert.equal(upstream?.issue, 'kubernetes#132805');
    assert.equal(upstream?.evidence, '1 of 3 pods; FailedCreate (webhook not called) ×4, the last 10s before the heal, no SuccessfulCreate since; retried by hand');
  });

  it('anything else is unexplained', () => {
    const made = event(245_000, 'SuccessfulCreate', 'StatefulSet', 'admitted', 'create Pod admitted-1', { namespace: 'chaos-admitted' });
    const denied = { ...refused(250_000), message: 'admission webhook "pods.zonekeeper.io" denied the request: no zone' };
    for (const [why, e] of [
      ['refused after the heal: the webhook is still unreachable', admitted([refused(200_000)])],
      ['a create made since', admitted([refused(250_000), made])],
      ['a denial, not an outage', admitted([denied])],
      ['no refusal at all', admitted([])],
      ['not short of pods', admitted([refused(250_000)], 3)],
      ['a Deployment', { ...spreadEvidence([refused(250_000)]) }],
    ] as const) assert.equal(classify(e, true), undefined, why);
  });

  const created = (msAgo: number, pod: string, rs = 'spread-new') => event(msAgo, 'SuccessfulCreate', 'ReplicaSet', rs, `Created pod: ${pod}`);
  const stalled = (events: Obj[]): WorkloadEvidence => ({ ...spreadEvidence(events), pods: spreadEvidence([]).pods.filter((p) => p.metadata.name !== 'spread-new-c') });

  it('a Deployment whose ReplicaSet made a pod that is gone, not by its delete, and has not moved since, off its spec, is an expectation never met', () => {
    const e = stalled([created(95_000, 'spread-new-lost'), created(95_000, 'spread-new-a'), created(200_000, 'spread-old-x', 'spread-old')]);
    const upstream = classify(e, false);
    assert.equal(upstream?.issue, 'kubernetes#129795');
    assert.equal(upstream?.evidence, 'ReplicaSet spread-new at 1 of 3 pods, made spread-new-lost 95s ago (gone, not deleted by it), no create or delete since; not retried by hand');
  });

  it('a ReplicaSet that moved since, deleted the pod itself, holds its spec, or whose pod is still there is not stalled', () => {
    const deleted = event(90_000, 'SuccessfulDelete', 'ReplicaSet', 'spread-new', 'Deleted pod: spread-new-lost');
    const atSpec: WorkloadEvidence = { ...spreadEvidence([created(95_000, 'spread-new-lost')]), replicaSets: [replicaSet('spread-new', 5, 2, 2)] };
    for (const [why, e] of [
      ['a create since', stalled([created(95_000, 'spread-new-lost'), created(60_000, 'spread-new-a')])],
      ['a failed create since', stalled([created(95_000, 'spread-new-lost'), event(60_000, 'FailedCreate', 'ReplicaSet', 'spread-new', 'quota', { type: 'Warning' })])],
      ['deleted by the ReplicaSet', stalled([created(95_000, 'spread-new-lost'), deleted])],
      ['at its spec', atSpec],
      ['the pod still there', stalled([created(95_000, 'spread-new-a')])],
      ['no create seen', stalled([])],
    ] as const) assert.equal(classify(e, true), undefined, why);
  });

  it('fails the run on an unexplained one, passes it on upstream ones only, and prints the verdicts', () => {
    const figures = (unconverged: RunFigures['unconverged']): RunFigures => ({
      seed: 1, version: '1.36.2', operations: 1, faults: 1, checks: 1, violations: [], convergedAfter: undefined, unconverged,
      repairEvictions: 0, gateWaits: 0, autoscaler: 'none', karpenter: 'none', voluntaryEvictions: {}, retriedByHand: [], selfExits: [], maxRssMiB: 100, history: 'h',
    });
    const backoff = { what: 'chaos-admitted/admitted: 1 bound of 1 pods, 3 replicas', upstream: classify(admitted([refused(250_000)]), false), detail: ['StatefulSet admitted: …'] };
    const fourth = { what: 'chaos/spread: 4 bound of 4 pods, 3 replicas', detail: describeUnsettled(spreadEvidence([])) };
    assert.equal(failed(figures([backoff])), false);
    assert.equal(failed(figures([backoff, fourth])), true);
    assert.equal(failed(figures([])), true, 'not converged and nothing said why');
    assert.equal(failed({ ...figures([]), convergedAfter: 3 }), false);
    const lines = printUnconverged([backoff, fourth]);
    assert.equal(lines[0], '2 unsettled: 1 unexplained (the run fails), 1 upstream\'s by the run\'s evidence');
    assert.match(lines[1]!, /^ {2}chaos-admitted\/admitted: 1 bound of 1 pods, 3 replicas: upstream: kubernetes#132805 \(1 of 3 pods; .*not retried by hand\)$/);
    assert.equal(lines[2], '    StatefulSet admitted: …');
    assert.equal(lines[3], '  chaos/spread: 4 bound of 4 pods, 3 replicas: unexplained');
    assert.equal(lines.length, 4 + fourth.detail.length);
  });
});
