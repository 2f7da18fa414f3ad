import path from 'node:path';
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import oneParseDoor from './scripts/lint/one-parse-door.js';

/**
 * The functional core: data in, data out. These folders may not reach the file system, the network,
 * processes or the Kubernetes client, nor import a folder of the imperative shell.
 */
const PURE_FOLDERS = [
  'src/api',
  'src/input',
  'src/manifests',
  'src/merge',
  'src/inventory',
  'src/plan',
  'src/errors',
  'src/health',
];
const IO_MODULES = ['fs', 'fs/promises', 'http', 'https', 'net', 'child_process', 'os', 'dns'].flatMap(
  (name) => [name, `node:${name}`],
);
const SHELL_FOLDERS = ['apply', 'cli', 'controller', 'git', 'http', 'kube', 'net', 'observability'];

/**
 * The one outbound door (src/net, docs/multi-tenancy.md#the-outbound-door): nothing else in src/ opens a
 * connection, so no feature can forget the address policy, the timeouts or the bound on an answer. Types
 * (IncomingMessage, AddressInfo) and servers (createServer) stay allowed; what sends a request does not.
 */
const OUTBOUND_DOOR = 'src/net/**/*.ts';
const OUTBOUND_MESSAGE = 'requests out go through the outbound door: sendOutbound/openOutbound in src/net';
const OUTBOUND_IMPORTS = [
  ...['http', 'https'].flatMap((name) =>
    [name, `node:${name}`].map((module) => ({
      name: module,
      importNames: ['request', 'get', 'Agent', 'globalAgent', 'default'],
      message: OUTBOUND_MESSAGE,
    })),
  ),
  ...['net', 'tls', 'http2', 'dgram'].flatMap((name) =>
    [name, `node:${name}`].map((module) => ({
      name: module,
      importNames: ['connect', 'createConnection', 'Socket', 'TLSSocket', 'createSocket', 'default'],
      message: OUTBOUND_MESSAGE,
    })),
  ),
  ...[
    'undici',
    'node-fetch',
    'axios',
    'got',
    'simple-get',
    'isomorphic-git/http/node',
    'isomorphic-git/http/web',
    // Posts spans to the trace collector: made in src/net/otlp-trace-exporter.ts only.
    '@opentelemetry/exporter-trace-otlp-http',
  ].map((name) => ({ name, message: OUTBOUND_MESSAGE })),
];

/**
 * The pattern door (issue #33): a pattern from tenant input (a sops file's encrypted_regex, a glob of
 * spec.source.ignore) becomes a matcher only in src/patterns/, with RE2's semantics (linear time). A
 * `RegExp` built at run time anywhere else could backtrack for as long as its author lets it; regex
 * literals, written by us, are fine.
 */
const patternDoor = {
  rules: {
    'no-runtime-regexp': {
      meta: {
        type: 'problem',
        schema: [],
        messages: {
          door: 'a pattern is compiled only in src/patterns/ (compileTenantPattern: RE2, linear time); write a regex literal for a fixed pattern',
        },
      },
      create(context) {
        const isRegExp = (callee) =>
          (callee.type === 'Identifier' && callee.name === 'RegExp') ||
          (callee.type === 'MemberExpression' && !callee.computed && callee.property.name === 'RegExp');
        const check = (node) => {
          if (isRegExp(node.callee)) context.report({ node, messageId: 'door' });
        };
        return { NewExpression: check, CallExpression: check };
      },
    },
  },
};

/**
 * Layers: the controller's reconcile and runtime (src/controller/) and the command line (src/cli/) sit on
 * top; every other folder (the shells notify, ui, preview, kustomize, sops and source among them) is
 * beneath them and imports nothing from them. What two of them share (a reconcile step the preview runs
 * too, the ApplySet API, the informers) lives in a folder beneath both (src/reconcile/, src/kube/).
 */
const TOP_FOLDERS = ['src/controller/', 'src/cli/'];
const layers = {
  rules: {
    'no-upward-import': {
      meta: {
        type: 'problem',
        schema: [],
        messages: {
          upward:
            '{{from}} is beneath src/controller/ and src/cli/ and imports nothing from them (docs/architecture.md#4-dependency-rules); move what it needs down',
        },
      },
      create(context) {
        const file = path.relative(process.cwd(), context.filename).split(path.sep).join('/');
        const check = (node) => {
          const spec = node.source?.value;
          if (typeof spec !== 'string' || !spec.startsWith('.')) return;
          const target = path.posix.normalize(path.posix.join(path.posix.dirname(file), spec));
          if (TOP_FOLDERS.some((top) => target.startsWith(top))) {
            context.report({ node, messageId: 'upward', data: { from: file } });
          }
        };
        return {
          ImportDeclaration: check,
          ImportExpression: check,
          ExportNamedDeclaration: check,
          ExportAllDeclaration: check,
        };
      },
    },
  },
};

/**
 * The one parse door (issue #33): src/input/, and the manifest reader's js-yaml layer, which decodes as
 * kubectl does (go-yaml v2's scalars, keys and escapes) and takes its alias bound from src/input/.
 */
const PARSE_DOOR_FILES = [
  'src/input/**/*.ts',
  'src/manifests/decode-documents.ts',
  'src/manifests/go-yaml-v2-schema.ts',
  'src/manifests/check-quoted-escapes.ts',
  'src/manifests/yaml-error-at.ts',
  'src/manifests/lossless-json.ts',
];

const ACCOUNT_RULE_MESSAGE =
  'the account an ApplySet acts as is decided only by applySetAccount (src/api/applyset-account.ts)';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'coverage/**', 'deploy/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: 'readonly', console: 'readonly' } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-empty': ['error', { allowEmptyCatch: false }],
    },
  },
  {
    // Sizes a reader takes in at once: a file under 350 lines, a function under 80.
    files: ['src/**/*.ts'],
    rules: {
      'max-lines': ['error', { max: 350 }],
      'max-lines-per-function': ['error', { max: 80, skipBlankLines: true, skipComments: true }],
    },
  },
  {
    files: ['src/**/*.ts'],
    ignores: [OUTBOUND_DOOR],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        { paths: OUTBOUND_IMPORTS.map((path) => ({ ...path, allowTypeImports: true })) },
      ],
      'no-restricted-globals': [
        'error',
        ...['fetch', 'XMLHttpRequest', 'WebSocket', 'EventSource'].map((name) => ({
          name,
          message: OUTBOUND_MESSAGE,
        })),
      ],
      'no-restricted-properties': [
        'error',
        { object: 'globalThis', property: 'fetch', message: OUTBOUND_MESSAGE },
      ],
    },
  },
  {
    // The web view's script runs in the user's browser, not in the controller: its fetch reloads the
    // page from the same origin and opens nothing from the controller's network.
    files: ['src/ui/ui-assets.ts'],
    rules: { 'no-restricted-globals': 'off' },
  },
  {
    // The test harness is read as often as the source: its files stay under 350 lines too.
    files: ['test/harness/**/*.ts', 'test/harness/**/*.js'],
    rules: { 'max-lines': ['error', { max: 350 }] },
  },
  {
    // The pattern door: see patternDoor above.
    files: ['src/**/*.ts'],
    ignores: ['src/patterns/**'],
    plugins: { 'pattern-door': patternDoor },
    rules: { 'pattern-door/no-runtime-regexp': 'error' },
  },
  {
    files: PURE_FOLDERS.map((folder) => `${folder}/**/*.ts`),
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [
            ...IO_MODULES.map((name) => ({ name, message: 'a pure folder does no IO: pass an adapter in' })),
            { name: '@kubernetes/client-node', message: 'a pure folder does not talk to the API server' },
          ],
          patterns: [
            {
              group: [...SHELL_FOLDERS.map((folder) => `../${folder}/*`), '../main.js'],
              message: 'a pure folder does not import the imperative shell',
            },
          ],
        },
      ],
    },
  },
  {
    // Which account an ApplySet acts as is one rule, in one function (src/api/applyset-account.ts):
    // a second copy of `serviceAccountName ?? default`, or of the impersonated user's name, could
    // drift from it and act for a tenant with another account's rights.
    files: ['src/**/*.ts'],
    ignores: ['src/api/applyset-account.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: "LogicalExpression[operator='??'][left.property.name='serviceAccountName']",
          message: ACCOUNT_RULE_MESSAGE,
        },
        {
          selector: 'TemplateLiteral > TemplateElement[value.raw=/^system:serviceaccount:/]',
          message: ACCOUNT_RULE_MESSAGE,
        },
      ],
    },
  },
  {
    // Layers: see `layers` above.
    files: ['src/**/*.ts'],
    ignores: [...TOP_FOLDERS.map((folder) => `${folder}**`), 'src/main.ts'],
    plugins: { layers },
    rules: { 'layers/no-upward-import': 'error' },
  },
  {
    // Every YAML or JSON parse of tenant input goes through the one parse door (scripts/lint/one-parse-door.js).
    files: ['src/**/*.ts'],
    ignores: PARSE_DOOR_FILES,
    plugins: { 'parse-door': { rules: { 'one-parse-door': oneParseDoor } } },
    rules: { 'parse-door/one-parse-door': 'error' },
  },
);
