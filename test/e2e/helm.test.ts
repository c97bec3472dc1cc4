// End-to-end: the Helm chart (charts/zonekeeper) with the real Helm of ../shared/helm against a
// real kube-apiserver. Every mode's `helm template` passes a server-side dry run (1.30 and 1.36;
// policy.enabled from 1.36 on, refused by Helm with the cluster's API versions before);
// on the newest version, helm install, then zonekeeper running as the chart's ServiceAccount with
// the chart's ConfigMap places a pinned StatefulSet; helm upgrade with values changed; helm
// uninstall leaves nothing the chart created (the namespace is made first: this control plane
// runs no namespace controller); karmada.only installed holds zonekeeper-karmada's objects alone.
// From 1.36, policy.enabled installed: kube-apiserver writes the pins from the tables zonekeeper
// publishes as the chart's ServiceAccount. Without ../shared/helm the suite is skipped, except in
// CI, where its absence fails the run.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parse, parseAllDocuments } from 'yaml';
import { CHART, CHART_MODES, E2E_IMAGE, findHelm, KARMADA_ONLY, RENDER_PLACEHOLDER, renderChart } from '../support/helm.js';
import { ControlPlane, kubeVersions } from './controlPlane.js';
import { eventually, Kube, type Obj } from './kube.js';
import { admissionReviews, DECIDED_BY, seated } from './seatPolicy.js';
import { SCHEDULER, statefulSet, tearDown, threeZoneCluster, ZONES } from './workloads.js';

const found = findHelm();
const skip = 'skip' in found ? found.skip : false;
const RELEASE = 'zonekeeper';
const NS = 'zonekeeper-system';
const versions = kubeVersions();
const newest = Math.max(...versions.map((k) => k.minor));

/** `kind.group/name` for kubectl, whatever the API group. */
const ref = (o: Obj) => `${o.kind.toLowerCase()}${o.apiVersion.includes('/') ? `.${o.apiVersion.split('/')[0]}` : ''}/${o.metadata.name}`;

for (const k of versions) describe(`[${k.version}] the Helm chart against a real API server`, { skip }, () => {
  const helmBin = 'helm' in found ? found.helm : '';
  const cp = new ControlPlane(k.bin);
  let kube: Kube;
  let zones: Map<string, string>;
  const helm = (args: string[]) => execFileSync(helmBin, [...args, '--kubeconfig', cp.kubeconfig], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

  before(async () => {
    ({ kube, zones } = await threeZoneCluster(cp));
    // The PodMonitor and PrometheusRule of monitoring.enabled need the Prometheus Operator's CRDs.
    cp.kubectl(['apply', '-f', new URL('./prometheus-operator-crds.yaml', import.meta.url).pathname]);
    cp.kubectl(['wait', '--for=condition=Established', '--timeout=60s', 'crd/podmonitors.monitoring.coreos.com', 'crd/prometheusrules.monitoring.coreos.com']);
  });
  after(() => tearDown(cp));

  it(`[${k.version}] helm template of every mode passes a server-side dry run`, async () => {
    await kube.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
    for (const mode of [...CHART_MODES, { values: KARMADA_ONLY }] as { values: string[]; sinceMinor?: number }[]) {
      // At the cluster's version, as Helm renders for it (the kube-scheduler image follows it).
      const yaml = renderChart(helmBin, mode.values, NS, RELEASE, k.version);
      const objects = parseAllDocuments(yaml).map((d) => d.toJS() as Obj).filter(Boolean);
      const file = join(cp.dir, 'rendered.yaml');
      writeFileSync(file, yaml);
      const set = [...mode.values.flatMap((v) => ['--set', v]), ...RENDER_PLACEHOLDER];
      if (k.minor < (mode.sinceMinor ?? 0)) {
        // Offline, helm template cannot know; the API server refuses the kind, and Helm with the
        // cluster's API versions (install, upgrade, --dry-run=server) refuses the values first.
        assert.throws(() => cp.kubectl(['apply', '--dry-run=server', '-f', file]), (e: Obj) =>
          /no matches for kind "MutatingAdmissionPolicy" in version "admissionregistration\.k8s\.io\/v1"/.test(e.stderr));
        assert.throws(() => helm(['template', RELEASE, CHART, '--namespace', NS, '--dry-run=server', ...set]), (e: Obj) =>
          new RegExp(`policy\\.enabled=true needs Kubernetes 1\\.36\\+ .*this cluster \\(v${k.version.replace(/\./g, '\\.')}\\) does not serve it`).test(e.stderr));
        console.log(`# [${k.version}] ${mode.values.join(',')}: refused (the API server does not serve it before 1.${mode.sinceMinor})`);
        continue;
      }
      // From a cluster Helm knows its kinds: the same objects as offline.
      assert.equal(helm(['template', RELEASE, CHART, '--namespace', NS, '--dry-run=server', ...set]), yaml, 'helm template --dry-run=server renders as offline');
      const out = cp.kubectl(['apply', '--dry-run=server', '-f', file]);
      console.log(`# [${k.version}] ${mode.values.join(',') || 'defaults'}: ${objects.length} objects pass the server dry run`);
      for (const o of objects) assert.match(out, new RegExp(`^${ref(o).replace(/\./g, '\\.')} (created|configured) \\(server dry run\\)$`, 'm'), ref(o));
    }
  });

  it(`[${k.version}] helm install, zonekeeper as the chart's ServiceAccount places a pinned StatefulSet, helm upgrade, helm uninstall leaves nothing behind`,
    { skip: k.minor === newest ? false : 'install, upgrade and uninstall run on the newest version' }, async () => {
      // The placeholder image is not published: the install fails at once, saying how to build it, and installs nothing.
      assert.throws(() => helm(['install', RELEASE, CHART, '--namespace', NS, '--create-namespace', '--set', 'workloadSpread.standalone=true']),
        (e: Obj) => /image\.repository ghcr\.io\/zonekeeper\/zonekeeper is a placeholder, not published: .*docker build -t REGISTRY\/zonekeeper/.test(e.stderr));
      assert.equal(helm(['list', '--all-namespaces', '-q']).trim(), '');
      helm(['install', RELEASE, CHART, '--namespace', NS, '--create-namespace', '--set', 'workloadSpread.standalone=true', ...E2E_IMAGE]);
      assert.match(helm(['status', RELEASE, '--namespace', NS]), /STATUS: deployed/);
      // The chart's pods need the image and a kubelet; the harness runs zonekeeper as they would:
      // with the chart's ConfigMap, as the chart's ServiceAccount, with only the chart's RBAC.
      const shipped = parse((await kube.get('v1', 'ConfigMap', NS, 'zonekeeper-config')).data['zonekeeper.yaml']);
      await cp.zonekeeper!.stop();
      // The harness's ports and short Lease stand in for the pod's (extender.listen, admin.listen, leaderElection).
      delete shipped.extender.listen;
      const config = { ...shipped, workloadSpread: { ...shipped.workloadSpread, writeStatus: true }, leaderElection: { namespace: NS } };
      const zk = await cp.startZonekeeper(config, await cp.serviceAccountKubeconfig(NS, 'zonekeeper'));
      try {
        await kube.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'helm-db' } });
        await kube.create(statefulSet('helm-db', 'db', 6, { schedulerName: SCHEDULER }));
        const placed = await kube.bound('helm-db', 'app=db', 6, zones, 90_000);
        const list = await kube.frozenZones('apps/v1', 'StatefulSet', 'helm-db', 'db');
        assert.deepEqual([...list].sort(), ['zone-a', 'zone-b', 'zone-c']);
        for (const [pod, zone] of placed) assert.equal(zone, list[Number(pod.split('-').pop()) % 3], `${pod} on its ordinal's pin`);
        const cache = await (await fetch(`${zk.admin}/debug/cache`)).json() as Obj;
        const failing = cache.kinds.filter((c: Obj) => !c.off && (c.synced !== true || c.lastErrorStatus));
        assert.deepEqual(failing, [], "every watch syncs with the chart's RBAC alone");
      } finally {
        await zk.stop();
      }

      helm(['upgrade', RELEASE, CHART, '--namespace', NS, '--reuse-values', '--set', 'replicas=1', '--set', 'monitoring.enabled=true']);
      assert.equal((await kube.get('apps/v1', 'Deployment', NS, 'zonekeeper-scheduler')).spec.replicas, 1);
      assert.equal(cp.kubectl(['get', 'podmonitors.monitoring.coreos.com/zonekeeper', '-n', NS, '-o', 'name']).trim(), 'podmonitor.monitoring.coreos.com/zonekeeper');
      assert.match(helm(['history', RELEASE, '--namespace', NS]), /^2\s.*deployed\s.*Upgrade complete/m);

      const released = parseAllDocuments(helm(['get', 'manifest', RELEASE, '--namespace', NS])).map((d) => d.toJS() as Obj).filter(Boolean);
      const rendered = parseAllDocuments(renderChart(helmBin, ['workloadSpread.standalone=true', 'monitoring.enabled=true'], NS, RELEASE)).map((d) => d.toJS() as Obj)
        .filter((o) => o && !o.metadata.annotations?.['helm.sh/hook']);
      assert.equal(released.length, rendered.length, 'the release holds what helm template renders for its values (helm test\'s hooks aside)');
      helm(['uninstall', RELEASE, '--namespace', NS, '--wait', '--timeout', '60s']);
      assert.equal(helm(['list', '--all-namespaces', '-q']).trim(), '');
      const left = released.map((o) => cp.kubectl(['get', ref(o), ...(o.metadata.namespace ? ['-n', o.metadata.namespace] : []), '--ignore-not-found', '-o', 'name']))
        .map((out) => out.trim()).filter(Boolean);
      assert.deepEqual(left, [], 'objects the chart created are left after helm uninstall');
      // What the Deployment made (its ReplicaSet, its pods) goes with it.
      await eventually("the Deployment's ReplicaSets and pods gone", async () =>
        (await kube.list('apps/v1', 'ReplicaSet', NS)).length === 0 && (await kube.list('v1', 'Pod', NS)).length === 0, 60_000, 500);
      console.log(`# [${k.version}] helm install, upgrade (revision 2), uninstall: ${released.length} objects created, none left`);
    });

  it(`[${k.version}] karmada.only installed: zonekeeper-karmada's objects alone, none cluster-scoped; helm uninstall leaves nothing`,
    { skip: k.minor === newest ? false : 'installed on the newest version' }, async () => {
      helm(['install', RELEASE, CHART, '--namespace', NS, '--create-namespace', ...KARMADA_ONLY.flatMap((v) => ['--set', v]), ...E2E_IMAGE]);
      try {
        const released = parseAllDocuments(helm(['get', 'manifest', RELEASE, '--namespace', NS])).map((d) => d.toJS() as Obj).filter(Boolean);
        assert.deepEqual(released.map((o) => `${o.kind}/${o.metadata.namespace}/${o.metadata.name}`).sort(),
          [`ConfigMap/${NS}/zonekeeper-karmada-config`, `Deployment/${NS}/zonekeeper-karmada`, `PodDisruptionBudget/${NS}/zonekeeper-karmada`]);
        const args = (await kube.get('apps/v1', 'Deployment', NS, 'zonekeeper-karmada')).spec.template.spec.containers[0].args;
        assert.equal(args[0], 'karmada');
        assert.equal(cp.kubectl(['get', 'deployment/zonekeeper-scheduler', 'mutatingwebhookconfiguration/zonekeeper', 'clusterrole/zonekeeper', '-n', NS, '--ignore-not-found', '-o', 'name']).trim(), '');
      } finally {
        helm(['uninstall', RELEASE, '--namespace', NS, '--wait', '--timeout', '60s']);
      }
      assert.equal(cp.kubectl(['get', 'deployment,configmap,pdb', '-n', NS, '-l', 'app.kubernetes.io/instance=zonekeeper', '-o', 'name']).trim(), '');
    });

  it(`[${k.version}] policy.enabled installed: kube-apiserver writes a StatefulSet's pins from the seat table zonekeeper publishes as the chart's ServiceAccount, no webhook call`,
    { skip: k.minor === newest && k.minor >= 36 ? false : 'the policy needs Kubernetes 1.36+; installed on the newest version' }, async () => {
      const values = CHART_MODES.find((m) => m.components?.includes('policy'))!.values;
      helm(['install', RELEASE, CHART, '--namespace', NS, '--create-namespace', ...values.flatMap((v) => ['--set', v]), ...E2E_IMAGE]);
      const args: string[] = (await kube.get('apps/v1', 'Deployment', NS, 'zonekeeper-scheduler')).spec.template.spec.containers[0].args;
      assert.ok(args.includes('--policy-seat-table'), 'the chart turns the table on');
      // zonekeeper as the pod would run it: the chart's ConfigMap, the flag above, only the chart's RBAC.
      const shipped = parse((await kube.get('v1', 'ConfigMap', NS, 'zonekeeper-config')).data['zonekeeper.yaml']);
      delete shipped.extender.listen;
      const config = { ...shipped, policy: { ...shipped.policy, seatTable: true }, leaderElection: { namespace: NS } };
      const zk = await cp.startZonekeeper(config, await cp.serviceAccountKubeconfig(NS, 'zonekeeper'));
      try {
        const ns = 'helm-seated';
        await kube.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns, labels: { 'zonekeeper.io/admission': 'enabled' } } });
        const template = statefulSet(ns, 'db', 0, { schedulerName: SCHEDULER });
        const sts = await kube.create({ ...template, metadata: { ...template.metadata, annotations: { 'zonekeeper.io/zones': ZONES.join(',') } } });
        await seated(kube, sts, ZONES, 5);
        // The chart's webhook has no endpoint here (no pod runs): a pod it were sent to would fail to be created.
        await kube.patch('apps/v1', 'StatefulSet', ns, 'db', { spec: { replicas: 6 } });
        const placed = await kube.bound(ns, 'app=db', 6, zones, 90_000);
        for (const [pod, zone] of placed) assert.equal(zone, ZONES[Number(pod.split('-').pop()) % 3], `${pod} on its ordinal's pin`);
        for (const p of await kube.podsOf(ns, 'app=db')) assert.equal(p.metadata.labels?.[DECIDED_BY], 'policy', p.metadata.name);
        assert.equal(await admissionReviews(zk.admin), 0);
        console.log(`# [${k.version}] policy.enabled: 6 pods written on their pins by kube-apiserver from the table zonekeeper published as the chart's ServiceAccount`);
      } finally {
        await zk.stop();
        helm(['uninstall', RELEASE, '--namespace', NS, '--wait', '--timeout', '60s']);
      }
    });
});
