// The chart's `config` value is checked by Helm against values.schema.json; that schema is
// zonekeeper's own (src/common/config.ts) as JSON Schema, committed by npm run manifests.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { parseConfig } from '../../src/common/config.js';
import { chartConfigSchema } from '../support/chartFiles.js';

const committed = JSON.parse(readFileSync(new URL('../../charts/zonekeeper/values.schema.json', import.meta.url), 'utf8'));

describe("the chart's config schema", () => {
  it('is the one generated from the configuration schema (npm run manifests writes it)', () => {
    assert.deepEqual(committed.properties.config, chartConfigSchema());
  });

  it('refuses unknown keys at every level, as serve --config does', () => {
    const open: string[] = [];
    const walk = (s: Record<string, any>, path: string) => {
      if (s.type !== 'object') return;
      if (s.additionalProperties !== false) open.push(path);
      for (const [k, v] of Object.entries(s.properties ?? {})) walk(v as Record<string, any>, `${path}.${k}`);
    };
    walk(committed.properties.config, 'config');
    assert.deepEqual(open, []);
    assert.deepEqual(Object.keys(committed.properties.config.properties).sort(), Object.keys(parseConfig({})).sort(), 'every option of the file');
  });
});
