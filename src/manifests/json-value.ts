/**
 * The value model of decoded manifests, live objects and patches: what Go's encoding/json produces
 * into interface{}. Numbers are JS numbers, except an integer beyond 2^53 that fits an int64, which is
 * a `bigint` so that it stays exact as in Go (`lossless-json.ts`); an integral number is an "int"
 * (docs/merge-semantics.md#2-values).
 */
type JsonPrimitive = null | boolean | number | bigint | string;
export type JsonValue = JsonPrimitive | JsonValue[] | JsonObject;
export interface JsonObject {
  [key: string]: JsonValue;
}

export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The string items of a JSON array (an absent or other value: none), as Kubernetes lists of names are read. */
export function stringItems(value: JsonValue | undefined): string[] {
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];
}
