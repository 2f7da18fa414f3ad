import type { ObjectRef } from '../manifests/object-ref.js';
import { toInventory, type Inventory } from './inventory.js';

/**
 * A malformed `last-applied-objects` annotation. Stalled: the record of what we own is damaged, and
 * guessing could delete the wrong object, so a human must look.
 */
export class InventoryParseError extends Error {
  override readonly name = 'InventoryParseError';
  readonly code = 'INVENTORY_MALFORMED';
  readonly intent = 'stalled';
  constructor(
    /** 1-based line number in the annotation. */
    readonly line: number,
    readonly text: string,
    detail: string,
  ) {
    super(`last-applied-objects line ${line} ${JSON.stringify(text)}: ${detail}`);
  }
}

/**
 * Parses `kubectl.kubernetes.io/last-applied-objects`. Blank lines and surrounding whitespace are
 * tolerated (a YAML block scalar adds a final newline; people edit by hand). Anything else that is not
 * exactly `namespace:group:kind:name` with a kind and a name is an error naming the line.
 */
export function parseInventory(text: string): Inventory {
  const refs: ObjectRef[] = [];
  text.split(/\r?\n/).forEach((raw, index) => {
    const line = raw.trim();
    if (line === '') return;
    const parts = line.split(':');
    if (parts.length !== 4) {
      throw new InventoryParseError(
        index + 1,
        raw,
        `expected namespace:group:kind:name, found ${parts.length} fields`,
      );
    }
    const [namespace, group, kind, name] = parts as [string, string, string, string];
    if (kind === '') throw new InventoryParseError(index + 1, raw, 'the kind is empty');
    if (name === '') throw new InventoryParseError(index + 1, raw, 'the name is empty');
    refs.push({ namespace, group, kind, name });
  });
  return toInventory(refs);
}
