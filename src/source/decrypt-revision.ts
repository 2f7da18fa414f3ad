/**
 * Step 8's end: the revision's files, the sops-encrypted ones of the set decrypted in
 * memory, with the age identities of the Secret spec.decryption names, before anything decodes them. Plaintext lives
 * only in the files handed on (and, for a kustomization, in its build's memory-backed scratch
 * directory until the build ends); it is never logged, and a failure names the file, never a value.
 */
import type { ResolvedApplySetSpec } from '../api/applyset-types.js';
import type { FileTransform } from '../manifests/file-transform.js';
import type { KubeClient } from '../kube/kube-client.js';
import type { KustomizeOptions } from '../kustomize/run-kustomize.js';
import type { ManifestFile } from '../manifests/parse-manifest-set.js';
import type { Logger } from '../observability/create-logger.js';
import { parseAgeIdentities } from '../sops/decrypt-data-key.js';
import { decryptSopsFile, isSopsFile } from '../sops/decrypt-sops-file.js';
import { DecryptionNotConfiguredError } from '../sops/decryption-not-configured-error.js';
import { failureOutcome } from '../reconcile/failure-outcome.js';
import type { Step } from '../api/reconcile-outcome.js';
import { readFiles, type RevisionReader } from './revision-reader.js';
import { readSetSecretKeys } from './set-secret.js';
import type { ChartInputs } from '../helm/chart-inputs.js';
import { readHelmValuesFrom } from './helm-values-from.js';
import { inSpan, noteStep } from '../observability/trace-span.js';

/** The data keys of the decryption Secret that hold age identities (Flux's convention). */
const AGE_KEY_SUFFIX = '.agekey';
/** What a set with sops files lacks without spec.decryption. */
const NOT_CONFIGURED = 'no spec.decryption to decrypt them with';

/**
 * The revision's files (readFiles), with every sops file decrypted. Without
 * spec.decryption a sops file stalls the set: applied as it is, its ciphertext would become the live
 * values. The identities are read first, as `user`, the account the set is applied as, like
 * spec.source.secretRef: the controller never reads for a tenant a Secret the tenant's account may not
 * get, and only of the ApplySet's own namespace. A kustomization sees the sops files it reads
 * decrypted (only those: another environment's file, encrypted to another key, is never opened), in
 * a build written to memory-backed scratch; plain files, which are those under the path, are decrypted
 * once read.
 */
export async function readRevisionFiles(
  revisionReader: RevisionReader,
  { reader, user, namespace }: { reader: KubeClient; user: string | undefined; namespace: string },
  spec: ResolvedApplySetSpec,
  read: {
    revision: string;
    signal: AbortSignal;
    log: Pick<Logger, 'error'>;
    kustomize?: KustomizeOptions;
    capabilities?: ChartInputs['capabilities'];
  },
): Promise<Step<ManifestFile[]>> {
  const { revision, signal, log, capabilities, ...passed } = read;
  let identities: string[] | undefined;
  if (spec.decryption !== undefined) {
    try {
      const keys = await readAgeIdentities({ reader, user, namespace }, spec.decryption.secretName, signal);
      if ('done' in keys) return { done: { ...keys.done, revision } };
      identities = keys.value;
    } catch (error) {
      return { done: failureOutcome(error, { step: 'load', spec, revision }, log) };
    }
  }
  const chart = await chartInputs({ reader, user, namespace }, spec, { revision, signal, log, capabilities });
  if ('done' in chart) return chart;
  // Values from a Secret are secrets: the render's private files go to memory-backed scratch too.
  const secretValues = chart.value?.valuesFrom.some((document) => document.secret) === true;
  const rendered = { 'source.path': spec.source.path ?? '', 'source.revision': revision };
  const files = await inSpan('source.render', rendered, async (notes) => {
    const step = await readFiles(revisionReader, spec, {
      ...passed,
      revision,
      signal,
      log,
      ...(chart.value === undefined ? {} : { chart: chart.value }),
      ...(identities === undefined
        ? { transform: refuseSops, ...(secretValues ? { inMemory: true } : {}) }
        : { transform: decryptWhenSops(identities), inMemory: true }),
    });
    noteStep(notes, step);
    if ('value' in step) notes.set({ 'source.files': step.value.length });
    return step;
  });
  if ('done' in files) return files;
  if (identities === undefined) return decryptFiles(files.value, identities, spec, { revision, log });
  return inSpan('source.decrypt', { 'source.files': files.value.length }, async (notes) => {
    const step = await decryptFiles(files.value, identities, spec, { revision, log });
    noteStep(notes, step);
    return step;
  });
}

/**
 * What a chart's render takes from the cluster (spec.helm.valuesFrom, read as the account; the
 * target's capabilities, asked only if the chart is rendered); undefined without spec.helm.
 */
async function chartInputs(
  who: { reader: KubeClient; user: string | undefined; namespace: string },
  spec: ResolvedApplySetSpec,
  read: {
    revision: string;
    signal: AbortSignal;
    log: Pick<Logger, 'error'>;
    capabilities: ChartInputs['capabilities'];
  },
): Promise<Step<ChartInputs | undefined>> {
  if (spec.helm === undefined) return { value: undefined };
  const { revision, signal, log, capabilities } = read;
  try {
    const valuesFrom = await readHelmValuesFrom(who, spec.helm.valuesFrom, signal);
    if ('done' in valuesFrom) return { done: { ...valuesFrom.done, revision } };
    return {
      value: { valuesFrom: valuesFrom.value, ...(capabilities === undefined ? {} : { capabilities }) },
    };
  } catch (error) {
    return { done: failureOutcome(error, { step: 'load', spec, revision }, log) };
  }
}

/** A file a kustomization reads, as kustomize reads it: a sops file decrypted, others as they are. */
function decryptWhenSops(identities: readonly string[]): FileTransform {
  return async (filePath, bytes) =>
    isSopsFile(filePath, bytes)
      ? ((await decryptSopsFile(filePath, bytes, [...identities])) ?? bytes)
      : bytes;
}

/** Without spec.decryption, a sops file a kustomization reads refuses the build: kustomize would copy its ciphertext. */
const refuseSops: FileTransform = (filePath, bytes) => {
  if (isSopsFile(filePath, bytes)) throw new DecryptionNotConfiguredError([filePath], NOT_CONFIGURED);
  return bytes;
};

async function decryptFiles(
  files: readonly ManifestFile[],
  identities: readonly string[] | undefined,
  spec: ResolvedApplySetSpec,
  { revision, log }: { revision: string; log: Pick<Logger, 'error'> },
): Promise<Step<ManifestFile[]>> {
  const encrypted = new Set(
    files.filter((file) => file.unread === undefined && isSopsFile(file.path, Buffer.from(file.text))),
  );
  if (encrypted.size === 0) return { value: [...files] };
  if (identities === undefined) {
    const error = new DecryptionNotConfiguredError(
      [...encrypted].map((file) => file.path),
      NOT_CONFIGURED,
    );
    return { done: { kind: 'stalled', reason: error.reason, message: error.message, revision } };
  }
  const decrypted: ManifestFile[] = [];
  try {
    for (const file of files) {
      const plain = encrypted.has(file)
        ? await decryptSopsFile(file.path, Buffer.from(file.text), [...identities])
        : undefined;
      decrypted.push(
        plain === undefined ? file : { path: file.path, text: Buffer.from(plain).toString('utf8') },
      );
    }
  } catch (error) {
    return { done: failureOutcome(error, { step: 'load', spec, revision }, log) };
  }
  return { value: decrypted };
}

/** The age identities of the Secret's `*.agekey` data keys, or the stall that says why there are none. */
function readAgeIdentities(
  who: { reader: KubeClient; user: string | undefined; namespace: string },
  name: string,
  signal: AbortSignal,
): Promise<Step<string[]>> {
  return readSetSecretKeys(
    who,
    { name, field: 'spec.decryption.secretRef' },
    {
      suffix: AGE_KEY_SUFFIX,
      read: (_, value) => parseAgeIdentities(value),
      lacking: `age identity: no data key ending in ${AGE_KEY_SUFFIX} with an AGE-SECRET-KEY-1 line`,
    },
    signal,
  );
}
