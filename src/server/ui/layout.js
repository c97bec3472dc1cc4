// zonekeeper's layout page: polls /debug/layouts and draws each managed workload with zones as
// columns and pods as cells. Every value from the cluster goes into the DOM as text, never as
// markup: pod names, annotations and reasons are data someone else wrote.
'use strict';

const POLL_MS = 3000;
const TOKEN_KEY = 'zonekeeper-token';
const UNPLACED = '';

const page = {
  token: sessionStorage.getItem(TOKEN_KEY) || '',
  namespace: new URLSearchParams(location.search).get('namespace') || '',
  timer: 0,
  podsPerAnswer: 0,
  generatedAt: 0,
  /** A file's answers: the instant it was read, which ages are measured at, and that nothing binds its pods. */
  asOf: 0,
  nothingBinds: false,
};

/** How long ago `iso` was, by the server's clock (the answer's generatedAt): 45s, 12m, 3h, 2d. */
function age(iso) {
  const s = Math.max(0, Math.round(((page.asOf || page.generatedAt) - Date.parse(iso)) / 1000));
  if (s < 120) return `${s}s`;
  if (s < 7200) return `${Math.round(s / 60)}m`;
  if (s < 172800) return `${Math.round(s / 3600)}h`;
  return `${Math.round(s / 86400)}d`;
}

/** An element with attributes and children; strings become text nodes. */
function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') e.className = v;
    else e.setAttribute(k, String(v));
  }
  for (const c of children.flat()) if (c !== undefined && c !== null && c !== false) e.append(c instanceof Node ? c : String(c));
  return e;
}

const badge = (kind, text, title) => el('span', { class: `badge ${kind}`, title }, text);

/** The subset a pending pod of a WorkloadSpread is going to, when it has none yet. */
const expectedSubset = (p, w) => (!p.node && !p.subset && w.workloadSpread && w.workloadSpread.pending ? w.workloadSpread.pending[p.name] : undefined);

/** The column a pod is drawn in: where it is, else where it is going (reservation, volume, pin, subset). */
function columnOf(p, w) {
  if (p.zone !== undefined) return p.zone;
  if (p.reservedZone) return p.reservedZone;
  if (p.volumeWins && p.volumeZones && p.volumeZones.length === 1) return p.volumeZones[0];
  if (p.pinnedZone !== undefined) return p.pinnedZone;
  const subset = p.subset || expectedSubset(p, w);
  const zone = subset && w && w.workloadSpread && w.workloadSpread.subsetZones ? w.workloadSpread.subsetZones[subset] : undefined;
  if (zone !== undefined) return zone;
  return UNPLACED;
}

function seatOf(p, w) {
  if (p.instanceId !== undefined) return p.instanceId >= 0 ? `id ${p.instanceId}` : 'no id yet';
  if (p.index !== undefined && p.index >= 0) return `#${p.index + (w.ordinals ? w.ordinals.start : 0)}`;
  return '';
}

/** Why a pod is off its seat, in words (the cause health counts it by, design.md#health). */
const CAUSES = {
  volume: ['its volume holds it here', 'its bound volume is in this zone: the volume wins over the pin, and data does not move'],
  fallback: ['adaptive fallback', 'placement.zoneFallback: adaptive let it fall through here when its seat\'s zone had no room'],
  'placed-before': ['placed before zonekeeper', 'scheduled before zonekeeper froze the zone list, so no pin held it'],
  unknown: ['cause unknown', 'zonekeeper did not place it here: another scheduler, or its node\'s zone label changed'],
};

function offSeat(p) {
  const [short, long] = CAUSES[p.offPinCause] || CAUSES.unknown;
  return el('div', { class: 'cause', 'data-cause': p.offPinCause, title: `${long}; its explanation says what would fix it` },
    `off its seat (${p.pinnedZone}): ${short}`);
}

function cell(p, w, conflicted) {
  const pending = !p.node;
  const badges = [];
  if (p.volumeWins) {
    badges.push(badge('volume', 'volume', `its volume is in ${(p.volumeZones || []).join(', ')}: it overrides the pin to ${p.pinnedZone}`));
  }
  if (p.subset) badges.push(badge('subset', /subset/i.test(p.subset) ? p.subset : `subset ${p.subset}`, 'the WorkloadSpread subset that holds it'));
  const next = expectedSubset(p, w);
  if (next) badges.push(badge('subset', `→ ${/subset/i.test(next) ? next : `subset ${next}`}`, 'the subset it goes to: the first in order with room'));
  if (conflicted) badges.push(badge('conflict', 'conflict', 'a filter found its pin and its volume disagree'));
  if (p.reservedZone) badges.push(badge('reserved', `reserved ${p.reservedZone}`, 'filtered into this zone; the binding is not in the cache yet'));
  const nothingBinds = page.nothingBinds ? '; nothing binds pods in a file (the demo, a --snapshot): no kube-scheduler runs here, and the age is as of reading it' : '';
  if (pending) badges.push(badge('pending', p.pendingSince ? `pending ${age(p.pendingSince)}` : 'pending', p.pendingSince ? `created ${p.pendingSince}, not bound since${nothingBinds}` : undefined));
  const details = [];
  if (p.pinnedZone !== undefined) details.push(`pin ${p.pinnedZone}`);
  details.push(pending ? 'not bound' : `on ${p.node}`);
  if (p.transport === 'policy') details.push('zone written by the policy');
  const explain = `/debug/explain?pod=${encodeURIComponent(`${w.workload.namespace}/${p.name}`)}`;
  if (p.deletionCost && p.deletionCost.desired !== undefined) details.push(`cost ${p.deletionCost.desired}`);
  const classes = ['pod', pending ? 'pending' : 'bound', p.inPinnedZone === false ? 'off-pin' : ''].filter(Boolean).join(' ');
  return el('div', {
    class: classes, 'data-pod': p.name, 'data-zone': columnOf(p, w), 'data-state': pending ? 'pending' : 'bound', 'data-decided': p.decidedBy,
  },
  el('div', {}, el('a', { class: 'name', href: explain, title: 'why it is (or would be) placed here: a dry-run filter against every node' }, p.name),
    el('span', { class: 'seat' }, seatOf(p, w))),
  el('div', { class: 'detail' }, details.join(' · ')),
  p.inPinnedZone === false ? offSeat(p) : null,
  badges.length ? el('div', {}, badges) : null);
}

function zoneColumn(zone, pods, w, conflicts) {
  const counts = w.countsPerZone[zone];
  // Zone targets are what pins and zone balance aim at; a WorkloadSpread's quotas are its subsets.
  const target = w.targets && w.policy !== 'workloadspread' ? w.targets[zone] : undefined;
  const summary = zone === UNPLACED ? `${pods.length}` : [
    counts ? `${counts.bound} bound` : '0 bound',
    counts && counts.reserved ? `${counts.reserved} reserved` : '',
    target !== undefined ? `target ${target}` : '',
  ].filter(Boolean).join(' · ');
  return el('div', { class: zone === UNPLACED ? 'zone unplaced' : 'zone', 'data-zone-column': zone },
    el('h3', {}, el('span', {}, zone === UNPLACED ? 'no zone yet' : zone), el('span', { class: 'muted' }, summary)),
    el('div', { class: 'cells' }, pods.map((p) => cell(p, w, conflicts.has(p.name)))));
}

/** One line: at risk or healthy, and why (zones held of wanted, scale-down, pods off pin). */
function healthLine(h) {
  if (!h) return null;
  const unit = h.domain === 'subset' ? 'subsets' : 'zones';
  return el('p', { class: `health ${h.atRisk ? 'at-risk' : 'healthy'}`, 'data-health': h.atRisk ? 'at-risk' : 'healthy' },
    el('strong', {}, h.atRisk ? 'at risk' : 'healthy'),
    ` · ${h.reason === 'ok' ? `${h.zones} of ${h.wanted} ${unit} hold pods` : h.reason} · skew ${h.skew}`);
}

function section(w) {
  const ref = w.workload;
  const conflicts = new Set((w.conflicts || []).map((c) => c.pod.split('/').pop()));
  // A WorkloadSpread's pods go only where a subset reaches: a zone no subset covers is no empty healthy column.
  const covered = w.workloadSpread && w.workloadSpread.subsetZoneLists ? new Set(Object.values(w.workloadSpread.subsetZoneLists).flat()) : undefined;
  const uncovered = covered ? w.zones.list.filter((z) => !covered.has(z)) : [];
  const byZone = new Map(w.zones.list.filter((z) => !uncovered.includes(z)).map((z) => [z, []]));
  for (const p of w.pods) {
    const z = columnOf(p, w);
    if (!byZone.has(z)) byZone.set(z, []);
    byZone.get(z).push(p);
  }
  if (byZone.has(UNPLACED)) {
    const unplaced = byZone.get(UNPLACED);
    byZone.delete(UNPLACED);
    byZone.set(UNPLACED, unplaced);
  }
  const meta = [
    el('span', {}, 'policy ', el('code', {}, w.policy)), ' · ',
    el('span', {}, `${w.pods.length + (w.podsOmitted || 0)} of ${ref.replicas} replicas`), ' · ',
    el('span', {}, 'zones ', el('code', {}, w.zones.list.join(',') || '(none)'), ` (${w.zones.source})`),
  ];
  const notes = [];
  if (w.ordinals && w.ordinals.reserved.length) notes.push(`reserved ordinals: ${w.ordinals.reserved.join(', ')}`);
  if (w.ordinals && w.ordinals.missing.length) notes.push(`ordinals without a pod yet: ${w.ordinals.missing.join(', ')}`);
  if (w.podsOmitted) notes.push(`${w.podsOmitted} more pods not drawn: the page draws ${page.podsPerAnswer} pods in all, the first seats of each workload; the zone counts include every pod, and /debug/workloads/${ref.namespace}/${ref.kind.toLowerCase()}/${ref.name} lists more`);
  if (uncovered.length) notes.push(`in no subset of the WorkloadSpread: ${uncovered.join(', ')} (not drawn; its pods never go there)`);
  if (w.zones.unusable && w.zones.unusable.length) notes.push(`no node fits the pods in ${w.zones.unusable.join(', ')}: pods pinned there wait`);
  if (w.zones.excluded && w.zones.excluded.length) notes.push(`not in the list: ${w.zones.excluded.join(', ')} (no node there fits the pods' node selector, affinity and tolerations)`);
  if (w.reservations.length) notes.push(`${w.reservations.length} reservation(s) waiting for their binding`);
  if (w.preferences.error) notes.push(`zone preferences ignored: ${w.preferences.error}`);
  for (const c of w.conflicts || []) notes.push(`conflict: ${c.reason}`);
  const subsets = w.workloadSpread ? el('table', { class: 'subsets' },
    el('caption', {}, `WorkloadSpread ${w.workloadSpread.name} (${w.workloadSpread.strategy})`),
    el('tr', {}, el('th', {}, 'subset'), el('th', {}, 'zones'), el('th', {}, 'max'), el('th', {}, 'bound'), el('th', {}, 'reserved')),
    w.workloadSpread.subsets.map((s) => el('tr', { 'data-subset': s.name },
      el('td', {}, s.name), el('td', {}, ((w.workloadSpread.subsetZoneLists || {})[s.name] || []).join(', ') || 'none'),
      el('td', {}, s.max === null ? 'unlimited' : s.max), el('td', {}, s.bound), el('td', {}, s.reserved)))) : null;
  return el('section', { class: 'workload', 'data-workload': `${ref.namespace}/${ref.kind}/${ref.name}` },
    el('h2', {}, `${ref.kind} `, el('span', {}, `${ref.namespace}/${ref.name}`)),
    healthLine(w.health),
    el('p', { class: 'meta' }, meta),
    el('div', { class: 'zones' }, [...byZone].map(([zone, pods]) => zoneColumn(zone, pods, w, conflicts))),
    subsets,
    notes.length ? el('ul', { class: 'notes' }, notes.map((n) => el('li', {}, n))) : null);
}

function setStatus(text, error) {
  const s = document.getElementById('status');
  s.textContent = text;
  s.classList.toggle('error', !!error);
}

function render(data) {
  page.podsPerAnswer = data.podsPerAnswer;
  page.generatedAt = Date.parse(data.generatedAt);
  page.asOf = data.asOf ? Date.parse(data.asOf) : 0;
  page.nothingBinds = data.nothingBinds === true;
  const main = document.getElementById('workloads');
  const sections = data.workloads.map(section);
  if (sections.length === 0) sections.push(el('p', { class: 'empty' }, 'No managed workloads', page.namespace ? ` in namespace ${page.namespace}` : '', '.'));
  if (data.more > 0) sections.push(el('p', { class: 'empty' }, `${data.more} more workloads not shown: pick a namespace.`));
  main.replaceChildren(...sections);
  const synced = data.synced ? '' : ' · cache not synced yet';
  setStatus(`${data.workloads.length} workloads · ${data.source}${synced} · updated ${new Date(data.generatedAt).toLocaleTimeString()}`);
  document.body.dataset.updated = data.generatedAt;
}

async function refresh() {
  clearTimeout(page.timer);
  const query = page.namespace ? `?namespace=${encodeURIComponent(page.namespace)}` : '';
  try {
    const res = await fetch(`/debug/layouts${query}`, { headers: page.token ? { authorization: `Bearer ${page.token}` } : {}, cache: 'no-store' });
    const body = await res.json().catch(() => ({}));
    if (res.status === 401 || res.status === 403) {
      document.getElementById('login').hidden = false;
      setStatus(`${res.status}: ${body.message || 'not authorized'}`, true);
    } else if (!res.ok) {
      setStatus(`${res.status}: ${body.message || 'error'}`, true);
    } else {
      document.getElementById('login').hidden = true;
      render(body);
    }
  } catch (err) {
    setStatus(`cannot reach zonekeeper: ${err.message}`, true);
  }
  page.timer = setTimeout(refresh, POLL_MS);
}

document.addEventListener('DOMContentLoaded', () => {
  const ns = document.getElementById('namespace');
  ns.value = page.namespace;
  document.getElementById('filter').addEventListener('submit', (e) => {
    e.preventDefault();
    page.namespace = ns.value.trim();
    const url = new URL(location.href);
    if (page.namespace) url.searchParams.set('namespace', page.namespace);
    else url.searchParams.delete('namespace');
    history.replaceState(null, '', url);
    refresh();
  });
  document.getElementById('login').addEventListener('submit', (e) => {
    e.preventDefault();
    page.token = document.getElementById('token').value.trim();
    sessionStorage.setItem(TOKEN_KEY, page.token);
    refresh();
  });
  refresh();
});
