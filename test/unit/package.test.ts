import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';

const read = (file: string) => JSON.parse(readFileSync(new URL(`../../${file}`, import.meta.url), 'utf8'));

describe('package.json', () => {
  it('allowScripts names every locked package with an install script, so npm ci warns about none', () => {
    const lock = read('package-lock.json');
    const allowed = read('package.json').allowScripts ?? {};
    const withScripts = Object.entries(lock.packages as Record<string, { hasInstallScript?: boolean }>)
      .filter(([, p]) => p.hasInstallScript).map(([path]) => path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length));
    assert.ok(withScripts.length > 0, 'the lockfile marks install scripts (esbuild has one)');
    for (const name of withScripts) assert.equal(allowed[name], true, `${name} runs an install script: review it and list it in allowScripts`);
  });
});
