import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { withConfigTable } from '../support/configTable.js';
import { memorySource } from '../../src/cluster/source.js';
import { ClusterStore } from '../../src/cluster/store.js';
import { createMetrics, registerHealthGauges, registerStateGauges } from '../../src/metrics/metrics.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const pages = ['README.md', ...readdirSync(join(root, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];

/** GitHub's anchor of a heading: a link's text only, lower case, punctuation dropped (not `_` or `-`), spaces to hyphens. */
const slug = (heading: string) => heading.trim().replace(/\[([^\]]*)\]\([^)]*\)/g, '$1').toLowerCase().replace(/[^\p{L}\p{N} _-]/gu, '').replace(/ /g, '-');

/** The anchors of a page's headings; a repeated one gets -1, -2… as on GitHub. */
function anchorsOf(file: string): Set<string> {
  const text = readFileSync(join(root, file), 'utf8').replace(/```[\s\S]*?```/g, '');
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const [, heading] of text.matchAll(/^#{1,6} (.+)$/gm)) {
    const s = slug(heading!);
    const n = seen.get(s) ?? 0;
    seen.set(s, n + 1);
    anchors.add(n === 0 ? s : `${s}-${n}`);
  }
  return anchors;
}

/** Every file under `dir` (relative to the root), fixtures and artifacts left out. */
function filesUnder(dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((e) => {
    const path = `${dir}/${e.name}`;
    if (e.isDirectory()) return ['test/fixtures', 'test/artifacts'].includes(path) ? [] : filesUnder(path);
    return /\.(ts|js|cjs|md|html|css|yaml)$/.test(e.name) ? [path] : [];
  });
}

/** A project path in inline code: the path, then a `:line` (or `:first-last`) or a `#heading` it may name. */
const PROJECT_PATH = /(?<![\w./-])(?:\.\/)?((?:src|test|manifests|chart|config)\/[^\s`'",;:#)]*)(?::(\d+)(?:-\d+)?)?(?:#([\p{L}\p{N}_-]+))?/gu;

/** Folders .gitignore keeps out of the repository: what a run writes there is named by the test that writes it. */
const written = readFileSync(join(root, '.gitignore'), 'utf8').split('\n').filter((l) => l.includes('/') && l.endsWith('/'));

/** What is wrong with a project path named in the docs, or undefined when it is there. */
function pathProblem(path: string, line: string | undefined, anchor: string | undefined): string | undefined {
  // A placeholder (`<name>`) or a glob stands for files of a folder: the folder is there.
  const at = path.search(/[<*]/);
  const file = at < 0 ? path : path.slice(0, path.lastIndexOf('/', at) + 1);
  if (written.some((dir) => file.startsWith(dir))) {
    const name = file.slice(file.lastIndexOf('/') + 1);
    return filesUnder('test').some((f) => readFileSync(join(root, f), 'utf8').includes(`'${name}'`)) ? undefined : 'no test writes it';
  }
  if (!existsSync(join(root, file))) return 'no file';
  if (line && readFileSync(join(root, file), 'utf8').split('\n').length < Number(line)) return `no line ${line}`;
  if (anchor && file.endsWith('.md') && !anchorsOf(file).has(anchor)) return 'no heading';
  return undefined;
}

/** Every project path in a page's inline code (fenced blocks hold commands and files a user makes), with what is wrong with each. */
function projectPaths(text: string): { path: string; problem: string | undefined }[] {
  const inline = [...text.replace(/```[\s\S]*?```/g, '').matchAll(/`([^`\n]+)`/g)].map((m) => m[1]!);
  return inline.flatMap((code) => [...code.matchAll(PROJECT_PATH)].map(([named, path, line, anchor]) => ({ path: named.replace(/^\.\//, ''), problem: pathProblem(path!, line, anchor) })));
}

describe('README and docs/', () => {
  it('the configuration table in docs/reference.md is config/zonekeeper.yaml, key for key (npm run manifests)', () => {
    const reference = readFileSync(join(root, 'docs/reference.md'), 'utf8');
    assert.equal(reference, withConfigTable(reference, readFileSync(join(root, 'config/zonekeeper.yaml'), 'utf8')));
    assert.match(reference, /\| `instanceIds\.keepPods` \| `true` \|/);
  });

  it('every metric zonekeeper exports has its row in the metrics table of docs/operations.md, and every row is one it exports', async () => {
    const metrics = createMetrics({ defaults: false });
    registerStateGauges(metrics, memorySource(new ClusterStore(), 'test'), () => 0);
    registerHealthGauges(metrics, () => [], 1000);
    const exported = (await metrics.registry.getMetricsAsJSON()).map((m) => m.name).sort();
    const operations = readFileSync(join(root, 'docs/operations.md'), 'utf8');
    const table = operations.split('\n## Metrics\n')[1]!.split('\n## ')[0]!;
    const rows = [...table.matchAll(/^\| `(zonekeeper_[a-z_]+)` \|/gm)].map((m) => m[1]!).sort();
    assert.ok(exported.length >= 25, `${exported.length} exported`);
    assert.deepEqual(rows, exported);
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

  it('every project path in inline code is there: a file (its line, its heading), a folder, or what a test writes', () => {
    const named = pages.flatMap((page) => projectPaths(readFileSync(join(root, page), 'utf8')).map((p) => ({ page, ...p })));
    assert.deepEqual(named.filter((p) => p.problem).map((p) => `${p.page}: ${p.path} (${p.problem})`), []);
    assert.ok(named.length > 100, `${named.length} paths checked`);
  });

  it('the path check finds what is not there', () => {
    const found = projectPaths('`src/cluster/nowhere.ts`, `npm run x test/unit/docs.test.ts:100000`, `docs/design.md`, `src/placement/policies/<name>/`, `test/artifacts/nobody-writes.png`, ```\nsrc/in-a-block.ts\n```');
    assert.deepEqual(found, [
      { path: 'src/cluster/nowhere.ts', problem: 'no file' },
      { path: 'test/unit/docs.test.ts:100000', problem: 'no line 100000' },
      { path: 'src/placement/policies/<name>/', problem: undefined },
      { path: 'test/artifacts/nobody-writes.png', problem: 'no test writes it' },
    ]);
  });
});

describe('citations of a page and a heading in the code and the docs', () => {
  it('the anchors follow GitHub\'s rules', () => {
    assert.equal(slug('One decision, three transports'), 'one-decision-three-transports');
    assert.equal(slug('The `zonekeeper.io/zone` gate: [admission](#admission)'), 'the-zonekeeperiozone-gate-admission');
    assert.equal(slug('per_key backoff'), 'per_key-backoff');
  });

  it('every citation of a page and its heading in src/, test/, docs/, README.md and the lint configs names a page of this repository and one of its headings', () => {
    const citing = [...filesUnder('src'), ...filesUnder('test'), ...filesUnder('docs'), 'README.md', 'CHANGELOG.md', 'eslint.config.js', '.dependency-cruiser.cjs'];
    const broken: string[] = [];
    let checked = 0;
    for (const file of citing) {
      const text = readFileSync(join(root, file), 'utf8');
      for (const m of text.matchAll(/([\w./-]*\.md)#([\p{L}\p{N}_-]+)/gu)) {
        const [, page, anchor] = m;
        // Relative to the citing file, to the root, or a page of docs/ named alone.
        const target = [join(dirname(file), page!), page!, join('docs', page!)].find((p) => existsSync(join(root, p)));
        const at = `${file}:${text.slice(0, m.index).split('\n').length}`;
        checked++;
        if (!target) broken.push(`${at}: ${page}#${anchor} (no such page here)`);
        else if (!anchorsOf(target).has(anchor!)) broken.push(`${at}: ${page}#${anchor} (no such heading in ${target})`);
      }
    }
    assert.deepEqual(broken, []);
    assert.ok(checked > 50, `${checked} citations checked`);
  });

  it('nothing cites a page that is not in this repository', () => {
    const citing = [...filesUnder('src'), ...filesUnder('test'), ...filesUnder('docs'), 'README.md', 'CHANGELOG.md'];
    const outside = citing.filter((f) => /\bDIRECTION\.md\b/.test(readFileSync(join(root, f), 'utf8')) && f !== 'test/unit/docs.test.ts');
    assert.deepEqual(outside, []);
  });
});
