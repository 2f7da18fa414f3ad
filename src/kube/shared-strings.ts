/**
 * One shared instance of each short string a fleet repeats in what the controller keeps per ApplySet:
 * the revision, a condition's message, what a set's notifications last told. Each parse of an answer,
 * each reconcile's outcome makes its own copy of such a string, so 10,000 ApplySets at one commit kept
 * 10,000 equal copies of it in each table (docs/performance.md). The value returned is equal to the one
 * given, so nothing a reader compares or prints changes.
 */

/** Strings longer than this are not shared: messages and revisions are shorter, inventories longer. */
const MAX_SHARED_LENGTH = 256;

/** The shared instances kept at most; past it the table starts again (holders keep theirs). */
const MAX_SHARED_STRINGS = 16_384;

const table = new Map<string, string>();

/** The shared instance equal to `value` (`value` itself, the first time or when it is long). */
export function sharedString(value: string): string {
  if (value.length > MAX_SHARED_LENGTH) return value;
  const known = table.get(value);
  if (known !== undefined) return known;
  if (table.size >= MAX_SHARED_STRINGS) table.clear();
  table.set(value, value);
  return value;
}
