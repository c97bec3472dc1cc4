// The files the Helm chart ships verbatim (charts/zonekeeper/files/), by name, and where each is
// copied from: config/ and manifests/ stay the one source (npm run manifests copies them).
import { z } from 'zod';
import { configSchema } from '../../src/common/config.js';

export const CHART_FILE_SOURCES: Record<string, string> = {
  'zonekeeper.yaml': 'config/zonekeeper.yaml',
  'scheduler-config.yaml': 'config/scheduler-config.yaml',
  'workloadspread-crd.yaml': 'manifests/workloadspread-crd/50-workloadspread-crd.yaml',
  'prometheusrule.yaml': 'manifests/components/monitoring/prometheusrule.yaml',
  'zonekeeper-dashboard.json': 'manifests/components/monitoring/zonekeeper-dashboard.json',
  'policy.yaml': 'manifests/components/policy/policy.yaml',
  'policy-rbac.yaml': 'manifests/components/policy/rbac.yaml',
  'zone-disruption.yaml': 'manifests/components/zone-disruption/webhook.yaml',
  'karmada.yaml': 'manifests/components/karmada/karmada.yaml',
  'write-scope.yaml': 'manifests/base/15-write-scope.yaml',
};

/**
 * The chart's `config` value in values.schema.json: zonekeeper's configuration schema (src/common/config.ts)
 * as JSON Schema, so `helm template` refuses an unknown key or a wrong type as `serve --config` does.
 * The rules between keys (a TLS half, a lease's timings) are checked when zonekeeper starts.
 */
export function chartConfigSchema(): Record<string, unknown> {
  const { $schema: _, ...schema } = z.toJSONSchema(configSchema, { target: 'draft-7', io: 'input' });
  return { ...schema, description: 'zonekeeper.yaml as a map ({} = config/zonekeeper.yaml); its schema is generated from zonekeeper\'s (npm run manifests)' };
}
