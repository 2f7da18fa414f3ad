import { ESLint } from 'eslint';

/** What the repository's own ESLint config says of `code` as if it were the file at `filePath`. */
async function lint(code: string, filePath: string): Promise<string[]> {
  const eslint = new ESLint({ cwd: process.cwd() });
  const [result] = await eslint.lintText(code, { filePath });
  return (result?.messages ?? []).map((message) => `${message.ruleId ?? ''}: ${message.message}`);
}

describe('the pattern door (eslint.config.js)', () => {
  const violations = [
    'export const matcher = (source: string): RegExp => new RegExp(source);',
    'export const matcher = (source: string): RegExp => RegExp(source, "u");',
    'export const matcher = (source: string): RegExp => new globalThis.RegExp(source);',
  ];

  it.each(violations)(
    'fails a file outside src/patterns/ that builds a RegExp at run time: %s',
    async (code) => {
      expect(await lint(code, 'src/notify/event-filter.ts')).toEqual([
        'pattern-door/no-runtime-regexp: a pattern is compiled only in src/patterns/ (compileTenantPattern: RE2, linear time); write a regex literal for a fixed pattern',
      ]);
    },
  );

  it('lets src/patterns/ build patterns, and any file use a regex literal', async () => {
    expect(await lint(violations[0] as string, 'src/patterns/another-door.ts')).toEqual([]);
    expect(
      await lint(
        'export const isDigits = (text: string): boolean => /^[0-9]+$/.test(text);\n',
        'src/api/x.ts',
      ),
    ).toEqual([]);
  });
});
