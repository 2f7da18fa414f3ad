/**
 * The README and docs/ name only what exists: every repository path they quote in backticks is a file or
 * folder of the repository, and every code name they quote (a camelCase or PascalCase identifier, or
 * `name()`) appears in the code (src/, test/, scripts/, bench/, the chart or the CRD). A page that keeps
 * naming a function after it was renamed or deleted fails here.
 */
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const PATH_ROOTS = ['src', 'test', 'deploy', 'crds', 'scripts', 'bench', 'docs', 'examples', 'controlplane'];
const CODE_ROOTS = ['src', 'test', 'scripts', 'bench', 'deploy', 'crds', 'controlplane', '.ci'];

function filesUnder(dir: string): string[] {
  const full = path.join(root, dir);
  if (!existsSync(full)) return [];
  return readdirSync(full).flatMap((name) => {
    const child = path.join(dir, name);
    if (name === 'node_modules' || name.startsWith('.cache')) return [];
    return statSync(path.join(root, child)).isDirectory() ? filesUnder(child) : [child];
  });
}

const pages = ['README.md', 'CONTRIBUTING.md', ...filesUnder('docs').filter((file) => file.endsWith('.md'))];
const code = CODE_ROOTS.flatMap(filesUnder)
  .filter((file) => /\.(ts|js|json|ya?ml|tpl|sh|go|txt)$/.test(file) || !file.includes('.'))
  .map((file) => readFileSync(path.join(root, file), 'utf8'))
  .join('\n');
const codeWords = new Set(code.match(/[A-Za-z_$][\w$]*/g));

/**
 * Every `quoted` span of a page, outside fenced blocks, with whether its line says it names another
 * project's code: the docs name the upstream function a piece of ours mirrors (`Upstream: handleSliceDiff`,
 * kubectl's `applyOneObject`), which our code does not have.
 */
function quotedSpans(text: string): { span: string; upstream: boolean }[] {
  const prose = text.replace(/```[\s\S]*?```/g, '');
  return prose.split('\n').flatMap((line) =>
    [...line.matchAll(/`([^`]+)`/g)].map((match) => ({
      span: match[1] ?? '',
      upstream: /upstream|kubectl's|apimachinery|\bFlux\b|Argo CD/i.test(line),
    })),
  );
}

const quoted = pages.flatMap((page) =>
  quotedSpans(readFileSync(path.join(root, page), 'utf8')).map((quote) => ({ page, ...quote })),
);

describe('the README and docs/', () => {
  it('quote only repository paths that exist', () => {
    const missing = quoted
      .filter(({ span }) => PATH_ROOTS.some((dir) => span.startsWith(`${dir}/`)))
      .map(({ page, span }) => ({ page, file: span.replace(/[#:].*$/, '').replace(/\/$/, '') }))
      .filter(({ file }) => !/[*<>{}\s]|\.\.\./.test(file))
      .filter(({ file }) => !existsSync(path.join(root, file)));
    expect(missing).toEqual([]);
  });

  it('quote only test files that exist, where they name one by its file name alone', () => {
    const testFiles = new Set(filesUnder('test').map((file) => path.basename(file)));
    const missing = quoted
      .filter(({ span }) => /^[\w.-]+\.i?test\.ts$/.test(span))
      .filter(({ span }) => !testFiles.has(span));
    expect(missing).toEqual([]);
  });

  it('quote only code names that the code has', () => {
    const missing = quoted
      .filter(({ upstream }) => !upstream)
      .map(({ page, span }) => ({ page, name: span.replace(/\(\)$/, '') }))
      .filter(
        ({ name }) =>
          /^[a-z]+[A-Z][A-Za-z0-9]*$/.test(name) || /^[A-Z][a-z0-9]+[A-Z][A-Za-z0-9]*$/.test(name),
      )
      .filter(({ name }) => !codeWords.has(name));
    expect(missing).toEqual([]);
  });
});
