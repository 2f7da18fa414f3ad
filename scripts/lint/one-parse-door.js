/**
 * ESLint rule `one-parse-door`: every YAML or JSON parse of tenant input goes through the parse door
 * (src/input/), which bounds size, depth and aliases (docs/multi-tenancy.md#the-boundary-door-by-door).
 * Outside the door a file may not import a YAML reader (`load`, `loadAll` of js-yaml; `parse`,
 * `parseDocument`, `parseAllDocuments`, `Parser`, `Lexer`, `Composer` of yaml; either module whole), nor
 * call `JSON.parse`. It may import what reads nothing: writers (`dump`, `stringify`), types and the node
 * guards a walk of the door's documents uses (`isMap`, `isAlias`).
 * A parse of what is not tenant input (the controller's own cache, the API server's answers) says so
 * with an `eslint-disable-next-line` and its reason.
 */

const YAML_MODULES = new Set(['yaml', 'js-yaml']);
/** What reads text, by module; a default or namespace import reaches them all. */
const READERS = new Set([
  'load',
  'loadAll',
  'parse',
  'parseDocument',
  'parseAllDocuments',
  'Parser',
  'Lexer',
  'Composer',
]);

function isYamlModule(source) {
  return typeof source === 'string' && YAML_MODULES.has(source.split('/')[0]);
}

export default {
  meta: {
    type: 'problem',
    docs: {
      description: 'YAML and JSON of tenant input are parsed only through the parse door (src/input/)',
    },
    schema: [],
    messages: {
      yamlImport:
        "import {{name}} from '{{source}}' parses YAML outside the parse door: read tenant YAML with src/input/read-yaml-value.ts or read-yaml-documents.ts, which bound size, depth and aliases",
      jsonParse:
        'JSON.parse outside the parse door: read tenant JSON with src/input/read-json-value.ts, which bounds size and depth',
    },
  },
  create(context) {
    const reportImport = (node, name, source) =>
      context.report({ node, messageId: 'yamlImport', data: { name, source } });
    return {
      ImportDeclaration(node) {
        if (!isYamlModule(node.source.value) || node.importKind === 'type') return;
        for (const specifier of node.specifiers) {
          if (specifier.type === 'ImportSpecifier') {
            const imported = specifier.imported.name ?? specifier.imported.value;
            if (specifier.importKind === 'type' || !READERS.has(imported)) continue;
            reportImport(specifier, `{ ${imported} }`, node.source.value);
          } else reportImport(specifier, specifier.local.name, node.source.value);
        }
        if (node.specifiers.length === 0) reportImport(node, '(for its effects)', node.source.value);
      },
      ImportExpression(node) {
        if (node.source.type === 'Literal' && isYamlModule(node.source.value)) {
          reportImport(node, 'import()', node.source.value);
        }
      },
      CallExpression(node) {
        const { callee } = node;
        const [first] = node.arguments;
        if (
          callee.type === 'Identifier' &&
          callee.name === 'require' &&
          first?.type === 'Literal' &&
          isYamlModule(first.value)
        ) {
          reportImport(node, 'require()', first.value);
        }
        if (
          callee.type === 'MemberExpression' &&
          callee.object.type === 'Identifier' &&
          callee.object.name === 'JSON' &&
          ((callee.property.type === 'Identifier' && !callee.computed && callee.property.name === 'parse') ||
            (callee.property.type === 'Literal' && callee.property.value === 'parse'))
        ) {
          context.report({ node, messageId: 'jsonParse' });
        }
      },
    };
  },
};
