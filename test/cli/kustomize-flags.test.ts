import { kustomizeConfig } from '../../src/cli/kustomize-flags.js';

describe('the controller kustomize flags', () => {
  it('default to kustomize on PATH, 60 s and 256 MiB', () => {
    expect(kustomizeConfig({})).toEqual({
      binary: 'kustomize',
      timeoutMs: 60_000,
      maxMemoryBytes: 256 * 1024 ** 2,
    });
  });

  it('take a path, a duration and a size', () => {
    expect(
      kustomizeConfig({
        'kustomize-binary': '/usr/local/bin/kustomize',
        'kustomize-timeout': '2m',
        'kustomize-max-memory': '1Gi',
      }),
    ).toEqual({ binary: '/usr/local/bin/kustomize', timeoutMs: 120_000, maxMemoryBytes: 1024 ** 3 });
  });

  it.each([
    [{ 'kustomize-timeout': 'soon' }, '--kustomize-timeout: not a duration: "soon" (e.g. 30s, 2m)'],
    [{ 'kustomize-max-memory': 'lots' }, '--kustomize-max-memory must be a positive number'],
    [{ 'kustomize-binary': '' }, '--kustomize-binary needs a path or a name, got ""'],
  ])('refuses %j', (values, message) => {
    expect(() => kustomizeConfig(values)).toThrow(message);
  });
});
