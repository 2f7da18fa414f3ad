import { e2eRunsShippedBuild, shippedBuildKey } from './shipped-build.js';

// Which entry the e2e controllers run: dist/ always in CI, where a request for the sources is ignored.

describe('the e2e entry point', () => {
  const saved = { ci: process.env['CI'], entry: process.env['APPLYSET_E2E_ENTRY'] };
  const set = (name: string, value: string | undefined) => {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  };
  afterEach(() => {
    set('CI', saved.ci);
    set('APPLYSET_E2E_ENTRY', saved.entry);
  });

  it.each<[string | undefined, string | undefined, boolean]>([
    [undefined, undefined, true],
    [undefined, 'src', false],
    ['true', undefined, true],
    ['true', 'src', true],
    ['false', 'src', false],
  ])('CI=%s APPLYSET_E2E_ENTRY=%s: dist/ is %s', (ci, entry, expected) => {
    set('CI', ci);
    set('APPLYSET_E2E_ENTRY', entry);
    expect(e2eRunsShippedBuild()).toBe(expected);
  });

  it('keys the build by the content of its inputs, the same for the same sources', async () => {
    const key = await shippedBuildKey();
    expect(key).toMatch(/^[0-9a-f]{64}$/);
    expect(await shippedBuildKey()).toBe(key);
  });
});
