// The real Helm CLI for the chart's tests: ../shared/helm beside the checkout (KUBE_SHARED names
// another folder), unpacked once by its unpack.sh. In CI (ZK_REQUIRE_HELM=1 or CI set) its absence fails.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = new URL('../../', import.meta.url).pathname;
export const CHART = join(ROOT, 'charts/zonekeeper');
const UNPACK = join(process.env.KUBE_SHARED ?? join(ROOT, '../shared'), 'helm/unpack.sh');

/** The path of the helm binary, or why there is none (a failure in CI). */
export function findHelm(): { helm: string } | { skip: string } {
  if (!existsSync(UNPACK)) {
    if (process.env.ZK_REQUIRE_HELM === '1' || process.env.CI) throw new Error(`CI tests the Helm chart with the real Helm: no ${UNPACK}`);
    return { skip: `no ${UNPACK}` };
  }
  const dir = execFileSync('bash', [UNPACK], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }).trim();
  return { helm: join(dir, 'helm') };
}

/** The value that lets the chart render its unpublished placeholder image (an install without it fails, naming how to build one). */
export const RENDER_PLACEHOLDER = ['--set', 'image.allowPlaceholder=true'];
/** The image an e2e install names: no pod of it runs (the harness runs zonekeeper itself, or its fake kubelet takes any image). */
export const E2E_IMAGE = ['--set', 'image.repository=zonekeeper-e2e/zonekeeper'];

/** Runs helm, rendering the placeholder image where the verb renders the chart (`asGiven`: the arguments only); its status, stdout and stderr. */
export function runHelm(helm: string, args: string[], asGiven = false): { status: number; stdout: string; stderr: string } {
  const renders = !asGiven && ['template', 'lint', 'install', 'upgrade'].includes(args[0]!);
  const out = spawnSync(helm, renders ? [...args, ...RENDER_PLACEHOLDER] : args, { encoding: 'utf8', maxBuffer: 1 << 26 });
  return { status: out.status ?? -1, stdout: out.stdout, stderr: out.stderr };
}

/**
 * The chart's modes, each as the values that install what one kustomize overlay (or an overlay
 * with a component) does. The chart's test holds each pair to the same objects. sinceMinor: the
 * first Kubernetes 1.x that serves every object of the mode.
 */
export const CHART_MODES: { overlay: string; components?: string[]; values: string[]; sinceMinor?: number }[] = [
  { overlay: 'openkruise', values: [] },
  { overlay: 'standalone', values: ['workloadSpread.standalone=true'] },
  { overlay: 'deletion-costs', values: ['workloadSpread.standalone=true', 'deletionCosts.enabled=true'] },
  { overlay: 'picker', values: ['workloadSpread.standalone=true', 'picker.enabled=true'] },
  { overlay: 'gate-only', values: ['scheduler.enabled=false'] },
  { overlay: 'managed', values: ['scheduler.enabled=false', 'admission.enabled=true'] },
  { overlay: 'standalone', components: ['monitoring'], values: ['workloadSpread.standalone=true', 'monitoring.enabled=true'] },
  { overlay: 'managed', components: ['policy'], values: ['scheduler.enabled=false', 'admission.enabled=true', 'policy.enabled=true'], sinceMinor: 36 },
  { overlay: 'managed', components: ['zone-disruption'], values: ['scheduler.enabled=false', 'admission.enabled=true', 'zoneDisruption.enabled=true'] },
  { overlay: 'managed', components: ['karmada'], values: ['scheduler.enabled=false', 'admission.enabled=true', 'karmada.enabled=true'] },
];

/** zonekeeper karmada alone: no overlay has it (manifests/components/karmada is added to one), so it is no CHART_MODES entry. */
export const KARMADA_ONLY = ['karmada.enabled=true', 'karmada.only=true'];

/** `helm template` of a mode into `namespace` (for a cluster of `kubeVersion`, else Helm's default): its YAML. */
export function renderChart(helm: string, values: string[], namespace = 'zonekeeper-system', release = 'zonekeeper', kubeVersion?: string): string {
  const version = kubeVersion ? ['--kube-version', kubeVersion] : [];
  const out = runHelm(helm, ['template', release, CHART, '--namespace', namespace, ...version, ...values.flatMap((v) => ['--set', v])]);
  if (out.status !== 0) throw new Error(`helm template ${values.join(' ')}: ${out.stderr}`);
  return out.stdout;
}
