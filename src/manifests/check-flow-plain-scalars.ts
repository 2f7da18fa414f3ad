import { yamlErrorAt } from './yaml-error-at.js';

/** The parts of js-yaml's parser state a `listener` sees that this needs. */
interface ParseEventState {
  readonly depth: number;
  readonly position: number;
  readonly kind: string | null;
  readonly result: unknown;
}

/** A plain scalar holding a `?` after its first character: where it starts and where the `?` is. */
interface Suspect {
  readonly start: number;
  readonly question: number;
}

// Whitespace, comments, a tag and an anchor before a node's first character of its own.
const LEAD = /^(?:\s|#[^\n]*|![^\s]*|&[^\s]*)*/;

/**
 * A js-yaml `listener` that refuses a `?` inside a plain scalar of a flow collection, as go-yaml v2
 * (kubectl's reader) does. go-yaml's scanner ends a plain scalar in a flow collection at any of
 * `,?[]{}` (YAML 1.1); YAML 1.2, and js-yaml, end it at `,[]{}` only. So `{s1: http://x.example/a?b=c}`
 * is one value to js-yaml, and to go-yaml the value `http://x.example/a` followed by a `?` key
 * indicator where a `,` or the closing bracket must come: kubectl refuses the file with "did not find
 * expected ',' or '}'" (or `']'` in a flow sequence), at the `?`. A `?` that opens the scalar is left
 * alone: it is an explicit key to go-yaml, which js-yaml does not copy either way.
 *
 * A plain scalar with a `?` is remembered when it closes; when a flow collection closes, the first one
 * inside it is refused, naming that collection's closing bracket (the innermost collection closes first).
 */
export function createFlowPlainScalarCheck(
  text: string,
): (eventType: 'open' | 'close', state: unknown) => void {
  const openedAt = new Map<number, number>();
  let suspects: Suspect[] = [];
  return (eventType, raw) => {
    const state = raw as ParseEventState;
    if (eventType === 'open') {
      openedAt.set(state.depth, state.position);
      return;
    }
    const opened = openedAt.get(state.depth);
    if (opened === undefined) return;
    const start = opened + (LEAD.exec(text.slice(opened, state.position))?.[0].length ?? 0);
    const first = text[start];
    if (typeof state.result === 'string') {
      if (first === undefined || `"'|>`.includes(first)) return;
      const question = text.indexOf('?', start + 1);
      if (question >= 0 && question < state.position) suspects.push({ start, question });
      return;
    }
    if (suspects.length === 0) return;
    const closing = { '{': '}', '[': ']' }[first ?? ''];
    const source = text.slice(start, state.position).trimEnd();
    if (closing === undefined || !source.endsWith(closing)) return;
    const inside = suspects.find((s) => s.start > start && s.start < state.position);
    if (inside !== undefined) {
      throw yamlErrorAt(text, inside.question, `did not find expected ',' or '${closing}'`);
    }
    suspects = suspects.filter((s) => s.start < start || s.start >= state.position);
  };
}
