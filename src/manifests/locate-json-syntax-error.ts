/**
 * Where a JSON text stops being JSON, and why, without quoting it. The engine's JSON.parse message
 * quotes the input around the error ("Unexpected token 'x', "...ken": x..." is not valid JSON"),
 * which next to a Secret value puts part of it into status, Events and logs; this says only the line,
 * the column and what was expected.
 */
export interface JsonSyntaxLocation {
  /** 1-based. */
  readonly line: number;
  /** 1-based, in UTF-16 code units as editors count them. */
  readonly column: number;
  readonly reason: string;
}

class JsonStop {
  constructor(
    readonly position: number,
    readonly reason: string,
  ) {}
}

/** The first syntax error of a JSON text, or undefined when the text is one valid JSON value. */
export function locateJsonSyntaxError(text: string): JsonSyntaxLocation | undefined {
  try {
    const end = skipSpace(text, readValue(text, skipSpace(text, 0)));
    if (end < text.length) throw new JsonStop(end, 'unexpected content after the top-level value');
    return undefined;
  } catch (stop) {
    if (!(stop instanceof JsonStop)) throw stop;
    return { ...lineAndColumn(text, stop.position), reason: stop.reason };
  }
}

/**
 * Where each value of a stream of JSON values starts and ends (`{...} {...}`, as Go's JSON decoder reads
 * one after the other), or undefined when the text is not such a stream.
 */
export function jsonValueSpans(text: string): [number, number][] | undefined {
  const spans: [number, number][] = [];
  try {
    for (let at = skipSpace(text, 0); at < text.length; at = skipSpace(text, spans.at(-1)?.[1] ?? at)) {
      spans.push([at, readValue(text, at)]);
    }
    return spans;
  } catch (stop) {
    if (stop instanceof JsonStop || stop instanceof RangeError) return undefined;
    throw stop;
  }
}

function lineAndColumn(text: string, position: number): { line: number; column: number } {
  const before = text.slice(0, position);
  const lineStart = before.lastIndexOf('\n') + 1;
  return { line: before.split('\n').length, column: position - lineStart + 1 };
}

function skipSpace(text: string, at: number): number {
  let i = at;
  while (i < text.length && ' \t\n\r'.includes(text[i] as string)) i++;
  return i;
}

/** Reads one value starting at `at` (no leading space) and returns the position after it. */
function readValue(text: string, at: number): number {
  const c = text[at];
  if (c === undefined) throw new JsonStop(at, 'unexpected end of input: a value was expected');
  if (c === '{') return readContainer(text, at, '}', true);
  if (c === '[') return readContainer(text, at, ']', false);
  if (c === '"') return readString(text, at);
  for (const literal of ['true', 'false', 'null']) {
    if (text.startsWith(literal, at)) return at + literal.length;
  }
  const number = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/.exec(text.slice(at, at + 400));
  if (number !== null) return at + number[0].length;
  throw new JsonStop(at, 'a value was expected (object, array, string, number, true, false or null)');
}

function readContainer(text: string, at: number, close: string, isObject: boolean): number {
  let i = skipSpace(text, at + 1);
  if (text[i] === close) return i + 1;
  for (;;) {
    if (isObject) {
      if (text[i] !== '"') throw new JsonStop(i, 'a property name in double quotes was expected');
      i = skipSpace(text, readString(text, i));
      if (text[i] !== ':') throw new JsonStop(i, "':' was expected after the property name");
      i = skipSpace(text, i + 1);
    }
    i = skipSpace(text, readValue(text, i));
    if (text[i] === close) return i + 1;
    if (text[i] !== ',') {
      throw new JsonStop(
        i,
        `',' or '${close}' was expected after ${isObject ? 'a property value' : 'an element'}`,
      );
    }
    i = skipSpace(text, i + 1);
  }
}

function readString(text: string, at: number): number {
  let i = at + 1;
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (c === 0x22) return i + 1;
    if (c < 0x20) throw new JsonStop(i, `invalid character ${goQuotedByte(c)} in string literal`);
    if (c === 0x5c) {
      const escape = text[i + 1] ?? '';
      if (escape === 'u' && /^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) i += 6;
      else if ('"\\/bfnrt'.includes(escape) && escape !== '') i += 2;
      else throw new JsonStop(i, 'an invalid escape inside a string');
    } else i++;
  }
  throw new JsonStop(text.length, 'unexpected end of input inside a string');
}

/** A control byte as Go's encoding/json names it in a syntax error (kubectl's words): '\t', '\x01'. */
function goQuotedByte(c: number): string {
  const named: Record<number, string> = { 7: 'a', 8: 'b', 9: 't', 10: 'n', 11: 'v', 12: 'f', 13: 'r' };
  const escape = named[c] ?? `x${c.toString(16).padStart(2, '0')}`;
  return `'\\${escape}'`;
}
