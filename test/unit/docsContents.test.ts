// The long docs open with a table of contents: it lists every section, in order, with links
// that reach them. A section added without its entry fails here.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';

const slug = (heading: string) => heading.trim().toLowerCase().replace(/[^\p{L}\p{N} _-]/gu, '').replace(/ /g, '-');

/** The headings of `levels` outside code blocks, as `depth title`. */
function headings(text: string, levels: number[]): string[] {
  let code = false;
  return text.split('\n').flatMap((line) => {
    if (line.startsWith('```')) code = !code;
    const m = code ? null : /^(#{2,6}) (.+)$/.exec(line);
    return m && levels.includes(m[1]!.length) ? [`${m[1]!.length} ${m[2]}`] : [];
  });
}

/** The entries of the "**Contents**" list, as `depth title`, each link checked against its title. */
function contents(text: string): string[] {
  const block = text.split('**Contents**\n\n')[1]?.split('\n\n')[0] ?? '';
  return block.split('\n').filter(Boolean).map((line) => {
    const m = /^( *)- \[(.+)\]\(#([^)]+)\)$/.exec(line);
    assert.ok(m, `not a contents entry: ${line}`);
    assert.equal(m[3], slug(m[2]!), `the link of ${m[2]}`);
    return `${m[1]!.length / 2 + 2} ${m[2]}`;
  });
}

describe('tables of contents', () => {
  for (const [file, levels] of [['docs/operations.md', [2, 3]], ['docs/design.md', [2]], ['docs/user-guide.md', [2]]] as const) {
    it(`${file} lists every section of depth ${levels.join(' and ')} in order`, () => {
      const text = readFileSync(new URL(`../../${file}`, import.meta.url), 'utf8');
      const entries = contents(text);
      assert.ok(entries.length >= 6, `${entries.length} entries`);
      assert.deepEqual(entries, headings(text, [...levels]));
    });
  }
});
