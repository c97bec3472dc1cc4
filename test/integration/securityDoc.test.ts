// docs/security.md#rbac lists every grant the chart renders (all modes on), with why each is
// needed: a grant added or removed without its line there fails here.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { findHelm, renderChart } from '../support/helm.js';

type Obj = Record<string, any>;
const found = findHelm();
const skip = 'skip' in found ? found.skip : false;
/** Every mode switched on, in the two shapes the chart takes: beside kube-scheduler, and managed. */
const MODES = [
  ['workloadSpread.standalone=true', 'picker.enabled=true', 'monitoring.enabled=true', 'deletionCosts.enabled=true'],
  ['scheduler.enabled=false', 'admission.enabled=true', 'policy.enabled=true', 'zoneDisruption.enabled=true'],
];

/** One line per rule of a Role or ClusterRole, and per binding: `kind name | what | verbs or subjects`. */
function grants(objects: Obj[]): Set<string> {
  const out = new Set<string>();
  for (const o of objects) {
    if (o.kind === 'ClusterRole' || o.kind === 'Role') {
      for (const r of o.rules) {
        const what = r.nonResourceURLs ? r.nonResourceURLs.join(', ')
          : `${r.apiGroups.map((g: string) => g || 'core').join(', ')}: ${r.resources.join(', ')}${r.resourceNames ? ` (${r.resourceNames.join(', ')})` : ''}`;
        out.add(`${o.kind} ${o.metadata.name} | ${what} | ${r.verbs.join(', ')}`);
      }
    }
    if (o.kind === 'ClusterRoleBinding' || o.kind === 'RoleBinding') {
      out.add(`${o.kind} ${o.metadata.name} | ${o.roleRef.kind} ${o.roleRef.name} | ${o.subjects.map((s: Obj) => s.name).join(', ')}`);
    }
  }
  return out;
}

/** The table rows of docs/security.md's RBAC section, their first three cells. */
function documented(): Set<string> {
  const doc = readFileSync(new URL('../../docs/security.md', import.meta.url), 'utf8');
  const section = doc.slice(doc.indexOf('\n## RBAC'), doc.indexOf('\n## ', doc.indexOf('\n## RBAC') + 1) >>> 0);
  return new Set(section.split('\n').filter((l) => /^\| (Cluster)?Role(Binding)? /.test(l))
    .map((l) => l.split('|').slice(1, 4).map((c) => c.trim().replace(/`/g, '')).join(' | ')));
}

describe('docs/security.md lists the RBAC the chart renders', { skip }, () => {
  it('every grant of every mode, and nothing else', () => {
    const helm = 'helm' in found ? found.helm : '';
    const rendered = new Set<string>();
    for (const values of MODES) {
      const objects = parseAllDocuments(renderChart(helm, values, 'zonekeeper-system', 'zonekeeper', '1.36.0')).map((d) => d.toJS() as Obj).filter(Boolean);
      for (const g of grants(objects)) rendered.add(g);
    }
    const listed = documented();
    assert.deepEqual([...rendered].filter((g) => !listed.has(g)), [], 'rendered, not in docs/security.md#rbac');
    assert.deepEqual([...listed].filter((g) => !rendered.has(g)), [], 'in docs/security.md#rbac, not rendered');
  });
});
