import { checkInputSize, INPUT_BOUNDS, InputParseError, type InputKind } from './input-bounds.js';

/**
 * A JSON text of tenant input (a push webhook's body), through the parse door: refused over the size
 * of its kind before it is parsed, and over the depth of its kind before anything walks it. JSON has
 * no aliases; V8's parser does not recurse, the walks after it do.
 */
export function readJsonValue(text: string, source: string, kind: InputKind): unknown {
  const bounds = INPUT_BOUNDS[kind];
  const tooLarge = checkInputSize(text, source, bounds);
  if (tooLarge !== undefined) throw tooLarge;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    // The engine's message quotes the text around the error: only that it is not JSON is said.
    throw new InputParseError(source, 'syntax', 'is not JSON');
  }
  checkJsonDepth(value, source, bounds.maxDepth);
  return value;
}

/** Refuses a value nesting deeper than `maxDepth`, walking without recursion. */
function checkJsonDepth(value: unknown, source: string, maxDepth: number): void {
  const pending: { value: unknown; depth: number }[] = [{ value, depth: 0 }];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    if (typeof next.value !== 'object' || next.value === null) continue;
    if (next.depth >= maxDepth) {
      throw new InputParseError(source, 'too-deep', `nests deeper than ${maxDepth} levels`);
    }
    const children = Array.isArray(next.value) ? next.value : Object.values(next.value);
    for (const child of children) pending.push({ value: child, depth: next.depth + 1 });
  }
}
