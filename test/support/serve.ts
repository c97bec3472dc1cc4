// `zonekeeper serve` as a child process on free ports, for the tests that need a real one.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const CLI = new URL('../../dist/cli.js', import.meta.url).pathname;

/**
 * Starts `zonekeeper serve` (of `cli`: another install's) on free ports and reads the URLs from
 * its log: resolves on its "serving" line, fails if it exits first.
 */
export async function startServe(
  args: string[], nodeFlags: string[] = [], cli = CLI, env: Record<string, string> = {},
): Promise<{ child: ChildProcess; extender: string; admin: string; logs: string[] }> {
  const child = spawn(process.execPath, [...nodeFlags, cli, 'serve', '--listen', '127.0.0.1:0', '--admin-listen', '127.0.0.1:0', ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, KUBECONFIG: '/nonexistent', HOME: mkdtempSync(join(tmpdir(), 'zk-home-')), ...env } });
  const logs: string[] = [];
  return new Promise((resolve, reject) => {
    let buffered = '';
    child.stdout!.on('data', (c) => {
      buffered += c;
      const lines = buffered.split('\n');
      buffered = lines.pop()!;
      for (const line of lines) {
        logs.push(line);
        // Node's own lines (--trace-gc and the like) are kept, not parsed.
        let l: { msg?: string; extender?: string; admin?: string };
        try {
          l = JSON.parse(line);
        } catch {
          continue;
        }
        if (l.msg === 'zonekeeper serving') {
          resolve({ child, extender: l.extender!, admin: l.admin!, logs });
        }
      }
    });
    child.stderr!.on('data', (c) => logs.push(String(c)));
    child.on('exit', (code) => reject(new Error(`exited ${code}: ${logs.join('\n')}`)));
  });
}
