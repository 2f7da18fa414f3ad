import { createKubeClient } from '../../src/kube/kube-client.js';
import { createKubeCredentials } from '../../src/kube/kube-credentials.js';
import { UnknownKindError } from '../../src/kube/kube-api-error.js';
import { createRestMapper, type RestMapperOptions } from '../../src/kube/rest-mapper.js';
import { adminKubeConfig, uniqueName } from '../harness/test-cluster.js';
import { crdYaml, deleteCrds, installCrds, preferredVersion } from '../harness/test-crds.js';

function recordingMapper(options: RestMapperOptions = {}) {
  const paths: string[] = [];
  const client = createKubeClient({
    credentials: createKubeCredentials(adminKubeConfig()),
    onRequest: (_method, path) => paths.push(path),
  });
  return { mapper: createRestMapper(client, options), paths };
}

const crds: string[] = [];
afterAll(() => deleteCrds(crds));

describe('REST mapping from discovery', () => {
  it('asks only about the group-versions it is given, once each', async () => {
    const { mapper, paths } = recordingMapper();
    await mapper.load([
      { group: '', version: 'v1' },
      { group: 'apps', version: 'v1' },
      { group: 'apps', version: 'v1' },
    ]);
    expect(await mapper.resolve({ group: 'apps', version: 'v1', kind: 'Deployment' })).toEqual({
      group: 'apps',
      version: 'v1',
      kind: 'Deployment',
      resource: 'deployments',
      scope: 'Namespaced',
    });
    expect(mapper.scopeResolver().scopeOf({ group: '', version: 'v1', kind: 'Namespace' })).toBe('Cluster');
    expect(paths.sort()).toEqual(['/api/v1', '/apis/apps/v1']);
  });

  it('maps an inventory entry, which has no version, through the group preferred version', async () => {
    const { mapper } = recordingMapper();
    const mapping = await mapper.resolveGroupKind('rbac.authorization.k8s.io', 'ClusterRole');
    expect(mapping).toMatchObject({ version: 'v1', resource: 'clusterroles', scope: 'Cluster' });
  });

  it('names the kind when it is unknown', async () => {
    const { mapper } = recordingMapper();
    await expect(mapper.resolve({ group: 'nope.example.com', version: 'v1', kind: 'Thing' })).rejects.toThrow(
      UnknownKindError,
    );
    await expect(mapper.resolve({ group: 'apps', version: 'v1', kind: 'Deploymnt' })).rejects.toThrow(
      /no kind "Deploymnt" is registered for "apps\/v1"/,
    );
  });

  it('asks again about a kind it lacked once the answer is 10 s old, and once per run at most', async () => {
    let now = 1_000_000;
    const { mapper, paths } = recordingMapper({ now: () => now });
    const group = `${uniqueName('late')}.example.com`;
    const widget = { group, version: 'v1', kind: 'Widget' };
    const asked = () => paths.filter((path) => path === `/apis/${group}/v1`).length;

    await expect(mapper.resolve(widget)).rejects.toThrow(UnknownKindError);
    expect(asked()).toBe(1);
    crds.push(`widgets.${group}`);
    await installCrds(crdYaml(group, 'Widget'));
    // The 404 stands for 10 s: a set full of unknown kinds does not hammer the server.
    now += 9_999;
    await expect(mapper.resolve(widget)).rejects.toThrow(UnknownKindError);
    await mapper.load([widget]);
    expect(mapper.scopeResolver().scopeOf(widget)).toBeUndefined();
    expect(asked()).toBe(1);
    // Then the CRD installed since is seen, without a new mapper.
    now += 1;
    await mapper.load([widget]);
    expect(mapper.scopeResolver().scopeOf(widget)).toBe('Namespaced');
    expect(asked()).toBe(2);
    expect(await mapper.resolve(widget)).toMatchObject({ resource: 'widgets', version: 'v1' });

    // In one run, a kind still missing asks once, however long the run takes.
    const run = mapper.forRun();
    const gadget = { group, version: 'v1', kind: 'Gadget' };
    now += 10_000;
    await expect(run.resolve(gadget)).rejects.toThrow(UnknownKindError);
    now += 10_000;
    await expect(run.resolve(gadget)).rejects.toThrow(UnknownKindError);
    await expect(run.resolveGroupKind(group, 'Gadget')).rejects.toThrow(UnknownKindError);
    expect(asked()).toBe(3);
    await expect(mapper.forRun().resolve(gadget)).rejects.toThrow(UnknownKindError);
    expect(asked()).toBe(4);
  });

  it('maps an inventory entry whose kind is served only at a version other than the preferred', async () => {
    const group = `${uniqueName('split')}.example.com`;
    crds.push(`alphas.${group}`, `betas.${group}`);
    await installCrds(
      [
        crdYaml(group, 'Alpha', [{ name: 'v1', storage: true }, { name: 'v1beta1' }]),
        crdYaml(group, 'Beta', [{ name: 'v1beta1' }]),
      ].join('---\n'),
    );
    expect(await preferredVersion(group)).toBe('v1');
    const { mapper } = recordingMapper();
    expect(await mapper.resolveGroupKind(group, 'Beta')).toMatchObject({
      version: 'v1beta1',
      resource: 'betas',
    });
    expect(await mapper.resolveGroupKind(group, 'Alpha')).toMatchObject({
      version: 'v1',
      resource: 'alphas',
    });
    await expect(mapper.resolveGroupKind(group, 'Gamma')).rejects.toThrow(
      /no kind "Gamma" is registered for ".*": no served version of the group has it \(v1, v1beta1\)/,
    );
  });
});
