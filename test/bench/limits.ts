// Part of npm run bench: what one request at the body limit costs the server, each case in
// a fresh server process (5,000 cached nodes) so that its peak RSS is its own.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import http from 'node:http';
import { parseConfig } from '../../src/common/config.js';
import { processMemory } from '../support/proc.js';
import { kubeletNode, nodeName, rawPod } from './cluster.js';

const LIMIT = parseConfig({}).extender.bodyLimitBytes;
const MiB = 2 ** 20;

function post(base: URL, body: Buffer): Promise<{ status: number; bytes: number }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: base.hostname, port: base.port, path: '/filter', method: 'POST', headers: { 'content-type': 'application/json', 'content-length': body.length } }, (res) => {
      let bytes = 0;
      res.on('data', (c: Buffer) => { bytes += c.length; });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, bytes }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const pod = (unmanaged: boolean) => {
  const p = rawPod(4, { kind: 'StatefulSet', name: 'db' });
  p.metadata.namespace = 'default';
  p.spec.volumes = [];
  if (unmanaged) p.metadata.ownerReferences = [];
  return p;
};

/** Builds `count` copies of `item` joined as a JSON array, as text: no giant object in this process. */
function repeated(prefix: string, item: (i: number) => string, count: number, suffix: string): Buffer {
  const parts: string[] = [prefix];
  for (let i = 0; i < count; i++) parts.push(i ? `,${item(i)}` : item(i));
  parts.push(suffix);
  return Buffer.from(parts.join(''));
}

export async function bodyLimitCases(): Promise<void> {
  const head = (unmanaged: boolean) => `{"Pod":${JSON.stringify(pod(unmanaged))},`;
  const cases: [string, () => Buffer][] = [
    ['full Nodes, 5,000 kubelet Nodes, unmanaged pod', () => repeated(`${head(true)}"NodeNames":null,"Nodes":{"items":[`, (i) => JSON.stringify(kubeletNode(i)), 5000, ']}}')],
    ['full Nodes, 5,000 kubelet Nodes, pinned pod', () => repeated(`${head(false)}"NodeNames":null,"Nodes":{"items":[`, (i) => JSON.stringify(kubeletNode(i)), 5000, ']}}')],
    ['NodeNames filling the limit (hostile)', () => repeated(`${head(false)}"Nodes":null,"NodeNames":[`, (i) => `"n-${i}"`, Math.floor((LIMIT - 4096) / 13), ']}')],
    ['tiny Nodes filling the limit (hostile)', () => repeated(`${head(false)}"NodeNames":null,"Nodes":{"items":[`, (i) => `{"metadata":{"name":"n-${i}"}}`, Math.floor((LIMIT - 4096) / 34), ']}}')],
    ['5,000 names of cached nodes, pinned pod', () => Buffer.from(`${head(false)}"Nodes":null,"NodeNames":${JSON.stringify(Array.from({ length: 5000 }, (_, i) => nodeName(i)))}}`)],
  ];
  console.log(`\nbody limit ${LIMIT / MiB} MiB (default); each case in a fresh server with 5,000 cached nodes`);
  console.log('case                                               body MiB  status  answer KiB   seconds  peak RSS MiB  RSS 3 s later MiB');
  const wrong: string[] = [];
  for (const [label, build] of cases) {
    const body = build();
    const child = spawn(process.execPath, ['--import', 'tsx', new URL('./server.ts', import.meta.url).pathname, '5000'], { stdio: ['ignore', 'pipe', 'inherit'] });
    const [line] = (await once(child.stdout!, 'data')) as [Buffer];
    const base = new URL(String(line).trim());
    const started = Date.now();
    const r = await post(base, body);
    const seconds = (Date.now() - started) / 1000;
    const peak = processMemory(child.pid!).peak;
    await new Promise((res) => setTimeout(res, 3000));
    const after = processMemory(child.pid!).rss;
    console.log(`${label.padEnd(50)} ${(body.length / MiB).toFixed(1).padStart(9)} ${String(r.status).padStart(7)} ${(r.bytes / 1024).toFixed(0).padStart(11)} ${seconds.toFixed(2).padStart(9)} ${(peak / MiB).toFixed(0).padStart(13)} ${(after / MiB).toFixed(0).padStart(18)}`);
    // A hostile body is refused with a 4xx naming why; a 500 means a check threw instead.
    if (label.includes('hostile') ? r.status !== 400 && r.status !== 413 : r.status !== 200) wrong.push(`${label}: ${r.status}`);
    child.kill();
    await once(child, 'exit');
  }
  console.log(`statuses: ${wrong.length === 0 ? 'as expected (200, hostile 400/413)' : `NOT AS EXPECTED: ${wrong.join('; ')}`}`);
}
