import { isJsonObject, type JsonObject, type JsonValue } from '../manifests/json-value.js';
import { stringifyJson } from '../manifests/lossless-json.js';

/**
 * The dynamic type a value would have after apimachinery's `util/json.Unmarshal` into interface{}:
 * integral numbers that fit an int64 become int64, other numbers float64
 * (docs/merge-semantics.md#2-values).
 * The engine compares kinds wherever Go compares `reflect.TypeOf`.
 */
export type GoKind = 'map' | 'slice' | 'string' | 'bool' | 'int' | 'float' | 'nil';

const INT64_LIMIT = 2 ** 63;

export function goKind(value: JsonValue): GoKind {
  if (value === null) return 'nil';
  if (Array.isArray(value)) return 'slice';
  switch (typeof value) {
    case 'string':
      return 'string';
    case 'boolean':
      return 'bool';
    case 'number':
      return Number.isInteger(value) && Math.abs(value) < INT64_LIMIT ? 'int' : 'float';
    case 'bigint':
      return 'int';
    default:
      return 'map';
  }
}

/**
 * Go's `==` on two interface{} values holding scalars: equal dynamic type and value. Maps and slices
 * never compare equal here (Go would panic; the merge code only reaches this with scalars).
 */
export function goScalarEqual(a: JsonValue | undefined, b: JsonValue | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  if (typeof a === 'object' && a !== null) return false;
  return a === b && goKind(a) === goKind(b);
}

/** `reflect.DeepEqual` over decoded JSON: typed, key-set and order sensitive. */
export function goDeepEqual(a: JsonValue | undefined, b: JsonValue | undefined): boolean {
  if (a === b) return true;
  if (a === undefined || b === undefined || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!goDeepEqual(a[i], b[i])) return false;
    return true;
  }
  if (isJsonObject(a)) {
    if (!isJsonObject(b)) return false;
    const keys = Object.keys(a);
    if (keys.length !== Object.keys(b).length) return false;
    for (const key of keys) {
      if (!Object.hasOwn(b, key) || !goDeepEqual(a[key], b[key])) return false;
    }
    return true;
  }
  return false;
}

/**
 * `fmt.Sprintf("%v", v)` for the values a merge key or a primitive list can hold; the diff sorts and
 * matches list elements by this string (docs/merge-semantics.md#2-values).
 */
export function goString(value: JsonValue | undefined): string {
  if (value === undefined || value === null) return '<nil>';
  switch (typeof value) {
    case 'string':
      return value;
    case 'boolean':
      return value ? 'true' : 'false';
    case 'number':
      return goKind(value) === 'int' ? String(value) : goFloatString(value);
    case 'bigint':
      return value.toString();
    default:
      // %v of a map or slice is never needed for ordering real manifests; any stable text will do.
      return stringifyJson(value);
  }
}

/** `%v` of a float64: shortest `%g`, exponent form iff the decimal exponent is < -4 or >= 21. */
function goFloatString(value: number): string {
  if (!Number.isFinite(value)) return value > 0 ? '+Inf' : value < 0 ? '-Inf' : 'NaN';
  const [mantissa = '0', exponentText = '0'] = value.toExponential().split('e');
  const exponent = Number(exponentText);
  if (exponent < -4 || exponent >= 6) {
    const sign = exponent < 0 ? '-' : '+';
    const digits = String(Math.abs(exponent)).padStart(2, '0');
    return `${mantissa}e${sign}${digits}`;
  }
  return String(value);
}

/** Roughly `%v` of a Go map, for error messages only. */
export function goMapString(value: JsonObject): string {
  const members = Object.keys(value)
    .sort()
    .map(
      (key) =>
        `${key}:${isJsonObject(value[key]) ? goMapString(value[key] as JsonObject) : goString(value[key])}`,
    );
  return `map[${members.join(' ')}]`;
}

/** Bytewise UTF-8 order, which is code-point order; JS `<` compares UTF-16 units and differs. */
export function compareGoStrings(a: string, b: string): number {
  if (a === b) return 0;
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    const ca = a.charCodeAt(i);
    const cb = b.charCodeAt(i);
    if (ca === cb) continue;
    const surrogateA = ca >= 0xd800 && ca <= 0xdfff;
    const surrogateB = cb >= 0xd800 && cb <= 0xdfff;
    if (surrogateA !== surrogateB) return surrogateA ? 1 : -1;
    return ca < cb ? -1 : 1;
  }
  return a.length - b.length;
}

/**
 * Go's `sort.Sort` with the comparator the strategic-merge code uses, `a <= b` on the string form.
 * For up to 12 elements Go runs an insertion sort, which with a non-strict comparator reverses the
 * relative order of equal elements (docs/merge-semantics.md#2-values). Longer lists with duplicates
 * have an unspecified order in Go; there we sort stably.
 */
export function goSortByString<T>(items: readonly T[], key: (item: T) => string): T[] {
  const keyed = items.map((item) => ({ item, key: key(item) }));
  if (keyed.length <= 12) {
    for (let i = 1; i < keyed.length; i++) {
      for (let j = i; j > 0; j--) {
        const current = keyed[j]!;
        const previous = keyed[j - 1]!;
        if (compareGoStrings(current.key, previous.key) > 0) break;
        keyed[j] = previous;
        keyed[j - 1] = current;
      }
    }
  } else {
    keyed.sort((x, y) => compareGoStrings(x.key, y.key));
  }
  return keyed.map((entry) => entry.item);
}

/** A deep copy, so the engine can work the way the Go code does (in place) without touching inputs. */
export function cloneJson<T extends JsonValue>(value: T): T {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((item) => cloneJson(item)) as T;
  const copy: JsonObject = {};
  for (const key of Object.keys(value)) copy[key] = cloneJson((value as JsonObject)[key] as JsonValue);
  return copy as T;
}
