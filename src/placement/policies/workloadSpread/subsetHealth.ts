import type { SlimPod } from '../../../cluster/objects.js';
import type { Snapshot } from '../../../cluster/store.js';
import { judged, type CannotGrow, type HealthBase, type OffPinPod, type WorkloadHealth } from '../../healthRecord.js';
import { podVolumes } from '../../volumes.js';
import { resolveMax, subsetOfPod, type SpreadModel } from './subsets.js';

/**
 * A WorkloadSpread's health: its subsets play the part of zones. The layout fills subsets in
 * order up to each maxReplicas, as Kruise's webhook does, and the replicas beyond them in no
 * subset; a pod in no subset past those, or beyond its subset's quota (the newest first), is off its seat. No scale-down risk: Kruise's own
 * deletion costs decide that order.
 */
export function workloadSpreadHealth(
  model: SpreadModel, pods: readonly SlimPod[], snapshot: Snapshot, base: HealthBase,
  growth: { cannotGrow: CannotGrow[]; cannotGrowCount: number } = { cannotGrow: [], cannotGrowCount: 0 },
): WorkloadHealth {
  const { ws } = model;
  const want: Record<string, number> = {};
  let left = base.replicas;
  for (const s of ws.subsets) {
    const take = Math.max(0, Math.min(left, resolveMax(s.maxReplicas, base.replicas)));
    want[s.name] = take;
    left -= take;
  }
  const have = new Map<string, number>();
  const members = new Map<string, SlimPod[]>();
  const off: OffPinPod[] = [];
  const offPin = (p: SlimPod, zone: string | undefined) => {
    const held = podVolumes(p, snapshot).constraints.some((c) => c.bound);
    off.push({ pod: p.name, zone, pinnedZone: undefined, cause: held ? 'volume' : 'unknown', heldByVolume: held });
  };
  const beyond: SlimPod[] = [];
  for (const p of pods) {
    if (!p.nodeName) continue;
    const s = subsetOfPod(p, ws, snapshot);
    if (s === undefined) beyond.push(p);
    else {
      have.set(s, (have.get(s) ?? 0) + 1);
      (members.get(s) ?? members.set(s, []).get(s)!).push(p);
    }
  }
  // The replicas beyond every subset's max are admitted in none, as Kruise admits them: only pods in none past that count are off (the newest).
  for (const p of [...beyond].sort((a, b) => b.createdAt - a.createdAt).slice(0, Math.max(0, beyond.length - left))) offPin(p, undefined);
  for (const s of ws.subsets) {
    const max = resolveMax(s.maxReplicas, base.replicas);
    const inIt = members.get(s.name) ?? [];
    if (inIt.length <= max) continue;
    for (const p of [...inIt].sort((a, b) => b.createdAt - a.createdAt).slice(0, inIt.length - max)) offPin(p, s.name);
  }
  return judged(base, 'subset', undefined, want, have, off, [], { leftOut: [], ...growth });
}
