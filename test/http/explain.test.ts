// /debug/explain as a user reads it: where the pod is, where its seat is, why they differ and
// what would fix it, with the command; as JSON for curl and jq, as a page for a browser.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { deployment, nodes, pv, pvc, rsPod, statefulSet, storeOf, stsPod, workloadSpread, zoneSubset } from '../support/builders.js';
import { testApp } from '../support/app.js';

const ZONES = ['zone-a', 'zone-b', 'zone-c'];
const BROWSER = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';

// The user's own list (no zones-frozen-at): db-2 in zone-a is off its seat (zone-c) for no reason zonekeeper knows;
// db-0's volume is in zone-c and db-1 is on its seat, so the list zone-c,zone-b,zone-a would keep all three in place.
const cluster = () => storeOf([
  ...nodes(ZONES, 2), statefulSet('db', 3, { annotations: { 'zonekeeper.io/zones': ZONES.join(',') }, claimTemplates: ['data'] }),
  pvc('data-db-0', { volumeName: 'pv-db-0' }), pv('pv-db-0', 'zone-c', { claim: 'data-db-0' }),
  stsPod('db', 1, { nodeName: 'node-b-1' }), stsPod('db', 2, { nodeName: 'node-a-1', createdAt: '2026-01-01T00:00:00Z' }),
]);

const explain = async (app: ReturnType<typeof testApp>, pod: string, accept?: string) =>
  app.adminApp.request(`/debug/explain?pod=default/${pod}`, accept ? { headers: { accept } } : {});

describe('/debug/explain: the pod against its seat', () => {
  it('says where the pod is, where its seat is, why they differ, and the commands that fix it (JSON, the old fields kept)', async () => {
    const res = await explain(testApp(cluster()), 'db-2');
    assert.equal(res.headers.get('content-type'), 'application/json');
    const body: any = await res.json();
    assert.deepEqual(body.location, { node: 'node-a-1', zone: 'zone-a' });
    assert.deepEqual(body.seat, { label: 'ordinal 2', index: 2, zone: 'zone-c', list: ZONES, listSource: 'annotation' });
    assert.equal(body.offSeat.cause, 'unknown');
    assert.equal(body.offSeat.heldByVolume, false);
    assert.deepEqual(body.fixes.map((f: any) => [f.by, f.command]), [
      // Repair is off by default: its command turns it on first, then opts the workload in.
      ['repair', 'helm upgrade zonekeeper charts/zonekeeper -n zonekeeper-system --reuse-values --set config.rebalance.enabled=true && kubectl -n default annotate statefulsets db zonekeeper.io/rebalance=true'],
      ['delete-pod', 'kubectl -n default delete pod db-2'],
      ['zone-list', 'kubectl -n default annotate statefulsets db zonekeeper.io/zones=zone-c,zone-b,zone-a --overwrite'],
    ]);
    assert.match(body.fixes[0].what, /^Repair is off in this zonekeeper: turn it on \(rebalance: \{enabled: true\} in zonekeeper.yaml; with the chart: helm upgrade .*\), then opt StatefulSet db into repair: /);
    const on: any = await (await explain(testApp(cluster(), { config: { rebalance: { enabled: true } } }), 'db-2')).json();
    assert.equal(on.fixes[0].command, 'kubectl -n default annotate statefulsets db zonekeeper.io/rebalance=true');
    assert.match(body.fixes[2].what, /3 of 3 placed seats are in their zone \(1 with the list now\)/);
    assert.deepEqual(body.explanation.slice(0, 3), [
      'default/db-2 is in zone-a, on node node-a-1.',
      'Its seat, ordinal 2 of StatefulSet default/db, is in zone-c (zone list zone-a,zone-b,zone-c, frozen in zonekeeper.io/zones).',
      'They differ because zonekeeper did not place it there: created 2026-01-01T00:00:00.000Z, after the list was frozen, with no volume or fallback to explain it; another scheduler may have bound it, or its node\'s zone label changed (unknown).',
    ]);
    // The dry-run filter's fields as before.
    assert.equal(body.outcome, 'placed');
    assert.match(body.summary, /^pinned: ordinal 2 → zone-c/);
    assert.equal(body.failed['node-a-1'], 'zone-pin: pinned to zone-c');
  });

  it('a pod its bound volume holds: zonekeeper never moves it; moving the data or the zone list would', async () => {
    const app = testApp(storeOf([
      ...nodes(ZONES, 1), statefulSet('kv', 3, { annotations: { 'zonekeeper.io/zones': ZONES.join(',') } }),
      pvc('data-kv-1', { volumeName: 'pv-kv-1' }), pv('pv-kv-1', 'zone-c', { claim: 'data-kv-1' }),
      stsPod('kv', 1, { nodeName: 'node-c-1', claims: ['data-kv-1'] }),
      pvc('data-kv-2', { volumeName: 'pv-kv-2' }), pv('pv-kv-2', 'zone-a', { claim: 'data-kv-2' }), stsPod('kv', 2, { claims: ['data-kv-2'] }),
    ]));
    const body: any = await (await explain(app, 'kv-1')).json();
    assert.deepEqual([body.offSeat.cause, body.offSeat.heldByVolume], ['volume', true]);
    assert.deepEqual(body.fixes.map((f: any) => f.by), ['move-data', 'zone-list']);
    assert.equal(body.fixes[0].command, 'kubectl -n default delete pvc data-kv-1 --wait=false && kubectl -n default delete pod kv-1');
    assert.match(body.fixes[0].what, /^zonekeeper never moves it and repair skips it/);
    assert.equal(body.fixes[1].command, 'kubectl -n default annotate statefulsets kv zonekeeper.io/zones=zone-b,zone-c,zone-a --overwrite');
    assert.match(body.fixes[1].what, /2 of 2 placed seats are in their zone \(0 with the list now\)/);
    // Pending, its volume in zone-a, its seat in zone-c: it will be off its seat, and the same fixes say so.
    const pending: any = await (await explain(app, 'kv-2')).json();
    assert.equal(pending.offSeat, undefined, 'offSeat: bound pods only');
    assert.deepEqual(pending.explanation.slice(1, 4), [
      'Its seat, ordinal 2 of StatefulSet default/kv, is in zone-c (zone list zone-a,zone-b,zone-c, frozen in zonekeeper.io/zones).',
      'Its dry-run filter sends it to zone-a: volume data-kv-2 (PV pv-kv-2) is in zone-a: volume wins over the pin to zone-c (ordinal 2 → zone-c (3 zones)).',
      'They will differ because its bound volume is in zone-a: a bound volume\'s zone wins over the pin, and data does not move (volume).',
    ]);
    assert.deepEqual(pending.fixes.map((f: any) => f.by), ['move-data', 'zone-list']);
    assert.match(pending.fixes[0].what, /^zonekeeper never moves it and repair skips it: it goes to zone-a\./);
  });

  it('a pod on its seat, and a pending one: nothing to fix; where its dry-run filter sends it', async () => {
    const app = testApp(storeOf([...nodes(ZONES, 1), statefulSet('db', 3, { annotations: { 'zonekeeper.io/zones': ZONES.join(',') } }),
      stsPod('db', 1, { nodeName: 'node-b-1' }), stsPod('db', 2)]));
    const on: any = await (await explain(app, 'db-1')).json();
    assert.deepEqual([on.offSeat, on.fixes, on.explanation.at(-1)], [undefined, [], 'It is on its seat: nothing to fix.']);
    const pending: any = await (await explain(app, 'db-2')).json();
    assert.deepEqual(pending.location, { node: '' });
    assert.match(pending.explanation.at(-1), /^Its dry-run filter sends it to zone-c: pinned: ordinal 2 → zone-c/);
  });

  it('a browser gets the same as a page, every value escaped; curl and jq get JSON', async () => {
    const app = testApp(cluster());
    const page = await explain(app, 'db-2', BROWSER);
    assert.equal(page.status, 200);
    assert.match(page.headers.get('content-type')!, /^text\/html/);
    assert.equal(page.headers.get('vary'), 'Accept');
    assert.match(page.headers.get('content-security-policy')!, /script-src 'self'/);
    const html = await page.text();
    assert.match(html, /<p>default\/db-2 is in zone-a, on node node-a-1\.<\/p>/);
    assert.match(html, /<li data-fix="delete-pod"><p>Or delete the pod now: the StatefulSet makes it again and zonekeeper pins it to zone-c:<\/p><pre><code>kubectl -n default delete pod db-2<\/code><\/pre><\/li>/);
    assert.match(html, /node&#39;s zone label changed/, 'text is escaped');
    for (const accept of ['*/*', 'application/json', 'application/json, text/html;q=0.5', undefined]) {
      const res = await explain(app, 'db-2', accept);
      assert.equal(res.headers.get('content-type'), 'application/json', String(accept));
    }
  });
});

describe('/debug/explain: a WorkloadSpread subset\'s patch the zone gate does not write whole', () => {
  // web-rs-a was decided by the gate (the annotation names what it lacks); web-rs-b is gated now.
  const spread = () => {
    const gated = rsPod('web', 'b');
    return storeOf([...nodes(ZONES, 1), ...deployment('web', 2),
      workloadSpread('arch', { kind: 'Deployment', name: 'web' }, [zoneSubset('x86', 'zone-a', 2, { patch: { metadata: { labels: { arch: 'x86' } } } })]),
      rsPod('web', 'a', { nodeName: 'node-a-1', annotations: {
        'apps.kruise.io/matched-workloadspread': JSON.stringify({ name: 'arch', subset: 'x86' }), 'zonekeeper.io/subset-patch-not-applied': 'metadata.labels' } }),
      { ...gated, spec: { ...gated.spec, schedulingGates: [{ name: 'zonekeeper.io/zone' }] } }]);
  };
  const admission = (more: Record<string, unknown>) => ({ listen: '0.0.0.0:8443', certificate: { secret: 'zonekeeper-system/zonekeeper-webhook', dnsNames: ['zonekeeper-webhook.zonekeeper-system.svc'] }, ...more });
  const body = async (pod: string, config: Record<string, unknown>) => (await explain(testApp(spread(), { config }), pod)).json() as Promise<any>;
  const SETTINGS = 'admission.tls.clientCAFile (with admission.tls.clientCommonNames) or admission.trustNetwork (with its NetworkPolicy)';

  it('under the default (no client CA, no trusted network) it says what was not applied and names the setting that would apply it', async () => {
    const config = { workloadSpread: { writeStatus: true }, admission: admission({}) };
    const decided = await body('web-rs-a', config);
    assert.equal(decided.subsetPatch.notApplied, 'metadata.labels');
    assert.deepEqual([decided.subsetPatch.workloadSpread, decided.subsetPatch.subset], ['arch', 'x86']);
    assert.ok(decided.subsetPatch.setting.endsWith(`set ${SETTINGS}`), decided.subsetPatch.setting);
    assert.ok(decided.explanation.includes(decided.subsetPatch.sentence), 'in the explanation, before its fixes');
    assert.match(decided.subsetPatch.sentence, /^The zone gate decided it after its creation, so WorkloadSpread arch subset x86's patch was not applied in full: not applied metadata\.labels /);
    const gated = await body('web-rs-b', config);
    assert.match(gated.subsetPatch.sentence, /^It waits for the zone gate, which writes of WorkloadSpread arch subset x86's patch only what narrows where the pod runs .*admission\.trustNetwork \(with its NetworkPolicy\)\.$/);
    const off = await body('web-rs-b', { workloadSpread: { writeStatus: true } });
    assert.match(off.subsetPatch.setting, /^admission, which applies it whole, is off: set admission\.listen/);
  });

  it('where admission decides pods (a trusted network) no setting is named; with OpenKruise (its webhook owns patches) a gated pod gets no word', async () => {
    const trusted = { workloadSpread: { writeStatus: true }, admission: admission({ trustNetwork: true }) };
    const decided = await body('web-rs-a', trusted);
    assert.equal(decided.subsetPatch.setting, undefined);
    assert.match(decided.subsetPatch.sentence, /Only admission applies a patch whole: keep such pods on admission/);
    assert.equal((await body('web-rs-b', { admission: admission({}) })).subsetPatch, undefined);
  });
});
