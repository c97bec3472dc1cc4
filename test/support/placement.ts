import { parseConfig } from '../../src/common/config.js';
import type { ClusterStore } from '../../src/cluster/store.js';
import { filterNodes } from '../../src/placement/filtering.js';
import { NO_PENDING_FREEZES } from '../../src/placement/fleet.js';
import { pickPodsToRemove } from '../../src/placement/downscale.js';
import { pickResult } from '../../src/extender/wire/picker.js';
import { Reservations } from '../../src/decision/reservationLedger.js';
import { candidatesNamed, type PlacementInput } from '../../src/placement/policy.js';
import { type FilterVerdict } from '../../src/placement/verdict.js';
import { type PlacementSettings } from '../../src/placement/settings.js';
import { workloadKey } from '../../src/placement/workload.js';
import { asPending, type Raw } from './builders.js';

export const defaultSettings = (): PlacementSettings => ({ ...parseConfig({}).placement });

export class FakeClock {
  constructor(public t = 1_000_000) {}
  now() { return this.t; }
  advance(ms: number) { this.t += ms; }
}

export interface FilterOpts {
  settings?: Partial<PlacementSettings>;
  reservations?: Reservations;
  clock?: FakeClock;
  waitingSince?: number;
  candidates?: string[];
  unschedulable?: Map<string, number>;
}

export function inputFor(store: ClusterStore, podRaw: Raw, o: FilterOpts = {}): PlacementInput {
  const names = o.candidates ?? [...store.nodes()].map((n) => n.name);
  return {
    pod: asPending(podRaw),
    candidates: candidatesNamed(names, store),
    snapshot: store,
    reservations: o.reservations ?? new Reservations(30, o.clock ?? new FakeClock()),
    settings: { ...defaultSettings(), ...o.settings },
    now: (o.clock ?? new FakeClock()).now(),
    waitingSince: o.waitingSince,
    pendingFreezes: NO_PENDING_FREEZES,
    unschedulableSubsets: { get: (k: string) => o.unschedulable?.get(k) },
  };
}

export function filterFor(store: ClusterStore, podRaw: Raw, o: FilterOpts = {}): FilterVerdict {
  return filterNodes(inputFor(store, podRaw, o));
}

/** Zones of the nodes a verdict passed, deduplicated and sorted. */
export function passedZones(store: ClusterStore, v: FilterVerdict): string[] {
  return [...new Set(v.passed.map((n) => store.node(n)!.labels['topology.kubernetes.io/zone']!))].sort();
}

/** Filters like the scheduler would, then records the reservation the verdict asks for. */
export function filterAndReserve(store: ClusterStore, podRaw: Raw, reservations: Reservations, o: FilterOpts = {}): FilterVerdict {
  const v = filterFor(store, podRaw, { ...o, reservations });
  const r = v.effects.reserve;
  if (r && v.workload) {
    reservations.reserve({ uid: podRaw.metadata.uid, pod: podRaw.metadata.name, workload: workloadKey(v.workload), zone: r.zone, subset: r.subset, at: 0 });
  }
  return v;
}

/** The picker's answer as the wire writes it (chosen_pods, tied_pods, warnings when any). */
export const pickPods = (...args: Parameters<typeof pickPodsToRemove>) => pickResult(pickPodsToRemove(...args));
