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
const SHELL_FOLDERS = ['apply', 'cli', 'controller', 'git', 'http', 'kube', 'observability'];

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
    // The test harness is read as often as the source: its files stay under 350 lines too.
    files: ['test/harness/**/*.ts', 'test/harness/**/*.js'],
    rules: { 'max-lines': ['error', { max: 350 }] },
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
    // Every YAML or JSON parse of tenant input goes through the one parse door (scripts/lint/one-parse-door.js).
    files: ['src/**/*.ts'],
    ignores: PARSE_DOOR_FILES,
    plugins: { 'parse-door': { rules: { 'one-parse-door': oneParseDoor } } },
    rules: { 'parse-door/one-parse-door': 'error' },
  },
);
