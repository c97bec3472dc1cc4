import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { withConfigTable } from '../support/configTable.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const pages = ['README.md', ...readdirSync(join(root, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens. */
const slug = (heading: string) => heading.trim().toLowerCase().replace(/[^\p{L}\p{N} _-]/gu, '').replace(/ /g, '-');

function anchorsOf(file: string): Set<string> {
  const text = readFileSync(join(root, file), 'utf8').replace(/```[\s\S]*?```/g, '');
  return new Set([...text.matchAll(/^#{1,6} (.+)$/gm)].map((m) => slug(m[1]!)));
}

describe('README and docs/', () => {
  it('the configuration table in docs/reference.md is config/zonekeeper.yaml, key for key (npm run manifests)', () => {
    const reference = readFileSync(join(root, 'docs/reference.md'), 'utf8');
    assert.equal(reference, withConfigTable(reference, readFileSync(join(root, 'config/zonekeeper.yaml'), 'utf8')));
    assert.match(reference, /\| `instanceIds\.keepPods` \| `true` \|/);
  });

  it('README is a front door: at most 10 KB', () => {
    assert.ok(readFileSync(join(root, 'README.md')).length <= 10 * 1024);
  });

  it('every relative link resolves, to a file and to a heading', () => {
    const broken: string[] = [];
    for (const page of pages) {
      const text = readFileSync(join(root, page), 'utf8').replace(/```[\s\S]*?```/g, '');
      for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/.test(target!)) continue;
        const [path, anchor] = target!.split('#');
        const file = path ? join(dirname(page), path) : page;
        if (!existsSync(join(root, file))) broken.push(`${page}: ${target} (no file)`);
        else if (anchor && file.endsWith('.md') && !anchorsOf(file).has(anchor)) broken.push(`${page}: ${target} (no heading)`);
      }
    }
    assert.deepEqual(broken, []);
  });
});
