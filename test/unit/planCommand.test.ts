import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { runPlan, UsageError } from '../../src/planCommand.js';

const CLI = new URL('../../dist/cli.js', import.meta.url).pathname;

describe('zonekeeper plan', () => {
  it('prints every listed zone in the plan and only overflowing zones in overflow', () => {
    const { output } = runPlan(['--replicas', '50', '--zones', 'A,B,C', '--preferences', '{"rebalance":true,"zones":{"*":{"weight":1}}}', '--capacity', '{"C":6}']);
    const parsed = JSON.parse(output);
    assert.deepEqual(Object.keys(parsed.plan), ['A', 'B', 'C']);
    assert.deepEqual(parsed.plan, { A: 22, B: 22, C: 6 });
    assert.deepEqual(Object.keys(parsed.overflow), ['C']);
  });

  it('warns on stderr when the layout empties zones the replicas could fill, and exits 0: the plan is what the preferences say', () => {
    const cli = spawnSync(process.execPath, [CLI, 'plan', '--replicas', '7', '--zones', 'zone-a,zone-b,zone-c', '--preferences', '{"zones":{"zone-a":{"weight":1}}}'], { encoding: 'utf8' });
    assert.equal(cli.status, 0);
    assert.deepEqual(JSON.parse(cli.stdout).zonekeeper, { 'zone-a': 7, 'zone-b': 0, 'zone-c': 0 });
    assert.equal(cli.stderr, 'zonekeeper: plan: warning: zone-b, zone-c get no replica, though 7 replicas could hold 3 zones (no weight, minReplicas or entry in --preferences, or no --capacity): losing zone-a loses every replica\n');
    // Two replicas cannot hold three zones: nothing to warn about.
    assert.deepEqual(runPlan(['--replicas', '2', '--zones', 'a,b,c']).warnings, []);
    assert.deepEqual(runPlan(['--replicas', '6', '--zones', 'a,b,c']).warnings, []);
  });

  it('defaults to equal weights and the empty key; --table prints a table', () => {
    assert.deepEqual(JSON.parse(runPlan(['--replicas', '6', '--zones', 'a,b,c']).output).plan, { a: 2, b: 2, c: 2 });
    const table = runPlan(['--replicas', '8', '--zones', 'a,b,c', '--preferences', '{"zones":{"a":{"weight":2},"b":{"weight":1},"c":{"weight":1}}}', '--table']).output;
    assert.match(table, /^zone\s+replicas\s+overflow\s+zonekeeper$/m);
    assert.match(table, /^a\s+4\s+0\s+4$/m);
    assert.match(table, /^total\s+8\s+0\s+8$/m);
    // Every column of the total row under its header.
    const lines = table.split('\n');
    const ends = (line: string) => [...line.matchAll(/\S+/g)].map((m) => m.index! + m[0].length);
    assert.deepEqual(ends(lines.at(-1)!).slice(1), ends(lines[0]!).slice(1));
  });

  it('prints the layout zonekeeper itself uses beside the plan: 4 over 3 equal zones is 2/2/0 planned, 2/1/1 laid out', () => {
    const { plan } = runPlan(['--replicas', '4', '--zones', 'a,b,c']);
    assert.deepEqual(Object.values(plan.plan).sort(), [0, 2, 2], 'the Federated planner, unchanged');
    assert.deepEqual(plan.zonekeeper, { a: 2, b: 1, c: 1 });
    const capped = runPlan(['--replicas', '9', '--zones', 'a,b,c', '--capacity', '{"c":1}', '--existing', '{"c":1}']).plan;
    assert.deepEqual(capped.zonekeeper, { a: 4, b: 3, c: 2 }, 'c holds its 1 plus 1 more');
  });

  for (const [what, args, message] of [
    ['bad JSON', ['--replicas', '5', '--zones', 'a', '--capacity', '{a:1}'], /--capacity: not JSON/],
    ['an unknown field', ['--replicas', '5', '--zones', 'a', '--preferences', '{"zones":{"a":{"wieght":1}}}'], /zones\.a\.wieght: unknown key/],
    ['a negative count', ['--replicas', '5', '--zones', 'a', '--existing', '{"a":-1}'], /--existing: a:/],
    ['a zone not listed', ['--replicas', '5', '--zones', 'a', '--capacity', '{"b":1}'], /zone b is not in --zones/],
    ['no replicas', ['--zones', 'a'], /--replicas/],
    ['an unknown flag', ['--replicas', '5', '--zones', 'a', '--bogus'], /bogus/],
    ['a zone named twice', ['--replicas', '3', '--zones', 'A,A'], /--zones: zone A is named twice/],
    ['negative replicas, by their own message', ['--replicas', '-3', '--zones', 'a'], /^--replicas: expected a whole number from 0 to 2147483647, not "-3"$/],
    ['fractional replicas', ['--replicas', '3.5', '--zones', 'a'], /^--replicas: expected a whole number from 0 to 2147483647, not "3\.5"$/],
    ['replicas in exponent form', ['--replicas', '1e3', '--zones', 'a'], /not "1e3"$/],
    ['more replicas than a workload can have', ['--replicas', '2147483648', '--zones', 'a'], /not "2147483648"$/],
    ['replicas that are no number', ['--replicas=abc', '--zones', 'a'], /not "abc"$/],
    ['--replicas followed by another flag', ['--replicas', '--zones', 'a'], /^--replicas: missing its value$/],
  ] as const) {
    it(`refuses ${what}`, () => {
      assert.throws(() => runPlan([...args]), (e: Error) => e instanceof UsageError && message.test(e.message));
    });
  }

  it('answers for every preference set the live path accepts: every zone at weight 0 plans zeros, every replica unplaced, and why', () => {
    const { plan } = runPlan(['--replicas', '50', '--zones', 'A,B,C', '--preferences', '{"zones": {"*": {"weight": 0, "maxReplicas": 2}}}']);
    assert.deepEqual(plan.zonekeeper, { A: 0, B: 0, C: 0 });
    assert.deepEqual(plan.plan, { A: 0, B: 0, C: 0 }, 'the Federated ReplicaSet planner answers zeros too');
    assert.equal(plan.unplaced, 50);
    assert.match(plan.reason!, /50 of 50 replicas have no zone: every zone is at its limit/);
    const capped = runPlan(['--replicas', '5', '--zones', 'A,B', '--preferences', '{"zones": {"*": {"weight": 1, "maxReplicas": 2}}}', '--table']);
    assert.equal(capped.plan.unplaced, 1);
    assert.match(capped.output, /unplaced: 1 of 5 replicas have no zone/);
    const cli = spawnSync(process.execPath, [CLI, 'plan', '--replicas', '3', '--zones', 'A,B', '--preferences', '{"zones":{"*":{"weight":0}}}'], { encoding: 'utf8' });
    assert.equal(cli.status, 0, cli.stderr);
    assert.equal(JSON.parse(cli.stdout).unplaced, 3);
  });

  it('exits 2 with the message on bad input, 0 with JSON on good input', () => {
    const bad = spawnSync(process.execPath, [CLI, 'plan', '--replicas', '5', '--zones', 'a', '--preferences', '{"zones":{"a":{"wieght":1}}}'], { encoding: 'utf8' });
    assert.equal(bad.status, 2);
    assert.match(bad.stderr, /unknown key/);
    const good = spawnSync(process.execPath, [CLI, 'plan', '--replicas', '50', '--zones', 'A,B,C', '--capacity', '{"B":0,"C":0}'], { encoding: 'utf8' });
    assert.equal(good.status, 0);
    assert.deepEqual(JSON.parse(good.stdout).plan, { A: 50, B: 0, C: 0 });
  });
});
