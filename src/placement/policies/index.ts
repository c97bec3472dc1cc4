import type { PlacementPolicy, PolicyModelOf } from '../policy.js';
import { workloadSpreadPolicy } from './workloadSpread/workloadSpreadPolicy.js';
import { zoneBalancePolicy } from './zoneBalance/zoneBalancePolicy.js';
import { zonePinPolicy } from './zonePin/zonePinPolicy.js';

/**
 * Every placement policy, in precedence order: the first that covers a workload places its
 * pods (docs/design.md#which-policy-places-a-pod, whose table a test reads against this).
 * A WorkloadSpread is configured explicitly, so it decides over pins; pins decide over balance.
 */
export const POLICIES = [workloadSpreadPolicy, zonePinPolicy, zoneBalancePolicy] as const;

type Registered = (typeof POLICIES)[number];

export type PolicyName = Registered['name'];

/** The model of a workload a registered policy covers. */
export type PolicyModel = Registered extends infer P
  ? P extends PlacementPolicy<infer Name, infer Own> ? PolicyModelOf<Name, Own> : never
  : never;

/** The policy of that name, typed loosely: callers hold a model the policy built. */
export function policyNamed(name: PolicyName): PlacementPolicy<string, any> {
  return POLICIES.find((p) => p.name === name)! as PlacementPolicy<string, any>;
}
