import type { SopsNode, SopsScalar } from './sops-tree.js';

/**
 * A decrypted document as JSON text, keys in file order. JSON is YAML too, so a decrypted `.yaml`
 * file is read by the manifest decoder like any other; and JSON leaves no doubt about a value's
 * type (a decrypted "yes" or "0755" stays a string whatever YAML version reads it).
 */
export function emitSopsJson(node: SopsNode): string {
  switch (node.kind) {
    case 'map':
      return `{${node.entries.map(({ key, value }) => `${JSON.stringify(key)}:${emitSopsJson(value)}`).join(',')}}`;
    case 'seq':
      return `[${node.items.map(emitSopsJson).join(',')}]`;
    case 'scalar':
      return emitScalar(node.value);
  }
}

function emitScalar(value: SopsScalar): string {
  switch (value.type) {
    case 'str':
      return JSON.stringify(value.value);
    case 'int':
      return value.value.toString();
    case 'float':
      // YAML's names for what JSON cannot write; sops files are YAML when they hold them.
      if (Number.isNaN(value.value)) return '.nan';
      if (!Number.isFinite(value.value)) return value.value > 0 ? '.inf' : '-.inf';
      return JSON.stringify(value.value);
    case 'bool':
      return value.value ? 'true' : 'false';
    case 'bytes':
      return JSON.stringify(Buffer.from(value.value).toString('utf8'));
    case 'null':
      return 'null';
  }
}
