import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { parseAllDocuments, parse } from 'yaml';
import { parseConfig, splitHostPort } from '../../src/common/config.js';
import { CORE_KINDS, OPTIONAL_KINDS, WORKLOAD_KINDS, KRUISE_GROUP, MEMBER_KINDS } from '../../src/cluster/kinds.js';
import { ANNOTATION } from '../../src/cluster/annotations.js';
import { HOLDER_LABEL } from '../../src/controllers/holderLabel.js';

type Raw = Record<string, any>;
const root = new URL('../../', import.meta.url);
const read = (p: string) => readFileSync(new URL(p, root), 'utf8');
// The objects of every kustomization (base, CRD, examples), as the overlays put them together.
const files = ['base', 'workloadspread-crd', 'workloadspread-status', 'examples'].flatMap((dir) => readdirSync(new URL(`manifests/${dir}/`, root))
  .filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml').sort().map((f) => `${dir}/${f}`));
const objects: Raw[] = files.flatMap((f) => parseAllDocuments(read(`manifests/${f}`)).map((d) => {
  assert.equal(d.errors.length, 0, `${f}: ${d.errors[0]?.message}`);
  return d.toJS();
})).filter(Boolean);
const find = (kind: string, name: string, namespace?: string) =>
  objects.find((o) => o.kind === kind && o.metadata.name === name && (namespace === undefined || o.metadata.namespace === namespace));
const BUILTIN_ROLES = new Set(['system:kube-scheduler', 'system:volume-scheduler', 'extension-apiserver-authentication-reader', 'system:auth-delegator']);

const deploy = find('Deployment', 'zonekeeper-scheduler')!;
const containers: Raw[] = deploy.spec.template.spec.containers;
const zk = containers.find((c) => c.name === 'zonekeeper')!;
const sched = containers.find((c) => c.name === 'kube-scheduler')!;
const zkConfigMap = find('ConfigMap', 'zonekeeper-config')!;
const schedConfigMap = find('ConfigMap', 'zonekeeper-scheduler-config')!;
const zkConfig = parseConfig(parse(zkConfigMap.data['zonekeeper.yaml']), 'ConfigMap zonekeeper-config');
const schedConfig = parse(schedConfigMap.data['scheduler-config.yaml']);
const flag = (args: string[], name: string) => { const i = args.indexOf(name); return i >= 0 ? args[i + 1] : undefined; };

describe('manifests', () => {
  it('each kustomization lists exactly the files beside it; each overlay builds on the base', () => {
    for (const dir of ['base', 'workloadspread-crd', 'workloadspread-status']) {
      const k = parse(read(`manifests/${dir}/kustomization.yaml`));
      const beside = readdirSync(new URL(`manifests/${dir}/`, root)).filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml').sort();
      assert.deepEqual([...k.resources].sort(), beside, dir);
    }
    const overlay = (name: string) => parse(read(`manifests/overlays/${name}/kustomization.yaml`));
    const standalone = overlay('standalone');
    assert.deepEqual(standalone.resources, ['../../base', '../../workloadspread-crd', '../../workloadspread-status', 'conversion.yaml']);
    // The CRD converts v1alpha1 <-> v1beta1 through zonekeeper's listener, whose CA zonekeeper writes into that CRD only.
    assert.match(standalone.patches[0].patch, /--admission-listen=0\.0\.0\.0:9443[\s\S]*--admission-conversion-crd=workloadspreads\.apps\.kruise\.io/);
    assert.deepEqual(find('ClusterRole', 'zonekeeper-workloadspread-crd')!.rules,
      [{ apiGroups: ['apiextensions.k8s.io'], resources: ['customresourcedefinitions'], resourceNames: ['workloadspreads.apps.kruise.io'], verbs: ['get', 'patch'] }]);
    // Standalone: no Kruise controller writes WorkloadSpread status, so the leader does, with a grant for it.
    assert.match(standalone.patches[0].patch, /containers\/1\/args\/-[\s\S]*--workloadspread-status/);
    const grant = find('ClusterRole', 'zonekeeper-workloadspread-status')!;
    assert.deepEqual(grant.rules, [{ apiGroups: ['apps.kruise.io'], resources: ['workloadspreads/status'], verbs: ['get', 'patch'] }]);
    assert.deepEqual(overlay('openkruise').resources, ['../../base'], 'with OpenKruise, its own CRD stays');
    const costs = overlay('deletion-costs');
    assert.deepEqual(costs.resources, ['../standalone']);
    // The patch appends to the zonekeeper container's args: container 1 must be zonekeeper.
    assert.match(costs.patches[0].patch, /containers\/1\/args\/-[\s\S]*--manage-deletion-cost/);
    assert.equal(containers[1]!.name, 'zonekeeper');
    // Gate-only: zonekeeper without the second kube-scheduler (container 0, volume 0, its ConfigMap).
    const gateOnly = overlay('gate-only');
    assert.deepEqual(gateOnly.resources, ['../../base']);
    assert.match(gateOnly.patches[0].patch, /remove\s+path: \/spec\/template\/spec\/containers\/0[\s\S]*remove\s+path: \/spec\/template\/spec\/volumes\/0/);
    assert.equal(containers[0]!.name, 'kube-scheduler');
    assert.equal(deploy.spec.template.spec.volumes[0].configMap.name, 'zonekeeper-scheduler-config');
    assert.match(gateOnly.patches[1].patch, /\$patch: delete[\s\S]*name: zonekeeper-scheduler-config/);
    // Least privilege without a scheduler: kube-scheduler's ServiceAccount, its token, and everything bound to it go.
    assert.deepEqual(deploy.spec.template.spec.volumes[1].secret, { secretName: 'zonekeeper-kube-scheduler-token' }, 'gate-only removes volume 0 twice');
    assert.match(gateOnly.patches[0].patch, /remove\s+path: \/spec\/template\/spec\/volumes\/0[\s\S]*remove\s+path: \/spec\/template\/spec\/volumes\/0/);
    const schedulerBindings = objects.filter((o) => o.subjects?.some((s: Raw) => s.name === 'zonekeeper-kube-scheduler'));
    const forScheduler = [...schedulerBindings, ...objects.filter((o) => o.metadata.name.startsWith('zonekeeper-kube-scheduler')
      || (o.kind === 'Role' && schedulerBindings.some((b) => b.roleRef.name === o.metadata.name)))].map((o) => `${o.kind}/${o.metadata.name}`);
    assert.equal(forScheduler.length, 7);
    assert.deepEqual(gateOnly.patches.slice(2).map((p: { target: { kind: string; name: string } }) => `${p.target.kind}/${p.target.name}`).sort(), forScheduler.sort());
    const picker = overlay('picker');
    assert.deepEqual(picker.resources, ['../standalone', 'picker.yaml']);
    assert.match(picker.patches[0].patch, /containers\/1\/args\/-[\s\S]*--picker-listen=0\.0\.0\.0:8443/);
  });

  it('the managed overlay: admission on top of gate-only, its flags, Service, webhook, Secret and RBAC naming the same things', () => {
    const k = parse(read('manifests/overlays/managed/kustomization.yaml'));
    // The grant for WorkloadSpread status too: without OpenKruise, adding --workloadspread-status is enough.
    assert.deepEqual(k.resources, ['../gate-only', 'admission.yaml', '../../workloadspread-status']);
    const ops = parse(k.patches[0].patch) as Raw[];
    const args = ops.filter((o) => o.path === '/spec/template/spec/containers/0/args/-').map((o) => o.value as string);
    const arg = (name: string) => args.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
    const docs = read('manifests/overlays/managed/admission.yaml').split(/^---$/m).map((d) => parse(d)).filter(Boolean);
    const service = docs.find((d) => d.kind === 'Service');
    const webhook = docs.find((d) => d.kind === 'MutatingWebhookConfiguration');
    const role = docs.find((d) => d.kind === 'Role');
    const clusterRole = docs.find((d) => d.kind === 'ClusterRole');
    assert.equal(service.spec.selector[HOLDER_LABEL], 'true', 'the Service selects the Lease holder');
    const port = ops.find((o) => o.path.endsWith('/ports/-'))!.value;
    assert.equal(service.spec.ports[0].targetPort, port.name);
    assert.equal(splitHostPort(arg('admission-listen')!).port, port.containerPort);
    const hook = webhook.webhooks[0];
    assert.deepEqual(hook.clientConfig.service, { namespace: service.metadata.namespace, name: service.metadata.name, path: '/admission/pods', port: service.spec.ports[0].port });
    assert.equal(hook.clientConfig.caBundle, undefined, 'zonekeeper writes it');
    assert.equal(arg('admission-webhook'), webhook.metadata.name);
    assert.deepEqual(clusterRole.rules[0].resourceNames, [webhook.metadata.name]);
    assert.equal(arg('admission-dns-name'), `${service.metadata.name}.${service.metadata.namespace}.svc`);
    assert.equal(arg('admission-secret'), `${role.metadata.namespace}/${role.rules[1].resourceNames[0]}`);
    assert.deepEqual(hook.namespaceSelector, { matchLabels: { 'zonekeeper.io/admission': 'enabled' } });
    assert.match(hook.matchConditions.map((c: Raw) => c.expression).join(' '), new RegExp(ANNOTATION.ignore.replace(/\./g, '\\.')));
    const env = ops.find((o) => o.path.endsWith('/env'))!.value.map((e: Raw) => e.name);
    assert.deepEqual(env, ['POD_NAME', 'POD_NAMESPACE'], 'the holder finds its own pod to label');
  });

  it('the picker overlay: a Service on the picker port and a ClusterRole that may post the picker path, nothing else', () => {
    const docs = read('manifests/overlays/picker/picker.yaml').split(/^---$/m).map((d) => parse(d));
    const service = docs.find((d) => d.kind === 'Service');
    assert.deepEqual(service.spec.ports, [{ name: 'picker', port: 443, targetPort: 'picker' }]);
    const role = docs.find((d) => d.kind === 'ClusterRole');
    assert.deepEqual(role.rules, [{ nonResourceURLs: ['/v1/downscale-pod-picker/*'], verbs: ['post'] }]);
  });

  it('parse, and have the kinds a user needs', () => {
    for (const kind of ['Namespace', 'ServiceAccount', 'ClusterRole', 'ClusterRoleBinding', 'RoleBinding', 'Role', 'ConfigMap', 'Deployment', 'StatefulSet', 'CustomResourceDefinition']) {
      assert.ok(objects.some((o) => o.kind === kind), `no ${kind}`);
    }
    for (const o of objects) assert.ok(o.apiVersion && o.kind && o.metadata?.name, `incomplete object in manifests: ${JSON.stringify(o).slice(0, 80)}`);
  });

  it("zonekeeper's own pods: one drained at a time, never on one node, spread over zones, restricted", () => {
    const selector = { matchLabels: { 'app.kubernetes.io/name': 'zonekeeper' } };
    assert.deepEqual(deploy.spec.template.metadata.labels, selector.matchLabels);
    const pdb = find('PodDisruptionBudget', 'zonekeeper', 'zonekeeper-system')!;
    assert.deepEqual(pdb.spec, { maxUnavailable: 1, unhealthyPodEvictionPolicy: 'AlwaysAllow', selector });
    const spec = deploy.spec.template.spec;
    assert.deepEqual(spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution, [{ topologyKey: 'kubernetes.io/hostname', labelSelector: selector }]);
    assert.deepEqual(spec.topologySpreadConstraints, [{ maxSkew: 1, topologyKey: 'topology.kubernetes.io/zone', whenUnsatisfiable: 'DoNotSchedule', nodeTaintsPolicy: 'Honor', labelSelector: selector }]);
    assert.deepEqual(deploy.spec.strategy.rollingUpdate, { maxSurge: 0, maxUnavailable: 1 }, 'no surge: the anti-affinity needs no spare node');
    assert.deepEqual(spec.securityContext, { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } });
    for (const c of containers) {
      assert.equal(c.securityContext.allowPrivilegeEscalation, false, c.name);
      assert.deepEqual(c.securityContext.capabilities, { drop: ['ALL'] }, c.name);
      assert.equal(c.securityContext.runAsNonRoot, true, c.name);
      assert.deepEqual(c.securityContext.seccompProfile, { type: 'RuntimeDefault' }, c.name);
    }
  });

  it('ConfigMaps carry exactly the files in config/', () => {
    assert.equal(zkConfigMap.data['zonekeeper.yaml'], read('config/zonekeeper.yaml'));
    assert.equal(schedConfigMap.data['scheduler-config.yaml'], read('config/scheduler-config.yaml'));
  });

  it('every namespace, ServiceAccount, role and ConfigMap referenced exists', () => {
    for (const o of objects) {
      const ns = o.metadata.namespace;
      if (ns && ns !== 'default' && ns !== 'kube-system') assert.ok(find('Namespace', ns), `namespace ${ns} of ${o.kind}/${o.metadata.name}`);
      if (o.kind.endsWith('Binding') && o.apiVersion.startsWith('rbac.')) {
        const ref = o.roleRef;
        assert.ok(BUILTIN_ROLES.has(ref.name) || find(ref.kind, ref.name), `${o.metadata.name} binds missing ${ref.kind} ${ref.name}`);
        for (const s of o.subjects) assert.ok(find('ServiceAccount', s.name, s.namespace), `${o.metadata.name} binds missing ServiceAccount ${s.namespace}/${s.name}`);
      }
    }
    assert.ok(find('ServiceAccount', deploy.spec.template.spec.serviceAccountName, deploy.metadata.namespace));
    for (const v of deploy.spec.template.spec.volumes) if (v.configMap) assert.ok(find('ConfigMap', v.configMap.name, deploy.metadata.namespace), `ConfigMap ${v.configMap.name}`);
  });

  it('the containers read the config files where the ConfigMaps are mounted', () => {
    const mountOf = (c: Raw, volume: string) => c.volumeMounts.find((m: Raw) => m.name === volume).mountPath;
    const volumeFor = (cm: string) => deploy.spec.template.spec.volumes.find((v: Raw) => v.configMap?.name === cm).name;
    assert.equal(flag(zk.args, '--config'), `${mountOf(zk, volumeFor('zonekeeper-config'))}/zonekeeper.yaml`);
    assert.ok(sched.command.includes(`--config=${mountOf(sched, volumeFor('zonekeeper-scheduler-config'))}/scheduler-config.yaml`));
  });

  it('ports match: the scheduler calls zonekeeper on loopback; probes hit the health-only listener; the admin port needs a token', () => {
    const ext = schedConfig.extenders[0];
    const url = new URL(ext.urlPrefix);
    const listen = splitHostPort(zkConfig.extender.listen);
    assert.equal(url.hostname, listen.host);
    assert.equal(Number(url.port), listen.port);
    assert.equal(listen.host, '127.0.0.1', 'the extender is not reachable from the pod network');
    const probes = splitHostPort(flag(zk.args, '--probe-listen') ?? zkConfig.admin.probeListen);
    assert.notEqual(probes.host, '127.0.0.1', 'kubelet probes reach the pod IP, not loopback');
    assert.equal(zk.ports.find((p: Raw) => p.name === 'probes').containerPort, probes.port);
    assert.equal(zk.livenessProbe.httpGet.port, 'probes');
    assert.equal(zk.readinessProbe.httpGet.port, 'probes');
    assert.equal(zk.readinessProbe.httpGet.path, '/readyz');
    // What the flags make of the shipped config must be accepted: off loopback, with authorization.
    const admin = flag(zk.args, '--admin-listen')!;
    const effective = parseConfig({ ...zkConfig, admin: { ...zkConfig.admin, listen: admin, authorization: flag(zk.args, '--admin-authorization'), probeListen: flag(zk.args, '--probe-listen') } });
    assert.equal(effective.admin.authorization, 'kubernetes');
    assert.equal(zk.ports.find((p: Raw) => p.name === 'admin').containerPort, splitHostPort(admin).port);
    const delegator = objects.find((o) => o.kind === 'ClusterRoleBinding' && o.roleRef.name === 'system:auth-delegator');
    assert.ok(delegator?.subjects.some((s: Raw) => s.name === deploy.spec.template.spec.serviceAccountName), 'zonekeeper may create TokenReviews and SubjectAccessReviews');
    assert.ok(find('ClusterRole', 'zonekeeper-metrics-reader')!.rules.some((r: Raw) => r.nonResourceURLs.includes('/metrics')));
  });

  it('the scheduler config is what docs/operations.md#the-kubeschedulerconfiguration-entry explains', () => {
    assert.equal(schedConfig.apiVersion, 'kubescheduler.config.k8s.io/v1');
    assert.equal(schedConfig.percentageOfNodesToScore, 100);
    const ext = schedConfig.extenders[0];
    assert.equal(ext.nodeCacheCapable, true);
    assert.equal(ext.filterVerb, 'filter');
    // The filter spreads within the zone (placement.spreadNodes): no prioritize round trip.
    assert.equal(ext.prioritizeVerb, undefined);
    assert.equal(parse(read('config/zonekeeper.yaml')).placement.spreadNodes, true);
    assert.match(ext.httpTimeout, /^[1-9]s$/);
    const profile = schedConfig.profiles.find((p: Raw) => p.schedulerName === 'zonekeeper');
    assert.deepEqual(profile.pluginConfig, [{ name: 'PodTopologySpread', args: { defaultingType: 'List', defaultConstraints: [] } }]);
    assert.equal(deploy.spec.replicas, 2);
    assert.equal(schedConfig.leaderElection.leaderElect, true);
    // kube-scheduler's Lease is granted to its own ServiceAccount, not to zonekeeper's.
    const lease = find('Role', 'zonekeeper-scheduler-leader-election', schedConfig.leaderElection.resourceNamespace)!;
    assert.ok(lease.rules.some((r: Raw) => r.resourceNames?.includes(schedConfig.leaderElection.resourceName)));
    assert.deepEqual(find('RoleBinding', 'zonekeeper-scheduler-leader-election')!.subjects.map((s: Raw) => s.name), ['zonekeeper-kube-scheduler']);
    assert.ok(find('Role', 'zonekeeper-leader-election')!.rules.every((r: Raw) => !r.resourceNames?.includes(schedConfig.leaderElection.resourceName)));
  });

  it('the example StatefulSet uses the zonekeeper scheduler; the CRD is the one zonekeeper watches', () => {
    const sts = objects.find((o) => o.kind === 'StatefulSet')!;
    assert.equal(sts.spec.template.spec.schedulerName, 'zonekeeper');
    const crd = find('CustomResourceDefinition', `workloadspreads.${KRUISE_GROUP}`)!;
    assert.equal(crd.spec.group, KRUISE_GROUP);
    assert.equal(crd.spec.names.kind, 'WorkloadSpread');
    assert.ok(crd.spec.versions.some((v: Raw) => v.name === 'v1alpha1' && v.served));
  });

  it('RBAC grants what zonekeeper watches and writes, and no write it does not make', () => {
    const role = find('ClusterRole', 'zonekeeper')!;
    const can = (group: string, resource: string,
      verb: string) => role.rules.some((r: Raw) => r.apiGroups.includes(group) && r.resources.includes(resource) && r.verbs.includes(verb));
    for (const k of [...CORE_KINDS, ...OPTIONAL_KINDS]) {
      assert.ok(can(k.group, k.resource, 'list') && can(k.group, k.resource, 'watch'), `list/watch ${k.group}/${k.resource}`);
    }
    for (const k of Object.values(WORKLOAD_KINDS)) assert.ok(can(k.group, k.resource, 'patch'), `patch ${k.group}/${k.resource}: zone lists and instance IDs`);
    assert.ok(can('', 'pods', 'patch'), 'deletion costs and instance IDs annotate pods');
    assert.ok(can('', 'events', 'create'));
    assert.ok(!can('', 'pods', 'delete') && !can('', 'nodes', 'patch'));
  });
});

describe('least privilege (docs/security.md#rbac)', () => {
  const SA = deploy.spec.template.spec.serviceAccountName;
  const boundTo = (name: string) => objects.filter((o) => o.apiVersion.startsWith('rbac.') && o.kind.endsWith('Binding') && o.subjects.some((s: Raw) => s.name === name));
  const mountAt = (c: Raw) => c.volumeMounts.find((m: Raw) => m.mountPath === '/var/run/secrets/kubernetes.io/serviceaccount');
  const volume = (name: string) => deploy.spec.template.spec.volumes.find((v: Raw) => v.name === name);

  it("kube-scheduler runs as its own ServiceAccount: zonekeeper's holds none of its roles, each container mounts only its own token", () => {
    assert.equal(deploy.spec.template.spec.automountServiceAccountToken, false, 'no token of the pod\'s account in every container');
    assert.deepEqual(boundTo(SA).map((b) => b.roleRef.name).sort(), ['system:auth-delegator', 'zonekeeper', 'zonekeeper-leader-election', 'zonekeeper-workloadspread-crd', 'zonekeeper-workloadspread-status']);
    assert.deepEqual(boundTo('zonekeeper-kube-scheduler').map((b) => b.roleRef.name).sort(),
      ['extension-apiserver-authentication-reader', 'system:kube-scheduler', 'system:volume-scheduler', 'zonekeeper-scheduler-leader-election']);
    assert.deepEqual(volume(mountAt(sched).name).secret, { secretName: 'zonekeeper-kube-scheduler-token' });
    const secret = find('Secret', 'zonekeeper-kube-scheduler-token')!;
    assert.equal(secret.type, 'kubernetes.io/service-account-token');
    assert.equal(secret.metadata.annotations['kubernetes.io/service-account.name'], 'zonekeeper-kube-scheduler');
    const projected = volume(mountAt(zk).name).projected.sources;
    assert.ok(projected.some((s: Raw) => s.serviceAccountToken?.expirationSeconds <= 3607), 'an expiring token of the pod\'s account');
    assert.equal(mountAt(zk).readOnly, true);
  });

  it("zonekeeper's ClusterRole grants no verb the code never sends: events are created and patched, never updated", () => {
    const role = find('ClusterRole', 'zonekeeper')!;
    const events = role.rules.filter((r: Raw) => r.resources.includes('events') && r.verbs.some((v: string) => ['create', 'patch', 'update'].includes(v)));
    assert.deepEqual(events, [{ apiGroups: [''], resources: ['events'], verbs: ['create', 'patch'] }]);
  });

  it('the ValidatingAdmissionPolicy on writes applies to the ServiceAccount the Deployment runs as, and is bound to deny', () => {
    const policy = find('ValidatingAdmissionPolicy', 'zonekeeper-write-scope')!;
    assert.deepEqual(policy.spec.matchConditions.map((c: Raw) => c.expression), [`request.userInfo.username == 'system:serviceaccount:${deploy.metadata.namespace}:${SA}'`]);
    assert.equal(policy.spec.failurePolicy, 'Fail');
    const binding = find('ValidatingAdmissionPolicyBinding', 'zonekeeper-write-scope')!;
    assert.deepEqual(binding.spec, { policyName: 'zonekeeper-write-scope', validationActions: ['Deny'] });
    const secrets = policy.spec.validations.find((v: Raw) => v.expression.includes("variables.resource != 'secrets'"))!;
    assert.match(secrets.expression, /object\.metadata\.name == 'zonekeeper-webhook-tls' && object\.type == 'kubernetes\.io\/tls'/, 'its certificate\'s name, as a ServiceAccount token, is refused');
    // Every resource zonekeeper's ClusterRole may patch or create is one the policy looks at.
    const matched = new Set(policy.spec.matchConstraints.resourceRules.flatMap((r: Raw) => r.apiGroups.flatMap((g: string) => r.resources.map((res: string) => `${g}/${res}`))));
    const writable = find('ClusterRole', 'zonekeeper')!.rules.filter((r: Raw) => r.verbs.some((v: string) => ['patch', 'update'].includes(v)))
      .flatMap((r: Raw) => r.apiGroups.flatMap((g: string) => r.resources.map((res: string) => `${g}/${res}`))).filter((k: string) => k !== '/events');
    for (const k of writable) assert.ok(matched.has(k), `${k} may be patched but the policy does not look at it`);
  });

  it('the eviction webhook skips the ServiceAccount the Deployment runs as (its own evictions are judged in process), break-glass kept', () => {
    const webhook = parseAllDocuments(read('manifests/components/zone-disruption/webhook.yaml')).map((d) => d.toJS())
      .find((o) => o.kind === 'ValidatingWebhookConfiguration').webhooks[0];
    assert.deepEqual(webhook.matchConditions.map((c: Raw) => c.name), ['not-break-glass', 'not-zonekeeper']);
    assert.equal(webhook.matchConditions[1].expression, `request.userInfo.username != 'system:serviceaccount:${deploy.metadata.namespace}:${SA}'`);
  });

  it('across clusters: no member credential is read on Karmada by default; in members, only nodes, pods and their owners are read, as the Karmada identity', () => {
    const docs = (f: string): Raw[] => parseAllDocuments(read(`manifests/karmada/${f}`)).map((d) => d.toJS()).filter(Boolean);
    const [rbac, member, direct] = [docs('rbac.yaml'), docs('member-rbac.yaml'), docs('direct-rbac.yaml')];
    const sa = rbac.find((o) => o.kind === 'ServiceAccount')!;
    const rules = (objs: Raw[]) => objs.filter((o) => o.kind.endsWith('Role') && !o.kind.endsWith('Binding')).flatMap((o) => o.rules as Raw[]);
    assert.ok(!rules(rbac).some((r) => r.resources.includes('secrets')), 'rbac.yaml reads no Secret (karmada.memberAccess: proxy)');
    assert.ok(rules(rbac).some((r) => r.apiGroups.includes('cluster.karmada.io') && r.resources.includes('clusters/proxy') && ['get', 'list', 'watch'].every((v) => r.verbs.includes(v))));
    assert.deepEqual(rules(member), [{ apiGroups: [''], resources: ['nodes', 'pods'], verbs: ['get', 'list', 'watch'] },
      { apiGroups: ['apps'], resources: ['deployments', 'replicasets', 'statefulsets'], verbs: ['list', 'watch'] }], 'and of apps, only who owns whom: list and watch');
    for (const k of MEMBER_KINDS) {
      assert.ok(rules(member).some((r) => r.apiGroups.includes(k.group) && r.resources.includes(k.resource) && ['list', 'watch'].every((v) => r.verbs.includes(v))), `${k.resource} watched in members: granted`);
    }
    assert.deepEqual(member.find((o) => o.kind === 'ClusterRoleBinding')!.subjects,
      [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: `system:serviceaccount:${sa.metadata.namespace}:${sa.metadata.name}` }]);
    assert.deepEqual(rules(direct), [{ apiGroups: [''], resources: ['secrets'], verbs: ['get'] }], 'direct-rbac.yaml: Secrets by name, nothing else');
    assert.deepEqual(direct.find((o) => o.kind === 'RoleBinding')!.subjects, [{ kind: 'ServiceAccount', name: sa.metadata.name, namespace: sa.metadata.namespace }]);
  });
});
