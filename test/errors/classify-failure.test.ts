import {
  HelmChartDigestMismatchError,
  HelmChartNotFoundError,
  HelmChartVersionNotFoundError,
  HelmCredentialsNotForHostError,
  HelmIndexTooLargeError,
  HelmRepositoryAuthError,
  HelmRepositoryInvalidError,
  HelmRepositoryUnreachableError,
} from '../../src/source/helm-repository/helm-repository-error.js';
import { readdirSync, readFileSync } from 'node:fs';
import { BuildsHeldBackError } from '../../src/builds/build-scheduler.js';
import { DecryptionNotConfiguredError } from '../../src/sops/decryption-not-configured-error.js';
import { join } from 'node:path';
import { NestedApplySetRefusedError } from '../../src/api/refuse-nested-applysets.js';
import {
  ApplySetInputRejectedError,
  ApplySetParentNotFoundError,
} from '../../src/apply/apply-set-input-error.js';
import { CRD_WAIT_REQUEUE_MS, CrdNotEstablishedError } from '../../src/apply/crd-not-established-error.js';
import { HeldObjectsUnknownError } from '../../src/apply/list-held-objects.js';
import { ParentChangedError } from '../../src/apply/parent-changed-error.js';
import { PruneLimitExceededError } from '../../src/apply/prune-limit-error.js';
import { PreviewRefusedError } from '../../src/preview/preview-refused-error.js';
import { ArtifactRefusedError } from '../../src/source/oci/artifact-refused-error.js';
import { WatchExpiredError, WatchStalledError } from '../../src/kube/watch-once.js';
import { classifyFailure, type Failure } from '../../src/errors/classify-failure.js';
import { InvalidSourcePathError } from '../../src/manifests/source-path.js';
import {
  GitAuthError,
  GitCredentialsNotForHostError,
  GitFetchError,
  GitHostKeyMismatchError,
  GitPathNotFoundError,
  GitRefNotFoundError,
  GitRepositoryNotFoundError,
  GitRepositoryTooLargeError,
  GitSourceNotAllowedError,
  GitSshAuthError,
  GitUnreachableError,
  GitUnsafeTreeError,
} from '../../src/git/git-error.js';
import { SourceAddressRefusedError } from '../../src/net/guarded-lookup.js';
import { ProxyRefusedError } from '../../src/net/proxy-refused-error.js';
import { TlsCertificateError } from '../../src/net/tls-certificate-error.js';
import { DestinationRefusedError, ResponseTooLargeError } from '../../src/net/destination-refused-error.js';
import { SopsDecryptionError } from '../../src/sops/sops-decryption-error.js';
import {
  ArtifactInvalidError,
  ArtifactNotFoundError,
  RegistryAuthError,
  RegistryUnreachableError,
} from '../../src/source/oci/registry-error.js';
import { VerificationFailedError } from '../../src/source/oci/verify-cosign.js';
import {
  CompressedInventoryError,
  InventoryPastLimitError,
  InventoryTooLargeError,
} from '../../src/inventory/inventory-encoding.js';
import { InventoryParseError } from '../../src/inventory/parse-inventory.js';
import {
  ImpersonationRefusedError,
  KubeApiError,
  KubeTransportError,
  UnknownKindError,
  kubeApiErrorFrom,
} from '../../src/kube/kube-api-error.js';
import { KubeConfigError } from '../../src/kube/kubeconfig-error.js';
import { KustomizeError } from '../../src/kustomize/kustomize-error.js';
import { HelmError } from '../../src/helm/helm-error.js';
import { HookFailedError } from '../../src/apply/hooks/run-hooks.js';
import { SyncWaveNotHealthyError } from '../../src/apply/sync-wave-error.js';
import { RemoteClusterUnreachableError } from '../../src/controller/remote-cluster-unreachable-error.js';
import { RemoteKubeConfigRefusedError } from '../../src/controller/remote-kube-config.js';
import { ManifestExpansionError } from '../../src/manifests/decode-documents.js';
import { ManifestError, ManifestSetError } from '../../src/manifests/manifest-error.js';
import { MergeConflictError, MergeError } from '../../src/merge/merge-error.js';
import { UiReviewUnavailableError } from '../../src/ui/cluster-access.js';
import { NotificationSendError } from '../../src/notify/notification-send-error.js';
import {
  GitHubAppAuthFailedError,
  GitHubAppInstallationNotFoundError,
  GitHubAppKeyInvalidError,
  GitHubAppUnreachableError,
} from '../../src/github-app/github-app-error.js';

const url = 'https://git.example.com/team/repo.git';
const revision = 'main@sha1:0123abc';
const configMap = { group: '', kind: 'ConfigMap', namespace: 'team-a', name: 'web' };
const unknownKind = new ManifestError(
  'unknown-kind',
  { file: 'w.yaml', documentIndex: 0 },
  'widget/w',
  'no kind',
);
const badYaml = new ManifestError(
  'decode-failed',
  { file: 'bad.yaml', documentIndex: undefined },
  undefined,
  'x',
);
const refusal =
  'serviceaccounts "ops" is forbidden: User "system:serviceaccount:rel:ctl" cannot impersonate resource "serviceaccounts" in API group "" in the namespace "team-a"';

/** Every class that carries an intent, one instance each (two where the class decides between two). */
const everyError: ReadonlyArray<readonly [Error, Failure['intent'], string]> = [
  [new BuildsHeldBackError('team-a', 2, 60_000), 'waiting', 'BuildsHeldBack'],
  [
    new DecryptionNotConfiguredError(['secret.yaml'], 'no spec.decryption to decrypt them with'),
    'stalled',
    'DecryptionNotConfigured',
  ],
  [new GitAuthError(url, 401), 'stalled', 'AuthenticationFailed'],
  [new GitSshAuthError(url, 'the server refused the key for git'), 'stalled', 'AuthenticationFailed'],
  [
    new GitHostKeyMismatchError(url, 'git.example.com', 'SHA256:abc', 'ssh-ed25519'),
    'stalled',
    'HostKeyMismatch',
  ],
  [new RegistryAuthError('oci://r.example/a: refused'), 'stalled', 'AuthenticationFailed'],
  [new ArtifactNotFoundError('oci://r.example/a: v1 is not in the registry'), 'stalled', 'ArtifactNotFound'],
  [new RegistryUnreachableError('oci://r.example/a: no answer'), 'retryable', 'RegistryUnreachable'],
  [new HelmChartNotFoundError('https://c.example: no chart web'), 'stalled', 'HelmChartNotFound'],
  [new HelmChartVersionNotFoundError('https://c.example: no version'), 'stalled', 'HelmChartVersionNotFound'],
  [new HelmChartDigestMismatchError('https://c.example: digest'), 'stalled', 'HelmChartDigestMismatch'],
  [new HelmIndexTooLargeError('https://c.example: index.yaml'), 'stalled', 'HelmIndexTooLarge'],
  [new HelmRepositoryInvalidError('https://c.example: 404'), 'stalled', 'HelmRepositoryInvalid'],
  [new HelmRepositoryAuthError('https://c.example: 401'), 'stalled', 'AuthenticationFailed'],
  [new HelmRepositoryUnreachableError('https://c.example: 503'), 'retryable', 'HelmRepositoryUnreachable'],
  [new HelmCredentialsNotForHostError('credentials not sent'), 'stalled', 'CredentialsNotForHost'],
  [new ArtifactInvalidError('oci://r.example/a: not an artifact'), 'stalled', 'ArtifactInvalid'],
  [new VerificationFailedError('oci://r.example/a@sha256:…: no signature'), 'stalled', 'VerificationFailed'],
  [
    new SopsDecryptionError('secret.yaml', 'mac-mismatch', 'its values do not match its MAC'),
    'stalled',
    'DecryptionFailed',
  ],
  [new GitUnreachableError(url, 'ECONNREFUSED'), 'retryable', 'GitUnreachable'],
  [new GitRefNotFoundError(url, 'branch main'), 'stalled', 'GitRefNotFound'],
  [new GitRepositoryNotFoundError(url, 'bad scheme'), 'stalled', 'RepositoryNotFound'],
  [new GitFetchError(url, 'broken pack'), 'retryable', 'GitFetchFailed'],
  [new GitSourceNotAllowedError(url, 'link-local'), 'stalled', 'SourceNotAllowed'],
  [new GitCredentialsNotForHostError(url, 'not listed'), 'stalled', 'CredentialsNotForHost'],
  [new InvalidSourcePathError('../x', 'leaves the repository'), 'stalled', 'InvalidPath'],
  [new GitPathNotFoundError('deploy', 'abc'), 'stalled', 'PathNotFound'],
  [new GitUnsafeTreeError('a/link', 'leaves the tree'), 'stalled', 'UnsafeRepository'],
  [new GitRepositoryTooLargeError(url, 'over --git-max-fetch-bytes'), 'stalled', 'RepositoryTooLarge'],
  [
    new SourceAddressRefusedError('metadata', '169.254.169.254', 'a link-local address'),
    'stalled',
    'SourceNotAllowed',
  ],
  [
    new DestinationRefusedError('notification', '127.0.0.1:8080', '127.0.0.1 is a loopback address'),
    'stalled',
    'SourceNotAllowed',
  ],
  [new ResponseTooLargeError('remote-cluster', 'example.com/version', 65536), 'stalled', 'ResponseTooLarge'],
  [
    new TlsCertificateError('CertificateUntrusted', 'git.example:443', 'SELF_SIGNED_CERT_IN_CHAIN', 'x'),
    'stalled',
    'CertificateUntrusted',
  ],
  [new ProxyRefusedError('proxy.corp:3128', 'git.example:443', 407), 'stalled', 'ProxyRefused'],
  [new ProxyRefusedError('proxy.corp:3128', 'git.example:443', 502), 'retryable', 'ProxyRefused'],
  [
    new TlsCertificateError('CertificateInvalid', 'git.example:443', 'CERT_HAS_EXPIRED', 'x'),
    'retryable',
    'CertificateInvalid',
  ],
  [new KubeApiError('GET', '/p', 503, 'ServiceUnavailable', 'x'), 'retryable', 'ApplyFailed'],
  [new KubeApiError('PATCH', '/p', 422, 'Invalid', 'x'), 'stalled', 'ApplyFailed'],
  [
    new ImpersonationRefusedError('GET', '/p', 403, 'Forbidden', refusal),
    'stalled',
    'ImpersonationForbidden',
  ],
  [new KubeTransportError('GET', '/p', { cause: new Error('ECONNRESET') }), 'retryable', 'ApplyFailed'],
  [new UnknownKindError('example.com', 'Widget', 'v1', 'no CRD'), 'stalled', 'UnknownKind'],
  [new KubeConfigError('exec plugin failed'), 'stalled', 'ApplyFailed'],
  [new RemoteKubeConfigRefusedError('exec plugins are refused'), 'stalled', 'KubeConfigRefused'],
  [
    new RemoteClusterUnreachableError('https://b:6443', 'Secret a/b, key value', {
      cause: new Error('ECONNREFUSED'),
    }),
    'retryable',
    'RemoteClusterUnreachable',
  ],
  [new MergeError('missing-merge-key', 'no name'), 'stalled', 'MergeFailed'],
  [new MergeConflictError('a: 1', 'a: 2'), 'stalled', 'MergeFailed'],
  [unknownKind, 'stalled', 'UnknownKind'],
  [badYaml, 'stalled', 'InvalidManifests'],
  [new ManifestSetError([unknownKind]), 'stalled', 'UnknownKind'],
  [new ManifestSetError([unknownKind, badYaml]), 'stalled', 'InvalidManifests'],
  [
    new ManifestExpansionError('a.yaml', 0, 'excessive-aliasing', 'too many aliases'),
    'stalled',
    'InvalidManifests',
  ],
  [
    new ApplySetInputRejectedError(['p'], { cause: new ManifestSetError([unknownKind]) }),
    'stalled',
    'UnknownKind',
  ],
  [new ApplySetInputRejectedError(['the set is empty']), 'stalled', 'InvalidManifests'],
  [new ApplySetParentNotFoundError('configmap/p'), 'stalled', 'ParentNotFound'],
  [
    new NestedApplySetRefusedError([{ ref: configMap, message: 'nested' }]),
    'stalled',
    'NestedApplySetRefused',
  ],
  [new CrdNotEstablishedError('widgets.example.com'), 'waiting', 'CrdNotEstablished'],
  [new ParentChangedError('applyset/a'), 'retryable', 'ParentChanged'],
  [new PruneLimitExceededError(1, ['a', 'b']), 'stalled', 'PruneLimitExceeded'],
  [new PreviewRefusedError('ImpersonationNotAllowed', 'you may not'), 'stalled', 'ImpersonationNotAllowed'],
  [new PreviewRefusedError('ApplySetNotFound', 'not found'), 'stalled', 'ApplySetNotFound'],
  [new HeldObjectsUnknownError(configMap, { cause: new Error('list refused') }), 'retryable', 'ApplyFailed'],
  [new InventoryParseError(3, 'x', 'too few fields'), 'stalled', 'InventoryInvalid'],
  [new CompressedInventoryError('the gzip key is missing'), 'stalled', 'InventoryInvalid'],
  [new InventoryTooLargeError('applyset/a', 90_000, 300_000), 'stalled', 'InventoryTooLarge'],
  [
    new InventoryPastLimitError('applyset.dev/last-applied-objects', 'holds over 250000 lines'),
    'stalled',
    'InventoryTooLarge',
  ],
  [
    new ArtifactRefusedError('ArtifactTooLarge', 'oci://r/a', 'expands past 1 MiB'),
    'stalled',
    'ArtifactTooLarge',
  ],
  [
    new ArtifactRefusedError('ArtifactUnsafe', 'oci://r/a', 'has an unsafe entry'),
    'stalled',
    'ArtifactUnsafe',
  ],
  [new ArtifactRefusedError('ArtifactInvalid', 'oci://r/a', 'is not gzip'), 'stalled', 'ArtifactInvalid'],
  [new WatchExpiredError('410 Gone'), 'retryable', 'WatchExpired'],
  [new WatchStalledError('silent'), 'retryable', 'WatchStalled'],
  [new KustomizeError('refused', 'a remote base'), 'stalled', 'KustomizationRefused'],
  [new KustomizeError('failed', 'kustomize build . failed'), 'stalled', 'KustomizeBuildFailed'],
  [new KustomizeError('internal', 'kustomize is not installed'), 'retryable', 'KustomizeUnavailable'],
  [new HelmError('refused', 'no Chart.yaml'), 'stalled', 'HelmChartRefused'],
  [new HelmError('failed', 'helm template . failed'), 'stalled', 'HelmTemplateFailed'],
  [new HelmError('internal', 'helm is not installed'), 'retryable', 'HelmUnavailable'],
  [new HookFailedError([]), 'retryable', 'HookFailed'],
  [new SyncWaveNotHealthyError(1, 'x'), 'retryable', 'SyncWaveNotHealthy'],
  [
    new UiReviewUnavailableError('TokenReview', { cause: new Error('503') }),
    'retryable',
    'ReviewUnavailable',
  ],
  [new NotificationSendError('team-a/chat', 'answered HTTP 500'), 'retryable', 'NotificationFailed'],
  [new GitHubAppKeyInvalidError('Secret a/b: no PEM'), 'stalled', 'GitHubAppKeyInvalid'],
  [new GitHubAppAuthFailedError('GitHub: HTTP 401'), 'stalled', 'GitHubAppAuthFailed'],
  [new GitHubAppInstallationNotFoundError('GitHub: HTTP 404'), 'stalled', 'GitHubAppInstallationNotFound'],
  [
    new GitHubAppUnreachableError('https://api.github.com', 'ECONNRESET'),
    'retryable',
    'GitHubAppUnreachable',
  ],
];

describe('classifyFailure', () => {
  it.each(everyError.map(([error, intent, reason]) => [error.name, intent, reason, error] as const))(
    '%s is %s with the reason %s, and expected',
    (_name, intent, reason, error) => {
      expect(classifyFailure(error)).toMatchObject({ intent, reason, unexpected: false });
    },
  );

  it('covers every class of src/ that carries an intent', () => {
    const declared = classesWithIntent(join(process.cwd(), 'src'));
    const covered = new Set(everyError.map(([error]) => error.constructor.name));
    expect(declared.filter((name) => !covered.has(name))).toEqual([]);
  });

  it('knows the impersonation refusal from the Status the API server sends, and no other 403', () => {
    const status = (message: string) =>
      JSON.stringify({ kind: 'Status', reason: 'Forbidden', message, code: 403 });
    expect(classifyFailure(kubeApiErrorFrom('GET', '/p', 403, status(refusal))).reason).toBe(
      'ImpersonationForbidden',
    );
    expect(
      classifyFailure(kubeApiErrorFrom('GET', '/p', 403, status('configmaps "x" is forbidden'))).reason,
    ).toBe('ApplyFailed');
  });

  it('gives a waiting error its delay, so the caller never guesses one', () => {
    expect(classifyFailure(new CrdNotEstablishedError('widgets.example.com'))).toMatchObject({
      intent: 'waiting',
      afterMs: CRD_WAIT_REQUEUE_MS,
    });
  });

  it('lets the error say what the user reads at each step: hints, the path asked for, the refused input', () => {
    const fetch = { step: 'fetch', url, secretName: undefined } as const;
    expect(classifyFailure(new GitAuthError(url, 401), fetch).message).toBe(
      `authentication failed for ${url} (HTTP 401): the repository needs credentials: set spec.source.secretRef`,
    );
    expect(classifyFailure(new GitAuthError(url, 403), { ...fetch, secretName: 'git-token' }).message).toBe(
      `authentication failed for ${url} (HTTP 403): check username/password or token in Secret git-token`,
    );
    expect(
      classifyFailure(new GitPathNotFoundError('deploy', 'abc', 'submodule'), {
        step: 'load',
        path: 'deploy',
        revision,
      }).message,
    ).toBe(`path "deploy" is a submodule in revision ${revision}`);
    const apply = { step: 'apply', revision, timedOut: false } as const;
    const refused = classifyFailure(
      new ApplySetInputRejectedError(['a', 'b'], { subject: 'applyset/a' }),
      apply,
    );
    expect(refused).toMatchObject({
      message: `revision ${revision} was refused, nothing was changed: a; b`,
      errors: [
        { object: 'applyset/a', message: 'a' },
        { object: 'applyset/a', message: 'b' },
      ],
      problems: ['a', 'b'],
    });
    expect(classifyFailure(new InventoryParseError(3, 'x', 'too few fields'), apply)).toMatchObject({
      message: expect.stringMatching(
        /cannot be read \(.*line 3.*\): fix or remove that line; nothing was applied or pruned$/,
      ) as unknown,
      errors: [
        { object: 'last-applied-objects line 3', message: expect.stringContaining('line 3') as unknown },
      ],
    });
  });

  it('reports an error that is no IntentError as unexpected, under the reason of the step that failed', () => {
    const bug = new TypeError("Cannot read properties of undefined (reading 'spec')");
    expect(classifyFailure(bug, { step: 'fetch', url, secretName: undefined })).toEqual({
      intent: 'retryable',
      reason: 'GitFetchFailed',
      message: `fetching ${url} failed: ${bug.message}`,
      unexpected: true,
    });
    expect(classifyFailure(bug, { step: 'load', path: '', revision })).toMatchObject({
      reason: 'LoadFailed',
      unexpected: true,
    });
    expect(classifyFailure(bug, { step: 'apply', revision, timedOut: false })).toMatchObject({
      reason: 'ApplyFailed',
      unexpected: true,
    });
  });

  it('takes an abort for what it is: the end of the work, or a Timeout when the deadline passed, never a bug', () => {
    const abort = new DOMException('This operation was aborted', 'AbortError');
    expect(classifyFailure(abort, { step: 'apply', revision, timedOut: true })).toEqual({
      intent: 'retryable',
      reason: 'Timeout',
      message: 'the reconcile did not finish in time: This operation was aborted',
      unexpected: false,
    });
    expect(classifyFailure(abort, { step: 'apply', revision, timedOut: false }).unexpected).toBe(false);
  });
});

/** The names of the classes under `dir` whose body declares an `intent`. */
function classesWithIntent(dir: string): string[] {
  const names: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.ts')) continue;
    const text = readFileSync(join(entry.parentPath, entry.name), 'utf8');
    const heads = [...text.matchAll(/(abstract )?class (\w+) extends /g)];
    heads.forEach((head, i) => {
      const body = text.slice(head.index, heads[i + 1]?.index ?? text.length);
      if (head[1] === undefined && head[2] !== undefined && /readonly intent\b/.test(body))
        names.push(head[2]);
    });
  }
  return names.sort();
}
