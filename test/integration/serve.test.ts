import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import net from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fixture } from '../support/app.js';
import { CLI, startServe as start } from '../support/serve.js';
import { waitFor } from '../support/wait.js';

const JSON_TYPE = { 'content-type': 'application/json' };
const DEMO = new URL('../../config/demo-cluster.yaml', import.meta.url).pathname;

describe('zonekeeper serve on real ports', () => {
  let server: Awaited<ReturnType<typeof start>>;
  before(async () => { server = await start([]); });
  after(() => { server.child.kill('SIGKILL'); });

  it('serves the demo cluster when no kubeconfig is found, and says so; the serving line names the page', () => {
    assert.ok(server.logs.some((l) => l.includes('serving the bundled demo cluster')));
    const serving = JSON.parse(server.logs.find((l) => l.includes('"msg":"zonekeeper serving"'))!);
    assert.equal(serving.page, `${server.admin}/ui`);
  });

  it("records the demo's Events to its log: queue's LayoutAtRisk, with why", async () => {
    const atRisk = () => server.logs.map((l) => (l.startsWith('{') ? JSON.parse(l) : {})).find((l) => l.reason === 'LayoutAtRisk');
    await waitFor(() => atRisk() !== undefined, 'a LayoutAtRisk record in the log');
    const record = atRisk();
    assert.equal(record.workload, 'default/StatefulSet/queue');
    assert.equal(record.type, 'Warning');
    assert.match(record.msg, /^layout at risk: 1 of 3 zones hold pods \(zone-b, zone-c empty\); 1 pod off pin \(placed-before 1\)/);
  });

  it("shifts the demo's times to its start: queue-2 has waited 10 minutes, as the file means", async () => {
    const layouts: any = await (await fetch(`${server.admin}/debug/layouts`)).json();
    const pod = layouts.workloads.flatMap((w: any) => w.pods).find((p: any) => p.name === 'queue-2');
    const waited = Date.parse(layouts.generatedAt) - Date.parse(pod.pendingSince);
    // Written 10 minutes before the file's instant; the server started moments before this answer.
    assert.ok(waited >= 10 * 60_000 && waited < 11 * 60_000, `queue-2 pending for ${waited} ms`);
  });

  it('GET /debug is an index of the debug views, each with a path that answers', async () => {
    const res = await fetch(`${server.admin}/debug`);
    assert.equal(res.status, 200);
    const index: any = await res.json();
    assert.equal(index.page, '/ui');
    assert.ok(index.debug.length >= 9);
    for (const view of index.debug) {
      assert.ok(view.example.startsWith(view.path.split(/[?[A-Z]/)[0]), `${view.example} is an instance of ${view.path}`);
      assert.equal((await fetch(`${server.admin}${view.example}`)).status, 200, view.example);
    }
    assert.equal((await fetch(`${server.admin}/debug/`)).url, `${server.admin}/debug`);
  });

  it('answers the captured kube-scheduler requests over HTTP', async () => {
    const f = fixture('filter-nodenames-statefulset-pod.json');
    const res = await fetch(`${server.extender}/filter`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(f.body) });
    assert.equal(res.status, 200);
    const body: any = await res.json();
    assert.equal(body.Error, '');
    // db-0 is pinned to zone-a, where its data-db-0 volume is too; the fixture offers only zone-c nodes.
    assert.deepEqual(body.NodeNames, []);
    assert.equal(body.FailedAndUnresolvableNodes['node-c-1'], 'pinned to zone-a');
    const p = await fetch(`${server.extender}/prioritize`, { method: 'POST', headers: JSON_TYPE, body: JSON.stringify(fixture('prioritize-fullnodes-deployment-pod.json').body) });
    // Of the 6 nodes sent, the demo's WorkloadSpread prefers node-b-1; a 0 is not sent.
    assert.deepEqual(await p.json(), [{ Host: 'node-b-1', Score: 10 }]);
  });

  it('keeps serving after malformed requests', async () => {
    const bad = await fetch(`${server.extender}/filter`, { method: 'POST', headers: JSON_TYPE, body: '{"Pod":' });
    assert.equal(bad.status, 400);
    const ready = await fetch(`${server.admin}/readyz`);
    assert.equal(ready.status, 200);
    const metrics = await (await fetch(`${server.admin}/metrics`)).text();
    assert.match(metrics, /zonekeeper_bad_requests_total\{verb="filter",status="400"\} 1/);
    assert.match(metrics, /process_resident_memory_bytes/);
  });
});

describe('zonekeeper serve lifecycle', () => {
  it('shuts down gracefully on SIGTERM', async () => {
    const s = await start(['--snapshot', DEMO]);
    assert.ok(!s.logs.some((l) => l.includes('bundled demo')), '--snapshot is not the demo');
    const exited = new Promise<number | null>((r) => s.child.on('exit', (code) => r(code)));
    s.child.kill('SIGTERM');
    assert.equal(await exited, 0);
    assert.ok(s.logs.some((l) => l.includes('"msg":"stopped"')));
  });

  it('D8: a slow client on each listener: SIGTERM drops both at the grace\'s end and exits 0 (one deadline for all: listen.test.ts, on fake time)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'zk-grace-'));
    writeFileSync(join(dir, 'zk.yaml'), 'shutdownGraceSeconds: 2\n');
    const s = await start(['--snapshot', DEMO, '--config', join(dir, 'zk.yaml')]);
    // Each client declares a body it never finishes sending: a request in flight once the
    // server has read its head, which its "100 Continue" says.
    const sockets = await Promise.all([s.extender, s.admin].map(async (url) => {
      const { port } = new URL(url);
      const sock = net.connect(Number(port), '127.0.0.1');
      sock.on('error', () => {});
      const closed = new Promise((resolve) => sock.on('close', resolve));
      sock.write('POST /filter HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nExpect: 100-continue\r\nContent-Length: 1000\r\n\r\n');
      const [head] = await once(sock, 'data');
      assert.match(String(head), /^HTTP\/1\.1 100 Continue/);
      sock.write('{"Pod":');
      return { sock, closed };
    }));
    const exited = once(s.child, 'exit');
    s.child.kill('SIGTERM');
    await Promise.all(sockets.map((c) => c.closed));
    assert.deepEqual(await exited, [0, null]);
    const order = ['shutting down', '"msg":"stopped"'].map((m) => s.logs.findIndex((l) => l.includes(m)));
    assert.ok(order[0]! >= 0 && order[1]! > order[0]!, 'said it was shutting down, then stopped');
  });

  it('a port asked for and in use: one line naming the listener and the flag and key that move it, for each listener; exit 2', async () => {
    const taken = net.createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const at = `127.0.0.1:${(taken.address() as net.AddressInfo).port}`;
    try {
      for (const [flag, name, key] of [['--listen', 'extender', 'extender.listen'], ['--admin-listen', 'admin', 'admin.listen']]) {
        const r = spawnSync(process.execPath, [CLI, 'serve', '--demo', '--listen', '127.0.0.1:0', '--admin-listen', '127.0.0.1:0', flag!, at], { encoding: 'utf8' });
        assert.equal(r.status, 2);
        assert.equal(r.stderr, `zonekeeper: the ${name} listener cannot listen on ${at}: the port is in use (another process, or another zonekeeper, listens there); `
        + `choose another with ${flag} HOST:PORT (${key})\n`);
        assert.doesNotMatch(r.stdout, /EADDRINUSE|could not start/);
      }
    } finally {
      taken.close();
    }
  });

  it('an out-of-range port is a flag error naming the flag, and a config error naming the key', () => {
    const flag = spawnSync(process.execPath, [CLI, 'serve', '--demo', '--listen', '127.0.0.1:99999'], { encoding: 'utf8' });
    assert.equal(flag.status, 2);
    assert.equal(flag.stderr, "zonekeeper: --listen 127.0.0.1:99999: port 99999 is out of range: 0 to 65535 (0: any free port) (see 'zonekeeper serve --help')\n");
    const dir = mkdtempSync(join(tmpdir(), 'zk-port-'));
    writeFileSync(join(dir, 'zk.yaml'), 'admin:\n  probeListen: 0.0.0.0:70000\n');
    const config = spawnSync(process.execPath, [CLI, 'serve', '--demo', '--config', join(dir, 'zk.yaml')], { encoding: 'utf8' });
    assert.equal(config.status, 2);
    assert.match(config.stderr, /admin\.probeListen: port 70000 is out of range: 0 to 65535 \(0: any free port\), or "" for none\n$/);
  });

  it('refuses half a TLS configuration, naming the missing key', () => {
    const dir = mkdtempSync(join(tmpdir(), 'zk-tls-'));
    writeFileSync(join(dir, 'tls.yaml'), 'extender:\n  tls:\n    certFile: /etc/cert.pem\n');
    const r = spawnSync(process.execPath, [CLI, 'serve', '--config', join(dir, 'tls.yaml')], { encoding: 'utf8' });
    assert.equal(r.status, 2);
    assert.match(r.stderr, /extender\.tls\.keyFile: required with certFile/);
  });

  it('a YAML error in --snapshot shows the line and the caret under its column, as one in --config does', () => {
    const dir = mkdtempSync(join(tmpdir(), 'zk-yaml-'));
    const bad = 'kind: List\nitems:\n  - kind: Node\n     metadata: {name: a}\n';
    writeFileSync(join(dir, 'snapshot.yaml'), bad);
    writeFileSync(join(dir, 'zonekeeper.yaml'), bad);
    const snapshot = spawnSync(process.execPath, [CLI, 'serve', '--snapshot', join(dir, 'snapshot.yaml')], { encoding: 'utf8' });
    const config = spawnSync(process.execPath, [CLI, 'serve', '--config', join(dir, 'zonekeeper.yaml')], { encoding: 'utf8' });
    assert.deepEqual([snapshot.status, config.status], [2, 2]);
    const excerpt = /: not valid YAML: Nested mappings are not allowed in compact mappings at line 3, column 11:\n {2} {2}- kind: Node\n {2} {10}\^\n$/;
    assert.match(snapshot.stderr, excerpt);
    assert.match(config.stderr, excerpt);
  });

  it('refuses a config with an unknown key, naming it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'zk-cfg-'));
    writeFileSync(join(dir, 'bad.yaml'), 'placement:\n  zoneFallback: strict\n  pinEverything: true\n');
    const r = spawnSync(process.execPath, [CLI, 'serve', '--config', join(dir, 'bad.yaml')], { encoding: 'utf8' });
    assert.equal(r.status, 2);
    assert.match(r.stderr, /placement\.pinEverything: unknown key/);
  });

  it('--help describes every flag', () => {
    const r = spawnSync(process.execPath, [CLI, 'serve', '--help'], { encoding: 'utf8' });
    assert.equal(r.status, 0);
    for (const f of ['--config', '--kubeconfig', '--snapshot', '--demo', '--listen', '--admin-listen', '--admission-listen', '--admission-secret', '--admission-webhook', '--admission-dns-name']) {
      assert.ok(r.stdout.includes(f), f);
    }
  });

  it('the --admission-* flags reach admission.certificate: a webhook without a certificate is refused; a kept one needs an API server', () => {
    const none = spawnSync(process.execPath, [CLI, 'serve', '--demo', '--admission-listen', '127.0.0.1:0'], { encoding: 'utf8' });
    assert.equal(none.status, 2);
    assert.match(none.stderr, /admission\.listen needs admission\.tls\.certFile and keyFile, or admission\.certificate\.secret/);
    const kept = spawnSync(process.execPath, [CLI, 'serve', '--demo', '--admission-listen', '127.0.0.1:0', '--admission-secret', 'zk/tls', '--admission-dns-name', 'a.zk.svc',
      '--admission-dns-name', 'b.zk.svc', '--admission-webhook', 'zonekeeper'], { encoding: 'utf8' });
    assert.equal(kept.status, 1);
    assert.match(kept.stdout + kept.stderr, /admission\.certificate needs an API server to keep its Secret in/);
    const unnamed = spawnSync(process.execPath, [CLI, 'serve', '--demo', '--admission-listen', '127.0.0.1:0', '--admission-secret', 'zk/tls'], { encoding: 'utf8' });
    assert.match(unnamed.stderr, /a managed certificate names the webhook/);
  });

  it('rejects unknown flags and commands in one line that points to the help', () => {
    const flag = spawnSync(process.execPath, [CLI, 'serve', '--bogus'], { encoding: 'utf8' });
    assert.equal(flag.status, 2);
    assert.match(flag.stderr, /^zonekeeper: Unknown option '--bogus'.* \(see 'zonekeeper serve --help'\)\n$/);
    const command = spawnSync(process.execPath, [CLI, 'dance'], { encoding: 'utf8' });
    assert.equal(command.status, 2);
    assert.equal(command.stderr, "zonekeeper: unknown command dance (see 'zonekeeper --help')\n");
  });

  it('zonekeeper karmada has its own help; its flag errors point there', () => {
    const help = spawnSync(process.execPath, [CLI, 'karmada', '--help'], { encoding: 'utf8' });
    assert.equal(help.status, 0);
    assert.match(help.stdout, /^zonekeeper karmada: the scheduler of the Karmada ResourceBindings/);
    assert.match(help.stdout, /manifests\/karmada\/member-rbac\.yaml/);
    assert.doesNotMatch(help.stdout, /--snapshot/, 'not serve\'s flags');
    const bad = spawnSync(process.execPath, [CLI, 'karmada', '--listen', 'x'], { encoding: 'utf8' });
    assert.equal(bad.status, 2);
    assert.match(bad.stderr, /\(see 'zonekeeper karmada --help'\)\n$/);
  });

  it("--version and version print the package's version", () => {
    const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
    for (const arg of ['--version', 'version']) {
      const r = spawnSync(process.execPath, [CLI, arg], { encoding: 'utf8' });
      assert.deepEqual([r.status, r.stdout], [0, `zonekeeper ${version}\n`]);
    }
  });

  it('serve without flags follows $KUBECONFIG, as kubectl does, and says before any write which cluster and what it writes there', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'zk-follow-'));
    const kubeconfig = join(dir, 'config');
    writeFileSync(kubeconfig, 'apiVersion: v1\nkind: Config\ncurrent-context: prod\nclusters: [{name: prod, cluster: {server: "https://127.0.0.1:1"}}]\nusers: [{name: me, user: {token: t}}]\ncontexts: [{name: prod, context: {cluster: prod, user: me}}]\n');
    const child = spawn(process.execPath, [CLI, 'serve', '--listen', '127.0.0.1:0', '--admin-listen', '127.0.0.1:0'], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, KUBECONFIG: kubeconfig, HOME: dir } });
    try {
      let out = '';
      const first = await new Promise<string>((resolve, reject) => {
        child.stdout.on('data', (c) => {
          out += c;
          if (out.includes('\n')) resolve(JSON.parse(out.split('\n')[0]!).msg);
        });
        child.once('exit', (code) => reject(new Error(`exited ${code}: ${out}`)));
      });
      assert.equal(first, `watching the cluster https://127.0.0.1:1 ($KUBECONFIG ${kubeconfig}); writing there the Lease default/zonekeeper-writers, then, as its holder, `
      + 'Events and zonekeeper.io annotations on the workloads and pods it places (docs/operations.md#what-serve-writes); a read-only look: zonekeeper audit');
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('npm start is the demo, even with a kubeconfig that names a cluster', async () => {
    const script: string = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).scripts.start;
    // exec: the shell npm runs it in gives way to node, so npm's signals reach the server (test/integration/npmStart.test.ts).
    const [exec, node, ...rest] = script.split(' ');
    const at = rest.indexOf('dist/cli.js');
    assert.deepEqual([exec, node], ['exec', 'node']);
    assert.equal(rest[at + 1], 'serve');
    const dir = mkdtempSync(join(tmpdir(), 'zk-start-'));
    const kubeconfig = join(dir, 'config');
    writeFileSync(kubeconfig, 'apiVersion: v1\nkind: Config\ncurrent-context: prod\nclusters: [{name: prod, cluster: {server: "https://127.0.0.1:1"}}]\nusers: [{name: me, user: {token: t}}]\ncontexts: [{name: prod, context: {cluster: prod, user: me}}]\n');
    const s = await start(rest.slice(at + 2), rest.slice(0, at), CLI, { KUBECONFIG: kubeconfig });
    try {
      assert.ok(s.logs.some((l) => l.includes('serving the bundled demo cluster')));
      assert.equal((await fetch(`${s.admin}/debug/workloads/default/statefulset/db`)).status, 200);
    } finally {
      s.child.kill('SIGKILL');
    }
  });
});
