// The configuration table of docs/reference.md, made from config/zonekeeper.yaml (every key,
// its default and its comment), so the two cannot drift apart.

export const CONFIG_TABLE_MARK = '<!-- config table: generated from config/zonekeeper.yaml by npm run manifests -->';

export function configTable(yamlText: string): string {
  const rows = ['| key | default | meaning |', '|---|---|---|'];
  const path: string[] = [];
  for (const line of yamlText.split('\n')) {
    const m = /^( *)([A-Za-z][\w]*):(.*)$/.exec(line);
    if (!m) continue;
    const depth = m[1]!.length / 2;
    path.length = depth;
    path.push(m[2]!);
    const rest = m[3]!;
    const hash = rest.search(/ #|^#/);
    const value = (hash < 0 ? rest : rest.slice(0, hash)).trim();
    const comment = hash < 0 ? '' : rest.slice(hash).replace(/^ ?# ?/, '').trim();
    if (value === '') {
      if (comment) rows.push(`| \`${path.join('.')}\` | | ${comment} |`);
    } else rows.push(`| \`${path.join('.')}\` | \`${value}\` | ${comment} |`);
  }
  return rows.join('\n');
}

/** reference.md with its table made again. */
export function withConfigTable(reference: string, yamlText: string): string {
  const lines = reference.split('\n');
  const at = lines.indexOf(CONFIG_TABLE_MARK);
  if (at < 0) throw new Error(`docs/reference.md has no line ${CONFIG_TABLE_MARK}`);
  let end = at + 1;
  while (end < lines.length && lines[end]!.startsWith('|')) end++;
  lines.splice(at + 1, end - at - 1, configTable(yamlText));
  return lines.join('\n');
}
