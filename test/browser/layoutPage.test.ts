// The layout page in a real browser: Debian's Chromium, headless, driven over CDP by
// playwright-core, against `zonekeeper serve --demo`. Asserts on the rendered DOM and saves a
// screenshot to test/artifacts/. Without Chromium the suite is skipped with the reason, unless
// ZK_REQUIRE_BROWSER=1 (CI) makes that a failure.
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { chromium, type Browser, type Page } from 'playwright-core';
import { parseAllDocuments } from 'yaml';
import { startServe } from '../support/serve.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const ARTIFACTS = new URL('../artifacts/', import.meta.url).pathname;
const DEMO = new URL('../../config/demo-cluster.yaml', import.meta.url).pathname;
const available = existsSync(CHROMIUM);
if (!available && process.env.ZK_REQUIRE_BROWSER === '1') throw new Error(`ZK_REQUIRE_BROWSER=1 but there is no Chromium at ${CHROMIUM} (apt-get install chromium)`);
const skip = available ? false : `no Chromium at ${CHROMIUM}: apt-get install chromium, or set CHROMIUM_PATH`;

// The flags a closed network needs: no background fetches to Google, no first-run work.
const ARGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

const demoObjects = () => parseAllDocuments(readFileSync(DEMO, 'utf8')).map((d) => d.toJS());

/** Cells of a workload's section: pod name → the column it is drawn in, its state and what decided it. */
async function cells(page: Page, workload: string) {
  return page.$$eval(`section[data-workload="${workload}"] [data-zone-column]`, (columns) => columns.flatMap((col) =>
    [...col.querySelectorAll('.pod')].map((cell) => ({
      pod: cell.getAttribute('data-pod'), column: col.getAttribute('data-zone-column'),
      state: cell.getAttribute('data-state'), decided: cell.getAttribute('data-decided'), text: (cell as unknown as { innerText: string }).innerText,
    }))));
}

describe('the layout page in headless Chromium', { skip }, () => {
  let browser: Browser;
  let serve: { child: ChildProcess; extender: string; admin: string };
  let page: Page;

  before(async () => {
    serve = await startServe(['--demo']);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS, headless: true });
    page = await browser.newPage({ viewport: { width: 1400, height: 1100 } });
  });

  after(async () => {
    await browser?.close();
    serve?.child.kill();
  });

  /** `zonekeeper serve --snapshot` of `objects`, and a page on its /ui; both go when `use` ends. */
  async function onSnapshot(objects: unknown[], use: (p: Page, admin: string) => Promise<void>): Promise<void> {
    const file = join(mkdtempSync(join(tmpdir(), 'zk-ui-')), 'cluster.yaml');
    writeFileSync(file, objects.map((o) => JSON.stringify(o)).join('\n---\n'));
    const other = await startServe(['--snapshot', file]);
    const p = await browser.newPage();
    try {
      await p.goto(`${other.admin}/ui`);
      await use(p, other.admin);
    } finally {
      await p.close();
      other.child.kill();
    }
  }

  it('draws the 6 pods of db in their 3 zones, db-5 where its volume is, with the volume win shown', async () => {
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(`${serve.admin}/ui`);
    await page.waitForSelector('section[data-workload="default/StatefulSet/db"] .pod');
    const db = await cells(page, 'default/StatefulSet/db');
    assert.deepEqual(db.map((c) => [c.pod, c.column]).sort(), [
      ['db-0', 'zone-a'], ['db-1', 'zone-b'], ['db-2', 'zone-c'], ['db-3', 'zone-a'], ['db-4', 'zone-b'], ['db-5', 'zone-a'],
    ]);
    const columns = await page.$$eval('section[data-workload="default/StatefulSet/db"] [data-zone-column]', (cs) => cs.map((c) => c.getAttribute('data-zone-column')));
    assert.deepEqual(columns, ['zone-a', 'zone-b', 'zone-c'], 'one column per zone of the list, in list order');
    const db5 = db.find((c) => c.pod === 'db-5')!;
    assert.equal(db5.decided, 'volume');
    assert.equal(db5.state, 'pending');
    assert.match(db5.text, /pin zone-c/);
    assert.match(db5.text, /volume/);
    const title = await page.getAttribute('[data-pod="db-5"] .badge.volume', 'title');
    assert.match(title!, /in zone-a: it overrides the pin to zone-c/);
    for (const c of db.filter((x) => x.pod !== 'db-5')) assert.equal(c.decided, 'pin', c.pod!);
    assert.deepEqual(db.filter((c) => c.state === 'pending').map((c) => c.pod).sort(), ['db-4', 'db-5']);

    const web = await cells(page, 'default/Deployment/web');
    assert.equal(web.filter((c) => c.column === 'zone-a').length, 2, 'WorkloadSpread subset a holds 2');
    assert.ok(web.filter((c) => c.column === 'zone-a').every((c) => /subset-a/.test(c.text!)));
    const subsets = await page.$$eval('section[data-workload="default/Deployment/web"] tr[data-subset]', (rows) => rows.map((r) => (r as unknown as { innerText: string }).innerText.split('\t')));
    assert.deepEqual(subsets.map((r) => r.slice(0, 4)), [['subset-a', 'zone-a', '2', '2'], ['subset-b', 'zone-b', 'unlimited', '1']], 'each subset with its zones');
    // The pending pod is drawn where it is going: subset-a is full, so subset-b's zone.
    const pendingWeb = web.find((c) => c.pod === 'web-6c7d8bd9bc-t5v9w')!;
    assert.deepEqual([pendingWeb.column, pendingWeb.state], ['zone-b', 'pending']);
    assert.match(pendingWeb.text!, /→ subset-b/);
    assert.deepEqual(errors, []);

    mkdirSync(ARTIFACTS, { recursive: true });
    const shot = join(ARTIFACTS, 'layout-page.png');
    await page.screenshot({ path: shot, fullPage: true });
    assert.ok(statSync(shot).size > 10_000, 'a screenshot with something in it');
    console.log(`# screenshot: ${shot}`);
  });

  it('shows what to do: the demo\'s workload at risk first, subsets\' zones and no column for a zone in none, each pod linked to its explanation, pending ages', async () => {
    await page.goto(`${serve.admin}/ui`);
    await page.waitForSelector('section[data-workload="default/StatefulSet/queue"] .health');
    const order = await page.$$eval('section.workload', (all) => all.map((s) => [s.getAttribute('data-workload'), s.querySelector('.health')?.getAttribute('data-health')]));
    assert.deepEqual(order[0], ['default/StatefulSet/queue', 'at-risk'], 'the demo has a workload at risk, listed first');
    assert.match(await page.innerText('section[data-workload="default/StatefulSet/queue"] .health'), /^at risk · 1 of 3 zones hold pods \(zone-b, zone-c empty\)/);
    // The header names the demo cluster, not where its file lies on the server's disk.
    const status = await page.innerText('#status');
    assert.match(status, /demo cluster \(config\/demo-cluster\.yaml\)/);
    assert.ok(!status.includes(DEMO), status);
    // web's WorkloadSpread covers zone-a and zone-b: zone-c is no empty "healthy" column, and a note says why.
    const columns = await page.$$eval('section[data-workload="default/Deployment/web"] [data-zone-column]', (cs) => cs.map((c) => c.getAttribute('data-zone-column')));
    assert.deepEqual(columns.sort(), ['zone-a', 'zone-b']);
    assert.match(await page.innerText('section[data-workload="default/Deployment/web"] .notes'), /in no subset of the WorkloadSpread: zone-c \(not drawn; its pods never go there\)/);
    // Every pod's name links to its explanation, and the link answers it.
    const links = await page.$$eval('main .pod', (all) => all.map((c) => [c.getAttribute('data-pod'), c.querySelector('a.name')?.getAttribute('href')]));
    assert.ok(links.length >= 14, `${links.length} cells`);
    for (const [pod, href] of links) assert.equal(href, `/debug/explain?pod=${encodeURIComponent(`default/${pod}`)}`, pod!);
    const explained = await (await fetch(`${serve.admin}${links.find(([pod]) => pod === 'db-5')![1]}`)).json() as { failed: Record<string, string> };
    assert.match(Object.values(explained.failed).join(' '), /volume/, 'db-5\'s explanation names its volume');
    // queue-2 was made 10 minutes before the demo file's instant, which the demo shifts to its start:
    // pending 10m, as of reading the file, however long it serves.
    const badge = await page.innerText('[data-pod="queue-2"] .badge.pending');
    assert.equal(badge, 'pending 10m');
    const { workloads } = await (await fetch(`${serve.admin}/debug/layouts`)).json() as { workloads: { pods: { name: string; pendingSince?: string }[] }[] };
    const since = workloads.flatMap((w) => w.pods).find((p) => p.name === 'queue-2')!.pendingSince;
    assert.match(await page.getAttribute('[data-pod="queue-2"] .badge.pending', 'title') ?? '', new RegExp(`^created ${since}, not bound since; nothing binds pods`));
    mkdirSync(ARTIFACTS, { recursive: true });
    const shot = join(ARTIFACTS, 'layout-page-what-to-do.png');
    await page.screenshot({ path: shot, fullPage: true });
    assert.ok(statSync(shot).size > 10_000);
    console.log(`# screenshot: ${shot}`);
  });

  it('says why each pod is off its seat, and its explanation, opened from the page, says where it is, where its seat is, why, and the commands that fix it', async () => {
    const errors: string[] = [];
    const p = await browser.newPage({ viewport: { width: 1200, height: 900 } });
    p.on('pageerror', (e) => errors.push(e.message));
    try {
      await p.goto(`${serve.admin}/ui`);
      await p.waitForSelector('[data-pod="queue-1"] .cause');
      // Every cell with the red edge carries its cause in words; queue-1 alone is off its seat in the demo.
      const offSeat = await p.$$eval('main .pod.off-pin', (all) => all.map((c) => [c.getAttribute('data-pod'), c.querySelector('.cause')?.getAttribute('data-cause'),
        (c.querySelector('.cause') as unknown as { innerText: string } | null)?.innerText]));
      assert.deepEqual(offSeat, [['queue-1', 'placed-before', 'off its seat (zone-b): placed before zonekeeper']]);
      assert.equal(await p.$$eval('main .pod:not(.off-pin) .cause', (all) => all.length), 0, 'no cause on a pod on its seat');

      await Promise.all([p.waitForURL(/\/debug\/explain\?pod=default%2Fqueue-1$/), p.click('[data-pod="queue-1"] a.name')]);
      const story = await p.innerText('#story');
      for (const sentence of [
        'default/queue-1 is in zone-a, on node node-a-3.',
        'Its seat, ordinal 1 of StatefulSet default/queue, is in zone-b (zone list zone-a,zone-b,zone-c, derived from the nodes, not frozen yet).',
        'They differ because it was placed before zonekeeper placed any pod of StatefulSet default/queue: no zone list was frozen yet, so no pin held it (placed-before).',
        'What would fix it',
      ]) assert.ok(story.includes(sentence), `${sentence}\n---\n${story}`);
      const fixes = await p.$$eval('#story [data-fix]', (all) => all.map((f) => [f.getAttribute('data-fix'), f.querySelector('code')?.textContent]));
      // The demo runs with repair off: its command turns repair on first, and says so.
      assert.deepEqual(fixes, [
        ['repair', 'helm upgrade zonekeeper charts/zonekeeper -n zonekeeper-system --reuse-values --set config.rebalance.enabled=true && kubectl -n default annotate statefulsets queue zonekeeper.io/rebalance=true'],
        ['delete-pod', 'kubectl -n default delete pod queue-1']]);
      assert.ok(story.includes('Repair is off in this zonekeeper: turn it on (rebalance: {enabled: true} in zonekeeper.yaml'), story);
      assert.match(await p.innerText('#decision'), /placed by zone-pin for default\/StatefulSet\/queue: pinned: ordinal 1 → zone-b/);
      assert.deepEqual(errors, []);
      mkdirSync(ARTIFACTS, { recursive: true });
      const shot = join(ARTIFACTS, 'explain-queue-1.png');
      await p.screenshot({ path: shot, fullPage: true });
      assert.ok(statSync(shot).size > 10_000);
      console.log(`# screenshot: ${shot}`);
    } finally {
      await p.close();
    }
  });

  it("queue-2's explanation says why it stays pending: nothing binds pods in a file; its age does not grow with the clock", async () => {
    const p = await browser.newPage({ viewport: { width: 1200, height: 900 } });
    try {
      await p.goto(`${serve.admin}/ui`);
      await p.waitForSelector('[data-pod="queue-2"] .badge.pending');
      assert.match(await p.getAttribute('[data-pod="queue-2"] .badge.pending', 'title') ?? '', /nothing binds pods in a file \(the demo, a --snapshot\): no kube-scheduler runs here/);
      await Promise.all([p.waitForURL(/\/debug\/explain\?pod=default%2Fqueue-2$/), p.click('[data-pod="queue-2"] a.name')]);
      const story = await p.innerText('#story');
      for (const sentence of [
        'default/queue-2 is not bound to a node yet.',
        'Its dry-run filter sends it to zone-c: pinned: ordinal 2 → zone-c (3 zones).',
        'Nothing binds pods here: this is a file (the demo, a --snapshot), with no kube-scheduler, so it stays pending; in a cluster, kube-scheduler binds it where the dry run sends it.',
      ]) assert.ok(story.includes(sentence), `${sentence}\n---\n${story}`);
    } finally {
      await p.close();
    }
  });

  it('at 700 px every zone column is in view, none behind a scrollbar; the legend explains skew and cost', async () => {
    const narrow = await browser.newPage({ viewport: { width: 700, height: 900 } });
    try {
      await narrow.goto(`${serve.admin}/ui`);
      await narrow.waitForSelector('section[data-workload="default/StatefulSet/db"] .pod');
      const rights = await narrow.$$eval('[data-zone-column]', (cols) => cols.map((c) => c.getBoundingClientRect().right));
      assert.ok(rights.length >= 3 && rights.every((r) => r <= 700), `column right edges: ${rights.join(', ')}`);
      assert.equal(await narrow.$eval('html', (html) => html.scrollWidth <= 700), true, 'no horizontal scroll');
      const legend = await narrow.innerText('footer');
      for (const word of ['skew', 'cost', 'reserved', 'pending', 'pin']) assert.match(legend, new RegExp(word));
      mkdirSync(ARTIFACTS, { recursive: true });
      await narrow.screenshot({ path: join(ARTIFACTS, 'layout-page-700.png'), fullPage: true });
    } finally {
      await narrow.close();
    }
  });

  it('updates live: a filter that reserves db-4 in zone-b shows on the page without a reload', async () => {
    const before = await page.getAttribute('body', 'data-updated');
    const db4 = demoObjects().find((o) => o.kind === 'Pod' && o.metadata.name === 'db-4');
    const nodes = demoObjects().filter((o) => o.kind === 'Node').map((o) => o.metadata.name);
    const res = await fetch(`${serve.extender}/filter`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ Pod: db4, NodeNames: nodes }) });
    const verdict = await res.json() as { NodeNames: string[] };
    assert.deepEqual(verdict.NodeNames.map((n) => n.slice(0, 6)).filter((v, i, a) => a.indexOf(v) === i), ['node-b']);
    await page.waitForSelector('[data-pod="db-4"] .badge.reserved', { timeout: 10_000 });
    assert.match(await page.innerText('[data-pod="db-4"]'), /reserved zone-b/);
    assert.notEqual(await page.getAttribute('body', 'data-updated'), before);
    assert.match(await page.innerText('section[data-workload="default/StatefulSet/db"]'), /1 reservation\(s\) waiting/);
  });

  it('draws at most the pods one answer lists: a StatefulSet of 2,500 shows its first seats and says how many more there are, db still all 6', async () => {
    const big = Array.from({ length: 2500 }, (_, i) => ({
      apiVersion: 'v1', kind: 'Pod',
      metadata: { name: `big-${i}`, namespace: 'default', uid: `big-${i}`, ownerReferences: [{ apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'big', uid: 'sts-big', controller: true }] },
      spec: { nodeName: `node-${'abc'[i % 3]}-1` }, status: { phase: 'Running' },
    }));
    const objects = [...demoObjects(), { apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name: 'big', namespace: 'default', uid: 'sts-big' }, spec: { replicas: 2500 } }, ...big];
    await onSnapshot(objects, async (p, admin) => {
      await p.waitForSelector('section[data-workload="default/StatefulSet/big"] .pod');
      const drawn = await cells(p, 'default/StatefulSet/big');
      const { podsPerAnswer } = await (await fetch(`${admin}/debug/layouts`)).json() as { podsPerAnswer: number };
      assert.ok(drawn.length > 0 && drawn.length < podsPerAnswer, `${drawn.length} cells of big`);
      const column = new Map(drawn.map((c) => [c.pod, c.column]));
      assert.deepEqual([...column.keys()].sort(), Array.from({ length: drawn.length }, (_, i) => `big-${i}`).sort(), 'the first seats');
      assert.deepEqual(['big-0', 'big-1', 'big-2'].map((n) => column.get(n)), ['zone-a', 'zone-b', 'zone-c']);
      assert.equal(await p.$$eval('main .pod', (all) => all.length) <= podsPerAnswer, true);
      const text = await p.innerText('section[data-workload="default/StatefulSet/big"]');
      assert.ok(text.includes(`${2500 - drawn.length} more pods not drawn`), text.slice(0, 300));
      assert.ok(text.includes('2500 of 2500 replicas'));
      assert.equal((await cells(p, 'default/StatefulSet/db')).length, 6, 'the other workloads keep their cells');
    });
  });

  it('lists at-risk workloads first, each with its health line: a StatefulSet placed 3/0/0 before zonekeeper says why', async () => {
    const sts = (name: string) => ({ apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name, namespace: 'risk', uid: `sts-${name}` }, spec: { replicas: 3 } });
    const stsPod = (sts: string, i: number, zone: string) => ({
      apiVersion: 'v1', kind: 'Pod',
      metadata: { name: `${sts}-${i}`, namespace: 'risk', uid: `${sts}-${i}`, ownerReferences: [{ apiVersion: 'apps/v1', kind: 'StatefulSet', name: sts, uid: `sts-${sts}`, controller: true }] },
      spec: { nodeName: `node-${zone}-1` }, status: { phase: 'Running' },
    });
    const objects = [...demoObjects(), sts('aaa'), sts('zzz'), ...[0, 1, 2].map((i) => stsPod('aaa', i, 'abc'[i]!)), ...[0, 1, 2].map((i) => stsPod('zzz', i, 'a'))];
    await onSnapshot(objects, async (p) => {
      await p.goto(`${p.url()}?namespace=risk`);
      await p.waitForSelector('section[data-workload="risk/StatefulSet/aaa"] .health');
      const order = await p.$$eval('section.workload', (all) => all.map((s) => [s.getAttribute('data-workload'), s.querySelector('.health')?.getAttribute('data-health')]));
      assert.deepEqual(order, [['risk/StatefulSet/zzz', 'at-risk'], ['risk/StatefulSet/aaa', 'healthy']]);
      const line = await p.innerText('section[data-workload="risk/StatefulSet/zzz"] .health');
      assert.match(line, /^at risk · 1 of 3 zones hold pods \(zone-b, zone-c empty\); at 2 replicas it would keep 1 of 2 zones; 2 pods off pin/);
      assert.match(line, /placed-before 2/);
      mkdirSync(ARTIFACTS, { recursive: true });
      await p.screenshot({ path: join(ARTIFACTS, 'layout-page-health.png'), fullPage: true });
    });
  });

  it('draws hostile values as text: markup in an annotation never becomes an element', async () => {
    const hostile = '<img src=x onerror="document.body.dataset.pwned=1">';
    const objects = demoObjects().map((o) => (o.kind === 'StatefulSet' && o.metadata.name === 'db'
      ? { ...o, metadata: { ...o.metadata, annotations: { 'zonekeeper.io/zones': `zone-a,zone-b,zone-c,${hostile}`, 'zonekeeper.io/zone-preferences': `{"${hostile}": 1` } } } : o));
    await onSnapshot(objects, async (p, admin) => {
      await p.waitForSelector('section[data-workload="default/StatefulSet/db"] .pod');
      const text = await p.innerText('section[data-workload="default/StatefulSet/db"]');
      assert.ok(text.includes(hostile), 'the zone name shows as the text it is');
      assert.equal(await p.$$eval('main img', (imgs) => imgs.length), 0);
      assert.equal(await p.getAttribute('body', 'data-pwned'), null);
      const csp = (await fetch(`${admin}/ui`)).headers.get('content-security-policy');
      assert.match(csp!, /script-src 'self'/);
    });
  });
});
