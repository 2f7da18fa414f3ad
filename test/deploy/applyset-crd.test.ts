import { API_VERSION_AND_KIND_TOGETHER } from '../../src/api/resolve-depends-on.js';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import yaml from 'js-yaml';
import { APPLYSET_CRD_NAME, APPLYSET_GROUP, APPLYSET_KIND, APPLYSET_LIST_KIND, APPLYSET_PLURAL, APPLYSET_SINGULAR, APPLYSET_VERSION, DELETION_POLICIES, MAX_STATUS_ERRORS, type ApplySetCondition, type ApplySetObjectError, type ApplySetSpec, type ApplySetStatus, type ApplySetSummary } from '../../src/api/applyset-types.js';
import { DURATION_PATTERN } from '../../src/api/durations.js';
import { MAX_INVENTORY_ITEMS } from '../../src/api/status-inventory.js';
import { resolveApplySetSpec } from '../../src/api/resolve-applyset-spec.js';
import { MAX_HELM_VALUES_FILES } from '../../src/api/resolve-helm-spec.js';
import { MAX_HELM_VALUES_FROM } from '../../src/api/resolve-helm-values-from.js';
import { DNS1123_SUBDOMAIN } from '../../src/api/spec-fields.js';
import { DRIFT_MODES, PRUNE_DRY_RUN } from '../../src/api/safe-mode-spec.js';
import { parseJsonPointer } from '../../src/plan/drift-ignore.js';

// The CRD is the contract with the API server and applyset-types.ts is the controller's reading of it;
// these tests keep the two (and the chart's copy) from drifting apart.

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const crdPath = path.join(root, 'crds/applyset.dev_applysets.yaml');
const chartCrdPath = path.join(root, 'deploy/applyset-controller/crds/applyset.dev_applysets.yaml');

interface Schema {
  type?: string;
  required?: string[];
  properties?: Record<string, Schema>;
  items?: Schema;
  pattern?: string;
  enum?: unknown[];
  default?: unknown;
  maxItems?: number;
  'x-kubernetes-validations'?: { rule: string; message: string }[];
}

interface Crd {
  metadata: { name: string; labels: Record<string, string> };
  spec: {
    group: string;
    scope: string;
    names: { kind: string; listKind: string; plural: string; singular: string; shortNames: string[] };
    versions: {
      name: string;
      served: boolean;
      storage: boolean;
      subresources: Record<string, unknown>;
      additionalPrinterColumns: { name: string; type: string; jsonPath: string }[];
      schema: { openAPIV3Schema: Schema };
    }[];
  };
}

const crd = yaml.load(readFileSync(crdPath, 'utf8')) as Crd;
const version = crd.spec.versions[0];
if (version === undefined) throw new Error('the CRD has no version');
const schema = version.schema.openAPIV3Schema;

function at(...keys: string[]): Schema {
  let node = schema;
  for (const key of keys) {
    const next = key === '[]' ? node.items : node.properties?.[key];
    if (next === undefined) throw new Error(`no schema at ${keys.join('.')}`);
    node = next;
  }
  return node;
}

const propertyNames = (node: Schema): string[] => Object.keys(node.properties ?? {}).sort();

describe('the ApplySet CRD', () => {
  it('is byte-identical to the copy in the Helm chart', () => {
    expect(readFileSync(chartCrdPath, 'utf8')).toBe(readFileSync(crdPath, 'utf8'));
  });

  it('has the names the controller uses', () => {
    expect(crd.metadata.name).toBe(APPLYSET_CRD_NAME);
    expect(crd.spec.group).toBe(APPLYSET_GROUP);
    expect(crd.spec.scope).toBe('Namespaced');
    expect(crd.spec.names).toMatchObject({
      kind: APPLYSET_KIND,
      listKind: APPLYSET_LIST_KIND,
      plural: APPLYSET_PLURAL,
      singular: APPLYSET_SINGULAR,
      shortNames: ['aset'],
    });
    expect(crd.spec.versions.map((v) => v.name)).toEqual([APPLYSET_VERSION]);
    expect(version).toMatchObject({ served: true, storage: true, subresources: { status: {} } });
  });

  it('is marked as an ApplySet parent type (KEP-3659)', () => {
    expect(crd.metadata.labels['applyset.kubernetes.io/is-parent-type']).toBe('true');
  });

  it('prints Ready, Revision, Age and Message', () => {
    expect(version.additionalPrinterColumns).toEqual([
      { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
      { name: 'Revision', type: 'string', jsonPath: '.status.lastAppliedRevision' },
      { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
      { name: 'Message', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].message' },
    ]);
  });

  it('declares exactly the spec fields of ApplySetSpec', () => {
    // Required<> makes the compiler list every optional field, so a field added on one side only fails.
    const spec: Required<ApplySetSpec> = {
      source: {
        url: 'https://h/r',
        ref: { branch: 'b', tag: 't', commit: 'c', semver: 's', digest: 'd' },
        path: '',
        ignore: '',
        secretRef: { name: 's', namespace: 'n' },
        insecure: false,
        verify: { provider: 'cosign', secretRef: { name: 'k' } },
        certSecretRef: { name: 'c' },
        proxySecretRef: { name: 'p' },
      },
      decryption: { provider: 'sops', secretRef: { name: 's' } },
      helm: {
        chart: 'c',
        version: '*',
        releaseName: 'r',
        namespace: 'n',
        values: {},
        valuesFiles: [],
        valuesFrom: [{ kind: 'Secret', name: 's', valuesKey: 'values.yaml', targetPath: 'a.b', optional: false }],
        includeCRDs: true,
        pruneCRDs: false,
        skipTests: true,
      },
      interval: '1m',
      retryInterval: '1m',
      timeout: '1m',
      prune: true,
      driftMode: 'Warn',
      driftIgnore: [],
      allowEmpty: false,
      force: false,
      adopt: true,
      pruneLimit: 1,
      wait: false,
      healthChecks: [],
      healthCheckExprs: [{ apiVersion: 'v1', kind: 'K', current: 'true', inProgress: 'false', failed: 'false' }],
      dependsOn: [{ name: 'n', namespace: 'n', apiVersion: 'v1', kind: 'K', ready: 'true' }],
      suspend: false,
      targetNamespace: 'n',
      serviceAccountName: 's',
      deletionPolicy: 'Delete',
      kubeConfig: { secretRef: { name: 's', key: 'value' } },
    };
    expect(propertyNames(at('spec'))).toEqual(Object.keys(spec).sort());
    expect(propertyNames(at('spec', 'kubeConfig', 'secretRef'))).toEqual(
      Object.keys(spec.kubeConfig.secretRef).sort(),
    );
    expect(propertyNames(at('spec', 'source'))).toEqual(Object.keys(spec.source).sort());
    expect(propertyNames(at('spec', 'source', 'ref'))).toEqual(Object.keys(spec.source.ref ?? {}).sort());
    expect(propertyNames(at('spec', 'source', 'secretRef'))).toEqual(Object.keys(spec.source.secretRef ?? {}).sort());
    expect(propertyNames(at('spec', 'decryption'))).toEqual(Object.keys(spec.decryption).sort());
    expect(propertyNames(at('spec', 'helm'))).toEqual(Object.keys(spec.helm).sort());
    expect(propertyNames(at('spec', 'helm', 'valuesFrom', '[]'))).toEqual(
      Object.keys(spec.helm.valuesFrom?.[0] ?? {}).sort(),
    );
    expect(propertyNames(at('spec', 'healthCheckExprs', '[]'))).toEqual(
      Object.keys(spec.healthCheckExprs[0] ?? {}).sort(),
    );
    expect(propertyNames(at('spec', 'dependsOn', '[]'))).toEqual(Object.keys(spec.dependsOn[0] ?? {}).sort());
    expect(at('spec').required).toEqual(['source', 'prune']);
    expect(at('spec', 'source').required).toEqual(['url']);
    expect(schema.required).toEqual(['spec']);
  });

  it('declares exactly the status fields of ApplySetStatus', () => {
    const status: Required<ApplySetStatus> = {
      conditions: [],
      observedGeneration: 1,
      lastAppliedRevision: '',
      lastAttemptedRevision: '',
      preDeleteHooks: 0,
      summary: {},
      errors: { items: [], totalCount: 0, truncated: false },
      drift: { items: [], totalCount: 0, truncated: false },
      wouldPrune: { items: [], totalCount: 0, truncated: false },
      inventory: { items: [], totalCount: 0, truncated: false },
      lastHandledReconcileAt: '',
    };
    const condition: Required<ApplySetCondition> = {
      type: 'Ready',
      status: 'True',
      observedGeneration: 1,
      lastTransitionTime: '',
      reason: 'R',
      message: '',
    };
    const summary: Required<ApplySetSummary> = {
      applied: 0,
      unchanged: 0,
      pruned: 0,
      adopted: 0,
      pruneSkipped: 0,
      failed: 0,
    };
    const error: Required<ApplySetObjectError> = { object: '', message: '' };
    expect(propertyNames(at('status'))).toEqual(Object.keys(status).sort());
    expect(propertyNames(at('status', 'conditions', '[]'))).toEqual(Object.keys(condition).sort());
    expect(propertyNames(at('status', 'summary'))).toEqual(Object.keys(summary).sort());
    expect(propertyNames(at('status', 'errors'))).toEqual(Object.keys(status.errors).sort());
    expect(propertyNames(at('status', 'errors', 'items', '[]'))).toEqual(Object.keys(error).sort());
    expect(at('status', 'errors', 'items').maxItems).toBe(MAX_STATUS_ERRORS);
    for (const list of ['drift', 'wouldPrune']) {
      expect(propertyNames(at('status', list))).toEqual(Object.keys(status.errors).sort());
      expect(propertyNames(at('status', list, 'items', '[]'))).toEqual(Object.keys(error).sort());
      expect(at('status', list, 'items').maxItems).toBe(MAX_STATUS_ERRORS);
    }
    expect(propertyNames(at('status', 'inventory'))).toEqual(Object.keys(status.inventory).sort());
    expect(at('status', 'inventory', 'items').maxItems).toBe(MAX_INVENTORY_ITEMS);
    expect(at('status', 'inventory', 'items', '[]').type).toBe('string');
  });

  it('declares spec.helm with the defaults and bounds the resolver uses', () => {
    expect(at('spec', 'helm', 'includeCRDs').default).toBe(true);
    expect(at('spec', 'helm', 'pruneCRDs').default).toBe(false);
    expect(at('spec', 'helm', 'skipTests').default).toBe(true);
    expect(at('spec', 'helm', 'valuesFiles').maxItems).toBe(MAX_HELM_VALUES_FILES);
    expect(at('spec', 'helm', 'valuesFrom').maxItems).toBe(MAX_HELM_VALUES_FROM);
    expect(at('spec', 'helm', 'valuesFrom', '[]', 'name').pattern).toBe(DNS1123_SUBDOMAIN.source);
    expect(at('spec', 'helm', 'releaseName').pattern).toBe(DNS1123_SUBDOMAIN.source);
  });

  it('accepts for spec.prune what the resolver accepts: true, false and DryRun', () => {
    expect(at('spec', 'prune').enum).toEqual([true, false, PRUNE_DRY_RUN]);
    for (const value of [true, false, PRUNE_DRY_RUN])
      expect(resolveApplySetSpec({ ...base, prune: value }).ok).toBe(true);
    expect(resolveApplySetSpec({ ...base, prune: 'maybe' }).ok).toBe(false);
  });

  it('declares driftMode and the driftIgnore pointer pattern as the resolver reads them', () => {
    expect(at('spec', 'driftMode')).toMatchObject({ enum: [...DRIFT_MODES], default: 'Correct' });
    const pointer = new RegExp(at('spec', 'driftIgnore', '[]', 'paths', '[]').pattern ?? '');
    for (const path of ['/spec/replicas', '/metadata/annotations/a~1b', '/spec/ports/0'])
      expect([pointer.test(path), parseJsonPointer(path) !== undefined]).toEqual([true, true]);
    for (const path of ['spec/replicas', '/a~2', ''])
      expect(pointer.test(path)).toBe(false);
  });

  it.each(['interval', 'retryInterval', 'timeout'])('validates %s with the pattern parseDuration reads', (field) => {
    expect(at('spec', field).pattern).toBe(DURATION_PATTERN.source);
  });

  it('defaults deletionPolicy to Delete out of the same values as the types', () => {
    expect(at('spec', 'deletionPolicy')).toMatchObject({ enum: [...DELETION_POLICIES], default: 'Delete' });
  });

  // The CEL rules run only in the API server; here their intent is checked against the resolver, which
  // must refuse the same specs (the integration tests run the rules themselves).
  it('has a CEL rule for each check the resolver makes that a pattern cannot', () => {
    const messages = (node: Schema): string[] => (node['x-kubernetes-validations'] ?? []).map((v) => v.message);
    expect(messages(at('spec', 'source', 'ref'))).toEqual([
      'exactly one of branch, tag, commit, semver or digest must be set',
    ]);
    expect(messages(at('spec', 'source', 'path'))).toEqual([
      'path must be relative to the repository root',
      "path must not contain '..' segments",
    ]);
    expect(messages(at('spec', 'source', 'url'))).toEqual([
      'credentials must not be part of the URL; use secretRef',
    ]);
    for (const field of ['interval', 'retryInterval', 'timeout'])
      expect(messages(at('spec', field))).toEqual(['must be longer than zero']);
    expect(messages(at('spec', 'dependsOn', '[]'))).toEqual([
      API_VERSION_AND_KIND_TOGETHER,
      'the name of an ApplySet must be a DNS-1123 subdomain',
      'a name cannot be "." or "..", nor contain "/" or "%"',
    ]);
  });

  const base = { source: { url: 'https://git.example/r.git', ref: { branch: 'main' } }, prune: true };
  it.each<[string, string[], string]>([
    ['url', ['spec', 'source', 'url'], 'https://git.example/r.git'],
    ['url over http', ['spec', 'source', 'url'], 'http://127.0.0.1:9999/r.git'],
    ['url over ssh', ['spec', 'source', 'url'], 'ssh://git@git.example/r.git'],
    ['scp-like url', ['spec', 'source', 'url'], 'git@git.example:org/r.git'],
    ['commit', ['spec', 'source', 'ref', 'commit'], '0123456789abcdef0123456789abcdef01234567'],
    ['targetNamespace', ['spec', 'targetNamespace'], 'team-a'],
    ['serviceAccountName', ['spec', 'serviceAccountName'], 'deployer.v2'],
    ['secretRef.name', ['spec', 'source', 'secretRef', 'name'], 'git-auth'],
  ])('agrees with the resolver on a valid %s', (_name, keys, value) => {
    const pattern = at(...keys).pattern;
    expect(pattern).toBeDefined();
    expect(new RegExp(pattern ?? '').test(value)).toBe(true);
    const start = keys.includes('ref') ? setPath(base, ['source', 'ref'], {}) : base;
    expect(resolveApplySetSpec(setPath(start, keys.slice(1), value)).ok).toBe(true);
  });

  it.each<[string, string[], string]>([
    ['url', ['spec', 'source', 'url'], 'file:///r.git'],
    ['ext:: url', ['spec', 'source', 'url'], 'ext::sh -c id'],
    ['scp-like url without a user', ['spec', 'source', 'url'], 'host:r.git'],
    ['commit', ['spec', 'source', 'ref', 'commit'], 'ABC'],
    ['targetNamespace', ['spec', 'targetNamespace'], 'Team_A'],
    ['serviceAccountName', ['spec', 'serviceAccountName'], '-sa'],
    ['secretRef.name', ['spec', 'source', 'secretRef', 'name'], 'Git'],
  ])('agrees with the resolver on an invalid %s', (_name, keys, value) => {
    expect(new RegExp(at(...keys).pattern ?? '').test(value)).toBe(false);
    const start = keys.includes('ref') ? setPath(base, ['source', 'ref'], {}) : base;
    expect(resolveApplySetSpec(setPath(start, keys.slice(1), value)).ok).toBe(false);
  });
});

function setPath(object: Record<string, unknown>, keys: string[], value: unknown): Record<string, unknown> {
  const [key, ...rest] = keys;
  if (key === undefined) throw new Error('empty path');
  const child = object[key];
  const nested = typeof child === 'object' && child !== null ? (child as Record<string, unknown>) : {};
  return { ...object, [key]: rest.length === 0 ? value : setPath(nested, rest, value) };
}
