// The image's runtime stage, as the Dockerfile builds it: `npm ci --omit=dev` beside dist/ and
// config/, nothing else. The compiled program must run from that alone. The install is offline,
// from the cache the checkout's own `npm ci` filled: `npm test` reaches no registry.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fixture } from '../support/app.js';
import { startServe } from '../support/serve.js';

const root = new URL('../../', import.meta.url).pathname;

describe('the runtime stage of the image: production dependencies, dist/ and config/', () => {
  const dir = mkdtempSync(join(tmpdir(), 'zk-image-'));
  const cli = join(dir, 'dist/cli.js');

  before(() => {
    for (const f of ['package.json', 'package-lock.json', 'dist', 'config']) cpSync(join(root, f), join(dir, f), { recursive: true });
    const ci = spawnSync('npm', ['ci', '--omit=dev', '--offline', '--no-audit', '--no-fund'], { cwd: dir, encoding: 'utf8', env: { ...process.env, NODE_ENV: 'production' }, timeout: 300_000 });
    assert.equal(ci.status, 0, `npm ci --omit=dev --offline (from the cache the checkout's npm ci filled): ${ci.stderr}`);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('holds the runtime dependencies and none of the dev ones', () => {
    for (const dep of ['hono', '@hono/node-server', '@kubernetes/client-node', 'pino', 'prom-client', 'yaml', 'zod', 'lru-cache', 'node-forge']) {
      assert.ok(existsSync(join(dir, 'node_modules', dep)), dep);
    }
    for (const dev of ['typescript', 'tsx', 'esbuild', 'eslint', 'playwright-core']) assert.ok(!existsSync(join(dir, 'node_modules', dev)), dev);
  });

  it('serve --demo answers a captured kube-scheduler filter', async () => {
    const server = await startServe(['--demo'], [], cli);
    try {
      const res = await fetch(`${server.extender}/filter`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(fixture('filter-nodenames-statefulset-pod.json').body) });
      assert.equal(res.status, 200);
      assert.equal(((await res.json()) as { Error: string }).Error, '');
      assert.equal((await fetch(`${server.admin}/readyz`)).status, 200);
    } finally {
      server.child.kill('SIGKILL');
    }
  });

  it('zonekeeper audit --snapshot runs: the demo cluster has one workload at risk, queue (exit 1)', () => {
    const out = spawnSync(process.execPath, [cli, 'audit', '--snapshot', join(dir, 'config/demo-cluster.yaml'), '-o', 'json'], { encoding: 'utf8' });
    assert.equal(out.status, 1, out.stderr);
    const records = JSON.parse(out.stdout).workloads as { key: string; atRisk: boolean }[];
    assert.deepEqual(records.map((h) => [h.key, h.atRisk]), [['default/StatefulSet/queue', true], ['default/Deployment/web', false], ['default/StatefulSet/db', false]]);
  });

  it('zonekeeper plan runs', () => {
    const out = spawnSync(process.execPath, [cli, 'plan', '--replicas', '4', '--zones', 'a,b,c'], { encoding: 'utf8' });
    assert.equal(out.status, 0, out.stderr);
    assert.deepEqual(JSON.parse(out.stdout).zonekeeper, { a: 2, b: 1, c: 1 });
  });
});
