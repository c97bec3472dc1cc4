import { ZONE_LABELS } from '../cluster/annotations.js';
import type { SlimNode, SlimPod, SlimPV, SlimWorkload } from '../cluster/objects.js';
import type { Snapshot } from '../cluster/store.js';
import { matchesAnyTerm, matchesTopology } from './nodeMatching.js';

const ZONE_KEYS: readonly string[] = ZONE_LABELS;

/** Where one of the pod's volumes lets it run (docs/design.md#which-policy-places-a-pod). */
export interface VolumeConstraint {
  claim: string;
  /** True for a bound PV: data does not move, so no fallback may override it. */
  bound: boolean;
  allows(node: SlimNode): boolean;
  /** "volume data-db-0 (PV pv-c) is in zone-c" */
  describe: string;
}

export interface PodVolumes {
  constraints: VolumeConstraint[];
  /** A PVC or PV the cache does not know: the verdict must wait, not guess. */
  missing: string[];
}

/** Zones a PV names: its legacy labels, or `In` terms on a zone key of its node affinity. */
function namedZones(pv: SlimPV): string[] {
  const zones = new Set(pv.labelZones);
  for (const term of pv.nodeAffinity ?? []) {
    for (const r of term.matchExpressions) if (r.operator === 'In' && ZONE_KEYS.includes(r.key)) r.values.forEach((v) => zones.add(v));
  }
  return [...zones];
}

function pvConstraint(claim: string, pv: SlimPV): VolumeConstraint {
  const zones = namedZones(pv);
  const where = zones.length > 0 ? `is in ${zones.join(', ')}` : 'has node affinity';
  return {
    claim,
    bound: true,
    describe: `volume ${claim} (PV ${pv.name}) ${where}`,
    allows(node) {
      if (pv.nodeAffinity && pv.nodeAffinity.length > 0 && !matchesAnyTerm(pv.nodeAffinity, node)) return false;
      if (pv.labelZones.length === 0) return true;
      const zone = ZONE_KEYS.map((k) => node.labels[k]).find((z) => z !== undefined);
      return zone !== undefined && pv.labelZones.includes(zone);
    },
  };
}

export function podVolumes(pod: SlimPod, snapshot: Snapshot): PodVolumes {
  return claimVolumes(pod.namespace, pod.claims, snapshot);
}

/** Whether a claim is bound: its PVC names a volume, or a PV is pre-bound to it (claimRef). */
export const claimBound = (namespace: string, claim: string, snapshot: Snapshot): boolean =>
  !!snapshot.pvc(namespace, claim)?.volumeName || !!snapshot.pvForClaim(namespace, claim);

/** Where claims of a namespace let a pod run: bound and pre-bound PVs, WaitForFirstConsumer topologies. */
function claimVolumes(namespace: string, claims: readonly string[], snapshot: Snapshot): PodVolumes {
  const out: PodVolumes = { constraints: [], missing: [] };
  for (const claim of claims) {
    const pvc = snapshot.pvc(namespace, claim);
    if (pvc?.volumeName) {
      const pv = snapshot.pv(pvc.volumeName);
      if (pv) out.constraints.push(pvConstraint(claim, pv));
      else out.missing.push(`PV ${pvc.volumeName} of claim ${claim} is not in the cache yet`);
      continue;
    }
    // A PV pre-bound to this claim (claimRef) decides even before the PVC is bound.
    const prebound = snapshot.pvForClaim(namespace, claim);
    if (prebound) {
      out.constraints.push(pvConstraint(claim, prebound));
      continue;
    }
    if (!pvc) {
      out.missing.push(`PVC ${namespace}/${claim} is not in the cache yet`);
      continue;
    }
    const sc = pvc.storageClassName ? snapshot.storageClass(pvc.storageClassName) : undefined;
    if (sc?.waitForFirstConsumer && sc.allowedTopologies.length > 0) {
      out.constraints.push({
        claim,
        bound: false,
        describe: `volume ${claim} (StorageClass ${sc.name}) is limited by allowedTopologies`,
        allows: (node) => matchesTopology(sc.allowedTopologies, node),
      });
    }
  }
  return out;
}

/** The zones that have at least one node every constraint allows (a zone stops at its first such node). */
export function volumeZones(constraints: readonly VolumeConstraint[], snapshot: Snapshot, topologyKey: string): Set<string> {
  const zones = new Set<string>();
  for (const z of snapshot.zones(topologyKey)) {
    if (snapshot.nodesInZone(topologyKey, z).some((node) => constraints.every((c) => c.allows(node)))) zones.add(z);
  }
  return zones;
}

/** The single zone bound volumes hold a seat in; undefined when they allow none or several. */
export function boundZone(constraints: readonly VolumeConstraint[], snapshot: Snapshot, topologyKey: string): string | undefined {
  const bound = constraints.filter((c) => c.bound);
  if (bound.length === 0) return undefined;
  const zones = [...volumeZones(bound, snapshot, topologyKey)];
  return zones.length === 1 ? zones[0] : undefined;
}

/** The single zone a StatefulSet ordinal's bound claims (`<template>-<name>-<ordinal>`) hold it in, whether or not its pod exists. */
export function ordinalVolumeZone(w: SlimWorkload, ordinal: number, snapshot: Snapshot, topologyKey: string): string | undefined {
  if (w.claimTemplates.length === 0) return undefined;
  return boundZone(claimVolumes(w.namespace, w.claimTemplates.map((t) => `${t}-${w.name}-${ordinal}`), snapshot).constraints, snapshot, topologyKey);
}
