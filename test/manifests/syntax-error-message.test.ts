import { ManifestDecodeError, decodeDocuments } from '../../src/manifests/decode-documents.js';
import { locateJsonSyntaxError } from '../../src/manifests/locate-json-syntax-error.js';

const MARKER = 'SECRETMARKER42';

function decodeError(text: string, file: string): ManifestDecodeError {
  try {
    decodeDocuments(text, file);
  } catch (error) {
    if (error instanceof ManifestDecodeError) return error;
    throw error;
  }
  throw new Error('decoded without error');
}

/** Every string a logger could print of the error: its message, stack and causes. */
function everyText(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  return `${error.message}\n${error.stack ?? ''}\n${error.cause === undefined ? '' : everyText(error.cause)}`;
}

describe('manifest syntax errors name file, line and column, never the text', () => {
  it('JSON: a syntax error right after a Secret value', () => {
    const text = `{\n  "apiVersion": "v1",\n  "kind": "Secret",\n  "stringData": {"token": "${MARKER}" x}\n}\n`;
    const error = decodeError(text, 'secrets/token.json');
    expect(error.message).toBe(
      "secrets/token.json (document 0) line 4 column 44: ',' or '}' was expected after a property value",
    );
    expect(error.line).toBe(4);
    expect(error.column).toBe(44);
    expect(everyText(error)).not.toContain(MARKER.slice(-4));
  });

  it('YAML: a syntax error next to a Secret value', () => {
    const text = `apiVersion: v1\nkind: Secret\nstringData:\n  token: "${MARKER}" oops\n`;
    const error = decodeError(text, 'secret.yaml');
    expect(error.message).toMatch(/^secret\.yaml \(document 0\) line 4 column \d+: [a-z]/);
    expect(everyText(error)).not.toContain(MARKER.slice(-4));
  });

  it.each([
    ['{"a": }', 1, 7],
    ['{"a": 1,\n "b"}', 2, 5],
    ['[1, 2', 1, 6],
    ['{"a": "x\ty"}', 1, 9],
    ['{} {}', 1, 4],
    ['{"a": "\\q"}', 1, 8],
  ])('locates %j at line %i column %i', (text, line, column) => {
    expect(locateJsonSyntaxError(text)).toMatchObject({ line, column });
  });

  it('accepts what JSON.parse accepts', () => {
    const text = ' {"a": [1, -2.5e3, true, false, null, "\\u00e9\\n"], "b": {}} ';
    expect(JSON.parse(text)).toBeDefined();
    expect(locateJsonSyntaxError(text)).toBeUndefined();
  });
});

describe('a JSON file nested too deeply to locate its error', () => {
  it('is still refused naming the file, without the text', () => {
    const text = `${'['.repeat(200_000)}"${MARKER}" x`;
    const error = decodeError(text, 'deep.json');
    expect(error.message).toMatch(/^deep\.json \(document 0\)( line 1 column \d+)?: /);
    expect(everyText(error)).not.toContain(MARKER.slice(-4));
  });
});
