import { systemClock } from '../common/clock.js';
import { clipReason } from '../placement/policy.js';
import type { DecisionState } from '../placement/policy.js';
import type { PlacementSettings } from '../placement/settings.js';
import { decisionCore, type DecisionCoreDeps } from './core.js';
import { decideEviction, type EvictionAnswer, type EvictionAsk } from './disruption.js';
import { decisionRecorder, NOT_SYNCED, STALE } from './recording.js';
import { schedulingVerbs, type SchedulingVerbs } from './scheduling.js';
import type { GateFallback } from './spec.js';
import { specVerbs, type SpecVerbs } from './specVerbs.js';
import { debugViews, type DebugViews } from './views.js';
import { subsetPatchSetting } from './gatedSubsetPatch.js';

// The one decision service (docs/design.md#transports): built once in house.ts
// and handed to every transport. It owns readiness, deciding, committing and recording,
// the one reservation ledger (a second core would be a second ledger) and the decision log. A
// transport decodes its wire, makes one call here, and encodes the answer.

/** What the service is made of: what the decision core is. */
export type DecisionServiceDeps = DecisionCoreDeps;

/** What transports, controllers and the debug views may ask of decisions: nothing else reaches the core. */
export interface DecisionService {
  /** kube-scheduler's verbs: filter, prioritize, preempt, and the KEP-3189 pod picker (the extender). */
  scheduling: SchedulingVerbs;
  /** A decision written into a pod's spec: admission's, the gate keeper's, and the same asked without acting (the policy). */
  spec: SpecVerbs;
  /** Judges a voluntary disruption of a pod by its workload's zone disruption budget (docs/design.md#zone-at-a-time). */
  eviction(ask: EvictionAsk): Promise<EvictionAnswer>;
  /** A gated pod was not scheduled in time under an adaptive fallback: its seat's or subset's next pod skips what it was given. */
  fallbackExpired(fb: GateFallback): void;
  /** What decisions remember (reservations, waits, lists being frozen), read-only: for health, repair and statuses. */
  memory: DecisionState;
  settings: PlacementSettings;
  /** Explanations and layouts for /debug and the page: nothing reserved or written. */
  views: DebugViews;
}

export function decisionService(deps: DecisionServiceDeps): DecisionService {
  const { source, metrics, config } = deps;
  const clock = deps.clock ?? systemClock;
  const core = decisionCore({ ...deps, clock });
  const recorder = decisionRecorder(config, metrics, clock);

  /** Why no decision may be made now (never decided blind: kube-scheduler, the keeper or the webhook retries), or undefined. */
  const notReady = (): string | undefined => (source.ready() ? undefined : source.synced() ? STALE : NOT_SYNCED);

  /** An eviction judged by the zone disruption budget (recorded on its workload when allowed), kept in the log and counted. */
  async function eviction(ask: EvictionAsk): Promise<EvictionAnswer> {
    const approvalMs = config.disruption.approvalSeconds * 1000;
    const answer = await decideEviction({ source, settings: core.settings, actuator: deps.actuator, clock, approvalMs, notReady }, ask);
    if (answer.outcome !== 'not-covered') {
      const pod = source.snapshot.pod(ask.namespace, ask.name);
      recorder.keep(recorder.recordOf('eviction', { namespace: ask.namespace, name: ask.name, uid: pod?.uid ?? '' }, undefined, {
        outcome: answer.outcome, policy: answer.workload ? 'zone-disruption-budget' : 'none', workload: answer.workload,
        summary: clipReason(ask.by ? `${answer.why} (asked by ${ask.by})` : answer.why),
      }));
    }
    metrics.evictions.inc({ asker: ask.asker, outcome: answer.outcome });
    return answer;
  }

  return {
    scheduling: schedulingVerbs({ source, core, recorder, notReady }),
    spec: specVerbs({ source, core, recorder, config, notReady }),
    eviction,
    fallbackExpired: (fb) => core.state.gateFallback(fb),
    memory: core.state,
    settings: core.settings,
    views: debugViews(core, recorder, source, config.rebalance.enabled, {
      owned: config.workloadSpread.writeStatus, setting: config.workloadSpread.writeStatus ? subsetPatchSetting(config.admission) : undefined,
    }),
  };
}
