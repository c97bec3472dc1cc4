// What Linux says about a local process (/proc), for the measurements of tests, bench and e2e.
import { readFileSync } from 'node:fs';

/** Resident and peak resident memory, bytes (VmRSS, VmHWM); throws when the process is gone. */
export function processMemory(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (key: string) => Number(new RegExp(`${key}:\\s+(\\d+) kB`).exec(status)?.[1] ?? 0) * 1024;
  return { rss: kb('VmRSS'), peak: kb('VmHWM') };
}

/** CPU seconds (user + system) a process has used, in clock ticks of 10 ms: measure over seconds. */
export function processCpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}
