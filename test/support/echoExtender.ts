// The floor an extender cannot go below: a bare node:http process that parses the args and
// answers the names back (filter), or nothing (prioritize, `[]`: adds no score). Used by the
// bench beside zonekeeper, and by the e2e measurement as a kube-scheduler extender. Under
// /third/ the filter passes every third name: as many as a pod pinned to one of 3 zones gets,
// so that kube-scheduler decodes and carries as many names as with zonekeeper.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';

const ECHO = `
const http = require('node:http');
const s = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const args = JSON.parse(Buffer.concat(chunks).toString());
    const every = req.url.startsWith('/third/') ? 3 : 1;
    const body = req.url.endsWith('/prioritize')
      ? '[]'
      : JSON.stringify({ NodeNames: args.NodeNames.filter((_, i) => i % every === 0), FailedNodes: {}, FailedAndUnresolvableNodes: {}, Error: '' });
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(body);
  });
});
s.keepAliveTimeout = 60000;
s.listen(0, '127.0.0.1', () => console.log('http://127.0.0.1:' + s.address().port + '/'));`;

/** Starts the echo in its own process; `url` is its root. */
export async function startEchoExtender(): Promise<{ url: URL; child: ChildProcess }> {
  const child = spawn(process.execPath, ['-e', ECHO], { stdio: ['ignore', 'pipe', 'inherit'] });
  const url = new URL(String((await once(child.stdout!, 'data'))[0]).trim());
  return { url, child };
}
