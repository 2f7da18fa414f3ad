import { IntentError, type FailureStep, type ObjectError } from '../errors/intent-error.js';
import { MetadataKeys } from './metadata-keys.js';
import type { ObjectRef } from '../manifests/object-ref.js';
import { toInventory, type Inventory } from './inventory.js';

/**
 * A malformed `last-applied-objects` annotation. Stalled: the record of what we own is damaged, and
 * guessing could delete the wrong object, so a human must look.
 */
export class InventoryParseError extends IntentError {
  override readonly name = 'InventoryParseError';
  readonly code = 'INVENTORY_MALFORMED';
  readonly intent = 'stalled';
  readonly reason = 'InventoryInvalid';
  constructor(
    /** 1-based line number in the annotation. */
    readonly line: number,
    readonly text: string,
    detail: string,
  ) {
    super(`last-applied-objects line ${line} ${JSON.stringify(text)}: ${detail}`);
  }

  /** Where, which line, and what to do; at the apply, that nothing of the set was touched. */
  override describe(at: FailureStep | undefined): string {
    const damage = `the inventory annotation ${MetadataKeys.lastAppliedObjects} cannot be read (${this.message}): fix or remove that line`;
    return at?.step === 'apply' ? `${damage}; nothing was applied or pruned` : damage;
  }

  override objectErrors(): readonly ObjectError[] {
    return [{ object: `last-applied-objects line ${this.line}`, message: this.message }];
  }
}

/**
 * Parses `kubectl.kubernetes.io/last-applied-objects`. Blank lines and surrounding whitespace are
 * tolerated (a YAML block scalar adds a final newline; people edit by hand). Each other line is
 * `namespace:group:kind:name`. The namespace (a DNS label), the group (a DNS subdomain) and the kind
 * (a CamelCase identifier) can never hold a ':', but a name can: RBAC names only have to be valid path
 * segments, and `system:aggregate-to-view` is everywhere. So the name is everything after the third
 * ':', and a line with fewer than three is an error naming the line.
 */
export function parseInventory(text: string): Inventory {
  const { inventory, problems } = parseInventoryLeniently(text);
  const first = problems[0];
  if (first !== undefined) throw first;
  return inventory;
}

/**
 * Every line that can be read, and an error for each one that cannot. Only for letting go of a set
 * (deletionPolicy Orphan), where a damaged line must not keep the readable ones from being released;
 * nothing is ever pruned from a damaged inventory.
 */
export function parseInventoryLeniently(text: string): {
  readonly inventory: Inventory;
  readonly problems: readonly InventoryParseError[];
} {
  const refs: ObjectRef[] = [];
  const problems: InventoryParseError[] = [];
  text.split(/\r?\n/).forEach((raw, index) => {
    const line = raw.trim();
    if (line === '') return;
    try {
      refs.push(parseInventoryLine(line, index + 1, raw));
    } catch (error) {
      if (!(error instanceof InventoryParseError)) throw error;
      problems.push(error);
    }
  });
  return { inventory: toInventory(refs), problems };
}

function parseInventoryLine(line: string, lineNumber: number, raw: string): ObjectRef {
  const first = line.indexOf(':');
  const second = first < 0 ? -1 : line.indexOf(':', first + 1);
  const third = second < 0 ? -1 : line.indexOf(':', second + 1);
  if (third < 0) {
    const fields = line.split(':').length;
    throw new InventoryParseError(
      lineNumber,
      raw,
      `expected namespace:group:kind:name, found ${fields} field${fields === 1 ? '' : 's'}`,
    );
  }
  const namespace = line.slice(0, first);
  const group = line.slice(first + 1, second);
  const kind = line.slice(second + 1, third);
  const name = line.slice(third + 1);
  if (kind === '') throw new InventoryParseError(lineNumber, raw, 'the kind is empty');
  if (name === '') throw new InventoryParseError(lineNumber, raw, 'the name is empty');
  return { namespace, group, kind, name };
}
