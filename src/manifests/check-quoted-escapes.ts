import yaml from 'js-yaml';

/** The parts of js-yaml's parser state a `listener` sees that this needs. */
interface ParseEventState {
  readonly depth: number;
  readonly position: number;
  readonly result: unknown;
}

/**
 * A js-yaml `listener` that refuses the double-quoted escapes go-yaml v2 (kubectl's reader) refuses
 * and js-yaml (a YAML 1.2 reader) takes: `\/`, which YAML 1.2 added ("found unknown escape
 * character"), and `\u`/`\U` escapes of a UTF-16 surrogate, which go-yaml will not turn into text
 * ("found invalid Unicode character escape code"). Each scalar's source is seen once it closes:
 * from where it opened to where it ended, after its tag and anchor.
 */
export function createQuotedEscapeCheck(text: string): (eventType: 'open' | 'close', state: unknown) => void {
  const openedAt = new Map<number, number>();
  return (eventType, raw) => {
    const state = raw as ParseEventState;
    if (eventType === 'open') {
      openedAt.set(state.depth, state.position);
      return;
    }
    if (typeof state.result !== 'string') return;
    const start = openedAt.get(state.depth);
    if (start === undefined) return;
    const source = text.slice(start, state.position);
    const lead = /^(?:\s|![^\s]*|&[^\s]*)*/.exec(source)?.[0].length ?? 0;
    if (source[lead] !== '"') return;
    checkEscapes(text, start + lead + 1, state.position);
  };
}

function checkEscapes(text: string, from: number, to: number): void {
  for (let at = from; at < to; at += 1) {
    if (text[at] !== '\\') continue;
    const code = text[at + 1];
    if (code === '/') refuse(text, at, 'found unknown escape character');
    if (code === 'u' || code === 'U') {
      const digits = text.slice(at + 2, at + 2 + (code === 'u' ? 4 : 8));
      const value = Number.parseInt(digits, 16);
      if (value >= 0xd800 && value <= 0xdfff) refuse(text, at, 'found invalid Unicode character escape code');
    }
    at += 1;
  }
}

function refuse(text: string, position: number, reason: string): never {
  const before = text.slice(0, position);
  const line = before.split('\n').length - 1;
  const column = position - (before.lastIndexOf('\n') + 1);
  const mark = { name: null, buffer: '', position, line, column, snippet: null };
  throw new yaml.YAMLException(reason, mark as unknown as yaml.YAMLException['mark']);
}
