// `npm start` as the quick start runs it: no tsc when dist/ is current (scripts/dist-current.js
// reads mtimes), and stopping npm by its PID stops the server it started (exec: npm's signal
// reaches node itself, no shell left between them).
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import net from 'node:net';
import { mkdirSync, mkdtempSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';

const ROOT = new URL('../../', import.meta.url).pathname;
const CHECK = join(ROOT, 'scripts/dist-current.js');
const check = (root: string) => spawnSync(process.execPath, [CHECK, root], { encoding: 'utf8' });

/** A checkout's shape in a temporary folder: src/a.ts, tsconfig.json, package.json, dist/cli.js, each at its own time (seconds). */
function checkout(times: { src: number; dist?: number }): string {
  const root = mkdtempSync(join(tmpdir(), 'zk-start-'));
  mkdirSync(join(root, 'src/server/ui'), { recursive: true });
  for (const f of ['src/a.ts', 'src/server/ui/layout.js', 'tsconfig.json', 'package.json']) {
    writeFileSync(join(root, f), '{}');
    utimesSync(join(root, f), 1000, f.startsWith('src/server') ? times.src : 1000);
  }
  if (times.dist !== undefined) {
    mkdirSync(join(root, 'dist'));
    writeFileSync(join(root, 'dist/cli.js'), '');
    utimesSync(join(root, 'dist/cli.js'), times.dist, times.dist);
  }
  return root;
}

describe('npm start', () => {
  it('builds only when dist/ is missing or older than a file under src/', () => {
    assert.equal(check(checkout({ src: 2000, dist: 3000 })).status, 0, 'dist/ current: no build');
    const stale = check(checkout({ src: 3000, dist: 2000 }));
    assert.equal(stale.status, 1);
    assert.equal(stale.stderr, 'src/ changed after dist/ was built: building\n');
    assert.equal(check(checkout({ src: 2000 })).stderr, 'dist/ is not built: building\n');
  });

  it('with dist/ current, serves without compiling, and stopping npm by its PID stops the server', async () => {
    const current = check(ROOT);
    assert.equal(current.status, 0, `dist/ must be current for this test (npm run build): ${current.stderr}`);
    const npm = spawn('npm', ['start', '--', '--listen', '127.0.0.1:0', '--admin-listen', '127.0.0.1:0'], {
      cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, KUBECONFIG: '/nonexistent' },
    });
    let out = '';
    npm.stderr.on('data', (c) => (out += c));
    const admin = await new Promise<string>((resolve, reject) => {
      npm.stdout.on('data', (c) => {
        out += c;
        const serving = /"admin":"(http:\/\/[^"]+)".*"msg":"zonekeeper serving"/.exec(out);
        if (serving) resolve(serving[1]!);
      });
      npm.once('exit', (code) => reject(new Error(`npm start exited ${code}: ${out}`)));
    });
    assert.doesNotMatch(out, /tsc|building/, 'no build when dist/ is current');
    assert.equal((await fetch(`${admin}/healthz`)).status, 200);
    const exited = new Promise<number | null>((resolve) => npm.once('exit', (code) => resolve(code)));
    npm.kill('SIGTERM');
    await exited;
    // A server left behind holds these pipes: let go of them, so that the failure is reported, not waited on.
    npm.stdout.destroy();
    npm.stderr.destroy();
    await assert.rejects(fetch(`${admin}/healthz`), 'the server stopped with npm');
  });

  it('with 8888 and 9090 taken (Jupyter, Prometheus), still serves the page, on free ports it names', async () => {
    // Held here, or already held by another process: taken either way.
    const held = await Promise.all([8888, 9090].map((port) => new Promise<net.Server | undefined>((resolve) => {
      const s = net.createServer();
      s.once('error', () => resolve(undefined));
      s.listen(port, '127.0.0.1', () => resolve(s));
    })));
    const npm = spawn('npm', ['start'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, KUBECONFIG: '/nonexistent' } });
    const exited = new Promise((resolve) => npm.once('exit', resolve));
    let out = '';
    npm.stderr.on('data', (c) => (out += c));
    try {
      const page = await new Promise<string>((resolve, reject) => {
        npm.stdout.on('data', (c) => {
          out += c;
          const line = /"msg":"the layout page: (http:\/\/[^"]+)"/.exec(out);
          if (line) resolve(line[1]!);
        });
        npm.once('exit', (code) => reject(new Error(`npm start exited ${code}: ${out}`)));
      });
      assert.match(out, /"msg":"127\.0\.0\.1:8888 is in use: the extender listener took http:\/\/127\.0\.0\.1:\d+ instead \(choose one with --listen HOST:PORT\)"/);
      assert.match(out, /"msg":"127\.0\.0\.1:9090 is in use: the admin listener took http:\/\/127\.0\.0\.1:\d+ instead \(choose one with --admin-listen HOST:PORT\)"/);
      assert.doesNotMatch(page, /:9090\//);
      assert.match(await (await fetch(page)).text(), /<title>/);
    } finally {
      npm.kill('SIGTERM');
      await exited;
      for (const s of held) s?.close();
    }
  });

  it('a port asked for and taken: one line naming `npm start -- --listen`, and exit 2', async () => {
    const taken = net.createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const at = `127.0.0.1:${(taken.address() as net.AddressInfo).port}`;
    try {
      const r = spawnSync('npm', ['start', '--', '--listen', at, '--admin-listen', '127.0.0.1:0'], { cwd: ROOT, encoding: 'utf8', env: { ...process.env, KUBECONFIG: '/nonexistent' } });
      assert.equal(r.status, 2);
      assert.match(r.stderr, new RegExp(`^zonekeeper: the extender listener cannot listen on ${at}: the port is in use .*; choose another with npm start -- --listen HOST:PORT \\(extender\\.listen\\)$`, 'm'));
    } finally {
      taken.close();
    }
  });

  it('serves the demo cluster whatever kubeconfig there is, as the script, the demo file and README all say', () => {
    const read = (f: string) => readFileSync(join(ROOT, f), 'utf8');
    assert.match(JSON.parse(read('package.json')).scripts.start, /^exec node .*dist\/cli\.js serve --demo$/);
    assert.match(read('config/demo-cluster.yaml').split('\n')[0]!, /what `npm start` \(`zonekeeper serve --demo`\) always serves,$/);
    assert.match(read('README.md'), /`npm start` always serves the \*\*bundled demo cluster\*\*/);
  });
});
