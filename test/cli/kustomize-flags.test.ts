import { kustomizeConfig } from '../../src/cli/kustomize-flags.js';

describe('the kustomize flags of every command', () => {
  it('default to no binary (kustomize on PATH, else kubectl kustomize), 60 s and 256 MiB', () => {
    expect(kustomizeConfig({}, {})).toEqual({
      binary: undefined,
      timeoutMs: 60_000,
      maxMemoryBytes: 256 * 1024 ** 2,
    });
  });

  it('take a path, a duration and a size', () => {
    expect(
      kustomizeConfig(
        {
          'kustomize-binary': '/usr/local/bin/kustomize',
          'kustomize-timeout': '2m',
          'kustomize-max-memory': '1Gi',
        },
        {},
      ),
    ).toEqual({ binary: '/usr/local/bin/kustomize', timeoutMs: 120_000, maxMemoryBytes: 1024 ** 3 });
  });

  // Issue #34, item 10: one flag and one variable, read the same way by every command.
  it.each([
    ['the flag alone', { 'kustomize-binary': '/opt/flag/kustomize' }, {}, '/opt/flag/kustomize'],
    ['the variable alone', {}, { APPLYSET_KUSTOMIZE_BINARY: '/opt/env/kustomize' }, '/opt/env/kustomize'],
    [
      'both: the flag wins',
      { 'kustomize-binary': '/opt/flag/kustomize' },
      { APPLYSET_KUSTOMIZE_BINARY: '/opt/env/kustomize' },
      '/opt/flag/kustomize',
    ],
    ['an empty variable: as unset', {}, { APPLYSET_KUSTOMIZE_BINARY: '' }, undefined],
  ])('name the binary with %s', (_what, values, env, binary) => {
    expect(kustomizeConfig(values, env).binary).toBe(binary);
  });

  // spec.helm: the helm binary is named the same way, --helm-binary else APPLYSET_HELM_BINARY.
  it.each([
    ['the flag alone', { 'helm-binary': '/opt/flag/helm' }, {}, '/opt/flag/helm'],
    ['the variable alone', {}, { APPLYSET_HELM_BINARY: '/opt/env/helm' }, '/opt/env/helm'],
    [
      'both: the flag wins',
      { 'helm-binary': '/opt/flag/helm' },
      { APPLYSET_HELM_BINARY: '/opt/env/helm' },
      '/opt/flag/helm',
    ],
    ['an empty variable: as unset (helm on PATH)', {}, { APPLYSET_HELM_BINARY: '' }, undefined],
  ])('name the helm binary with %s', (_what, values, env, binary) => {
    expect(kustomizeConfig(values, env).helmBinary).toBe(binary);
  });

  it.each([
    [{ 'kustomize-timeout': 'soon' }, '--kustomize-timeout: not a duration: "soon" (e.g. 30s, 2m)'],
    [{ 'kustomize-max-memory': 'lots' }, '--kustomize-max-memory must be a positive number'],
    [{ 'kustomize-binary': '' }, '--kustomize-binary needs a path or a name, got ""'],
    [{ 'helm-binary': '' }, '--helm-binary needs a path or a name, got ""'],
  ])('refuses %j', (values, message) => {
    expect(() => kustomizeConfig(values, {})).toThrow(message);
  });
});
