import { ownedThrough, workloadKindSpec } from '../cluster/kinds.js';
import { findWorkloadSpread } from './policies/workloadSpread/subsets.js';
import type { SlimPod, SlimWorkload } from '../cluster/objects.js';
import type { Snapshot } from '../cluster/store.js';
import { firstSeatCounts, NO_PENDING_FREEZES, placementList, type PendingFreezes } from './fleet.js';
import type { CoverFacts } from './policy.js';
import { POLICIES, policyNamed, type PolicyModel, type PolicyName } from './policies/index.js';
import type { PlacementPolicy } from './policy.js';
import type { PlacementSettings } from './settings.js';
import { preferencesOfWorkload, seatKindOf, seatReader, type WorkloadFacts } from './workloadFacts.js';
import { optedOut, resolveWorkload, workloadKey, workloadPods, workloadPodsPerNode, type WorkloadRef } from './workload.js';
import { zoneListOf, type ZoneList } from './zones.js';
import { adoptedList, placedSeats } from './zoneListAdoption.js';

// The workload as every decision sees it, built once (per pod for filter and prioritize, per
// workload for the picker, deletion costs and the debug views), as PodTopologySpread builds
// its PreFilter state once per pod. Policies read it; none of them resolves owners, parses
// preferences, reads seats or picks the zone list on its own.

export type WorkloadModel =
  | (WorkloadFacts & { policy: 'none'; why: string })
  /** The policy may live on an owner the cache does not show yet: wait rather than guess. */
  | (WorkloadFacts & { policy: 'wait'; governs: PolicyName | 'none'; why: string })
  | PolicyModel;

/** Where a model finds lists being frozen; `forPlacement`: the model places a pod, so a derived list is about to be frozen. */
export interface ZoneListDeps {
  pendingFreezes?: PendingFreezes;
  forPlacement?: boolean;
}

/** The first registered policy that covers the workload (docs/design.md#which-policy-places-a-pod). */
function coveringPolicy(facts: CoverFacts) {
  return POLICIES.find((p) => p.covers(facts));
}

/**
 * The model of a workload: `replicaSet` is the pod's ReplicaSet when a WorkloadSpread may
 * target it rather than its Deployment; `lists` where lists being frozen are found.
 */
export function workloadModel(
  ref: WorkloadRef, workload: SlimWorkload | undefined, snapshot: Snapshot, settings: PlacementSettings,
  lists: ZoneListDeps = {}, replicaSet?: string,
): Exclude<WorkloadModel, { policy: 'wait' }> {
  const key = workloadKey(ref);
  const preferences = preferencesOfWorkload(workload);
  const seats = seatKindOf(ref, workload);
  const facts: CoverFacts = {
    ref, workload, seats, preferences, settings, snapshot,
    replicaSet: replicaSet ?? (ref.kind === 'ReplicaSet' ? ref.name : undefined),
  };
  const policy = coveringPolicy(facts);
  const own = policy?.own(facts);
  const pending = lists.pendingFreezes ?? NO_PENDING_FREEZES;
  let list: ZoneList | undefined;
  const freezes = own !== undefined && policy!.freezesZoneList;
  const seat = seatReader(seats, workload);
  // The list about to be frozen keeps placed seats where they are (equal weights only: with
  // preferences a zone's position changes its share, not just its seats).
  const adopting = (l: ZoneList): ZoneList => {
    if (!freezes || !lists.forPlacement || !settings.adoptExisting || !settings.freezeZones || l.source !== 'nodes' || preferences.parsed !== undefined) return l;
    const placed = placedSeats(seats === 'ordinal' ? workload : undefined, workloadPods(ref, snapshot), (p) => seat(p).index, snapshot, l.topologyKey);
    if (placed.length === 0) return l;
    const adopted = adoptedList(l.zones, placed);
    return { ...l, zones: adopted.zones, adopted: { agree: adopted.agree, seats: placed.length } };
  };
  const base: WorkloadFacts = {
    ref, key, workload, preferences, seats, seat,
    // Only a policy that freezes its list rotates it by the fleet's first seats, and only for
    // the placement about to freeze it; every other reader sees the derived list in the fleet's
    // stable (hash) order, so the filter, the picker and the debug view agree.
    zones: () => (list ??= adopting(placementList(
      zoneListOf(workload, snapshot, settings, pending.get(key)?.zones), key,
      freezes ? settings : { ...settings, freezeZones: false },
      freezes && lists.forPlacement ? () => firstSeatCounts(snapshot, pending.values()) : undefined,
    ))),
    pods: () => workloadPods(ref, snapshot),
    podsPerNode: (exclude) => workloadPodsPerNode(ref, snapshot, exclude),
  };
  if (!policy || !own) return { ...base, policy: 'none', why: `not managed: no policy covers ${ref.kind} ${ref.namespace}/${ref.name}` };
  return { ...base, policy: policy.name, ...own } as PolicyModel;
}

/** The policy that built the model; undefined for a pod or workload no policy places (yet). */
export function policyOf(model: WorkloadModel): PlacementPolicy<string, any> | undefined {
  return model.policy === 'none' || model.policy === 'wait' ? undefined : policyNamed(model.policy);
}

/** The model a pod is placed by; undefined for a pod without a controller owner. */
export function podModel(pod: SlimPod, snapshot: Snapshot, settings: PlacementSettings, lists: ZoneListDeps = {}): WorkloadModel | undefined {
  const resolved = resolveWorkload(pod, snapshot);
  if (!resolved) return undefined;
  const replicaSet = pod.owner?.kind === 'ReplicaSet' ? pod.owner.name : undefined;
  const model = workloadModel(resolved.ref, resolved.object, snapshot, settings, lists, replicaSet);
  if (optedOut(pod, resolved.object)) return { ...model, policy: 'none', why: 'not managed: zonekeeper.io/ignore is "true"' };
  // WorkloadSpreads refused to zonekeeper after it watched them (RBAC revoked, or a kube-apiserver
  // whose authorizer is still starting): a workload its last known WorkloadSpread targets waits,
  // never placed as if it had none (its quotas would be overrun).
  const spreadsOff = snapshot.kindOff('workloadspreads');
  if (spreadsOff !== undefined && findWorkloadSpread(snapshot, resolved.ref, undefined)) {
    return { ...model, policy: 'wait', governs: 'workloadspread', why: spreadsOff };
  }
  // A kind the API server refuses or does not serve: its pods wait with the reason (the
  // permission to grant); those of a kind only a feature needs (Jobs) only when that feature
  // would place them.
  const spec = resolved.missing ? workloadKindSpec(resolved.ref.kind) : undefined;
  const off = spec && snapshot.kindOff(spec.plural);
  if (off !== undefined) {
    return spec!.feature === undefined || findWorkloadSpread(snapshot, resolved.ref, undefined)
      ? { ...model, policy: 'wait', governs: spec!.feature ? 'workloadspread' : model.policy, why: `${resolved.missing}: ${off}` }
      : { ...model, policy: 'none', why: `not managed: ${off}` };
  }
  if (resolved.missing) {
    // The policy the workload would have, were it cached (a StatefulSet's pin, say).
    const governs = coveringPolicy({
      ref: resolved.ref, workload: resolved.object, seats: model.seats, preferences: model.preferences, settings, snapshot,
      replicaSet: replicaSet ?? (resolved.ref.kind === 'ReplicaSet' ? resolved.ref.name : undefined),
    })?.name ?? 'none';
    return { ...model, policy: 'wait', governs, why: resolved.missing };
  }
  return model;
}

/** A cached workload's model never waits: its owner is the workload itself. */
export type CachedModel = Exclude<WorkloadModel, { policy: 'wait' }>;

/**
 * Every managed workload (a policy covers it; a Deployment's ReplicaSets are its own), by
 * namespace, kind, name, each model built once: the layout page's and health's list.
 */
export function managedModels(snapshot: Snapshot, settings: { settings: PlacementSettings } & ZoneListDeps,
  namespace?: string): { w: SlimWorkload; model: CachedModel }[] {
  const managed: { w: SlimWorkload; model: CachedModel }[] = [];
  for (const w of snapshot.allWorkloads()) {
    if ((namespace !== undefined && w.namespace !== namespace) || ownedThrough(w)) continue;
    const model = workloadModel({ kind: w.kind, namespace: w.namespace, name: w.name }, w, snapshot, settings.settings, settings);
    if (model.policy !== 'none') managed.push({ w, model });
  }
  return managed.sort(({ w: a }, { w: b }) => a.namespace.localeCompare(b.namespace) || a.kind.localeCompare(b.kind) || a.name.localeCompare(b.name));
}
