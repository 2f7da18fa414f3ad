/**
 * Step 8 of a reconcile (credentials, fetch, tree, kustomize, sops) as one call, the same for every source type and for every caller (the
 * controller's reconcile, the preview): the source's credentials read as the ApplySet's account, the
 * revision fetched by the source type's adapter, then its tree read as manifests, a kustomization
 * built and sops files decrypted. It ends in the revision's files or in the outcome that stops the run;
 * it never throws but an abort.
 */
import { readSecret } from '../kube/applyset-api.js';
import { serviceAccountOf } from '../api/applyset-account.js';
import type { ResolvedApplySetSpec } from '../api/applyset-types.js';
import { stalledStep, type Step } from '../api/reconcile-outcome.js';
import type { KustomizeOptions } from '../kustomize/run-kustomize.js';
import type { ManifestFile } from '../manifests/manifest-limits.js';
import { inSpan, noteStep } from '../observability/trace-span.js';
import { readRevisionFiles } from './decrypt-revision.js';
import type { ChartInputs } from '../helm/chart-inputs.js';
import type {
  CredentialsParser,
  SetAccount,
  SourceAdapters,
  SourceRequest,
  SourceRevision,
} from './source-adapter.js';

/** Which Secrets of other namespaces spec.source.secretRef may name: the controller's tenancy flags. */
interface SecretRefPolicy {
  /** `--allow-secret-refs-from`: namespaces whose Secrets an ApplySet of another namespace may name. */
  readonly allowSecretRefsFrom: ReadonlySet<string>;
  /** `--no-cross-namespace-refs`: said in a refusal, so the user knows which setting refused. */
  readonly noCrossNamespaceRefs: boolean;
}

/** A revision of the source, read for the engine: its files, its name and what it is. */
export interface ReadRevision {
  readonly files: ManifestFile[];
  /** `main@sha1:…`, `v1@sha256:…`: as the status shows it. */
  readonly revision: string;
  /** The commit or the manifest digest. */
  readonly id: string;
}

export interface ReadSourceAccess extends Pick<SourceRequest, 'maxAgeMs' | 'log' | 'metrics' | 'now'> {
  readonly account: SetAccount;
  readonly secretRefs: SecretRefPolicy;
  /** How a kustomization is built (the build scheduler's slot, the binary, the limits). */
  readonly kustomize?: KustomizeOptions;
  /** The capabilities of the cluster the set applies to, asked only when a chart is rendered. */
  readonly capabilities?: ChartInputs['capabilities'];
}

export async function readSource(
  adapters: SourceAdapters,
  spec: ResolvedApplySetSpec,
  access: ReadSourceAccess,
  signal: AbortSignal,
): Promise<Step<ReadRevision>> {
  const fetched = await fetchRevision(adapters, spec, access, signal);
  if ('done' in fetched) return fetched;
  return readRevision(fetched.value, spec, access, signal);
}

/**
 * The first half of readSource: the credentials, and the revision fetched into the shared cache (or
 * taken from it). The reconcile asks whether anything changed since its last run between the halves.
 */
export async function fetchRevision(
  adapters: SourceAdapters,
  spec: ResolvedApplySetSpec,
  access: ReadSourceAccess,
  signal: AbortSignal,
): Promise<Step<SourceRevision>> {
  const adapter = adapters[spec.source.kind];
  if (adapter === undefined) {
    return stalledStep(
      'SourceNotSupported',
      `this controller reads no ${spec.source.kind} source (${spec.source.url}); nothing was applied`,
    );
  }
  const { account, log } = access;
  const source = { 'source.kind': spec.source.kind, 'source.url': spec.source.url };
  return inSpan('source.fetch', source, async (notes) => {
    const step = await adapter.read(
      {
        spec,
        account,
        credentials: (parse) => readSourceCredentials(account, access.secretRefs, spec, parse, signal),
        maxAgeMs: access.maxAgeMs,
        log,
        metrics: access.metrics,
        now: access.now,
      },
      signal,
    );
    noteStep(notes, step);
    if ('value' in step) notes.set({ 'source.revision': step.value.revision });
    return step;
  });
}

/** The second half of readSource: the fetched tree read as manifests, built, decrypted. */
export async function readRevision(
  { revision, id, tree }: SourceRevision,
  spec: ResolvedApplySetSpec,
  access: ReadSourceAccess,
  signal: AbortSignal,
): Promise<Step<ReadRevision>> {
  const read = {
    revision,
    signal,
    log: access.log,
    ...(access.kustomize === undefined ? {} : { kustomize: access.kustomize }),
    ...(access.capabilities === undefined ? {} : { capabilities: access.capabilities }),
  };
  const files = await readRevisionFiles(tree, access.account, spec, read);
  if ('done' in files) return files;
  return { value: { files: files.value, revision, id } };
}

/**
 * The credentials of spec.source.secretRef's Secret; they go to the source and nowhere else (never
 * logged). The Secret is read as the account the set is applied as (the controller only when it
 * applies as itself): an ApplySet author cannot make the controller read, and send to a host of their
 * choosing, a Secret their account may not get. A Secret of another namespace is read only from a
 * namespace the controller was told to trust (`--allow-secret-refs-from`).
 */
async function readSourceCredentials<T>(
  { reader, user, namespace }: SetAccount,
  policy: SecretRefPolicy,
  spec: ResolvedApplySetSpec,
  parse: CredentialsParser<T>,
  signal: AbortSignal,
): Promise<Step<T | undefined>> {
  const { secretName } = spec.source;
  if (secretName === undefined) return { value: undefined };
  const secretNamespace = spec.source.secretNamespace ?? namespace;
  if (secretNamespace !== namespace && !policy.allowSecretRefsFrom.has(secretNamespace)) {
    const why = policy.noCrossNamespaceRefs
      ? 'the controller refuses every reference to another namespace (it runs without --allow-cross-namespace-refs)'
      : `the controller trusts no Secret of namespace ${secretNamespace} (--allow-secret-refs-from, chart tenancy.allowSecretRefsFrom)`;
    return stalledStep(
      'CrossNamespaceRefRefused',
      `spec.source.secretRef names Secret ${secretNamespace}/${secretName} of another namespace, and ${why}; nothing was fetched or applied`,
    );
  }
  const secret = await readSecret(reader, secretNamespace, secretName, signal);
  const named = `Secret ${secretNamespace}/${secretName}`;
  if (secret.kind === 'forbidden') {
    const who =
      user === undefined ? 'the controller' : `the ApplySet's ServiceAccount ${serviceAccountOf(user)}`;
    return stalledStep(
      'SecretNotReadable',
      `${who} may not get ${named} (spec.source.secretRef); grant it get on that Secret (a Role with resourceNames: [${secretName}]); nothing was fetched or applied`,
    );
  }
  const parsed = secret.kind === 'missing' ? { problem: 'does not exist' } : parse(secret, named);
  if ('problem' in parsed) {
    return stalledStep('SecretNotFound', `${named} (spec.source.secretRef) ${parsed.problem}`);
  }
  return { value: parsed.credentials };
}
