/**
 * Field names as kustomize decodes a kustomization: `Kustomization.Unmarshal`
 * (sigs.k8s.io/kustomize/api/types) turns the YAML into JSON (sigs.k8s.io/yaml) and decodes that with
 * encoding/json, which takes a key for a field when the two are equal under its case folding
 * (`foldName`): `Resources:`, `RESOURCES:` and `reſources:` (a long s) are all `resources`. A check that
 * compares names exactly would let each of them past; this one reads every spelling.
 *
 * Two spellings of one field in one mapping are refused: encoding/json would keep the one it meets last,
 * in the order sigs.k8s.io/yaml writes the keys out (sorted bytes), which no reader of the file guesses.
 */

/**
 * encoding/json's fold of a name: ASCII letters to upper case, and every other rune to the smallest of
 * its simple case-folding orbit. Only two runes outside ASCII fold into ASCII letters (U+017F, long s,
 * to S; U+212A, the Kelvin sign, to K); every other one folds to a rune outside ASCII, which no field
 * name of kustomize holds, so it is kept as it is.
 */
function foldFieldName(name: string): string {
  return name.replace(/[a-z\u017f\u212a]/g, (rune) => {
    if (rune === '\u017f') return 'S';
    if (rune === '\u212a') return 'K';
    return rune.toUpperCase();
  });
}

export interface KustomizeFields {
  /** The values of every key of `record` that kustomize decodes as `name`. */
  values(record: Readonly<Record<string, unknown>>, name: string, within?: string): unknown[];
  /** The entries of every list among those values. */
  list(record: Readonly<Record<string, unknown>>, name: string, within?: string): unknown[];
}

/**
 * Reads fields as kustomize does, adding to `problems` a line for each field spelled twice (`within`
 * names the field the mapping is an entry of, for the message).
 */
export function kustomizeFields(problems: string[]): KustomizeFields {
  const reported = new Set<string>();
  const values: KustomizeFields['values'] = (record, name, within) => {
    const folded = foldFieldName(name);
    const keys = Object.keys(record).filter((key) => foldFieldName(key) === folded);
    const spelled = keys.map((key) => JSON.stringify(key)).join(' and ');
    const line = `${within === undefined ? '' : `${within} entry: `}${spelled} are the same field to kustomize (it matches field names case-insensitively); keep one`;
    if (keys.length > 1 && !reported.has(line)) {
      reported.add(line);
      problems.push(line);
    }
    return keys.map((key) => record[key]);
  };
  return {
    values,
    list: (record, name, within) =>
      values(record, name, within).flatMap((value) => (Array.isArray(value) ? (value as unknown[]) : [])),
  };
}
