import { setTimeout as delay } from 'node:timers/promises';
import PQueue from 'p-queue';

/** A Secret an ApplySet names. */
interface NamedSecret {
  readonly namespace: string;
  readonly secretName: string;
}

/** An ApplySet that names Secrets: `namespace/name` and the Secrets, at least one. */
export interface SecretReference {
  readonly key: string;
  /** Its Git credentials, spec.decryption, spec.kubeConfig and spec.helm.valuesFrom Secrets, those it names, in that order. */
  readonly secrets: readonly NamedSecret[];
  /** Who reads them: the ApplySet's account (impersonated), as its reconcile does; undefined: the controller. */
  readonly user?: string;
}

interface SecretChangePollerOptions {
  /**
   * The Secret's resourceVersion read as `user`, or undefined when it does not exist; throws on any
   * other failure (a Secret the account may not get, too).
   */
  readonly readVersion: (
    namespace: string,
    name: string,
    signal: AbortSignal,
    user: string | undefined,
  ) => Promise<string | undefined>;
  /** The Secret the ApplySet `key` names now, if any (from the informer's cache). */
  readonly secretOf: (key: string) => SecretReference | undefined;
  /** ApplySets that name a Secret and are not Ready (from the informer's cache): the ones polled. */
  readonly failing: () => readonly SecretReference[];
  /** The ApplySet's Secret changed since its last reconcile read it: reconcile it now. */
  readonly onChange: (key: string) => void;
  readonly intervalMs: number;
  /** Secret GETs at once; default SECRET_POLL_CONCURRENCY. */
  readonly concurrency?: number;
  /** ApplySets whose Secret one poll reads; default SECRET_POLL_MAX_PER_TICK. */
  readonly maxPerTick?: number;
  /** Ends the polling. */
  readonly signal: AbortSignal;
  readonly logger: { debug(object: object, message: string): void };
}

export interface SecretChangePoller {
  /**
   * Records the version of `key`'s Secret right before its reconcile reads it: later polls compare with it.
   * Taken before, so a change made while the reconcile runs is seen (at worst one extra reconcile), and a
   * Secret created right after the reconcile found none is seen too. Never throws. `signal` bounds the
   * reads; it is made only for an ApplySet that names a Secret (most name none: no signal, no timer).
   */
  beforeReconcile(key: string, signal: () => AbortSignal): Promise<void>;
  /** The ApplySet is gone. */
  forget(key: string): void;
  /** Resolves when the polling has stopped. */
  readonly done: Promise<void>;
}

/**
 * The poller's bounds, whatever the number of failing ApplySets (each tenant can make as many as it
 * may create): at most SECRET_POLL_CONCURRENCY GETs at once, and the Secrets of at most
 * SECRET_POLL_MAX_PER_TICK ApplySets per poll, taken in turn, so with the 5 s interval the poller
 * sends at most 20 GETs a second for each Secret an ApplySet names (four, and the Secrets of spec.helm.valuesFrom, at most), and every failing
 * ApplySet is polled every ceil(failing / 100) polls. A poll starts intervalMs after the previous one ended, never beside it.
 */
const SECRET_POLL_CONCURRENCY = 4;
const SECRET_POLL_MAX_PER_TICK = 100;

/** What a baseline or an observation holds: which Secret, and its version or its absence. */
function stateOf(secret: NamedSecret, version: string | undefined): string {
  return `${secret.namespace}/${secret.secretName}@${version ?? '(absent)'}`;
}

type ReadVersion = SecretChangePollerOptions['readVersion'];

/** The state of all the ApplySet's Secrets, so a change of any of them counts. */
async function observeSecrets(
  readVersion: ReadVersion,
  reference: SecretReference,
  readSignal: AbortSignal,
): Promise<string> {
  const states: string[] = [];
  // One after another: a poll's GETs at once stay bounded by its queue, whatever an ApplySet names.
  for (const secret of reference.secrets) {
    states.push(
      stateOf(secret, await readVersion(secret.namespace, secret.secretName, readSignal, reference.user)),
    );
  }
  return states.join(' ');
}

/** One read per Secrets and reader: two accounts do not share what one of them may read. */
function readKey({ user, secrets }: SecretReference): string {
  return [user ?? '', ...secrets.map((secret) => `${secret.namespace}/${secret.secretName}`)].join(' ');
}

/**
 * Reconciles an ApplySet when a Secret it names changes (a fixed Git credential, a rotated age key, a
 * new kubeconfig), without a list or watch of Secrets (so the controller needs only `get` on them):
 * every `intervalMs`, one GET per Secret named by an ApplySet that
 * is not Ready, compared with the version the ApplySet's last reconcile was about to read. A Ready ApplySet
 * is not polled: its next reconcile reads the Secret anyway, and nothing is broken meanwhile.
 */
export function startSecretChangePoller(options: SecretChangePollerOptions): SecretChangePoller {
  const baselines = new Map<string, string>();
  const { logger, signal } = options;
  const queue = new PQueue({ concurrency: options.concurrency ?? SECRET_POLL_CONCURRENCY });
  const maxPerTick = options.maxPerTick ?? SECRET_POLL_MAX_PER_TICK;
  let next = 0;
  /** The next maxPerTick of the failing ApplySets, wrapping around: each has its turn. */
  const inTurn = (all: readonly SecretReference[]): readonly SecretReference[] => {
    if (all.length <= maxPerTick) return all;
    const start = next % all.length;
    next = start + maxPerTick;
    return [...all.slice(start), ...all.slice(0, start)].slice(0, maxPerTick);
  };

  const observe = (reference: SecretReference, readSignal: AbortSignal) =>
    observeSecrets(options.readVersion, reference, readSignal);

  const tick = async (): Promise<void> => {
    const failing = inTurn(options.failing());
    const reads = new Map<string, Promise<string | Error>>();
    for (const reference of failing) {
      const secretKey = readKey(reference);
      if (!reads.has(secretKey)) {
        reads.set(
          secretKey,
          queue
            .add(() => observe(reference, signal))
            .catch((error: unknown) => (error instanceof Error ? error : new Error(String(error)))),
        );
      }
    }
    for (const reference of failing) {
      const observed = await reads.get(readKey(reference));
      if (observed === undefined || observed instanceof Error) {
        logger.debug({ applyset: reference.key, err: observed }, 'reading the Secret failed; next poll');
        continue;
      }
      const baseline = baselines.get(reference.key);
      baselines.set(reference.key, observed);
      if (baseline !== undefined && baseline !== observed) {
        logger.debug({ applyset: reference.key }, 'its Secret changed; reconciling');
        options.onChange(reference.key);
      }
    }
  };

  const loop = async (): Promise<void> => {
    while (!signal.aborted) {
      try {
        await delay(options.intervalMs, undefined, { signal });
      } catch (error) {
        if (signal.aborted) return;
        throw error;
      }
      await tick();
    }
  };

  return {
    async beforeReconcile(key, readSignal) {
      const reference = options.secretOf(key);
      if (reference === undefined) {
        baselines.delete(key);
        return;
      }
      try {
        baselines.set(key, await observe(reference, readSignal()));
      } catch (error) {
        // No baseline: the first poll takes one, and only a change after it triggers a reconcile.
        baselines.delete(key);
        logger.debug({ applyset: key, err: error }, 'reading the Secret before the reconcile failed');
      }
    },
    forget(key) {
      baselines.delete(key);
    },
    done: loop().catch((error: unknown) => {
      logger.debug({ err: error }, 'Secret polling stopped');
    }),
  };
}
