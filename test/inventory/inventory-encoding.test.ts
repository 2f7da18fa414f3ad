import { gunzipSync } from 'node:zlib';
import { formatInventory } from '../../src/inventory/format-inventory.js';
import {
  annotationBytes,
  COMPRESSED_INVENTORY_KEY,
  COMPRESSED_MARKER,
  CompressedInventoryError,
  decodeInventory,
  encodeInventory,
  PLAIN_LIMIT_BYTES,
  TOTAL_ANNOTATION_LIMIT_BYTES,
} from '../../src/inventory/inventory-encoding.js';
import { MetadataKeys } from '../../src/inventory/metadata-keys.js';
import { InventoryParseError, parseInventory } from '../../src/inventory/parse-inventory.js';

const PLAIN = MetadataKeys.lastAppliedObjects;

function configMaps(count: number, namespace = 'team-a') {
  return Array.from({ length: count }, (_, i) => ({
    namespace,
    group: '',
    kind: 'ConfigMap',
    name: `settings-${String(i).padStart(6, '0')}`,
  }));
}

describe('the inventory encoding', () => {
  it('writes a small set exactly as kubectl does, with the compressed key removed', () => {
    const text = formatInventory(configMaps(100));
    expect(encodeInventory(text)).toEqual({ [PLAIN]: text, [COMPRESSED_INVENTORY_KEY]: null });
    expect(decodeInventory({ [PLAIN]: text })).toBe(text);
  });

  it('compresses a set past the plain limit, deterministically, and reads it back', () => {
    const text = formatInventory(configMaps(20_000));
    expect(Buffer.byteLength(text)).toBeGreaterThan(PLAIN_LIMIT_BYTES);
    const encoded = encodeInventory(text);
    expect(encoded[PLAIN]).toBe(COMPRESSED_MARKER);
    expect(encoded).toEqual(encodeInventory(text));
    expect(gunzipSync(Buffer.from(encoded[COMPRESSED_INVENTORY_KEY] ?? '', 'base64')).toString()).toBe(text);
    expect(
      decodeInventory({ ...encoded, [COMPRESSED_INVENTORY_KEY]: encoded[COMPRESSED_INVENTORY_KEY] ?? '' }),
    ).toBe(text);
  });

  it('keeps 20,000 objects well under the server limit on all annotations', () => {
    const encoded = encodeInventory(formatInventory(configMaps(20_000)));
    expect(annotationBytes(encoded)).toBeLessThan(TOTAL_ANNOTATION_LIMIT_BYTES / 2);
  });

  it('makes an older reader of the plain format refuse the set, not read it as empty', () => {
    const encoded = encodeInventory(formatInventory(configMaps(20_000)));
    expect(() => parseInventory(encoded[PLAIN])).toThrow(InventoryParseError);
  });

  it('refuses a marker without its list, and a list that is not gzip', () => {
    expect(() => decodeInventory({ [PLAIN]: COMPRESSED_MARKER })).toThrow(CompressedInventoryError);
    expect(() =>
      decodeInventory({ [PLAIN]: COMPRESSED_MARKER, [COMPRESSED_INVENTORY_KEY]: 'bm90IGd6aXA=' }),
    ).toThrow(/not a gzip'ed list/);
  });
});
