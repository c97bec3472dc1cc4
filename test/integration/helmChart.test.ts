// The Helm chart (charts/zonekeeper) checked with the real Helm (test/support/helm.ts): helm lint,
// a wrong value refused naming it, and one source of truth with the kustomize overlays: for every
// mode, `helm template` gives the same objects as `kubectl kustomize` of its overlay, but for the
// Namespace (helm install --create-namespace makes it) and Helm's own labels. The files the chart
// ships verbatim are copies of config/ and manifests/ (npm run manifests).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { describe, it } from 'node:test';
import { parse, parseAllDocuments, stringify } from 'yaml';
import { CHART_FILE_SOURCES } from '../support/chartFiles.js';
import { CHART, CHART_MODES, findHelm, KARMADA_ONLY, renderChart, runHelm } from '../support/helm.js';

type Obj = Record<string, any>;
const ROOT = new URL('../../', import.meta.url).pathname;
const found = findHelm();
const helm = 'helm' in found ? found.helm : '';
// kubectl's kustomize builds the overlays from kustomize v4 (kubectl 1.21) on.
const kustomize = spawnSync('kubectl', ['kustomize', join(ROOT, 'manifests/overlays/openkruise')], { encoding: 'utf8' }).status === 0;
if (!kustomize && process.env.ZK_REQUIRE_HELM === '1') throw new Error('ZK_REQUIRE_HELM=1 but kubectl cannot build the overlays (kubectl kustomize, from 1.21)');
const skip = 'skip' in found ? found.skip : false;
const HELM_LABELS = ['helm.sh/chart', 'app.kubernetes.io/managed-by', 'app.kubernetes.io/instance'];
// The chart's kube-scheduler follows the cluster's version; the overlays name one (users set theirs with `images:`).
const OVERLAY_KUBE_VERSION = /kube-scheduler:v(\S+)/.exec(readFileSync(join(ROOT, 'manifests/base/30-scheduler.yaml'), 'utf8'))![1]!;

const objects = (yaml: string): Obj[] => parseAllDocuments(yaml).map((d) => d.toJS() as Obj).filter(Boolean);
const key = (o: Obj) => `${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`;

/** What the chart adds for Helm alone: its labels, and the config checksum that rolls the pods on a change. */
function withoutHelmsOwn(o: Obj): Obj {
  const copy = structuredClone(o);
  for (const l of HELM_LABELS) delete copy.metadata.labels?.[l];
  if (copy.metadata.labels && Object.keys(copy.metadata.labels).length === 0) delete copy.metadata.labels;
  const template = copy.spec?.template?.metadata;
  if (template?.annotations) {
    delete template.annotations['checksum/config'];
    if (Object.keys(template.annotations).length === 0) delete template.annotations;
  }
  return copy;
}

function overlayObjects(overlay: string, components: string[] = []): Obj[] {
  let dir = join(ROOT, 'manifests/overlays', overlay);
  if (components.length > 0) {
    // The overlay with components, as a user's own kustomization would add them.
    const mine = mkdtempSync(join(tmpdir(), 'zk-overlay-'));
    writeFileSync(join(mine, 'kustomization.yaml'), stringify({
      apiVersion: 'kustomize.config.k8s.io/v1beta1', kind: 'Kustomization',
      resources: [relative(mine, dir)], components: components.map((c) => relative(mine, join(ROOT, 'manifests/components', c))),
    }));
    dir = mine;
  }
  const out = spawnSync('kubectl', ['kustomize', dir], { encoding: 'utf8' });
  assert.equal(out.status, 0, out.stderr);
  return objects(out.stdout);
}

describe('the Helm chart', { skip }, () => {
  it('helm lint passes, with the defaults and with every mode switched on', () => {
    for (const values of [[], ['workloadSpread.standalone=true', 'admission.enabled=true', 'picker.enabled=true', 'monitoring.enabled=true', 'deletionCosts.enabled=true'],
      ['scheduler.enabled=false', 'admission.enabled=true', 'policy.enabled=true'], [...KARMADA_ONLY, 'networkPolicy.enabled=true', `image.digest=sha256:${'0'.repeat(64)}`]]) {
      const out = runHelm(helm, ['lint', CHART, '--strict', ...values.flatMap((v) => ['--set', v])]);
      assert.equal(out.status, 0, out.stdout + out.stderr);
      assert.match(out.stdout, /1 chart\(s\) linted, 0 chart\(s\) failed/);
    }
  });

  it('a wrong value fails with a message naming it (values.schema.json)', () => {
    const cases: [string, RegExp][] = [
      ['replicas=two', /at '\/replicas': got string, want integer/],
      ['replicas=0', /at '\/replicas': minimum/],
      ['admision.enabled=true', /additional properties 'admision' not allowed/],
      ['admission.failurePolicy=Maybe', /at '\/admission\/failurePolicy': value must be one of 'Fail', 'Ignore'/],
      ['scheduler.enabeld=false', /at '\/scheduler': additional properties 'enabeld' not allowed/],
      ['image.pullPolicy=Sometimes', /at '\/image\/pullPolicy'/],
      ['policy.enabled=yes', /at '\/policy\/enabled': got string, want boolean/],
    ];
    for (const [value, message] of cases) {
      const out = runHelm(helm, ['template', 'zk', CHART, '--set', value]);
      assert.notEqual(out.status, 0, value);
      assert.match(out.stderr, message, value);
    }
  });

  it('policy.enabled is refused outside the managed mode, and where Helm sees a cluster without the policy API', () => {
    const wrongMode = /policy\.enabled=true adds the MutatingAdmissionPolicy to the managed mode .*: set scheduler\.enabled=false and admission\.enabled=true with it/;
    for (const values of [['policy.enabled=true'], ['policy.enabled=true', 'admission.enabled=true'], ['policy.enabled=true', 'scheduler.enabled=false']]) {
      const out = runHelm(helm, ['template', 'zk', CHART, ...values.flatMap((v) => ['--set', v])]);
      assert.notEqual(out.status, 0, values.join(','));
      assert.match(out.stderr, wrongMode, values.join(','));
    }
    // A cluster's API versions name kinds; offline (helm template) Helm knows groups alone and renders.
    const managed = ['scheduler.enabled=false', 'admission.enabled=true', 'policy.enabled=true'].flatMap((v) => ['--set', v]);
    const admission = 'admissionregistration.k8s.io/v1/MutatingWebhookConfiguration';
    const without = runHelm(helm, ['template', 'zk', CHART, ...managed, '--api-versions', admission, '--kube-version', '1.30.14']);
    assert.notEqual(without.status, 0);
    assert.match(without.stderr, /policy\.enabled=true needs Kubernetes 1\.36\+ \(admissionregistration\.k8s\.io\/v1 MutatingAdmissionPolicy\); this cluster \(v1\.30\.14\) does not serve it/);
    const served = runHelm(helm, ['template', 'zk', CHART, ...managed, '--api-versions', `${admission},admissionregistration.k8s.io/v1/MutatingAdmissionPolicy`]);
    assert.equal(served.status, 0, served.stderr);
    assert.match(served.stdout, /^kind: MutatingAdmissionPolicy$/m);
  });

  for (const mode of CHART_MODES) {
    const name = [mode.overlay, ...(mode.components ?? [])].join(' + ');
    it(`${name}: helm template (${mode.values.join(', ') || 'the defaults'}) gives the overlay's objects`, { skip: kustomize ? false : 'kubectl cannot build the overlays' }, () => {
      // helm test's Service and pod are the chart's alone (kustomize has no tests).
      const fromChart = new Map(objects(renderChart(helm, mode.values, undefined, undefined, OVERLAY_KUBE_VERSION))
        .filter((o) => o.metadata.annotations?.['helm.sh/hook'] !== 'test').map((o) => [key(o), withoutHelmsOwn(o)]));
      const fromOverlay = new Map(overlayObjects(mode.overlay, mode.components).filter((o) => o.kind !== 'Namespace').map((o) => [key(o), o]));
      assert.deepEqual([...fromChart.keys()].sort(), [...fromOverlay.keys()].sort());
      for (const [k, o] of fromOverlay) assert.deepEqual(fromChart.get(k), o, k);
    });
  }

  it('karmada.only renders the Karmada component alone: no kube-scheduler, webhook, ServiceAccount or RBAC of this cluster', () => {
    const rendered = objects(renderChart(helm, KARMADA_ONLY)).filter((o) => o.metadata.annotations?.['helm.sh/hook'] !== 'test');
    const component = objects(readFileSync(join(ROOT, 'manifests/components/karmada/karmada.yaml'), 'utf8'));
    assert.deepEqual(rendered.map(key).sort(), component.map(key).sort());
    for (const o of component) assert.deepEqual(withoutHelmsOwn(rendered.find((r) => key(r) === key(o))!), o, key(o));
    for (const kind of ['MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration', 'ValidatingAdmissionPolicy', 'ServiceAccount', 'ClusterRole', 'Role']) {
      assert.equal(rendered.filter((o) => o.kind === kind).length, 0, kind);
    }
    const deployments = rendered.filter((o) => o.kind === 'Deployment');
    assert.deepEqual(deployments.map((d) => d.metadata.name), ['zonekeeper-karmada'], 'no zonekeeper-scheduler');
    const pod = deployments[0]!.spec.template.spec;
    assert.deepEqual(pod.containers.map((c: Obj) => c.name), ['zonekeeper'], 'no kube-scheduler');
    assert.deepEqual(pod.containers[0].args, ['karmada', '--kubeconfig=/etc/zonekeeper/karmada/kubeconfig', '--config=/etc/zonekeeper/config/zonekeeper.yaml']);
    assert.equal(pod.automountServiceAccountToken, false);
    const secret = objects(renderChart(helm, [...KARMADA_ONLY, 'karmada.kubeconfigSecret=karmada-prod']))
      .find((o) => o.kind === 'Deployment')!.spec.template.spec.volumes.find((v: Obj) => v.secret).secret;
    assert.deepEqual(secret, { secretName: 'karmada-prod' });
  });

  it('karmada.only is refused without karmada.enabled, and with a value that needs the single-cluster zonekeeper, naming it', () => {
    const refused = (values: string[]) => runHelm(helm, ['template', 'zk', CHART, ...values.flatMap((v) => ['--set', v])]);
    assert.match(refused(['karmada.only=true']).stderr, /karmada\.only=true installs zonekeeper karmada alone: set karmada\.enabled=true with it/);
    const cases: [string[], string][] = [
      [['admission.enabled=true'], 'admission.enabled'],
      [['workloadSpread.standalone=true', 'picker.enabled=true'], 'picker.enabled, workloadSpread.standalone'],
      [['monitoring.enabled=true', 'deletionCosts.enabled=true'], 'deletionCosts.enabled, monitoring.enabled'],
    ];
    for (const [values, named] of cases) {
      const out = refused([...KARMADA_ONLY, ...values]);
      assert.notEqual(out.status, 0, values.join());
      assert.ok(out.stderr.includes(`karmada.only=true installs zonekeeper karmada alone, without the single-cluster zonekeeper that ${named} needs`), out.stderr);
    }
  });

  it('every mode that can write WorkloadSpread status grants workloadspreads/status to zonekeeper\'s ServiceAccount, in the chart as in the overlay', { skip: kustomize ? false : 'kubectl cannot build the overlays' }, () => {
    // Standalone sets --workloadspread-status; managed is told to add it without OpenKruise (its kustomization's comment).
    const writesStatus = (overlay: string) => !['openkruise', 'gate-only'].includes(overlay);
    const grants = (all: Obj[]) => {
      const roles = new Set(all.filter((o) => o.kind === 'ClusterRole' && o.rules.some((r: Obj) => r.apiGroups?.includes('apps.kruise.io')
        && r.resources?.includes('workloadspreads/status') && r.verbs.includes('patch'))).map((o) => o.metadata.name));
      return all.some((o) => o.kind === 'ClusterRoleBinding' && roles.has(o.roleRef.name)
        && o.subjects.some((x: Obj) => x.kind === 'ServiceAccount' && x.name === 'zonekeeper' && x.namespace === 'zonekeeper-system'));
    };
    for (const mode of CHART_MODES) {
      const name = [mode.overlay, ...(mode.components ?? [])].join(' + ');
      assert.equal(grants(objects(renderChart(helm, mode.values))), writesStatus(mode.overlay), `chart: ${name}`);
      assert.equal(grants(overlayObjects(mode.overlay, mode.components)), writesStatus(mode.overlay), `overlay: ${name}`);
    }
  });

  it('every object carries Helm\'s labels, and the chart follows another namespace everywhere a namespace is named', () => {
    const all = ['workloadSpread.standalone=true', 'admission.enabled=true', 'picker.enabled=true', 'monitoring.enabled=true', 'deletionCosts.enabled=true'];
    const rendered = renderChart(helm, all, 'zk-elsewhere', 'zk');
    for (const o of objects(rendered)) assert.equal(o.metadata.labels?.['app.kubernetes.io/instance'], 'zk', key(o));
    assert.doesNotMatch(rendered, /zonekeeper-system/);
    const policy = renderChart(helm, ['scheduler.enabled=false', 'admission.enabled=true', 'policy.enabled=true'], 'zk-elsewhere', 'zk');
    for (const o of objects(policy)) assert.equal(o.metadata.labels?.['app.kubernetes.io/instance'], 'zk', key(o));
    assert.doesNotMatch(policy, /zonekeeper-system/);
    // The eviction webhook skips zonekeeper's own evictions by the release's ServiceAccount, break-glass kept.
    const gate = renderChart(helm, ['scheduler.enabled=false', 'admission.enabled=true', 'zoneDisruption.enabled=true', 'serviceAccount.name=zk-sa'], 'zk-elsewhere', 'zk');
    assert.doesNotMatch(gate, /zonekeeper-system/);
    const webhook = objects(gate).find((o) => o.kind === 'ValidatingWebhookConfiguration')!.webhooks[0];
    assert.deepEqual(webhook.matchConditions.map((c: Obj) => c.name), ['not-break-glass', 'not-zonekeeper']);
    assert.equal(webhook.matchConditions[1].expression, "request.userInfo.username != 'system:serviceaccount:zk-elsewhere:zk-sa'");
    const schedulerConfig = objects(renderChart(helm, [], 'zk-elsewhere')).find((o) => o.metadata.name === 'zonekeeper-scheduler-config')!;
    assert.equal(parse(schedulerConfig.data['scheduler-config.yaml']).leaderElection.resourceNamespace, 'zk-elsewhere');
  });

  it('the default image is the one the manifests name; image values reach the pod', () => {
    const image = (values: string[]) => objects(renderChart(helm, values)).find((o) => o.kind === 'Deployment')!.spec.template.spec.containers.find((c: Obj) => c.name === 'zonekeeper');
    const manifest = objects(readFileSync(join(ROOT, 'manifests/base/30-scheduler.yaml'), 'utf8'))[0]!.spec.template.spec.containers.find((c: Obj) => c.name === 'zonekeeper');
    assert.equal(image([]).image, manifest.image);
    assert.equal(image(['image.repository=registry.example/zk', 'image.tag=dev']).image, 'registry.example/zk:dev');
  });
});

describe('the files the chart ships verbatim', () => {
  for (const [file, source] of Object.entries(CHART_FILE_SOURCES)) {
    it(`charts/zonekeeper/files/${file} is ${source} (npm run manifests)`, () => {
      assert.equal(readFileSync(join(CHART, 'files', file), 'utf8'), readFileSync(join(ROOT, source), 'utf8'));
    });
  }
});
