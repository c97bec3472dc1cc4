/**
 * `names` cut in runs of `run`, the runs in a shuffled order (seeded: the same every time): how
 * kube-scheduler's filter workers return nodes, each taking chunks of its node list and
 * appending the nodes that pass as it finishes.
 */
export function runsShuffled(names: readonly string[], run: number, seed: number): string[] {
  const runs: string[][] = [];
  for (let i = 0; i < names.length; i += run) runs.push(names.slice(i, i + run));
  let a = seed;
  for (let i = runs.length - 1; i > 0; i--) {
    a = (Math.imul(a, 1103515245) + 12345) >>> 0;
    const j = a % (i + 1);
    [runs[i], runs[j]] = [runs[j]!, runs[i]!];
  }
  return runs.flat();
}
