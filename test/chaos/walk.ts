// The seeded random walk of a robustness run: operations a cluster sees every day and faults it
// should survive, each written to the history; what a fault breaks is healed after a while.
import type { Kube, Obj } from '../e2e/kube.js';
import { ADMITTED_NS, leads, NS, REFUSING_BINDING, type World } from './world.js';
import { POOLS } from './world.js';
import { poolClaims } from './karpenter.js';

export interface Rng { next(): number; below(n: number): number }

/** Something undone later: a zone back, a process continued, a refusal lifted. */
interface Heal { due: number; what: string; run(): Promise<void> }

export interface Walker {
  /** One operation or fault, chosen by the seed; returns what was done. */
  step(now: number): Promise<string>;
  /** Heals what is due (all of it with `all`); returns what was healed. */
  heal(now: number, all?: boolean): Promise<string[]>;
  counts: { operations: number; faults: number };
  /** Heals not done yet. */
  pending(): number;
}

const pickOf = <T>(rng: Rng, xs: readonly T[]): T => xs[rng.below(xs.length)]!;
const seconds = (rng: Rng, lo: number, hi: number) => (lo + rng.below(hi - lo + 1)) * 1000;

/** A node's taints as the run created it (its pool's), so that bringing it back restores them. */
function poolTaints(node: string): Obj[] | null {
  const pool = POOLS.find((p) => node.startsWith(`${p.name}-`));
  return pool?.taints ? [...pool.taints] : null;
}

async function setNodeState(kube: Kube, node: string, state: { offline?: boolean; tainted?: boolean }): Promise<void> {
  const now = new Date().toISOString();
  const ready = state.offline
    ? { type: 'Ready', status: 'Unknown', reason: 'NodeStatusUnknown', message: 'Kubelet stopped posting node status.', lastHeartbeatTime: now, lastTransitionTime: now }
    : { type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'chaos', lastHeartbeatTime: now, lastTransitionTime: now };
  await kube.patch('v1', 'Node', undefined, node, { status: { conditions: [ready] } }, '/status');
  const taints = [
    ...(poolTaints(node) ?? []),
    ...(state.offline ? ['NoSchedule', 'NoExecute'].map((effect) => ({ key: 'node.kubernetes.io/unreachable', effect, timeAdded: now })) : []),
    ...(state.tainted ? [{ key: 'chaos/tainted', effect: 'NoSchedule' }] : []),
  ];
  await kube.patch('v1', 'Node', undefined, node, { spec: { taints: taints.length > 0 ? taints : null } });
}

export function walker(world: World, rng: Rng): Walker {
  const { kube, cp } = world;
  const heals: Heal[] = [];
  const counts = { operations: 0, faults: 0 };
  const busy = new Set<string>();
  let added = 0;
  const later = (now: number, delay: number, what: string, run: () => Promise<void>) => heals.push({ due: now + delay, what, run });
  const nodeNames = () => [...world.nodes.keys()].filter((n) => !busy.has(n));

  const operations: Record<string, (now: number) => Promise<string>> = {
    async scale() {
      const w = pickOf(rng, world.workloads.filter((x) => x.scale[0] < x.scale[1]));
      const replicas = w.scale[0] + rng.below(w.scale[1] - w.scale[0] + 1);
      await kube.scale(w.kind, w.namespace, w.name, replicas);
      return `scale ${w.namespace}/${w.name} to ${replicas}`;
    },
    async rollout() {
      const w = pickOf(rng, world.workloads.filter((x) => x.rollout));
      const rev = String(rng.below(1_000_000));
      await kube.patch('apps/v1', w.kind, w.namespace, w.name, { spec: { template: { metadata: { annotations: { 'chaos/revision': rev } } } } });
      return `roll out ${w.namespace}/${w.name} (revision ${rev})`;
    },
    async deletePod() {
      const w = pickOf(rng, world.workloads);
      const pods = await kube.podsOf(w.namespace, `app=${w.name}`);
      if (pods.length === 0) return `delete a pod of ${w.namespace}/${w.name}: none`;
      const p = pickOf(rng, pods);
      await kube.delete('v1', 'Pod', w.namespace, p.metadata.name, 0);
      return `delete pod ${w.namespace}/${p.metadata.name}`;
    },
    async cordon(now) {
      const node = pickOf(rng, nodeNames());
      busy.add(node);
      await kube.patch('v1', 'Node', undefined, node, { spec: { unschedulable: true } });
      later(now, seconds(rng, 5, 30), `uncordon ${node}`, async () => {
        await kube.patch('v1', 'Node', undefined, node, { spec: { unschedulable: null } });
        busy.delete(node);
      });
      return `cordon ${node}`;
    },
    async taint(now) {
      const node = pickOf(rng, nodeNames());
      busy.add(node);
      await setNodeState(kube, node, { tainted: true });
      later(now, seconds(rng, 5, 30), `untaint ${node}`, async () => {
        await setNodeState(kube, node, {});
        busy.delete(node);
      });
      return `taint ${node} chaos/tainted:NoSchedule`;
    },
    async drain(now) {
      // Two nodes of two zones drained at the same moment, as two node-pool upgrades would: cordoned, the opted-in pods on them evicted once.
      const free = [...world.nodes].filter(([n]) => n.startsWith('general-') && !busy.has(n));
      const first = free.length > 0 ? pickOf(rng, free) : undefined;
      const others = free.filter(([, z]) => z !== first?.[1]);
      if (!first || others.length === 0) return 'drain two nodes of two zones: no two free nodes in two zones';
      const second = pickOf(rng, others);
      const nodes = [first, second];
      for (const [n] of nodes) {
        busy.add(n);
        await kube.patch('v1', 'Node', undefined, n, { spec: { unschedulable: true } });
      }
      const names = nodes.map(([n]) => n);
      // The pods of the workloads opted in to the zone disruption budget: a drain of every pod also churned the Adaptive
      // WorkloadSpread into a quota race not of the gate's making (seed 1437215590, docs/operations.md#robustness-runs).
      const opted = new Set((await kube.list('apps/v1', 'StatefulSet', NS)).filter((w) => w.metadata.annotations?.['zonekeeper.io/zone-disruption-budget'])
        .map((w) => w.metadata.name as string));
      const pods = (await kube.list('v1', 'Pod', NS))
        .filter((p) => names.includes(p.spec.nodeName) && !p.metadata.deletionTimestamp && opted.has(p.metadata.labels?.app));
      const answers = await Promise.all(pods.map(async (p) => {
        const res = await cp.api.request('POST', `/api/v1/namespaces/${NS}/pods/${p.metadata.name}/eviction`, {
          body: JSON.stringify({ apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: p.metadata.name, namespace: NS } }), contentType: 'application/json', timeoutMs: 15_000,
        }).catch(() => ({ status: 0 }));
        return res.status;
      }));
      later(now, seconds(rng, 10, 30), `uncordon ${names.join(', ')}`, async () => {
        for (const n of names) {
          await kube.patch('v1', 'Node', undefined, n, { spec: { unschedulable: null } });
          busy.delete(n);
        }
      });
      const allowed = answers.filter((s) => s === 200 || s === 201).length;
      const refused = answers.filter((s) => s === 429).length;
      // Anything else: kube-apiserver down (0), the webhook unreachable (500, failurePolicy Fail), a pod gone (404).
      const failed = [...new Set(answers.filter((s) => s !== 200 && s !== 201 && s !== 429))].join(', ');
      return `drain ${nodes.map(([n, z]) => `${n} (${z})`).join(' and ')} at once: ${allowed} of ${pods.length} pods evicted, ${refused} refused (429)`
        + (failed ? `, ${pods.length - allowed - refused} failed (${failed})` : '');
    },
    async zoneRollout() {
      // The opted-in OnDelete StatefulSet's template changed: zonekeeper's Lease holder replaces its pods a zone at a time.
      const rev = String(rng.below(1_000_000));
      await kube.patch('apps/v1', 'StatefulSet', NS, 'roll', { spec: { template: { metadata: { annotations: { 'chaos/revision': rev } } } } });
      return `roll out ${NS}/roll zone by zone (OnDelete, revision ${rev})`;
    },
    async karpenterDisruption() {
      // Two NodeClaims of two zones deleted together, as Karpenter's drift or expiry would take them: it drains their nodes through the Eviction API.
      if (typeof world.karpenter === 'string') return `Karpenter deletes NodeClaims of two zones: no Karpenter (${world.karpenter})`;
      const claims = await poolClaims(kube);
      const first = claims.length > 0 ? pickOf(rng, claims) : undefined;
      const others = claims.filter((c) => c.zone !== first?.zone);
      if (!first || others.length === 0) return 'Karpenter deletes NodeClaims of two zones: no two NodeClaims with nodes in two zones';
      const pair = [first, pickOf(rng, others)];
      await Promise.all(pair.map((c) => kube.call('DELETE', `/apis/karpenter.sh/v1/nodeclaims/${c.name}`)));
      return `Karpenter deletes NodeClaims ${pair.map((c) => `${c.name} (node ${c.node}, ${c.zone})`).join(' and ')} together`;
    },
    async addNode(now) {
      const zone = pickOf(rng, ['zone-a', 'zone-b', 'zone-c']);
      const node = `extra-${zone.slice(5)}-${++added}`;
      await kube.addNode(node, zone);
      later(now, seconds(rng, 10, 40), `remove ${node}`, async () => {
        await kube.delete('v1', 'Node', undefined, node);
        // What kube-controller-manager's pod GC does for a node that is gone (this control plane runs none).
        for (const ns of new Set(world.workloads.map((w) => w.namespace))) {
          for (const p of await kube.list('v1', 'Pod', ns)) if (p.spec.nodeName === node) await kube.delete('v1', 'Pod', ns, p.metadata.name, 0);
        }
      });
      return `add node ${node}`;
    },
  };

  const faults: Record<string, (now: number) => Promise<string>> = {
    async zoneOut(now) {
      const zone = pickOf(rng, ['zone-a', 'zone-b', 'zone-c']);
      const nodes = [...world.nodes].filter(([n, z]) => z === zone && !busy.has(n)).map(([n]) => n);
      for (const n of nodes) {
        busy.add(n);
        await setNodeState(kube, n, { offline: true });
      }
      later(now, seconds(rng, 10, 40), `${zone} back (${nodes.length} nodes)`, async () => {
        for (const n of nodes) {
          await setNodeState(kube, n, {});
          busy.delete(n);
        }
      });
      return `${zone} out (${nodes.length} nodes NotReady, unreachable)`;
    },
    async killHolder(now) {
      const replicas = world.replicas;
      const which = (await leads(replicas.primary)) ? 'primary' : (await leads(replicas.standby)) ? 'standby' : undefined;
      if (which === undefined) return 'SIGKILL the Lease holder: none holds it now';
      await replicas[which].stop('SIGKILL');
      later(now, seconds(rng, 2, 10), `start the ${which} replica again`, async () => { await world.restart(which); });
      return `SIGKILL the Lease holder (the ${which} replica)`;
    },
    async stopReplica(now) {
      const which = pickOf(rng, ['primary', 'standby'] as const);
      const { pid } = world.replicas[which];
      process.kill(pid, 'SIGSTOP');
      later(now, seconds(rng, 3, 15), `SIGCONT the ${which} replica`, async () => {
        if (world.replicas[which].pid === pid) process.kill(pid, 'SIGCONT');
      });
      return `SIGSTOP the ${which} replica`;
    },
    async restartScheduler() {
      if (busy.has('kube-apiserver')) return 'restart kube-scheduler: not while kube-apiserver is down';
      const name = pickOf(rng, ['default-scheduler', 'zonekeeper']);
      await cp.restartScheduler(name);
      return `kill and restart kube-scheduler ${name}`;
    },
    async killApiServer(now) {
      if (busy.has('kube-apiserver')) return 'SIGKILL kube-apiserver: it is down already';
      busy.add('kube-apiserver');
      await cp.killApiServer();
      const down = seconds(rng, 1, 6);
      later(now, down, 'start kube-apiserver again', async () => {
        await cp.startApiServer();
        busy.delete('kube-apiserver');
      });
      return `SIGKILL kube-apiserver (for ${down / 1000}s)`;
    },
    async cutWatches() {
      return `cut zonekeeper's ${world.proxy.cut()} connections to kube-apiserver`;
    },
    async admissionOutage(now) {
      if (busy.has('admission')) return 'admission endpoint unreachable: it is already';
      busy.add('admission');
      world.admissionProxy.block(true);
      const down = seconds(rng, 5, 20);
      later(now, down, 'admission endpoint reachable again', async () => {
        world.admissionProxy.block(false);
        busy.delete('admission');
      });
      // A pod of the admitted workload deleted now is made again while the webhook is away: its failure policy (Fail) refuses it until then.
      const admitted = world.workloads.find((w) => w.namespace === ADMITTED_NS)!;
      const pods = await kube.podsOf(admitted.namespace, `app=${admitted.name}`);
      const p = pods.length > 0 ? pickOf(rng, pods) : undefined;
      if (p) await kube.delete('v1', 'Pod', admitted.namespace, p.metadata.name, 0);
      return `admission endpoint unreachable for ${down / 1000}s${p ? `, pod ${admitted.namespace}/${p.metadata.name} deleted meanwhile` : ''}`;
    },
    async refuseWrites(now) {
      if (busy.has('refusal')) return 'refuse zonekeeper\'s writes: already refused';
      busy.add('refusal');
      await kube.create(REFUSING_BINDING);
      later(now, seconds(rng, 5, 20), 'lift the refusal of zonekeeper\'s writes', async () => {
        await kube.delete('admissionregistration.k8s.io/v1', 'ValidatingAdmissionPolicyBinding', undefined, REFUSING_BINDING.metadata.name);
        busy.delete('refusal');
      });
      return 'refuse zonekeeper\'s updates of pods and workloads (a ValidatingAdmissionPolicy)';
    },
  };

  return {
    counts,
    pending: () => heals.length,
    async step(now) {
      const fault = rng.next() < 0.3;
      const table = fault ? faults : operations;
      const name = pickOf(rng, Object.keys(table));
      const done = await table[name]!(now);
      counts[fault ? 'faults' : 'operations']++;
      return `${fault ? 'fault' : 'op'} ${name}: ${done}`;
    },
    async heal(now, all = false) {
      const due = heals.filter((h) => all || h.due <= now).sort((a, b) => a.due - b.due);
      const done: string[] = [];
      for (const h of due) {
        heals.splice(heals.indexOf(h), 1);
        // The API server may be down at that moment: a heal not done is tried at the next turn.
        try {
          await h.run();
          done.push(h.what);
        } catch (err) {
          heals.push({ ...h, due: now + 1000 });
          done.push(`${h.what}: not yet (${(err as Error).message.slice(0, 120)})`);
        }
      }
      return done;
    },
  };
}
