import { yamlErrorAt } from './yaml-error-at.js';

/**
 * The characters go-yaml v2 (kubectl's YAML reader) lets through its reader: tab, LF, CR, printable
 * ASCII, NEL, and the Unicode ranges YAML 1.1 calls printable, without the surrogates and U+FFFE/U+FFFF.
 * The reader checks every character it decodes, before the scanner sees any, so a DEL or another
 * control character is refused wherever it stands: in a quoted, plain or block scalar, in a key, in
 * a comment. js-yaml refuses some of them (in plain and block scalars) and takes the rest (in quoted
 * scalars and comments), hence this check of the whole text.
 */
const OUTSIDE_GO_YAML_READER = /[^\t\n\r\u0020-\u007e\u0085\u00a0-\ud7ff\ue000-\ufffd\u{10000}-\u{10ffff}]/u;

/**
 * Refuses a YAML text holding a character go-yaml's reader refuses, in its words (kubectl prints
 * "yaml: control characters are not allowed"), with where it is and which it is, since the character
 * itself is usually invisible in an editor.
 */
export function checkYamlCharacters(text: string): void {
  const found = OUTSIDE_GO_YAML_READER.exec(text);
  if (found === null) return;
  const code = found[0].codePointAt(0) ?? 0;
  const name = `U+${code.toString(16).toUpperCase().padStart(4, '0')}`;
  throw yamlErrorAt(text, found.index, `control characters are not allowed (${name})`);
}
