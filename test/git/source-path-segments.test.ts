import { GitInvalidPathError } from '../../src/git/git-error.js';
import { sourcePathSegments } from '../../src/git/read-tree-manifests.js';

describe('sourcePathSegments', () => {
  it.each([
    [undefined, []],
    ['', []],
    ['.', []],
    ['./', []],
    ['deploy', ['deploy']],
    ['./deploy/prod/', ['deploy', 'prod']],
    ['deploy//prod', ['deploy', 'prod']],
    ['deploy\\prod', ['deploy', 'prod']],
    ['..deploy', ['..deploy']],
  ])('splits %j into its components', (input, expected) => {
    expect(sourcePathSegments(input)).toEqual(expected);
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
      sourcePathSegments(input);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(GitInvalidPathError);
    expect(thrown).toMatchObject({ code: 'GIT_INVALID_PATH', intent: 'stalled', path: input });
    expect((thrown as Error).message).toContain(reason);
  });
});
