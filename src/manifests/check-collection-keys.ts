import { GoScalar } from './go-scalar.js';
import { yamlErrorAt } from './yaml-error-at.js';

/**
 * Refuses a sequence or a mapping used as a mapping key (`? [a, b]`, `[a]: x`, `{a: 1}: x`, an alias
 * to either), as kubectl does (go-yaml: "invalid map key"): js-yaml would turn it into the text
 * "a,b" or "[object Object]" and carry on.
 *
 * js-yaml keeps no trace of a key once stored, so this reads its parse events: every node closes with
 * its nesting `depth` after all of its children, and the children of a mapping are its keys and values
 * in turn. A key with no value (`? a`, `{a, b: c}`) breaks the turns, so a child taken for a key counts
 * only when the mapping really holds the key js-yaml made from it: a value is never refused as a key.
 */
export function createCollectionKeyCheck(): (eventType: 'open' | 'close', state: unknown) => void {
  // Depth → the nodes closed at that depth since their parent opened, by where they ended (js-yaml
  // parses some nodes twice when it backtracks; the second close replaces the first).
  const children = new Map<number, Map<number, unknown>>();
  return (eventType, raw) => {
    if (eventType !== 'close') return;
    const state = raw as {
      depth: number;
      position: number;
      kind: string | null;
      result: unknown;
      input: string;
    };
    const own = children.get(state.depth + 1);
    children.delete(state.depth + 1);
    if (state.kind === 'mapping' && own !== undefined) refuseCollectionKeys(own, state.result, state.input);
    const siblings = children.get(state.depth) ?? new Map<number, unknown>();
    siblings.set(state.position, state.result);
    children.set(state.depth, siblings);
  };
}

function refuseCollectionKeys(nodes: ReadonlyMap<number, unknown>, mapping: unknown, input: string): void {
  if (typeof mapping !== 'object' || mapping === null) return;
  const ends = [...nodes.keys()];
  for (let index = 0; index < ends.length; index += 2) {
    const end = ends[index] ?? 0;
    const key = nodes.get(end);
    if (!isCollection(key) || !Object.hasOwn(mapping, storedKeyOf(key))) continue;
    throw yamlErrorAt(
      input,
      end,
      `invalid map key: a ${Array.isArray(key) ? 'sequence' : 'mapping'} cannot be a key (kubectl ` +
        `refuses it); quote the key to make it a string`,
    );
  }
}

function isCollection(node: unknown): node is object {
  return typeof node === 'object' && node !== null && !(node instanceof GoScalar);
}

/** The key js-yaml stores for a collection key (`storeMappingPair`). */
function storedKeyOf(key: object): string {
  if (!Array.isArray(key)) return '[object Object]';
  return key
    .map((item: unknown) => (isCollection(item) && !Array.isArray(item) ? '[object Object]' : item))
    .join(',');
}
