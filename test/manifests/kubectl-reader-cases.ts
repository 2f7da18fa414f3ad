// Files kubectl 1.33's reader (sigs.k8s.io/yaml over go-yaml v2) and ours were found to disagree on by a
// differential run (issue #34, items 14 to 16), each the `data:` of a ConfigMap with kubectl's verdict
// and, for a refusal, its words. The unit test (kubectl-reader-cases.test.ts) checks our decoder on
// them; test/cli/kubectl-fidelity.itest.ts checks that the machine's kubectl agrees on every one.

export type ReaderCase = {
  readonly what: string;
  /** The lines under `data:`, indented. */
  readonly data: string;
} & (
  | {
      readonly verdict: 'applied';
      /** What `data` decodes to. */
      readonly value: Readonly<Record<string, unknown>>;
    }
  | {
      readonly verdict: 'refused';
      /** kubectl's words for the refusal (after `yaml: line N: `), which ours contain too. */
      readonly refusal: string;
    }
);

export const readerCases: readonly ReaderCase[] = [
  {
    // go-yaml's resolve turns an integer with an explicit !!float tag into a float64 (3 in JSON).
    what: 'an integer tagged !!float, as a key',
    data: '  !!float 3: s1',
    verdict: 'applied',
    value: { '3': 's1' },
  },
  {
    // go-yaml ends a plain scalar of a flow collection at `?` (YAML 1.1); js-yaml reads on.
    what: 'a plain URL with a query in a flow mapping',
    data: '  {s1: http://x.example/a?b=c#d}',
    verdict: 'refused',
    refusal: "did not find expected ',' or '}'",
  },
  {
    what: 'a plain scalar with a ? in a flow sequence, in a flow mapping',
    data: '  {s1: [x?y]}',
    verdict: 'refused',
    refusal: "did not find expected ',' or ']'",
  },
  {
    // Reported as read by kubectl; kubectl 1.27 to 1.33 refuse it: go-yaml v2 turns no surrogate,
    // paired or not, into text.
    what: 'a surrogate pair of \\u escapes in a double-quoted string',
    data: '  s1: "\\ud83d\\ude00 pair"',
    verdict: 'refused',
    refusal: 'found invalid Unicode character escape code',
  },
];
