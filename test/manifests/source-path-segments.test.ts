import { InvalidSourcePathError, sourcePathSegments } from '../../src/manifests/source-path.js';

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
    expect(thrown).toBeInstanceOf(InvalidSourcePathError);
    expect(thrown).toMatchObject({ code: 'INVALID_SOURCE_PATH', intent: 'stalled', path: input });
    expect((thrown as Error).message).toContain(reason);
  });
});
