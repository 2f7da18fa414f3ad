import { ESLint } from 'eslint';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

// The parse door holds only if a new parse outside it fails `npm run lint`: this lints new files with
// the repository's own configuration, through ESLint's Node API, as the lint script does.
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const eslint = new ESLint({ cwd: root });

async function doorErrors(file: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: path.join(root, file) });
  return (result?.messages ?? [])
    .filter((message) => message.ruleId === 'parse-door/one-parse-door')
    .map((message) => message.message);
}

describe('the one-parse-door lint rule', () => {
  it.each([
    [
      "import { load } from 'js-yaml';\nexport const read = (text: string): unknown => load(text);\n",
      /load.*js-yaml/,
    ],
    [
      "import yaml from 'js-yaml';\nexport const read = (text: string): unknown => yaml.load(text);\n",
      /yaml.*js-yaml/,
    ],
    [
      "import { parse } from 'yaml';\nexport const read = (text: string): unknown => parse(text);\n",
      /parse.*'yaml'/,
    ],
    [
      "import * as YAML from 'yaml';\nexport const read = (text: string): unknown => YAML.parse(text);\n",
      /YAML.*'yaml'/,
    ],
    [
      'export const read = (text: string): unknown => JSON.parse(text);\n',
      /^JSON\.parse outside the parse door/,
    ],
  ])('fails a new file of src/ that parses outside the door: %s', async (code, message) => {
    expect(await doorErrors('src/notify/new-receiver.ts', code)).toEqual([expect.stringMatching(message)]);
  });

  it('lets the door itself parse, and others write YAML and use its node guards', async () => {
    expect(
      await doorErrors(
        'src/input/new-reader.ts',
        "import { load } from 'js-yaml';\nexport const r = load;\n",
      ),
    ).toEqual([]);
    expect(
      await doorErrors(
        'src/notify/new-receiver.ts',
        "import { dump } from 'js-yaml';\nimport { isMap, type Node } from 'yaml';\n" +
          'export const write = (value: unknown, node: Node): string => (isMap(node) ? dump(value) : "");\n',
      ),
    ).toEqual([]);
  });
});
