import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { scoreNodes } from '../../src/placement/scoring.js';
import { deployment, nodes, rsPod, statefulSet, storeOf, stsPod, workloadSpread, zoneSubset } from '../support/builders.js';
import { inputFor } from '../support/placement.js';

const ZONES = ['zone-a', 'zone-b', 'zone-c'];
// Prioritize ranks on its own with placement.spreadNodes off; on, the filter passes only the best nodes.
const scoring = { settings: { spreadNodes: false } };
const byHost = (input: ReturnType<typeof inputFor>): Record<string, number> => Object.fromEntries(scoreNodes(input).map((score,
  i) => [input.candidates.names[i], score]));

describe('prioritize scores', () => {
  it('are 0 for unmanaged pods', () => {
    const store = storeOf([...nodes(ZONES, 1), ...deployment('web', 3)]);
    assert.deepEqual(scoreNodes(inputFor(store, rsPod('web', 'x'))), [0, 0, 0]);
  });

  it('spread the workload over the nodes of the pinned zone and give 0 outside it', () => {
    const store = storeOf([...nodes(ZONES, 2), statefulSet('db', 6), stsPod('db', 0, { nodeName: 'node-a-1' })]);
    const s = byHost(inputFor(store, stsPod('db', 3), scoring));
    assert.equal(s['node-a-2'], 10);
    assert.equal(s['node-a-1'], 0);
    assert.equal(s['node-b-1'], 0);
    for (const v of Object.values(s)) assert.ok(Number.isInteger(v) && v >= 0 && v <= 10);
  });

  it('weight WorkloadSpread preferred terms', () => {
    const pref = { preferredNodeSelectorTerms: [{ weight: 10, preference: { matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: ['node-b-2'] }] } }] };
    const store = storeOf([...nodes(ZONES, 2), ...deployment('web', 3), workloadSpread('ws', { kind: 'Deployment', name: 'web' }, [zoneSubset('b', 'zone-b', undefined, pref)])]);
    const s = byHost(inputFor(store, rsPod('web', 'x'), scoring));
    assert.equal(s['node-b-2'], 10);
    assert.equal(s['node-b-1'], 5);
    assert.equal(s['node-a-1'], 0);
  });
});
