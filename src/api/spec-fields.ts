import { InvalidDurationError, parseDuration } from './durations.js';

/*
 * Reading single fields of a spec read from the cluster: each reader reports a wrong type through
 * `fail` and goes on, so resolveApplySetSpec can name every problem at once, not just the first.
 */

/** Records a problem with `field`; returns undefined so a reader can `return fail(...)`. */
export type SpecFail = (field: string, message: string) => undefined;

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
export const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

export const isNamespaceName = (text: string): boolean => DNS1123_LABEL.test(text) && text.length <= 63;

export function readString(
  object: Readonly<Record<string, unknown>>,
  key: string,
  field: string,
  fail: SpecFail,
  options: { readonly required?: boolean } = {},
): string | undefined {
  const value = object[key];
  if (value === undefined) return options.required === true ? fail(field, 'is required') : undefined;
  if (typeof value !== 'string') return fail(field, 'must be a string');
  return value;
}

export function readBoolean(spec: Readonly<Record<string, unknown>>, key: string, fail: SpecFail): boolean {
  const value = spec[key];
  if (value === undefined) return false;
  if (typeof value !== 'boolean') {
    fail(`spec.${key}`, 'must be true or false');
    return false;
  }
  return value;
}

export function readDuration(
  spec: Readonly<Record<string, unknown>>,
  key: string,
  fail: SpecFail,
): number | undefined {
  const text = readString(spec, key, `spec.${key}`, fail);
  if (text === undefined) return undefined;
  try {
    const ms = parseDuration(text);
    return ms > 0 ? ms : fail(`spec.${key}`, 'must be longer than zero');
  } catch (error) {
    if (error instanceof InvalidDurationError) return fail(`spec.${key}`, error.message);
    throw error;
  }
}

export function isRecord(value: unknown): value is Readonly<Record<string, unknown>> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
