/**
 * One `spec.helm.valuesFrom` entry as read (src/source/helm-values-from.ts), and the values file helm
 * is given for it. Pure.
 */

/** What one ConfigMap or Secret key gives a render. */
export interface ValuesFromDocument {
  /** `spec.helm.valuesFrom[0]`: how messages name it, and the name of its file in the render. */
  readonly field: string;
  /** `ConfigMap team-a/web-values, key values.yaml`: where it was read, for messages. */
  readonly from: string;
  /** The key's value, as stored. */
  readonly text: string;
  /** The keys its whole value is set at; undefined: the text is a values document, merged at the root. */
  readonly targetPath: readonly string[] | undefined;
  /** It was read from a Secret: the render's private files must be memory-backed. */
  readonly secret: boolean;
}

/**
 * The values file for one entry: the key's text as it is (a YAML values document, which helm merges
 * over the files before it), or, with targetPath, a document setting only that path. With targetPath
 * the value is typed as `helm --set` types one (Flux parses it with helm's own parser): `true`,
 * `false`, `null` and integers without a leading zero are taken as such, anything else as a string, and
 * a value in single or double quotes as the string inside them.
 */
export function valuesFileText(document: ValuesFromDocument): string {
  const { targetPath, text } = document;
  if (targetPath === undefined) return text;
  let values: unknown = setValue(text);
  for (const key of [...targetPath].reverse()) values = { [key]: values };
  // JSON is YAML: helm reads it as it reads any values file.
  return JSON.stringify(values);
}

/** A scalar as helm's strvals parser types the right-hand side of `--set key=value`. */
function setValue(text: string): string | number | boolean | null {
  const quoted = text.length >= 2 && (text[0] === '"' || text[0] === "'") && text.endsWith(text[0]);
  if (quoted) return text.slice(1, -1);
  const lower = text.toLowerCase();
  if (lower === 'true') return true;
  if (lower === 'false') return false;
  if (lower === 'null') return null;
  if (text === '0') return 0;
  if (/^[+-]?[0-9]+$/.test(text) && text[0] !== '0') {
    const number = Number(text);
    // helm keeps an int64; past what a JSON number holds exactly the text is kept as it is.
    if (Number.isSafeInteger(number)) return number;
  }
  return text;
}
