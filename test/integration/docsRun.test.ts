import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { CLI, startServe } from '../support/serve.js';

// Docs that run: every command of README.md and docs/user-guide.md that can run against the
// demo (`npm start`) or alone (`zonekeeper plan`) is run here, and the output the docs show is
// checked against what it prints.

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');
const DOCS = ['README.md', 'docs/user-guide.md'];

/** The lines of every ```sh block, continuation lines joined, indentation removed. */
function shellLines(text: string): string[] {
  const out: string[] = [];
  for (const block of text.matchAll(/^[ \t]*```sh\n([\s\S]*?)^[ \t]*```/gm)) {
    out.push(...block[1]!.replace(/\\\n\s*/g, '').split('\n').map((l) => l.trim()).filter(Boolean), '');
  }
  return out;
}

/** Words as a POSIX shell splits them, for the quoting the docs use ('…' and "…"). */
function words(line: string): string[] {
  return [...line.matchAll(/'([^']*)'|"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? m[2] ?? m[3]!);
}

/** A documented command and the lines the docs show it printing (up to the next command or a blank). */
function documented(prefix: RegExp): { doc: string; command: string; shown: string[] }[] {
  const out: { doc: string; command: string; shown: string[] }[] = [];
  for (const doc of DOCS) {
    const lines = shellLines(read(doc));
    lines.forEach((line, i) => {
      if (!prefix.test(line)) return;
      const shown: string[] = [];
      for (let j = i + 1; j < lines.length && lines[j] && !/^\$ |^curl |^#|^kubectl /.test(lines[j]!); j++) shown.push(lines[j]!);
      out.push({ doc, command: line.replace(/^\$ /, ''), shown });
    });
  }
  return out;
}

describe('the docs\' commands, run', () => {
  let demo: Awaited<ReturnType<typeof startServe>>;
  before(async () => { demo = await startServe(['--demo']); });
  after(() => { demo.child.kill('SIGKILL'); });

  it('every zonekeeper plan prints exactly what the docs show', () => {
    const plans = documented(/^\$ zonekeeper plan /);
    assert.ok(plans.length >= 3, `${plans.length} plan commands found`);
    for (const p of plans) {
      const r = spawnSync(process.execPath, [CLI, ...words(p.command).slice(1)], { encoding: 'utf8' });
      assert.equal(r.status, 0, `${p.doc}: ${p.command}: ${r.stderr}`);
      assert.equal(r.stdout.trimEnd(), p.shown.join('\n'), `${p.doc}: ${p.command}`);
    }
  });

  it('every audit of the bundled Karmada example prints exactly what the docs show, and exits 0', () => {
    const audits = documented(/^\$ node dist\/cli\.js audit --karmada --snapshot /);
    assert.ok(audits.length >= 1, `${audits.length} audit commands found`);
    for (const a of audits) {
      const r = spawnSync(process.execPath, [CLI, ...words(a.command).slice(2)], { encoding: 'utf8', cwd: new URL('../../', import.meta.url).pathname });
      assert.equal(r.status, 0, `${a.doc}: ${a.command}: ${r.stderr}`);
      assert.equal(r.stdout.trimEnd(), a.shown.join('\n'), `${a.doc}: ${a.command}`);
    }
  });

  // What each README comment promises, by the path it asks.
  const promised: Record<string, (body: any) => void> = {
    '/debug/workloads/default/statefulset/db': (b) => {
      assert.equal(b.zones.list.length, 3);
      assert.equal(b.sequence.length, 6);
      assert.ok(b.pods.filter((p: any) => p.node).every((p: any) => typeof p.zone === 'string'));
    },
    '/debug/explain?pod=default/db-4': (b) => {
      assert.match(b.summary, /^pinned: ordinal 4 → zone-b/);
      assert.ok(Object.values(b.failed).every((r) => (r as string).startsWith('zone-pin: pinned to zone-b') || (r as string).startsWith('node-spread')));
    },
    '/debug/explain?pod=default/db-5': (b) => assert.match(b.summary, /volume data-db-5 .*is in zone-a: volume wins over the pin/),
    '/debug/health': (b) => {
      assert.deepEqual([b.workloads[0].key, b.workloads[0].atRisk], ['default/StatefulSet/queue', true]);
      assert.match(b.workloads[0].reason, /^1 of 3 zones hold pods/);
    },
    '/debug/explain?pod=default/web-6c7d8bd9bc-t5v9w': (b) => assert.match(b.summary, /subset subset-b \(subset-a is full: 2\/2; subset-b/),
    '/debug': (b) => assert.ok(b.debug.some((v: any) => v.path === '/debug/explain?pod=NAMESPACE/NAME')),
  };

  it('every curl against the demo answers 200 with what the docs show or promise', async () => {
    const curls = documented(/^curl -s '?localhost:(8888|9090)/);
    assert.ok(curls.length >= 5, `${curls.length} curl commands found`);
    for (const c of curls) {
      const w = words(c.command);
      const url = new URL(`http://${w.find((x) => x.startsWith('localhost:'))!}`);
      const base = url.port === '8888' ? demo.extender : demo.admin;
      const headers: Record<string, string> = {};
      for (let i = 0; i < w.length; i++) if (w[i] === '-H') headers[w[i + 1]!.split(':')[0]!.toLowerCase()] = w[i + 1]!.split(':').slice(1).join(':').trim();
      const data = w[w.indexOf('-d') + 1];
      const res = await fetch(`${base}${url.pathname}${url.search}`, w.includes('-d') ? { method: 'POST', headers, body: data } : {});
      assert.equal(res.status, 200, `${c.doc}: ${c.command}`);
      const body = await res.json();
      const path = `${url.pathname}${url.search}`;
      if (c.shown.length > 0 && c.shown[0]!.startsWith('{')) assert.deepEqual(body, JSON.parse(c.shown[0]!), `${c.doc}: ${c.command}`);
      else if (c.doc === 'README.md') {
        assert.ok(promised[path], `README.md: ${path} has no checked promise here`);
        promised[path]!(body);
      }
    }
  });
});
