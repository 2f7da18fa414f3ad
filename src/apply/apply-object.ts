import { ImpersonationRefusedError } from '../kube/kube-api-error.js';
import { rethrowAbort } from '../errors/rethrow-abort.js';
import { isSecretManifest, redactSecretValues } from '../manifests/redact-secret-values.js';
import type { ObjectRef } from '../manifests/object-ref.js';
import type { ApplyAction } from '../plan/plan.js';
import { messageOf } from '../errors/message-of.js';
import type { ObjectOutcome } from './apply-set-contract.js';
import { conflictMessage } from './conflict-message.js';
import type { ObjectContext } from './run-context.js';
import { serverDryRunCreate } from './server-dry-run.js';
import { serverSideApply, serverSideReason } from './server-side-apply.js';
import { createObject, markAdopted, updateObject } from './write-object.js';

/**
 * One apply action of the plan, as an outcome: a failure is reported for its object, never thrown,
 * so the rest of the wave goes on. Only an abort ends the run.
 */
export async function applyAction(action: ApplyAction, context: ObjectContext): Promise<ObjectOutcome> {
  const outcome = await applyActionOnce(action, context);
  if (outcome.action === 'failed' && isSecretManifest(action.object.manifest)) {
    // The server's message echoes what it refused; the cause (with the same text) is dropped, but
    // for a refused impersonation, which names the account and nothing of the object.
    const message = redactSecretValues(outcome.message, action.object.manifest);
    const cause = outcome.cause instanceof ImpersonationRefusedError ? { cause: outcome.cause } : {};
    return { action: 'failed', ref: outcome.ref, message, source: action.object.source, ...cause };
  }
  return outcome.action === 'failed' || outcome.action === 'conflict'
    ? { ...outcome, source: action.object.source }
    : outcome;
}

async function applyActionOnce(action: ApplyAction, context: ObjectContext): Promise<ObjectOutcome> {
  const { ref } = action;
  switch (action.type) {
    case 'conflict':
      return { action: 'conflict', ref, message: await conflictMessage(action, context) };
    case 'unknown-read':
      return {
        action: 'failed',
        ref,
        message: `could not be read: ${messageOf(action.error)}`,
        cause: action.error,
      };
    case 'create': {
      const serverSide = serverSideReason(action.object);
      if (serverSide !== undefined) {
        return guarded(ref, () => serverSideApply(action.object, undefined, serverSide, context));
      }
      if (context.write.dryRun && context.write.askServer === true)
        return guarded(ref, () => serverDryRunCreate(action.object, context));
      if (context.write.dryRun) return { action: 'would-create', ref };
      return guarded(ref, () => createObject(action.object, context, 0, action.unread === true));
    }
    case 'update': {
      const serverSide = serverSideReason(action.object);
      const outcome = await guarded(ref, () =>
        serverSide === undefined
          ? updateObject(action.object, action.live, context, 0)
          : serverSideApply(action.object, action.live, serverSide, context),
      );
      return action.adopt ? markAdopted(outcome) : outcome;
    }
  }
}

async function guarded(ref: ObjectRef, run: () => Promise<ObjectOutcome>): Promise<ObjectOutcome> {
  try {
    return await run();
  } catch (error) {
    rethrowAbort(error);
    return { action: 'failed', ref, message: messageOf(error), cause: error };
  }
}
