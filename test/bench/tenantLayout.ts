// keptCounts for a tenant's 1,000-value topology key (kubernetes.io/hostname over 1,000 nodes,
// 1,999 replicas, a maximum per host): zone-steps and time per decision, for docs/security.md.
// Run: node --import tsx test/bench/tenantLayout.ts
import { performance } from 'node:perf_hooks';
import { keptCounts, KEPT_WORK_LIMIT, sequenceWork, type ZonePreferences } from '../../src/placement/zoneSequence.js';

const HOSTS = Array.from({ length: 1000 }, (_, i) => `host-${i}`);
const capped: ZonePreferences = () => ({ minReplicas: 0, maxReplicas: 4, weight: 1 });
/** Weights 1 to 1,000 (Σ beyond 1,999: every seat simulated), as a tenant may write per host. */
const weighted: ZonePreferences = (h) => ({ minReplicas: 0, maxReplicas: undefined, weight: Number(h.slice(5)) + 1 });

/** `over` hosts hold `each` pods (over their share): each round of keptCounts keeps some and plans again. */
function run(over: number, each: number, step: number, prefs = capped): { steps: number; ms: number; answered: boolean } {
  const held: Record<string, number> = {};
  for (let i = 0; i < over; i++) held[HOSTS[i]!] = Math.max(3, each - Math.floor(i / step));
  const before = sequenceWork.steps;
  const t = performance.now();
  const plan = keptCounts(HOSTS, 1999, prefs, held);
  return { steps: sequenceWork.steps - before, ms: Math.round((performance.now() - t) * 10) / 10, answered: plan !== undefined };
}

console.log(`limit ${KEPT_WORK_LIMIT} zone-steps per decision`);
for (const [over, each, step] of [[150, 4, 1000], [400, 4, 1000], [600, 4, 1000], [900, 4, 1]] as const) {
  console.log(`${over} hosts over their share:`, run(over, each, step));
}
// Many rounds: weighted hosts whose pods sit on the light ones (each round keeps a few more).
for (const over of [100, 300, 1000]) console.log(`weights 1..1000, ${over} light hosts holding 4 to 1:`, run(over, 4, Math.ceil(over / 4), weighted));
