import {
  release,
  releaseNamespace,
  HELM_TIMEOUT_MS,
  render,
  find,
  controllerContainer,
  rules,
  allows,
  useHelm,
  type K8sObject,
} from './helm-chart-kit.js';

// What each chart value changes in what the chart renders (rendered by a real helm, helm-chart-kit.ts).

useHelm();

describe('the chart values', () => {
  it(
    'set the proxy environment from proxy.https, proxy.http and proxy.noProxy, and none by default',
    async () => {
      const proxied = controllerContainer(
        await render({
          'proxy.https': 'http://proxy.corp:3128',
          'proxy.http': 'http://proxy.corp:3128',
          'proxy.noProxy': '.svc\\,.cluster.local',
        }),
      ).container;
      expect(proxied.env).toEqual(
        expect.arrayContaining([
          { name: 'HTTPS_PROXY', value: 'http://proxy.corp:3128' },
          { name: 'HTTP_PROXY', value: 'http://proxy.corp:3128' },
          { name: 'NO_PROXY', value: '.svc,.cluster.local' },
        ]),
      );
      const direct = controllerContainer(await render({})).container;
      expect(direct.env.map((variable) => variable.name)).not.toContain('HTTPS_PROXY');
    },
    HELM_TIMEOUT_MS,
  );

  it(
    'turn tracing on with the OTEL_* variables from tracing.*, none by default, refusing one without an endpoint',
    async () => {
      const traced = controllerContainer(
        await render({
          'tracing.enabled': 'true',
          'tracing.endpoint': 'http://otel-collector.observability:4318',
          'tracing.sampleRatio': '0.1',
        }),
      ).container;
      expect(traced.env).toEqual(
        expect.arrayContaining([
          { name: 'OTEL_EXPORTER_OTLP_ENDPOINT', value: 'http://otel-collector.observability:4318' },
          { name: 'OTEL_TRACES_SAMPLER', value: 'parentbased_traceidratio' },
          { name: 'OTEL_TRACES_SAMPLER_ARG', value: '0.1' },
          { name: 'OTEL_SERVICE_NAME', value: 'applyset-controller' },
        ]),
      );
      const plain = controllerContainer(await render({})).container;
      expect(plain.env.map((variable) => variable.name).filter((name) => name.startsWith('OTEL_'))).toEqual([]);
      await expect(render({ 'tracing.enabled': 'true' })).rejects.toThrow('tracing.endpoint is required');
    },
    HELM_TIMEOUT_MS,
  );

  it(
    'set image, replicas, concurrency, member watches, log level and the watched namespace',
    async () => {
      const objects = await render({
        'image.repository': 'registry.local/applyset',
        'image.tag': 'dev',
        replicas: '3',
        concurrency: '8',
        logLevel: 'debug',
        watchNamespace: 'apps',
        'memberWatches.max': '0',
        'memberWatches.minSets': '3',
      });
      const deployment = find(objects, 'Deployment', `${release}-applyset-controller`) as unknown as {
        spec: { replicas: number };
      };
      expect(deployment.spec.replicas).toBe(3);
      const { container } = controllerContainer(objects);
      expect(container.image).toBe('registry.local/applyset:dev');
      expect(container.args).toEqual(expect.arrayContaining(['--concurrency', '8', '--namespace', 'apps']));
      expect(container.args).toEqual(
        expect.arrayContaining(['--member-watches', '0', '--member-watch-min-sets', '3']),
      );
      expect(container.env).toContainEqual({ name: 'LOG_LEVEL', value: 'debug' });
      // Cluster-wide RBAC still: watching one namespace does not by itself narrow the roles.
      expect(objects.some((o) => o.kind === 'ClusterRole')).toBe(true);
    },
    HELM_TIMEOUT_MS,
  );

  it(
    'under tenancy.applyAsController, grant every verb on every resource for the children, in a role of its own',
    async () => {
      const objects = await render({ 'tenancy.applyAsController': 'true' });
      const children = `${release}-applyset-controller-children`;
      expect(rules(find(objects, 'ClusterRole', children))).toEqual([
        { apiGroups: ['*'], resources: ['*'], verbs: ['*'] },
      ]);
      expect(find(objects, 'ClusterRoleBinding', children)).toMatchObject({
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: children },
        subjects: [
          { kind: 'ServiceAccount', name: `${release}-applyset-controller`, namespace: releaseNamespace },
        ],
      });
      const { args } = controllerContainer(objects).container;
      expect(args).toContain('--apply-as-controller');
      expect(args).not.toContain('--default-service-account');
      expect(args).not.toContain('--require-secret-source-hosts');
      // No default account to impersonate: only the names listed.
      const role = rules(find(objects, 'ClusterRole', `${release}-applyset-controller`));
      expect(role.filter((rule) => rule.verbs.includes('impersonate'))).toEqual([]);
    },
    HELM_TIMEOUT_MS,
  );

  it(
    'let spec.serviceAccountName use the names in tenancy.serviceAccountNames, besides the default account',
    async () => {
      const impersonated = async (values: Record<string, string>) =>
        rules(
          find(
            await render(values, ['--set-json', 'tenancy.serviceAccountNames=["ops","applyset-deployer"]']),
            'ClusterRole',
            `${release}-applyset-controller`,
          ),
        ).filter((rule) => rule.verbs.includes('impersonate'));
      expect(await impersonated({})).toEqual([
        {
          apiGroups: [''],
          resources: ['serviceaccounts'],
          verbs: ['impersonate'],
          resourceNames: ['applyset-deployer', 'ops'],
        },
      ]);
      expect(await impersonated({ 'tenancy.defaultServiceAccount': 'deployer' })).toEqual([
        expect.objectContaining({ resourceNames: ['deployer', 'ops', 'applyset-deployer'] }),
      ]);
      expect(await impersonated({ 'tenancy.applyAsController': 'true' })).toEqual([
        expect.objectContaining({ resourceNames: ['ops', 'applyset-deployer'] }),
      ]);
    },
    HELM_TIMEOUT_MS,
  );

  it(
    'narrow the children rights under tenancy.applyAsController, or leave them to a role of your own',
    async () => {
      const narrowed = await render({ 'tenancy.applyAsController': 'true' }, [
        '--set-json',
        'rbac.childRules=[{"apiGroups":["apps"],"resources":["deployments"],"verbs":["get","patch"]}]',
      ]);
      expect(rules(find(narrowed, 'ClusterRole', `${release}-applyset-controller-children`))).toEqual([
        { apiGroups: ['apps'], resources: ['deployments'], verbs: ['get', 'patch'] },
      ]);
      const none = await render({ 'tenancy.applyAsController': 'true' }, [
        '--set-json',
        'rbac.childRules=[]',
      ]);
      expect(none.filter((o) => o.metadata.name.endsWith('-children'))).toEqual([]);
    },
    HELM_TIMEOUT_MS,
  );

  it(
    'set the Git bounds, each to its flag, and keep the cache bound under the emptyDir',
    async () => {
      const objects = await render({
        'gitLimits.maxObjectBytes': '4Mi',
        'gitLimits.maxFetchBytes': '32Mi',
        'gitLimits.maxFetchObjects': '1000',
        'gitCache.maxBytes': '512Mi',
        'gitCache.maxRepositoryBytes': '64Mi',
        'gitSources.sharedFetchMaxAge': '15s',
      });
      const args = controllerContainer(objects).container.args;
      const valueOf = (flag: string) => args[args.indexOf(flag) + 1];
      expect(valueOf('--shared-fetch-max-age')).toBe('15s');
      expect(
        ['--git-max-object-bytes', '--git-max-fetch-bytes', '--git-max-fetch-objects'].map(valueOf),
      ).toEqual(['4Mi', '32Mi', '1000']);
      expect(['--git-cache-max-bytes', '--git-cache-max-repository-bytes'].map(valueOf)).toEqual([
        '512Mi',
        '64Mi',
      ]);
    },
    HELM_TIMEOUT_MS,
  );

  it(
    'restrict the source hosts, and keep requiring Secrets to name theirs under tenancy.applyAsController',
    async () => {
      const defaults = controllerContainer(await render()).container.args;
      expect(defaults).not.toContain('--allowed-source-hosts');
      // The controller's default: no flag needed.
      expect(defaults).not.toContain('--require-secret-source-hosts');
      const restricted = controllerContainer(
        await render({ 'tenancy.applyAsController': 'true' }, [
          '--set-json',
          'gitSources.allowedHosts=["git.example.com","git.other.org:8443"]',
          '--set',
          'gitSources.requireSecretSourceHosts=true',
        ]),
      ).container.args;
      expect(restricted).toEqual(
        expect.arrayContaining([
          '--allowed-source-hosts',
          'git.example.com,git.other.org:8443',
          '--require-secret-source-hosts',
        ]),
      );
      expect(restricted[restricted.indexOf('--allowed-source-hosts') + 1]).toBe(
        'git.example.com,git.other.org:8443',
      );
    },
    HELM_TIMEOUT_MS,
  );

  it(
    'pass --require-secret-source-hosts only where it is not already the default',
    async () => {
      const objects = await render({ 'gitSources.requireSecretSourceHosts': 'true' });
      expect(controllerContainer(objects).container.args).not.toContain('--require-secret-source-hosts');
    },
    HELM_TIMEOUT_MS,
  );

  it(
    'apply ApplySets without serviceAccountName as a default ServiceAccount of their own namespace',
    async () => {
      expect(controllerContainer(await render()).container.args).not.toContain('--default-service-account');
      const args = controllerContainer(await render({ 'tenancy.defaultServiceAccount': 'deployer' }))
        .container.args;
      const at = args.indexOf('--default-service-account');
      expect(args.slice(at, at + 2)).toEqual(['--default-service-account', 'deployer']);
      await expect(
        render({ 'tenancy.defaultServiceAccount': 'deployer', 'tenancy.applyAsController': 'true' }),
      ).rejects.toThrow(/tenancy.defaultServiceAccount names the account ApplySets are applied as/);
    },
    HELM_TIMEOUT_MS,
  );

  it(
    'refuse Secrets of other namespaces unless the values list the namespace and lift the lockdown',
    async () => {
      // The controller's default: no flag needed.
      expect(controllerContainer(await render()).container.args).not.toContain(
        '--allow-cross-namespace-refs',
      );
      await expect(
        render({}, ['--set-json', 'tenancy.allowSecretRefsFrom=["git-credentials"]']),
      ).rejects.toThrow(/tenancy.allowSecretRefsFrom needs tenancy.noCrossNamespaceRefs=false/);
      const args = controllerContainer(
        await render({ 'tenancy.noCrossNamespaceRefs': 'false' }, [
          '--set-json',
          'tenancy.allowSecretRefsFrom=["git-credentials","shared"]',
        ]),
      ).container.args;
      expect(args).toContain('--allow-cross-namespace-refs');
      const at = args.indexOf('--allow-secret-refs-from');
      expect(args.slice(at, at + 2)).toEqual(['--allow-secret-refs-from', 'git-credentials,shared']);
    },
    HELM_TIMEOUT_MS,
  );

  it(
    'serve push webhooks on a port and Service of their own, with the receivers in a Secret',
    async () => {
      const defaults = await render();
      expect(controllerContainer(defaults).container.args).not.toContain('--webhook-addr');
      expect(defaults.filter((o) => o.metadata.name.endsWith('-webhook'))).toEqual([]);
      await expect(render({ 'webhook.enabled': 'true' })).rejects.toThrow(/webhook.secretName is required/);
      const objects = await render({ 'webhook.enabled': 'true', 'webhook.secretName': 'hooks' });
      const { container } = controllerContainer(objects);
      const at = container.args.indexOf('--webhook-addr');
      expect(container.args.slice(at, at + 4)).toEqual([
        '--webhook-addr',
        ':9292',
        '--webhook-secret',
        `${releaseNamespace}/hooks`,
      ]);
      expect(container.ports).toEqual(
        expect.arrayContaining([{ name: 'webhook', containerPort: 9292, protocol: 'TCP' }]),
      );
      const service = find(objects, 'Service', `${release}-applyset-controller-webhook`) as unknown as {
        spec: { ports: { name: string; port: number; targetPort: string }[] };
      };
      expect(service.spec.ports).toEqual([
        { name: 'webhook', port: 80, targetPort: 'webhook', protocol: 'TCP' },
      ]);
    },
    HELM_TIMEOUT_MS,
  );

  it(
    'read no Secret as the controller when ApplySets are applied as accounts, but the webhook receivers by name',
    async () => {
      const role = (objects: K8sObject[]) =>
        rules(find(objects, 'ClusterRole', `${release}-applyset-controller`));
      // Applying as the controller (the opt-out): it reads the Git credentials Secrets itself.
      expect(allows(role(await render({ 'tenancy.applyAsController': 'true' })), '', 'secrets', 'get')).toBe(
        true,
      );
      // Applying as accounts (the default, whatever the account is named): each account reads its own
      // Secret, the controller none.
      expect(allows(role(await render()), '', 'secrets', 'get')).toBe(false);
      const lockedDown = await render({ 'tenancy.defaultServiceAccount': 'deployer' });
      expect(allows(role(lockedDown), '', 'secrets', 'get')).toBe(false);
      expect(
        lockedDown.filter((o) => o.kind === 'Role' && rules(o).some((r) => r.resources?.includes('secrets'))),
      ).toEqual([]);
      const hooks = await render({
        'tenancy.defaultServiceAccount': 'deployer',
        'webhook.enabled': 'true',
        'webhook.secretName': 'hooks',
      });
      expect(allows(role(hooks), '', 'secrets', 'get')).toBe(false);
      const hookRole = find(hooks, 'Role', `${release}-applyset-controller-webhook-secret`);
      expect(hookRole.metadata.namespace).toBe(releaseNamespace);
      expect(rules(hookRole)).toEqual([
        { apiGroups: [''], resources: ['secrets'], resourceNames: ['hooks'], verbs: ['get'] },
      ]);
      expect(find(hooks, 'RoleBinding', `${release}-applyset-controller-webhook-secret`)).toMatchObject({
        roleRef: { kind: 'Role', name: `${release}-applyset-controller-webhook-secret` },
        subjects: [
          { kind: 'ServiceAccount', name: `${release}-applyset-controller`, namespace: releaseNamespace },
        ],
      });
    },
    HELM_TIMEOUT_MS,
  );

  it(
    "refuse ApplySets in an ApplySet's manifests unless nesting is granted",
    async () => {
      expect(controllerContainer(await render()).container.args).not.toContain('--allow-nested-applysets');
      const args = controllerContainer(await render({ 'tenancy.allowNestedApplySets': 'true' })).container
        .args;
      expect(args).toContain('--allow-nested-applysets');
    },
    HELM_TIMEOUT_MS,
  );

  it(
    "refuse a remote kubeconfig's plugins and files unless allowed, and name the remote cluster hosts",
    async () => {
      const locked = controllerContainer(await render()).container.args;
      expect(locked.filter((arg) => arg.includes('remote'))).toEqual([]);
      const args = controllerContainer(
        await render({
          'remoteClusters.allowExec': 'true',
          'remoteClusters.allowFiles': 'true',
          'remoteClusters.allowedHosts[0]': 'b.example:6443',
          'remoteClusters.allowedHosts[1]': '10.0.0.7',
        }),
      ).container.args;
      expect(args).toEqual(
        expect.arrayContaining(['--allow-remote-kubeconfig-exec', '--allow-remote-kubeconfig-files']),
      );
      expect(args[args.indexOf('--allowed-remote-cluster-hosts') + 1]).toBe('b.example:6443,10.0.0.7');
    },
    HELM_TIMEOUT_MS,
  );

  it(
    'make a shard: a label selector on the ApplySets and a Lease of the release',
    async () => {
      const objects = await render({ watchLabelSelector: 'sharding.applyset.dev/key in (shard1)' });
      expect(controllerContainer(objects).container.args).toEqual(
        expect.arrayContaining([
          '--lease-name',
          `${release}-applyset-controller-leader`,
          '--watch-label-selector',
          'sharding.applyset.dev/key in (shard1)',
        ]),
      );
      const named = await render({ 'leaderElection.leaseName': 'shard-one' });
      expect(controllerContainer(named).container.args).toEqual(
        expect.arrayContaining(['--lease-name', 'shard-one']),
      );
      expect(controllerContainer(named).container.args).not.toContain('--watch-label-selector');
    },
    HELM_TIMEOUT_MS,
  );

  it(
    'turn leader election off',
    async () => {
      const objects = await render({ 'leaderElection.enabled': 'false' });
      expect(controllerContainer(objects).container.args).not.toContain('--leader-elect');
      expect(objects.filter((o) => o.metadata.name.endsWith('-leader-election'))).toEqual([]);
    },
    HELM_TIMEOUT_MS,
  );

  it(
    'refuse an existing ServiceAccount without a name',
    async () => {
      await expect(render({ 'serviceAccount.create': 'false' })).rejects.toThrow(
        /serviceAccount.name is required/,
      );
    },
    HELM_TIMEOUT_MS,
  );
});
