/**
 * cosign's key-based signatures, verified as `cosign verify --key` verifies them, offline: the
 * signatures of the artifact `sha256:<hex>` are the layers of the manifest tagged `sha256-<hex>.sig`
 * in its repository, each a simple-signing payload (which names the digest it signs) with the
 * signature of those exact bytes in the `dev.cosignproject.cosign/signature` annotation. An artifact
 * is verified when one signature over a payload naming its digest verifies with one of the keys.
 * Keyless signatures (Fulcio certificates, Rekor) need the public internet: not supported.
 */
import { createPublicKey, verify, type KeyObject } from 'node:crypto';
import { IntentError } from '../../errors/intent-error.js';
import { messageOf } from '../../errors/message-of.js';
import { readJsonValue } from '../../input/read-json-value.js';
import { isJsonObject, type JsonObject } from '../../manifests/json-value.js';
import type { RegistryClient } from './registry-client.js';

const COSIGN_PAYLOAD_TYPE = 'application/vnd.dev.cosign.simplesigning.v1+json';
const SIGNATURE_ANNOTATION = 'dev.cosignproject.cosign/signature';
/** A payload is a few hundred bytes; more signatures than this on one artifact are not read. */
const MAX_PAYLOAD_BYTES = 64 * 1024;
const MAX_SIGNATURES = 32;

/** A cosign public key as the verify Secret holds it: its key name (`cosign.pub`) and PEM. */
export interface CosignPublicKey {
  readonly name: string;
  readonly pem: string;
}

/**
 * The artifact is not signed by any of the keys: nothing of it is applied.
 * @internal exported for the test that lists every intent.
 */
export class VerificationFailedError extends IntentError {
  override readonly name = 'VerificationFailedError';
  readonly code = 'VERIFICATION_FAILED';
  readonly intent = 'stalled';
  readonly reason = 'VerificationFailed';
}

/**
 * Resolves with the name of the key that verified a signature of `digest`; rejects with
 * VerificationFailedError naming the digest and the keys tried.
 */
export async function verifyCosignSignature(
  client: RegistryClient,
  artifact: {
    readonly where: string;
    readonly digest: string;
    /** Where the keys come from, in the refusal; default spec.source.verify.secretRef. */
    readonly keysFrom?: string;
  },
  keys: readonly CosignPublicKey[],
  signal: AbortSignal,
): Promise<string> {
  const { where, digest } = artifact;
  const tried = `keys tried: ${keys.map((key) => key.name).join(', ') || 'none'}`;
  const publicKeys = keys.map((key) => ({ name: key.name, key: publicKeyOf(key) }));
  const tag = `${digest.replace(':', '-')}.sig`;
  const signatures = await client.manifestIfPresent(tag, signal);
  if (signatures === undefined) {
    throw new VerificationFailedError(
      `${where}@${digest} has no cosign signature (no tag ${tag}); ${tried}; nothing was applied`,
    );
  }
  const layers = signatureLayers(signatures.manifest);
  for (const layer of layers) {
    const payload = await readPayload(client, layer, signal);
    if (payloadDigest(payload) !== digest) continue;
    const signature = Buffer.from(layer.signature, 'base64');
    const match = publicKeys.find(({ key }) => verifies(payload, signature, key));
    if (match !== undefined) return match.name;
  }
  throw new VerificationFailedError(
    `${where}@${digest}: none of its ${layers.length} cosign signature(s) verifies with ${artifact.keysFrom ?? 'the keys of spec.source.verify.secretRef'}; ${tried}; nothing was applied`,
  );
}

interface SignatureLayer {
  readonly digest: string;
  readonly size: number;
  readonly signature: string;
}

/** The simple-signing layers that carry a signature, at most MAX_SIGNATURES of them. */
function signatureLayers(manifest: JsonObject): SignatureLayer[] {
  const layers = Array.isArray(manifest['layers']) ? manifest['layers'] : [];
  return layers
    .filter(isJsonObject)
    .flatMap((layer) => {
      const annotations = isJsonObject(layer['annotations']) ? layer['annotations'] : {};
      const signature = annotations[SIGNATURE_ANNOTATION];
      const { digest, size, mediaType } = layer;
      if (mediaType !== COSIGN_PAYLOAD_TYPE || typeof signature !== 'string') return [];
      if (typeof digest !== 'string' || typeof size !== 'number' || size > MAX_PAYLOAD_BYTES) return [];
      return [{ digest, size, signature }];
    })
    .slice(0, MAX_SIGNATURES);
}

async function readPayload(
  client: RegistryClient,
  layer: SignatureLayer,
  signal: AbortSignal,
): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of await client.blob(layer.digest, layer.size, signal))
    chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks);
}

/** The `critical.image.docker-manifest-digest` a payload signs; undefined when it is not cosign's. */
function payloadDigest(payload: Buffer): string | undefined {
  let value: unknown;
  try {
    value = readJsonValue(payload.toString('utf8'), 'a cosign payload', 'registry');
  } catch {
    return undefined;
  }
  const critical = isJsonObject(value) && isJsonObject(value['critical']) ? value['critical'] : undefined;
  const image = critical !== undefined && isJsonObject(critical['image']) ? critical['image'] : undefined;
  if (critical?.['type'] !== 'cosign container image signature') return undefined;
  const digest = image?.['docker-manifest-digest'];
  return typeof digest === 'string' ? digest : undefined;
}

function publicKeyOf(key: CosignPublicKey): KeyObject {
  try {
    return createPublicKey(key.pem);
  } catch (error) {
    throw new VerificationFailedError(`${key.name} is not a public key in PEM (${messageOf(error)})`);
  }
}

/** ECDSA and RSA keys sign a SHA-256 digest; Ed25519 signs the payload itself. */
function verifies(payload: Buffer, signature: Buffer, key: KeyObject): boolean {
  try {
    return verify(key.asymmetricKeyType === 'ed25519' ? null : 'sha256', payload, key, signature);
  } catch {
    return false;
  }
}
