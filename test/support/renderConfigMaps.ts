// npm run manifests: writes manifests/base/20-configmaps.yaml from the files in config/ (and the
// configuration table of docs/reference.md from config/zonekeeper.yaml), and copies into the Helm
// chart's files/ what it ships verbatim (CHART_FILE_SOURCES), and the schema of the chart's `config`
// value into values.schema.json; tests keep them equal.
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { CHART_FILE_SOURCES, chartConfigSchema } from './chartFiles.js';
import { withConfigTable } from './configTable.js';

const root = new URL('../../', import.meta.url);
const indent = (path: string) => readFileSync(new URL(path, root), 'utf8').split('\n').map((l) => (l.trim() ? `    ${l}` : l)).join('\n');
const configMap = (name: string, key: string, path: string) => `apiVersion: v1
kind: ConfigMap
metadata:
  name: ${name}
  namespace: zonekeeper-system
data:
  ${key}: |
${indent(path)}`;

writeFileSync(new URL('manifests/base/20-configmaps.yaml', root), `# Generated from config/zonekeeper.yaml and config/scheduler-config.yaml by npm run manifests; a test keeps them equal.
${configMap('zonekeeper-config', 'zonekeeper.yaml', 'config/zonekeeper.yaml')}---
${configMap('zonekeeper-scheduler-config', 'scheduler-config.yaml', 'config/scheduler-config.yaml')}`);

const reference = new URL('docs/reference.md', root);
writeFileSync(reference, withConfigTable(readFileSync(reference, 'utf8'), readFileSync(new URL('config/zonekeeper.yaml', root), 'utf8')));

for (const [file, source] of Object.entries(CHART_FILE_SOURCES)) copyFileSync(new URL(source, root), new URL(`charts/zonekeeper/files/${file}`, root));

const valuesSchema = new URL('charts/zonekeeper/values.schema.json', root);
const values = JSON.parse(readFileSync(valuesSchema, 'utf8'));
values.properties.config = chartConfigSchema();
writeFileSync(valuesSchema, `${JSON.stringify(values, null, 2)}\n`);
