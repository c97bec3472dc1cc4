// The files the Helm chart ships verbatim (charts/zonekeeper/files/), by name, and where each is
// copied from: config/ and manifests/ stay the one source (npm run manifests copies them).
export const CHART_FILE_SOURCES: Record<string, string> = {
  'zonekeeper.yaml': 'config/zonekeeper.yaml',
  'scheduler-config.yaml': 'config/scheduler-config.yaml',
  'workloadspread-crd.yaml': 'manifests/workloadspread-crd/50-workloadspread-crd.yaml',
  'prometheusrule.yaml': 'manifests/components/monitoring/prometheusrule.yaml',
  'zonekeeper-dashboard.json': 'manifests/components/monitoring/zonekeeper-dashboard.json',
  'policy.yaml': 'manifests/components/policy/policy.yaml',
  'policy-rbac.yaml': 'manifests/components/policy/rbac.yaml',
};
