import { gunzipSync, gzipSync } from 'node:zlib';
import { IntentError } from '../errors/intent-error.js';
import { MetadataKeys } from './metadata-keys.js';

/**
 * The API server refuses an object whose annotations add up to more than 256 KiB (keys and values), so
 * the plain one-line-per-object list stops fitting at about 6,000 objects. Up to PLAIN_LIMIT_BYTES the
 * list is written as kubectl writes it; past it, it goes gzip'ed and base64'ed under
 * `applyset.dev/last-applied-objects-gzip`, and the plain annotation holds COMPRESSED_MARKER instead:
 * a line no reader of the plain format accepts (it has no ':'), so an older tool refuses the set
 * loudly rather than taking it for an empty one and pruning nothing, or everything. One merge patch
 * writes both keys, so a crash never leaves one without the other.
 */
export const COMPRESSED_INVENTORY_KEY = 'applyset.dev/last-applied-objects-gzip';
/** @internal test seam: the marker the tests look for in a written annotation */
export const COMPRESSED_MARKER = `compressed-in-${COMPRESSED_INVENTORY_KEY}`;
/** @internal test seam: the limit its tests assert against */
export const PLAIN_LIMIT_BYTES = 128 * 1024;
/** The server's limit on all annotations of one object together (apimachinery's TotalAnnotationSizeLimitB). */
export const TOTAL_ANNOTATION_LIMIT_BYTES = 256 * 1024;

/** The annotation values for an inventory text: the compressed key is null (removed) for small sets. */
export function encodeInventory(text: string): {
  readonly [MetadataKeys.lastAppliedObjects]: string;
  readonly [COMPRESSED_INVENTORY_KEY]: string | null;
} {
  if (Buffer.byteLength(text, 'utf8') <= PLAIN_LIMIT_BYTES) {
    return { [MetadataKeys.lastAppliedObjects]: text, [COMPRESSED_INVENTORY_KEY]: null };
  }
  // mtime 0 and a fixed level: the same list always encodes to the same bytes, so an unchanged set
  // is never rewritten.
  const packed = gzipSync(Buffer.from(text, 'utf8'), { level: 9 });
  return {
    [MetadataKeys.lastAppliedObjects]: COMPRESSED_MARKER,
    [COMPRESSED_INVENTORY_KEY]: packed.toString('base64'),
  };
}

/**
 * A compressed inventory that cannot be decoded; stalled, like any damaged inventory.
 * @internal Tests assert the class the decoder throws.
 */
export class CompressedInventoryError extends IntentError {
  override readonly name = 'CompressedInventoryError';
  readonly code = 'INVENTORY_MALFORMED';
  readonly intent = 'stalled';
  readonly reason = 'InventoryInvalid';
}

/**
 * The set's record would not fit on its apply-config object, even compressed: refused before
 * anything is written, naming the limit and by how much it is over. Stalled: only a smaller set (or
 * fewer other annotations on the parent) helps.
 */
export class InventoryTooLargeError extends IntentError {
  override readonly name = 'InventoryTooLargeError';
  readonly code = 'INVENTORY_TOO_LARGE';
  readonly intent = 'stalled';
  readonly reason = 'InventoryTooLarge';
  constructor(
    readonly parent: string,
    readonly objects: number,
    readonly bytes: number,
  ) {
    super(
      `the inventory of ${objects} objects would take the annotations of ${parent} to ${bytes} bytes, ` +
        `over the API server's limit of ${TOTAL_ANNOTATION_LIMIT_BYTES} bytes for all annotations of an ` +
        `object (by ${bytes - TOTAL_ANNOTATION_LIMIT_BYTES} bytes); nothing was written: split the set`,
    );
  }
}

/**
 * The most a compressed inventory may inflate to, and the most lines any inventory may hold. The most
 * this controller can write within the server's 256 KiB for all annotations is about 86,000 lines
 * and 2.9 MiB inflated (sequential names compress 16 to 1); a real set of 30,000 objects is about
 * 1.3 MiB. The annotation is also anyone's to edit who may patch the ApplySet, and a 250 KB gzip bomb
 * inflates to some 250 MiB of newlines that, split into lines, took the whole process down (and again
 * on every restart, since the annotation stays). So inflating stops at MAX_INVENTORY_TEXT_BYTES, and
 * lines are counted on the bytes before any string or array is made of them: about three times what
 * the controller can write, and under 100 MiB of memory for a parsed inventory at both limits.
 * @internal test seam: the limit its tests assert against
 */
export const MAX_INVENTORY_TEXT_BYTES = 8 * 1024 * 1024;
/** @internal test seam: the limit its tests assert against */
export const MAX_INVENTORY_LINES = 250_000;

/**
 * An inventory past MAX_INVENTORY_TEXT_BYTES or MAX_INVENTORY_LINES: refused before it is read, so
 * nothing of the set is applied or pruned. Stalled: only a human fixing the annotation helps.
 *
 * Unlike InventoryTooLargeError (a set too large to record, found before writing: split the set), this
 * is an annotation found too large when reading, which this controller never writes: it was edited or
 * forged, and the fix is the annotation's. Its own code says so; the condition reason is the same,
 * `InventoryTooLarge`, since to the user both are the inventory over a size limit, and the message
 * names the annotation and what to do.
 * @internal Tests assert the class the decoder throws.
 */
export class InventoryPastLimitError extends IntentError {
  override readonly name = 'InventoryPastLimitError';
  readonly code = 'INVENTORY_PAST_LIMIT';
  readonly intent = 'stalled';
  readonly reason = 'InventoryTooLarge';
  constructor(key: string, limit: string) {
    super(`annotation ${key} ${limit}; nothing was applied or pruned: correct or remove the annotation`);
  }
}

/** The inventory text the annotations hold, in either form, within the limits above. */
export function decodeInventory(annotations: Readonly<Record<string, string | undefined>>): string {
  const plain = annotations[MetadataKeys.lastAppliedObjects] ?? '';
  if (plain.trim() !== COMPRESSED_MARKER) {
    refuseTooManyLines(plain, MetadataKeys.lastAppliedObjects);
    return plain;
  }
  const packed = annotations[COMPRESSED_INVENTORY_KEY];
  if (packed === undefined || packed === '') {
    throw new CompressedInventoryError(
      `${MetadataKeys.lastAppliedObjects} says the list is in ${COMPRESSED_INVENTORY_KEY}, which is missing`,
    );
  }
  const text = inflateBounded(Buffer.from(packed, 'base64'));
  refuseTooManyLines(text, COMPRESSED_INVENTORY_KEY);
  return text.toString('utf8');
}

/** zlib stops and throws as soon as its output passes maxOutputLength: a bomb never inflates whole. */
function inflateBounded(packed: Buffer): Buffer {
  try {
    return gunzipSync(packed, { maxOutputLength: MAX_INVENTORY_TEXT_BYTES });
  } catch (error) {
    if ((error as { code?: unknown }).code === 'ERR_BUFFER_TOO_LARGE') {
      throw new InventoryPastLimitError(
        COMPRESSED_INVENTORY_KEY,
        `decompresses past ${MAX_INVENTORY_TEXT_BYTES / (1024 * 1024)} MiB`,
      );
    }
    throw new CompressedInventoryError(`${COMPRESSED_INVENTORY_KEY} is not a gzip'ed list`, { cause: error });
  }
}

/** Counted in place, on the annotation's string or the inflated bytes: no copy per reconcile. */
function refuseTooManyLines(text: string | Buffer, key: string): void {
  let lines = 1;
  for (let at = text.indexOf('\n'); at >= 0; at = text.indexOf('\n', at + 1)) {
    lines += 1;
    if (lines > MAX_INVENTORY_LINES) {
      throw new InventoryPastLimitError(key, `holds more than ${MAX_INVENTORY_LINES} lines`);
    }
  }
}

/** The bytes the server counts for a set of annotations: every key and value. */
export function annotationBytes(annotations: Readonly<Record<string, string | null | undefined>>): number {
  let total = 0;
  for (const [key, value] of Object.entries(annotations)) {
    if (value === null || value === undefined) continue;
    total += Buffer.byteLength(key, 'utf8') + Buffer.byteLength(value, 'utf8');
  }
  return total;
}
