/**
 * Cycle detection for spec.dependsOn: a set that waits, through its dependencies, for itself would
 * wait forever, so the reconcile reports the cycle instead (DependencyCycle). Pure graph search.
 */

/**
 * The shortest cycle through `start`, as the keys in order from `start` back to it
 * (`[a, b, a]`; `[a, a]` for an ApplySet naming itself), or undefined when there is none. Breadth
 * first over `dependsOn`, in the order each lists its dependencies, so the answer is the same on every
 * run. Cycles that do not pass through `start` are not its own: its dependency reports them.
 */
export function findDependencyCycle(
  start: string,
  dependsOn: (key: string) => readonly string[],
): string[] | undefined {
  const cameFrom = new Map<string, string>();
  const queue: string[] = [start];
  for (let next = 0; next < queue.length; next += 1) {
    const key = queue[next] as string;
    for (const dependency of dependsOn(key)) {
      if (dependency === start) return [...pathTo(key, start, cameFrom), start];
      if (cameFrom.has(dependency)) continue;
      cameFrom.set(dependency, key);
      queue.push(dependency);
    }
  }
  return undefined;
}

/** The path from `start` to `key` that the search took. */
function pathTo(key: string, start: string, cameFrom: ReadonlyMap<string, string>): string[] {
  const path = [key];
  for (let at = key; at !== start; ) {
    at = cameFrom.get(at) as string;
    path.unshift(at);
  }
  return path;
}
