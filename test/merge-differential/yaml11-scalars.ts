import { isJsonObject, type JsonObject, type JsonValue } from '../../src/manifests/json-value.js';
import type { Yaml11Lines } from './diff-step.js';
import type { SeededRandom } from './seeded-random.js';
import { stringifyJson } from '../../src/manifests/lossless-json.js';

// YAML 1.1 plain scalars, as a person writes them in a manifest: go-yaml v2 (kubectl) resolves them
// by YAML 1.1 rules, a YAML 1.2 parser differently. As keys they become strings the way
// sigs.k8s.io/yaml prints them (`on` → "true", `0x1F` → "31", `1.5` → "1.5").

const KEY_FORMS = [
  'on',
  'Off',
  'yes',
  'N',
  '0x1F',
  '0o17',
  '017',
  '0b101',
  '1_000',
  '1.5',
  '1.0',
  '1e3',
  '-2',
  '+3',
  '2001-12-14',
  '.5',
  '12:30',
  'plain',
] as const;

// The key forms whose strings are valid label and ConfigMap keys (not "-2", not "12:30"), so that
// most versions apply; a refusal by the server is still compared, just less often.
const NAME_KEY_FORMS = KEY_FORMS.filter((key) => key !== '-2' && key !== '12:30');

const VALUE_FORMS = [
  'yes',
  'No',
  'on',
  'OFF',
  'y',
  'n',
  '~',
  'null',
  '',
  '0644',
  '0x1F',
  '0o17',
  '0b101',
  '1_000',
  '1.50',
  '1e3',
  '-.5',
  '+12',
  '-0',
  '3.',
  '2001-12-14',
  '2001-12-14T21:59:43.10-05:00',
  '12:30:00',
  '"0644"',
  "'yes'",
] as const;

// Values JSON cannot hold: kubectl refuses the whole file. Rare, so most versions still apply.
const UNENCODABLE_FORMS = ['.inf', '-.Inf', '.NaN'] as const;

/**
 * A few `key: value` lines for the mapping at `path`. Where only strings are valid (a ConfigMap's
 * data, labels), values are quoted, except now and then, when both sides must refuse the same way.
 */
export function yaml11Lines(random: SeededRandom, path: readonly string[], anyValue: boolean): Yaml11Lines {
  const sampled = random.sample(anyValue ? KEY_FORMS : NAME_KEY_FORMS, random.int(1, 4));
  // `1_000` (an int) and `1e3` (a float) are two keys to go-yaml that print as one: kubectl keeps
  // whichever Go's map order gives it last, a different one from run to run. Never both.
  const keys = sampled.includes('1_000') ? sampled.filter((key) => key !== '1e3') : sampled;
  const entries = keys.map((key): [string, string] => {
    const raw = anyValue || random.chance(0.05);
    if (!raw) return [key, stringifyJson(`v-${random.int(0, 9)}`)];
    return [key, random.chance(0.03) ? random.pick(UNENCODABLE_FORMS) : random.pick(VALUE_FORMS)];
  });
  return { path, entries };
}

/**
 * The manifest as block YAML with the lines added at their path. Every other scalar and every list is
 * written as JSON (valid YAML with one meaning under 1.1 and 1.2), so only the added lines are read
 * by YAML 1.1 rules.
 */
export function renderYaml(manifest: JsonObject, lines: Yaml11Lines): string {
  const out: string[] = [];
  writeMapping(out, manifest, '', lines.path, lines.entries);
  return `${out.join('\n')}\n`;
}

/** `target`: the rest of the path to the mapping that takes the lines; `[]` here, undefined off the path. */
function writeMapping(
  out: string[],
  map: JsonObject,
  indent: string,
  target: readonly string[] | undefined,
  entries: Yaml11Lines['entries'],
): void {
  const [head, ...rest] = target ?? [];
  const keys = Object.keys(map);
  if (head !== undefined && !(head in map)) keys.push(head);
  for (const key of keys) {
    // The path is made a mapping where the manifest has none there (absent, null or a scalar).
    const onPath = key === head;
    const value: JsonValue | undefined = onPath && !isJsonObject(map[key]) ? {} : map[key];
    if (value === undefined) continue;
    if (onPath || (isJsonObject(value) && Object.keys(value).length > 0)) {
      out.push(`${indent}${stringifyJson(key)}:`);
      writeMapping(out, value as JsonObject, `${indent}  `, onPath ? rest : undefined, entries);
    } else {
      out.push(`${indent}${stringifyJson(key)}: ${stringifyJson(value)}`);
    }
  }
  if (target?.length === 0) for (const [key, value] of entries) out.push(`${indent}${key}: ${value}`);
}
