import { parseArgs } from 'node:util';
import { z } from 'zod';
import { describeIssues, ZonekeeperError } from './common/errors.js';
import { planReplicas, type Plan } from './placement/planner.js';
import { parsePreferences, type ZonePreferencesSpec } from './cluster/zonePreferences.js';
import { DEFAULT_PREFERENCES, sequencePreferences } from './placement/preferences.js';
import { cappedBy, keptCounts } from './placement/zoneSequence.js';
import { fleetOrder } from './placement/fleet.js';

export const PLAN_USAGE = `zonekeeper plan: per-zone replica counts from the Federated ReplicaSet planner

Usage:
  zonekeeper plan --replicas N --zones A,B,C [--preferences JSON] [--capacity JSON]
                  [--existing JSON] [--key STRING] [--table]

  --replicas N        replicas to distribute (a whole number, 0 to 2147483647)
  --zones A,B,C       the zones, in order
  --preferences JSON  as the zonekeeper.io/zone-preferences annotation:
                      {"rebalance": bool, "zones": {"*"|zone: {"minReplicas", "maxReplicas", "weight"}}}
                      (default: every zone weight 1)
  --capacity JSON     {zone: how many more replicas it can hold}; 0 = offline
  --existing JSON     {zone: replicas already there}; kept when rebalance is false
  --key STRING        workload key (namespace/Kind/name): hashed with zone names to order equal
                      weights, and it rotates zonekeeper's zone list as live placement does (default "")
  --table             a readable table instead of JSON

Prints {"plan": {zone: n, ...}, "overflow": {zone: n, ...}, "zonekeeper": {zone: n, ...}, "unplaced": n}:
the Federated ReplicaSet plan, what capacity could not hold, the layout zonekeeper itself
uses for these replicas (the first N seats of its zone sequence, each zone capped at
existing + capacity; a zone already over its share keeps its pods): equal weights never leave a zone empty while N >= zones, where the
plan's rounding can (4 over 3 zones plans 2/2/0; zonekeeper lays out 2/1/1), and how many
replicas no zone may take (with a "reason"). A layout that leaves a zone empty which the replicas
could fill is warned about on stderr. Bad input exits 2.
`;

export class UsageError extends ZonekeeperError {}

const counts = z.record(z.string(), z.number().int().min(0));

function json<T>(flag: string, text: string | undefined, schema: z.ZodType<T>): T | undefined {
  if (text === undefined) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new UsageError(`--${flag}: not JSON: ${(err as Error).message}`);
  }
  const r = schema.safeParse(value);
  if (!r.success) throw new UsageError(`--${flag}: ${describeIssues(r.error)}`);
  return r.data;
}

export interface PlanOutput extends Plan {
  /** The layout zonekeeper uses: the first `replicas` seats of its zone sequence, per zone. */
  zonekeeper: Record<string, number>;
  /** Replicas zonekeeper's layout gives no zone: their pods wait (every zone at its limit). */
  unplaced: number;
  /** Why, when some are unplaced. */
  reason?: string;
}

/** A workload's spec.replicas is an int32: the most a plan lays out. */
const MAX_REPLICAS = 2 ** 31 - 1;

/** `--replicas -3` as `--replicas=-3`: a number with a minus sign is the flag's value, judged below (parseArgs calls it ambiguous). */
function negativeValuesJoined(argv: string[]): string[] {
  return argv.flatMap((a, i) => {
    if (a === '--replicas' && /^-[\d.]/.test(argv[i + 1] ?? '')) return [];
    if (argv[i - 1] === '--replicas' && /^-[\d.]/.test(a)) return [`--replicas=${a}`];
    return [a];
  });
}

export function runPlan(argv: string[]): { output: string; plan: PlanOutput; warnings: string[] } {
  let values;
  try {
    ({ values } = parseArgs({
      args: negativeValuesJoined(argv), strict: true, allowPositionals: false,
      options: {
        replicas: { type: 'string' }, zones: { type: 'string' }, preferences: { type: 'string' }, capacity: { type: 'string' },
        existing: { type: 'string' }, key: { type: 'string', default: '' }, table: { type: 'boolean', default: false },
      },
    }));
  } catch (err) {
    const ambiguous = /^Option '(--[\w-]+)' argument is ambiguous/.exec((err as Error).message);
    throw new UsageError(ambiguous ? `${ambiguous[1]}: missing its value` : (err as Error).message);
  }
  if (values.replicas === undefined) throw new UsageError('--replicas: required (how many replicas to lay out)');
  const replicas = /^\s*\d+\s*$/.test(values.replicas) ? Number(values.replicas) : Number.NaN;
  if (!Number.isSafeInteger(replicas) || replicas > MAX_REPLICAS) {
    throw new UsageError(`--replicas: expected a whole number from 0 to ${MAX_REPLICAS}, not ${JSON.stringify(values.replicas)}`);
  }
  const zones = (values.zones ?? '').split(',').map((s) => s.trim()).filter(Boolean);
  if (zones.length === 0) throw new UsageError('--zones: expected a comma-separated list of zones');
  const repeated = zones.find((z, i) => zones.indexOf(z) !== i);
  if (repeated !== undefined) throw new UsageError(`--zones: zone ${repeated} is named twice`);
  let preferences: ZonePreferencesSpec = DEFAULT_PREFERENCES;
  if (values.preferences !== undefined) {
    const p = parsePreferences(values.preferences);
    if (!p.ok) throw new UsageError(`--preferences: ${p.error}`);
    preferences = p.spec;
  }
  const capacity = json('capacity', values.capacity, counts);
  const existing = json('existing', values.existing, counts);
  for (const [flag, map] of [['capacity', capacity], ['existing', existing]] as const) {
    for (const z of Object.keys(map ?? {})) if (!zones.includes(z)) throw new UsageError(`--${flag}: zone ${z} is not in --zones`);
  }
  const federated = planReplicas({ replicas, zones, preferences, capacity, existing, key: values.key });
  const totalCap: Record<string, number> = {};
  for (const [z, n] of Object.entries(capacity ?? {})) totalCap[z] = n + (existing?.[z] ?? 0);
  // With a workload key, zonekeeper's layout starts where the live placement starts that workload's list.
  const order = values.key ? fleetOrder(zones, values.key, undefined) : zones;
  const layout = keptCounts(order, replicas, cappedBy(sequencePreferences(preferences), totalCap), existing ?? {});
  if (!layout) throw new UsageError(`--replicas: ${replicas} is too many to lay out with these preferences`);
  // Preferences a workload may legally carry can leave replicas with no zone: the live path keeps
  // their pods waiting with a reason, and so does the plan (the Federated planner answers zeros).
  const unplaced = replicas - Object.values(layout).reduce((a, b) => a + b, 0);
  const plan: PlanOutput = {
    ...federated, zonekeeper: layout, unplaced,
    ...(unplaced > 0 ? { reason: `${unplaced} of ${replicas} replicas have no zone: every zone is at its limit (weight 0 and no minReplicas, maxReplicas reached, no entry, or no capacity); their pods wait` } : {}),
  };
  return { plan, output: values.table ? planTable(zones, plan) : JSON.stringify(plan), warnings: emptiedZones(zones, replicas, layout) };
}

/** A layout that leaves zones empty though the replicas could fill them: said on stderr, the plan stays valid. */
function emptiedZones(zones: string[], replicas: number, layout: Record<string, number>): string[] {
  const empty = zones.filter((z) => !layout[z]);
  const held = zones.length - empty.length;
  if (held >= Math.min(replicas, zones.length)) return [];
  return [`warning: ${empty.join(', ')} ${empty.length === 1 ? 'gets' : 'get'} no replica, though ${replicas} replicas could hold ${Math.min(replicas, zones.length)} zones `
    + `(no weight, minReplicas or entry in --preferences, or no --capacity): losing ${zones.filter((z) => layout[z]).join(', ') || 'a zone'} loses every replica`];
}

function planTable(zones: string[], p: PlanOutput): string {
  const width = Math.max('total'.length, ...zones.map((z) => z.length));
  const cell = (n: number | undefined, w: number) => String(n ?? 0).padStart(w);
  const rows = zones.map((z) => `${z.padEnd(width)}  ${cell(p.plan[z], 8)}  ${cell(p.overflow[z], 8)}  ${cell(p.zonekeeper[z], 10)}`);
  const sum = (m: Record<string, number>) => Object.values(m).reduce((a, b) => a + b, 0);
  return [
    `${'zone'.padEnd(width)}  ${'replicas'.padStart(8)}  ${'overflow'.padStart(8)}  ${'zonekeeper'.padStart(10)}`, ...rows,
    `${'total'.padEnd(width)}  ${cell(sum(p.plan), 8)}  ${cell(sum(p.overflow), 8)}  ${cell(sum(p.zonekeeper), 10)}`,
    ...(p.reason ? [`unplaced: ${p.reason}`] : []),
  ].join('\n');
}
