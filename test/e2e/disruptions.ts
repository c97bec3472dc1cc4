// What the e2e suites of the zone disruption budget share: whether a pod is up, and a sampler of
// the zones with a seat down, read from the API every second while a disruption runs.
import type { Kube, Obj } from './kube.js';

/** Ready and not terminating: what the budget counts as up (its node's readiness is the stand-in kubelet's). */
export const podUp = (p: Obj) => !p.metadata.deletionTimestamp && (p.status?.conditions ?? []).some((c: Obj) => c.type === 'Ready' && c.status === 'True');

/**
 * Until `done` settles, every second: the zones (by `list`, ordinal i in list[i mod |list|]) with a
 * seat of StatefulSet `app` that has no Ready pod. Resolves with the samples.
 */
export async function sampleDownZones(kube: Kube, namespace: string, app: string, replicas: number, list: readonly string[],
  done: Promise<unknown>): Promise<string[][]> {
  const samples: string[][] = [];
  let finished = false;
  void done.finally(() => { finished = true; }).catch(() => {});
  while (!finished) {
    const pods = await kube.list('v1', 'Pod', namespace, `app=${app}`);
    const up = new Set(pods.filter(podUp).map((p) => p.metadata.name));
    const down = new Set<string>();
    for (let i = 0; i < replicas; i++) if (!up.has(`${app}-${i}`)) down.add(list[i % list.length]!);
    samples.push([...down].sort());
    await new Promise((r) => setTimeout(r, 1000));
  }
  return samples;
}
