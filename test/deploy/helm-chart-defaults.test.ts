import { readFileSync } from 'node:fs';
import path from 'node:path';
import yaml from 'js-yaml';
import { imageNodeFlags } from '../harness/image-runtime.js';
import {
  root,
  chart,
  release,
  releaseNamespace,
  HELM_TIMEOUT_MS,
  DEFAULT_GIT_LIMIT_ARGS,
  DEFAULT_NOTIFICATION_ARGS,
  runHelm,
  render,
  find,
  kinds,
  controllerContainer,
  rules,
  allows,
  controllerNeeds,
  useHelm,
  type K8sObject,
  networkPolicy,
  selectorLabels,
} from './helm-chart-kit.js';

// The chart rendered with its default values, and helm lint (rendered by a real helm, helm-chart-kit.ts).

useHelm();

describe('helm lint', () => {
  it.each([
    ['the default values', []],
    ['namespaced RBAC', ['--set', 'rbac.namespaced=true']],
  ])(
    'passes with %s',
    async (_name, flags) => {
      const out = await runHelm(['lint', chart, '--strict', ...flags]);
      expect(out).toContain('0 chart(s) failed');
    },
    HELM_TIMEOUT_MS,
  );
});

describe('the chart with default values', () => {
  let objects: K8sObject[] = [];
  beforeAll(async () => {
    objects = await render();
  }, HELM_TIMEOUT_MS);

  it('renders the controller and everything it needs, cluster-wide', () => {
    const name = `${release}-applyset-controller`;
    expect(kinds(objects)).toEqual(
      [
        `ClusterRole//${name}`,
        `ClusterRoleBinding//${name}`,
        `Deployment/${releaseNamespace}/${name}`,
        `NetworkPolicy/${releaseNamespace}/${name}`,
        `Role/${releaseNamespace}/${name}-leader-election`,
        `RoleBinding/${releaseNamespace}/${name}-leader-election`,
        `Service/${releaseNamespace}/${name}-metrics`,
        `ServiceAccount/${releaseNamespace}/${name}`,
      ].sort(),
    );
  });

  it('runs the controller subcommand with leader election on all namespaces', () => {
    const { container } = controllerContainer(objects);
    expect(container.image).toBe('applyset-controller:0.1.0');
    // The image's node flags (its ENTRYPOINT), which the controller bench measures.
    expect(container.command).toEqual(['node', ...imageNodeFlags(), '/app/bin/applyset.js']);
    expect(container.args).toEqual([
      'controller',
      '--metrics-addr',
      ':8080',
      '--leader-elect',
      '--concurrency',
      '4',
      '--member-watches',
      '16',
      '--member-watch-min-sets',
      '8',
      ...DEFAULT_GIT_LIMIT_ARGS,
      ...DEFAULT_NOTIFICATION_ARGS,
    ]);
    expect(container.env).toContainEqual({ name: 'LOG_LEVEL', value: 'info' });
  });

  it('runs as non-root with a read-only root filesystem and no capabilities', () => {
    const { pod, container } = controllerContainer(objects);
    expect(pod.securityContext).toMatchObject({
      runAsNonRoot: true,
      runAsUser: 65532,
      seccompProfile: { type: 'RuntimeDefault' },
    });
    expect(container.securityContext).toEqual({
      runAsNonRoot: true,
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ['ALL'] },
      seccompProfile: { type: 'RuntimeDefault' },
    });
  });

  it('gives the Git cache, HOME and TMPDIR writable volumes', () => {
    const { pod, container } = controllerContainer(objects);
    expect(container.volumeMounts).toEqual(
      expect.arrayContaining([
        { name: 'git-cache', mountPath: '/var/cache/applyset' },
        { name: 'tmp', mountPath: '/tmp' },
      ]),
    );
    for (const name of ['git-cache', 'tmp'])
      expect(pod.volumes.find((v) => v.name === name)?.emptyDir).toBeDefined();
    expect(container.env).toEqual(
      expect.arrayContaining([
        { name: 'APPLYSET_GIT_CACHE_DIR', value: '/var/cache/applyset' },
        { name: 'HOME', value: '/tmp' },
        { name: 'TMPDIR', value: '/tmp' },
      ]),
    );
  });

  it('mounts a memory-backed emptyDir at /dev/shm, where a build reads its decrypted sops files', () => {
    const { pod, container } = controllerContainer(objects);
    expect(container.volumeMounts).toEqual(
      expect.arrayContaining([{ name: 'decrypted', mountPath: '/dev/shm' }]),
    );
    expect(pod.volumes.find((v) => v.name === 'decrypted')?.emptyDir).toEqual({
      medium: 'Memory',
      sizeLimit: '64Mi',
    });
  });

  it('probes /healthz and /readyz on the metrics port and sets resources', () => {
    const { container } = controllerContainer(objects);
    expect(container.ports).toEqual([{ name: 'metrics', containerPort: 8080, protocol: 'TCP' }]);
    expect(container.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'metrics' });
    expect(container.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'metrics' });
    expect(container.resources.requests).toMatchObject({
      cpu: expect.any(String),
      memory: expect.any(String),
    });
    expect(container.resources.limits).toMatchObject({ memory: expect.any(String) });
  });

  it('passes the pod name and namespace for leader election', () => {
    const { container } = controllerContainer(objects);
    const fieldOf = (name: string): unknown => container.env.find((e) => e.name === name)?.valueFrom;
    expect(fieldOf('POD_NAME')).toEqual({ fieldRef: { fieldPath: 'metadata.name' } });
    expect(fieldOf('POD_NAMESPACE')).toEqual({ fieldRef: { fieldPath: 'metadata.namespace' } });
  });

  it.each(controllerNeeds)('lets the controller use %s/%s', (group, resource, verbs) => {
    const role = rules(find(objects, 'ClusterRole', `${release}-applyset-controller`));
    for (const verb of verbs) expect([verb, allows(role, group, resource, verb)]).toEqual([verb, true]);
  });

  it('grants the controller itself nothing beyond what it needs', () => {
    const role = rules(find(objects, 'ClusterRole', `${release}-applyset-controller`));
    expect(role.flatMap((r) => [...(r.apiGroups ?? []), ...(r.resources ?? []), ...r.verbs])).not.toContain(
      '*',
    );
    expect(allows(role, '', 'secrets', 'create')).toBe(false);
    // Secrets are read by name: no list or watch, which would hand over every Secret of the cluster.
    expect(allows(role, '', 'secrets', 'list')).toBe(false);
    expect(allows(role, '', 'secrets', 'watch')).toBe(false);
  });

  it('grants the controller no right on the children: ApplySets are applied as accounts of their namespaces', () => {
    const role = rules(find(objects, 'ClusterRole', `${release}-applyset-controller`));
    expect(objects.filter((o) => o.metadata.name.endsWith('-children'))).toEqual([]);
    for (const [group, resource] of [
      ['', 'configmaps'],
      ['apps', 'deployments'],
      ['rbac.authorization.k8s.io', 'clusterrolebindings'],
    ] as const) {
      for (const verb of ['create', 'update', 'patch', 'delete'])
        expect(allows(role, group, resource, verb)).toBe(false);
    }
  });

  it('lets the controller impersonate applyset-deployer only, by name', () => {
    const role = rules(find(objects, 'ClusterRole', `${release}-applyset-controller`));
    expect(role.filter((rule) => rule.verbs.includes('impersonate'))).toEqual([
      {
        apiGroups: [''],
        resources: ['serviceaccounts'],
        verbs: ['impersonate'],
        resourceNames: ['applyset-deployer'],
      },
    ]);
    // Nothing else is impersonated: no groups, users, uids or extras.
    for (const resource of ['groups', 'users', 'uids', 'userextras'])
      expect(allows(role, '', resource, 'impersonate')).toBe(false);
  });

  it('binds the controller role to the ServiceAccount', () => {
    for (const name of [`${release}-applyset-controller`]) {
      expect(find(objects, 'ClusterRoleBinding', name)).toMatchObject({
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name },
        subjects: [
          { kind: 'ServiceAccount', name: `${release}-applyset-controller`, namespace: releaseNamespace },
        ],
      });
    }
    expect(controllerContainer(objects).pod.serviceAccountName).toBe(`${release}-applyset-controller`);
  });

  it('lets the controller hold a Lease and record events in its own namespace', () => {
    const role = find(objects, 'Role', `${release}-applyset-controller-leader-election`);
    expect(role.metadata.namespace).toBe(releaseNamespace);
    for (const verb of ['get', 'create', 'update', 'patch'])
      expect(allows(rules(role), 'coordination.k8s.io', 'leases', verb)).toBe(true);
    expect(allows(rules(role), '', 'events', 'create')).toBe(true);
  });

  it('exposes the metrics port through a Service selecting the controller pods', () => {
    const service = find(objects, 'Service', `${release}-applyset-controller-metrics`) as unknown as {
      spec: { selector: Record<string, string>; ports: { port: number; targetPort: string }[] };
    };
    expect(service.spec.ports).toEqual([
      { name: 'metrics', port: 8080, targetPort: 'metrics', protocol: 'TCP' },
    ]);
    const deployment = find(objects, 'Deployment', `${release}-applyset-controller`) as unknown as {
      spec: { template: { metadata: { labels: Record<string, string> } } };
    };
    expect(deployment.spec.template.metadata.labels).toMatchObject(service.spec.selector);
  });

  it('admits connections to the metrics port only, from the release namespace and the scrapers', () => {
    const policy = networkPolicy(objects);
    expect(policy.spec).toEqual({
      podSelector: { matchLabels: selectorLabels(objects) },
      policyTypes: ['Ingress'],
      ingress: [
        {
          ports: [{ port: 'metrics', protocol: 'TCP' }],
          from: [
            { podSelector: {} },
            { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } },
            { namespaceSelector: { matchLabels: { 'applyset.dev/metrics-scraper': 'true' } } },
          ],
        },
      ],
    });
  });

  it(
    'ships the CRD, identical to crds/',
    async () => {
      const withCrds = await render({}, ['--include-crds']);
      const crd = find(withCrds, 'CustomResourceDefinition', 'applysets.applyset.dev');
      expect(crd).toEqual(
        yaml.load(readFileSync(path.join(root, 'crds/applyset.dev_applysets.yaml'), 'utf8')),
      );
    },
    HELM_TIMEOUT_MS,
  );
});
