// The floor of a cold sync, in a process of its own: page every list the server holds at
// limit 500 (all kinds at once, each kind's pages in turn, as zonekeeper's reflectors do) and
// JSON.parse each page, keeping nothing. Run by largeCluster.ts: node listFloor.ts <base> <path>...
// Prints the objects read and its CPU seconds.
const [base, ...paths] = process.argv.slice(2) as [string, ...string[]];
const PAGE = 500;

async function pages(path: string): Promise<number> {
  let items = 0;
  let cont = '';
  do {
    const res = await fetch(new URL(`${path}?limit=${PAGE}${cont ? `&continue=${encodeURIComponent(cont)}` : ''}`, base));
    const list = JSON.parse(await res.text()) as { items: unknown[]; metadata: { continue?: string } };
    items += list.items.length;
    cont = list.metadata.continue ?? '';
  } while (cont);
  return items;
}

const counts = await Promise.all(paths.map(pages));
const cpu = process.cpuUsage();
// Objects read, then this process's CPU seconds (user + system).
process.stdout.write(`${counts.reduce((a, b) => a + b, 0)} ${(cpu.user + cpu.system) / 1e6}\n`);
