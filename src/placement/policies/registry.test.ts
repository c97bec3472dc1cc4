import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { POLICIES } from './index.js';

describe('the policy registry', () => {
  it('is the precedence table of docs/design.md, in order', () => {
    const design = readFileSync(new URL('../../../docs/design.md', import.meta.url), 'utf8');
    const section = design.slice(design.indexOf('## Which policy places a pod'));
    const table = section.slice(0, section.indexOf('\n\n', section.indexOf('| policy |')));
    const documented = [...table.matchAll(/^\| `([a-z-]+)` \|/gm)].map((m) => m[1]).filter((n) => n !== 'none' && n !== 'wait');
    assert.deepEqual(documented, POLICIES.map((p) => p.name));
  });

  it('names each policy once', () => {
    assert.equal(new Set(POLICIES.map((p) => p.name)).size, POLICIES.length);
  });
});
