import { INPUT_BOUNDS, InputParseError } from '../../src/input/input-bounds.js';
import { readJsonValue } from '../../src/input/read-json-value.js';
import { readYamlDocuments } from '../../src/input/read-yaml-documents.js';
import { readYamlValue } from '../../src/input/read-yaml-value.js';
import { anchorReuseList, nestedListBomb, nestedMapBomb, sopsLookingBomb } from '../manifests/yaml-bombs.js';

/** The door's refusal of `read()`, or a failure saying it let the text through. */
function refusal(read: () => unknown): InputParseError {
  try {
    read();
  } catch (error) {
    if (error instanceof InputParseError) return error;
    throw error;
  }
  throw new Error('the door let the text through');
}

const readers = {
  'readYamlValue (js-yaml)': (text: string) => readYamlValue(text, 'repo/bad.yaml', 'kustomization'),
  'readYamlDocuments (yaml)': (text: string) => readYamlDocuments(text, 'repo/bad.yaml', 'sops', {}),
};

describe.each(Object.entries(readers))('the parse door, %s', (_name, read) => {
  it.each([
    ['a list bomb', nestedListBomb()],
    ['a mapping bomb', nestedMapBomb()],
    ['the sops-looking bomb of issue #33', sopsLookingBomb()],
  ])('refuses %s for excessive aliasing, naming the file', (_shape, text) => {
    const error = refusal(() => read(text));
    expect(error.problem).toBe('excessive-aliasing');
    expect(error.message).toMatch(/^repo\/bad\.yaml.*: contains excessive aliasing/);
  });

  it('takes a file that reuses anchors the way real manifests do', () => {
    expect(() => read(anchorReuseList())).not.toThrow();
  });

  it('refuses a few aliases of one large string for what they expand to', () => {
    const text = `big: &big "${'x'.repeat(300_000)}"\nmany: [${Array<string>(50).fill('*big').join(', ')}]\n`;
    expect(refusal(() => read(text)).problem).toBe('expands-too-large');
  });

  it('refuses nesting past the bound of its kind, before a walk recurses through it', () => {
    const depth = INPUT_BOUNDS.sops.maxDepth + 5;
    const text = `${'['.repeat(depth)}${']'.repeat(depth)}\n`;
    const error = refusal(() => read(text));
    expect(error.problem).toBe('too-deep');
    expect(error.message).toMatch(/^repo\/bad\.yaml.*: nests (deeper than 1000 levels|too deeply)/);
  });

  it('refuses a text over the size of its kind before parsing it', () => {
    const text = `a: "${'x'.repeat(INPUT_BOUNDS.kustomization.maxBytes + INPUT_BOUNDS.sops.maxBytes)}"\n`;
    const error = refusal(() => read(text));
    expect(error.problem).toBe('too-large');
    expect(error.message).toMatch(/^repo\/bad\.yaml: is \d+(\.\d)? MiB, over the limit of \d+ MiB$/);
  });
});

describe('readYamlValue', () => {
  it('words a syntax error with its place and without quoting the text', () => {
    const error = refusal(() => readYamlValue('password: "hunter2\n', 'kubeconfig Secret a/b', 'kubeconfig'));
    expect(error.problem).toBe('syntax');
    expect(error.message).toMatch(/^kubeconfig Secret a\/b: is not valid YAML: .* at line \d+, column \d+$/);
    expect(error.message).not.toContain('hunter2');
  });
});

describe('readJsonValue', () => {
  it('reads a webhook body', () => {
    expect(readJsonValue('{"ref":"refs/heads/main"}', 'push body', 'push-event')).toEqual({
      ref: 'refs/heads/main',
    });
  });

  it.each([
    ['not JSON', '{"secret": "hunter2"', 'syntax', /^push body: is not JSON$/],
    [
      'too deep',
      `${'['.repeat(5000)}${']'.repeat(5000)}`,
      'too-deep',
      /^push body: nests deeper than 1000 levels$/,
    ],
    [
      'too large',
      `"${'x'.repeat(2 * 1024 * 1024)}"`,
      'too-large',
      /^push body: is 2 MiB, over the limit of 1 MiB$/,
    ],
  ])('refuses a body %s', (_case, text, problem, message) => {
    const error = refusal(() => readJsonValue(text, 'push body', 'push-event'));
    expect(error.problem).toBe(problem);
    expect(error.message).toMatch(message);
  });
});
