import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { createLogger, prettyLine } from '../../src/common/logger.js';

function sink(isTTY: boolean) {
  const lines: string[] = [];
  return { lines, isTTY, write: (l: string) => lines.push(l) };
}

describe('logs', () => {
  it('are JSON lines when stdout is not a terminal', () => {
    const out = sink(false);
    createLogger('info', out).warn({ pod: 'default/a', zones: ['a', 'b'] }, 'froze zone list');
    const rec = JSON.parse(out.lines[0]!);
    assert.equal(rec.msg, 'froze zone list');
    assert.equal(rec.level, 40);
    assert.deepEqual(rec.zones, ['a', 'b']);
  });

  it('are one readable line per record at a terminal, with every field of the JSON record', () => {
    const out = sink(true);
    const log = createLogger('info', out);
    log.info({ pod: 'default/a', n: 3, text: 'two words', nested: { x: 1 } }, 'hello');
    log.debug('not at info');
    assert.equal(out.lines.length, 1);
    assert.match(out.lines[0]!, /^\d\d:\d\d:\d\d\.\d{3} \u001b\[32mINFO \u001b\[0m hello pod=default\/a n=3 text="two words" nested=\{"x":1\}\n$/);
    const json = sink(false);
    createLogger('info', json).info({ pod: 'default/a', n: 3, text: 'two words', nested: { x: 1 } }, 'hello');
    for (const [k, v] of Object.entries(JSON.parse(json.lines[0]!))) {
      if (!['level', 'time', 'msg', 'app'].includes(k)) assert.ok(out.lines[0]!.includes(`${k}=`), `${k}=${JSON.stringify(v)}`);
    }
  });

  it('leaves a line that is not JSON as it is', () => {
    assert.equal(prettyLine('plain text\n', false), 'plain text\n');
    assert.equal(prettyLine('{"level":50,"time":"2026-11-21T12:00:01.234Z","msg":"boom"}', false), '12:00:01.234 ERROR boom\n');
  });

  it('are on stdout when the call returns: a write of its own and process.exit right after reorder nothing ("stopped" came before "shutting down")', () => {
    const script = `import { writeSync } from 'node:fs';
      import { createLogger } from ${JSON.stringify(new URL('../../src/common/logger.ts', import.meta.url).href)};
      const log = createLogger('info');
      for (let i = 0; i < 5; i++) {
        log.info('record ' + i);
        writeSync(1, 'between ' + i + '\\n');
      }
      log.info('stopped');
      process.exit(0);`;
    const out = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8' });
    assert.equal(out.status, 0, out.stderr);
    assert.deepEqual(out.stdout.trim().split('\n').map((l) => (l.startsWith('{') ? JSON.parse(l).msg : l)), [0, 1, 2, 3, 4].flatMap((i) => [`record ${i}`, `between ${i}`]).concat('stopped'));
  });
});
