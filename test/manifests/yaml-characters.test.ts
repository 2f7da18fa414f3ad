import { ManifestDecodeError, decodeDocuments } from '../../src/manifests/decode-documents.js';
import { characterCases } from './control-character-cases.js';

// go-yaml v2's reader (kubectl's) refuses a control character anywhere in a YAML text; kubectl's JSON
// reader takes a DEL or a C1 character in a string, and a tab or a line break too once it has read the
// text again as YAML. test/cli/kubectl-control-characters.itest.ts checks kubectl agrees on each case.

function outcome(text: string, file: string): { verdict: 'applied' | 'refused'; message?: string } {
  try {
    decodeDocuments(text, file);
    return { verdict: 'applied' };
  } catch (error) {
    if (error instanceof ManifestDecodeError) return { verdict: 'refused', message: error.message };
    throw error;
  }
}

describe('control characters, as kubectl reads them', () => {
  it.each(characterCases.map((c) => [c.what, c] as const))('%s', (_what, c) => {
    const text = c.file('cm', 'ns');
    const result = outcome(text, text.startsWith('{') ? 'cm.json' : 'cm.yaml');
    expect(result.verdict).toBe(c.verdict);
    if (c.refusal !== undefined) expect(result.message).toContain(c.refusal);
  });

  it('names the line, the column, the document and the character of a refusal', () => {
    expect(outcome('a: 1\n---\nb:\n  c: "x\u007fy"\n', 'two.yaml').message).toBe(
      'two.yaml (document 1) line 4 column 8: control characters are not allowed (U+007F)',
    );
    expect(outcome('a: "\u{1f600}\ufffe"\n', 'wide.yaml').message).toBe(
      'wide.yaml (document 0) line 1 column 7: control characters are not allowed (U+FFFE)',
    );
  });

  it('keeps a tab, a CR and a NEL in quoted strings as kubectl does', () => {
    const [document] = decodeDocuments('a: "x\ty"\nb: "x\u0085y"\nc: \'x\ty\'\n', 'ok.yaml');
    expect(document?.value).toEqual({ a: 'x\ty', b: 'x y', c: 'x\ty' });
  });

  it('reads a stream of JSON values as documents, one after the other', () => {
    const documents = decodeDocuments('{"a": 1}{"b": 2}\n\n {"c": "\u007f"}\n', 'stream.json');
    expect(documents.map((document) => [document.index, document.value])).toEqual([
      [0, { a: 1 }],
      [1, { b: 2 }],
      [2, { c: '\u007f' }],
    ]);
  });

  it('reads a JSON text that is not JSON again as YAML, keeping the JSON error when both fail', () => {
    const [document] = decodeDocuments('{"a": "x\ty", "b": \'q\', "c": [1,],}', 'loose.json');
    expect(document?.value).toEqual({ a: 'x\ty', b: 'q', c: [1] });
    expect(outcome('{"a": "x\u0001y"}', 'bad.json').message).toBe(
      "bad.json (document 0) line 1 column 9: invalid character '\\x01' in string literal",
    );
    expect(outcome('{"a": "x\\qy" x}', 'bad.json').message).toBe(
      'bad.json (document 0) line 1 column 9: an invalid escape inside a string',
    );
  });
});
