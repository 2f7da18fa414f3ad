import path from 'node:path';
import { GitInvalidPathError } from '../../src/git/git-error.js';
import { resolveSourcePath } from '../../src/git/resolve-source-path.js';

const root = '/cache/checkouts/abc';

describe('resolveSourcePath', () => {
  it.each([
    [undefined, root],
    ['', root],
    ['.', root],
    ['./', root],
    ['deploy', path.join(root, 'deploy')],
    ['./deploy/prod/', path.join(root, 'deploy', 'prod')],
    ['deploy//prod', path.join(root, 'deploy', 'prod')],
    ['..deploy', path.join(root, '..deploy')],
  ])('resolves %j inside the checkout', (input, expected) => {
    expect(resolveSourcePath(root, input)).toBe(expected);
  });

  it.each([
    ['..', "must not contain '..'"],
    ['../other', "must not contain '..'"],
    ['deploy/../../etc', "must not contain '..'"],
    ['deploy/../prod', "must not contain '..'"],
    ['deploy\\..\\..', "must not contain '..'"],
    ['/etc', 'must be relative'],
    ['\\etc', 'must be relative'],
    ['C:/Windows', 'must be relative'],
    ['deploy\0', 'NUL'],
  ])('refuses %j', (input, reason) => {
    let thrown: unknown;
    try {
      resolveSourcePath(root, input);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(GitInvalidPathError);
    expect(thrown).toMatchObject({ code: 'GIT_INVALID_PATH', intent: 'stalled', path: input });
    expect((thrown as Error).message).toContain(reason);
  });
});
