import type { Explained } from '../decision/views.js';

// /debug/explain for a browser (an Accept header that names text/html): the same answer as
// the JSON, as a page. Every value from the cluster is escaped: names and reasons are data
// someone else wrote; the page carries no script.

const escape = (s: unknown) => String(s).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** Whether an Accept header asks for HTML before JSON: a browser's does, curl's `*\/*` does not. */
export function wantsHtml(accept: string | undefined): boolean {
  let html = 0;
  let json = 0;
  for (const part of (accept ?? '').split(',')) {
    const [type, ...params] = part.trim().toLowerCase().split(';');
    const q = Number(params.map((p) => p.trim()).find((p) => p.startsWith('q='))?.slice(2) ?? '1');
    if (!Number.isFinite(q)) continue;
    if (type === 'text/html') html = Math.max(html, q);
    if (type === 'application/json') json = Math.max(json, q);
  }
  return html > 0 && html >= json;
}

const row = (cells: unknown[], tag = 'td') => `<tr>${cells.map((c) => `<${tag}>${escape(c)}</${tag}>`).join('')}</tr>`;

/** The explanation as a page: the pod against its seat and what would fix it first, then the dry-run filter's decision. */
export function explainPage(e: Explained & { note: string; transport?: Record<string, unknown> }, url: string): string {
  const story = e.explanation.slice(0, e.explanation.length - e.fixes.length);
  const fixes = e.fixes.length === 0 ? '' : `<h2>What would fix it</h2><ol class="fixes">${e.fixes.map((f) => (
    `<li data-fix="${escape(f.by)}"><p>${escape(f.what)}:</p><pre><code>${escape(f.command)}</code></pre></li>`)).join('')}</ol>`;
  const rejected = e.rejected.length === 0 ? '<p>No node rejected.</p>' : `<table class="rejected">${row(['rule', 'reason', 'nodes', 'first of them'], 'th')}${
    e.rejected.map((r) => row([r.rule, r.reason, r.count, r.sample.join(', ')])).join('')}</table>`;
  const zones = e.zones ? `<p>Zone list <code>${escape(e.zones.list.join(','))}</code>${e.zones.unusable.length ? `; no node fits the pods in ${escape(e.zones.unusable.join(', '))}` : ''}${
    e.zones.excluded.length ? `; left out (no node there fits the pods): ${escape(e.zones.excluded.join(', '))}` : ''}.</p>` : '';
  const transport = e.transport ? `<p>Decided by ${escape(e.transport.decidedBy)}; ${escape(e.transport.why)}.</p>` : '';
  return `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>${escape(e.pod)} · zonekeeper explain</title>
  <link rel="stylesheet" href="/ui/layout.css">
</head>
<body class="explain">
  <header><h1>zonekeeper <span class="muted">explain</span> ${escape(e.pod)}</h1><a href="/ui">layout page</a></header>
  <main>
    <section class="workload" id="story" data-cause="${escape(e.offSeat?.cause ?? '')}">
      ${story.map((s) => `<p>${escape(s)}</p>`).join('\n      ')}
      ${fixes}
    </section>
    <section class="workload" id="decision">
      <h2>The dry-run filter</h2>
      <p><strong>${escape(e.outcome)}</strong> by <code>${escape(e.policy)}</code>${e.workload ? ` for ${escape(e.workload)}` : ''}: ${escape(e.summary)}</p>
      <p>${escape(e.passed.count)} of ${escape(e.nodes)} nodes pass${e.passed.sample.length ? `: ${escape(e.passed.sample.join(', '))}` : ''}.</p>
      ${rejected}
      ${zones}
      ${transport}
      <p class="muted">${escape(e.note)}. As JSON: <code>curl -s '${escape(url)}' | jq</code></p>
    </section>
  </main>
</body>
</html>
`;
}
