// Characters kubectl's readers refuse and take, each in a ConfigMap file: the unit test
// (yaml-characters.test.ts) checks our decoder on them, the differential test
// (test/cli/kubectl-control-characters.itest.ts) checks that kubectl 1.33 agrees on every one.

type Verdict = 'refused' | 'applied';

export interface CharacterCase {
  readonly what: string;
  /** The file, for an object `name` in `namespace`. */
  readonly file: (name: string, namespace: string) => string;
  readonly verdict: Verdict;
  /** The refusal's words, as kubectl prints them. */
  readonly refusal?: string;
  /**
   * kubectl writes the documents before the refused one; we write nothing of a set with a broken file
   * (deliberately unlike kubectl: docs/commands.md).
   */
  readonly kubectlWritesEarlierDocuments?: true;
}

const YAML_REFUSAL = 'control characters are not allowed';

const head = (name: string, namespace: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n  namespace: ${namespace}\n`;

/** A YAML ConfigMap with `body` after its metadata. */
const yamlCase = (what: string, body: string, verdict: Verdict): CharacterCase => ({
  what,
  file: (name, namespace) => `${head(name, namespace)}${body}`,
  verdict,
  ...(verdict === 'refused' ? { refusal: YAML_REFUSAL } : {}),
});

/** A JSON ConfigMap whose `data.a` is the JSON string text `quoted` (quotes included). */
const jsonCase = (what: string, quoted: string, verdict: Verdict, refusal?: string): CharacterCase => ({
  what,
  file: (name, namespace) =>
    `{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "${name}", ` +
    `"namespace": "${namespace}"}, "data": {"a": ${quoted}}}\n`,
  verdict,
  ...(refusal === undefined ? {} : { refusal }),
});

export const characterCases: readonly CharacterCase[] = [
  yamlCase('YAML: a DEL in a double-quoted string', 'data:\n  a: "x\u007fy"\n', 'refused'),
  yamlCase('YAML: a DEL in a single-quoted string', "data:\n  a: 'x\u007fy'\n", 'refused'),
  yamlCase('YAML: a DEL in a plain scalar', 'data:\n  a: x\u007fy\n', 'refused'),
  yamlCase('YAML: a DEL in a literal block scalar', 'data:\n  a: |\n    x\u007fy\n', 'refused'),
  yamlCase('YAML: a DEL in a key', 'data:\n  "a\u007f": xy\n', 'refused'),
  yamlCase('YAML: a DEL in a comment', '# note\u007f\ndata:\n  a: xy\n', 'refused'),
  {
    ...yamlCase('YAML: a DEL in a comment-only later document', 'data:\n  a: xy\n---\n# \u007f\n', 'refused'),
    kubectlWritesEarlierDocuments: true,
  },
  yamlCase('YAML: U+0001 in a double-quoted string', 'data:\n  a: "x\u0001y"\n', 'refused'),
  yamlCase('YAML: ESC in a single-quoted string', "data:\n  a: 'x\u001by'\n", 'refused'),
  yamlCase('YAML: NUL in a double-quoted string', 'data:\n  a: "x\u0000y"\n', 'refused'),
  yamlCase('YAML: a form feed in a double-quoted string', 'data:\n  a: "x\u000cy"\n', 'refused'),
  yamlCase('YAML: U+0080 (C1) in a double-quoted string', 'data:\n  a: "x\u0080y"\n', 'refused'),
  yamlCase('YAML: U+009F (C1) in a comment', '# \u009f\ndata:\n  a: xy\n', 'refused'),
  yamlCase('YAML: U+FFFE in a double-quoted string', 'data:\n  a: "x\ufffey"\n', 'refused'),
  yamlCase('YAML: U+FFFF in a single-quoted string', "data:\n  a: 'x\uffffy'\n", 'refused'),
  yamlCase('YAML: a tab in a double-quoted string', 'data:\n  a: "x\ty"\n', 'applied'),
  yamlCase('YAML: a tab in a comment', '#\tnote\ndata:\n  a: xy\n', 'applied'),
  yamlCase('YAML: CRLF line ends', 'data:\r\n  a: "xy"\r\n  b: plain\r\n', 'applied'),
  yamlCase('YAML: a CR in a double-quoted string', 'data:\n  a: "x\ry"\n', 'applied'),
  yamlCase('YAML: a NEL in a double-quoted string', 'data:\n  a: "x\u0085y"\n', 'applied'),
  yamlCase('YAML: a no-break space in a plain scalar', 'data:\n  a: x\u00a0y\n', 'applied'),
  yamlCase('YAML: an emoji in a plain scalar', 'data:\n  a: x\u{1f600}y\n', 'applied'),
  yamlCase('YAML: a private-use character and U+FFFD', 'data:\n  a: "\ue000\ufffd"\n', 'applied'),
  {
    what: 'YAML: a byte order mark opening the file',
    file: (name, namespace) => `\ufeff${head(name, namespace)}data:\n  a: xy\n`,
    verdict: 'applied',
  },
  jsonCase('JSON: a DEL in a string', '"x\u007fy"', 'applied'),
  jsonCase('JSON: U+0080 (C1) in a string', '"x\u0080y"', 'applied'),
  jsonCase('JSON: U+FFFE in a string', '"x\ufffey"', 'applied'),
  jsonCase('JSON: a tab in a string (read again as YAML)', '"x\ty"', 'applied'),
  jsonCase('JSON: a line feed in a string (read again as YAML)', '"x\ny"', 'applied'),
  jsonCase(
    'JSON: U+0001 in a string',
    '"x\u0001y"',
    'refused',
    "invalid character '\\x01' in string literal",
  ),
  // Refused by both, in other words: kubectl names the character, we name what was expected.
  jsonCase('JSON: a DEL outside a string', '"xy"\u007f', 'refused'),
];
