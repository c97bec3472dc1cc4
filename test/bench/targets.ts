// Every target the bench checks, gathered from the cases that ran and printed as one table.
import { fmt } from './measure.js';

interface Target { what: string; value: number; unit: string; limit: number; atMost: boolean }

const targets: Target[] = [];

/** `value` against `limit`: met when at most it (`atMost`) or at least it. */
export function target(what: string, value: number, limit: number, atMost: boolean, unit = ''): boolean {
  targets.push({ what, value, unit, limit, atMost });
  return atMost ? value <= limit : value >= limit;
}

export function printTargets(): void {
  if (targets.length === 0) return;
  const width = Math.max(...targets.map((t) => t.what.length));
  console.log(`\ntargets (one run; machines are noisy)\n${'target'.padEnd(width)}  ${'measured'.padStart(10)}  ${'wanted'.padStart(12)}  result`);
  for (const t of targets) {
    const met = t.atMost ? t.value <= t.limit : t.value >= t.limit;
    const digits = Math.abs(t.limit) >= 100 ? 0 : 2;
    console.log(`${t.what.padEnd(width)}  ${`${fmt(t.value, digits)}${t.unit}`.padStart(10)}  ${`${t.atMost ? '<=' : '>='} ${fmt(t.limit, digits)}${t.unit}`.padStart(12)}  ${met ? 'met' : 'NOT MET'}`);
  }
}
