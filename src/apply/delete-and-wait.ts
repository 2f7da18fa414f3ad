import { setTimeout as delay } from 'node:timers/promises';
import { KubeApiError } from '../kube/kube-api-error.js';
import type { ResourceLocation } from '../kube/kube-object-api.js';
import { deleteExactly } from './delete-exactly.js';
import type { ObjectContext } from './run-context.js';

const POLL_MS = 200;

/** kubectl apply --force: delete (background propagation), wait until the object is gone, recreate. */
export async function deleteAndWait(
  location: ResourceLocation,
  name: string,
  uid: string | undefined,
  context: ObjectContext,
) {
  const { signal } = context;
  try {
    await deleteExactly(context, location, name, uid);
  } catch (error) {
    if (!(error instanceof KubeApiError && error.notFound)) throw error;
  }
  const deadline = Date.now() + (context.forceDeleteTimeoutMs ?? 60_000);
  while ((await context.api.get(location, name, signal)) !== undefined) {
    if (Date.now() > deadline)
      throw new Error(`${name} was deleted for --force but is still present (finalizers?)`);
    await delay(POLL_MS, undefined, signal === undefined ? {} : { signal });
  }
}
