/** Patches the server took without a change, kept per object; bounded, since the engine lives long. */
const MAX_REMEMBERED_NO_OPS = 100_000;

export function rememberNoOp(noOps: Map<string, string>, key: string, value: string): void {
  if (noOps.size >= MAX_REMEMBERED_NO_OPS && !noOps.has(key)) noOps.clear();
  noOps.set(key, value);
}
