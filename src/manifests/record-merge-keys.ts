/**
 * Which values each mapping merged with `<<`, recorded while js-yaml parses.
 *
 * js-yaml copies the merged keys into the mapping and keeps no trace of the merge, while go-yaml
 * (kubectl's reader) decodes every merged mapping in full each time, counting it against the
 * aliasing limit: `<<: [*a, *a, *a]` costs three times `a` there, even though the keys collapse.
 * To count as go-yaml does, `measureExpansion` needs to know the merges, and js-yaml's parse events
 * are the only place they show.
 */

/** For each mapping (the object js-yaml built), the values of its `<<` keys, in document order. */
export type MergeSources = ReadonlyMap<object, readonly unknown[]>;

import { GoScalar } from './go-scalar.js';
import { yamlErrorAt } from './yaml-error-at.js';

const MERGE_TAG = 'tag:yaml.org,2002:merge';

/** The parts of js-yaml's parser state a `listener` sees that this needs. */
interface ParseEventState {
  readonly depth: number;
  readonly position: number;
  readonly tag: string | null;
  readonly result: unknown;
  readonly input: string;
}

/**
 * A js-yaml `listener` and what it records. A node's "close" event comes after all of its children's,
 * with `depth` its nesting level: a `<<` key closes with the merge tag, its value is the next node to
 * close at the same depth, and the mapping holding both is the next to close one level up.
 */
export function createMergeKeyRecorder(): {
  readonly listener: (eventType: 'open' | 'close', state: unknown) => void;
  readonly sources: MergeSources;
} {
  const sources = new Map<object, unknown[]>();
  const afterMergeKey = new Set<number>();
  // Keyed by where the value ended, so a node js-yaml parses twice (it backtracks over a property
  // that turns out to start a mapping) is recorded once.
  const pending = new Map<number, Map<number, unknown>>();

  const listener = (eventType: 'open' | 'close', raw: unknown) => {
    if (eventType !== 'close') return;
    const state = raw as ParseEventState;
    const { depth } = state;
    if (afterMergeKey.delete(depth)) {
      refuseUnmergeable(state);
      const siblings = pending.get(depth - 1) ?? new Map<number, unknown>();
      siblings.set(state.position, state.result);
      pending.set(depth - 1, siblings);
    } else if (state.tag === MERGE_TAG) {
      afterMergeKey.add(depth);
    }
    const merged = pending.get(depth);
    if (merged !== undefined) {
      pending.delete(depth);
      if (typeof state.result === 'object' && state.result !== null) {
        sources.set(state.result, [...merged.values()]);
      }
    }
  };
  return { listener, sources };
}

/**
 * go-yaml merges only a mapping or a sequence of mappings. js-yaml refuses other values in its own
 * words, except a scalar go-yaml does not read as a string (`<<: 5`, a wrapped object to js-yaml),
 * which it would merge as nothing: refused here, before js-yaml sees it, in go-yaml's words.
 */
function refuseUnmergeable({ result: value, input, position }: ParseEventState): void {
  const isMapping = (item: unknown) =>
    typeof item === 'object' && item !== null && !Array.isArray(item) && !(item instanceof GoScalar);
  if (isMapping(value) || (Array.isArray(value) && value.every(isMapping))) return;
  throw yamlErrorAt(input, position, 'map merge requires map or sequence of maps as the value');
}
