import { IntentError } from '../errors/intent-error.js';

/** What one build is given when it starts: its own signal (time limit and caller), and its time limit. */
export interface BuildLimits {
  readonly signal: AbortSignal;
  readonly timeoutMs: number;
}

/**
 * Runs `build` when it may start, under the limits it is given; `label` names it in messages
 * (`kustomize build apps/prod`). What the controller hands a build step for one reconcile.
 */
export type ScheduleBuild = <T>(label: string, build: (limits: BuildLimits) => Promise<T>) => Promise<T>;

interface BuildRequest {
  /** Whose build it is: the ApplySet's namespace. Builds are shared fairly among tenants. */
  readonly tenant: string;
  /** The most one build may run, from when it starts (waiting for a slot does not count). */
  readonly timeoutMs: number;
  /** The caller gives up (the controller stops): a waiting build is dropped, a running one aborted. */
  readonly signal: AbortSignal;
  /** What the build throws when it runs past `timeoutMs`: the caller's words for it. */
  readonly timeoutError: () => Error;
}

/**
 * Where CPU-heavy builds run (kustomize today; Helm and signature checks next): at most `maxRunning`
 * at once, at most `maxRunningPerTenant` of one tenant, and tenants served in turn (round-robin), so
 * one tenant with many builds delays another by one build at most, never by all of its own. A tenant
 * whose builds keep running past their time limit is held back, its next builds refused for an
 * exponentially growing while, instead of hogging a slot at every interval.
 */
export interface BuildScheduler {
  /** Runs `build` once a slot is free and the tenant's turn comes. */
  run<T>(request: BuildRequest, build: (limits: BuildLimits) => Promise<T>): Promise<T>;
  /** Builds waiting for a slot, and running, for the metrics. */
  counts(): { readonly queued: number; readonly running: number };
}

export interface BuildSchedulerOptions {
  /** Builds at once, all tenants together: the cores the controller has for them. */
  readonly maxRunning: number;
  /** Builds of one tenant at once. */
  readonly maxRunningPerTenant: number;
  readonly now: () => number;
  /** How long a tenant is held back after its first build that timed out; doubled each further one. */
  readonly baseHoldMs?: number;
  readonly maxHoldMs?: number;
  /** Told whenever the counts change, and when a tenant is held back. */
  readonly onChange?: (event: 'changed' | 'held') => void;
}

const DEFAULT_BASE_HOLD_MS = 30_000;
const DEFAULT_MAX_HOLD_MS = 10 * 60_000;

/**
 * A build refused because its tenant's builds keep timing out; retried once the hold ends.
 *
 * @internal Exported for the test that every class with an intent is classified.
 */
export class BuildsHeldBackError extends IntentError {
  override readonly name = 'BuildsHeldBackError';
  readonly code = 'BUILDS_HELD_BACK';
  readonly intent = 'waiting';
  readonly reason = 'BuildsHeldBack';
  constructor(
    readonly tenant: string,
    readonly timeouts: number,
    private readonly afterMs: number,
  ) {
    super(
      `builds of namespace ${tenant} are held back for ${Math.ceil(afterMs / 1000)} s: its last ${timeouts === 1 ? 'build' : `${timeouts} builds`} ran past the time limit; nothing was applied. Make the build lighter or the interval longer`,
    );
  }
  override retryAfterMs(): number {
    return this.afterMs;
  }
}

interface Waiting {
  readonly start: () => void;
  readonly refuse: (error: unknown) => void;
}

interface Tenant {
  readonly queue: Waiting[];
  running: number;
  /** Builds in a row that ran past their time limit. */
  timeouts: number;
  heldUntil: number;
  /** When it was last given a slot (a count of slots given): the longest ago is served first. */
  servedAt: number;
}

/** The scheduler's state: every tenant with builds waiting, running or held back; whose turn is next. */
interface Slots {
  readonly options: BuildSchedulerOptions;
  readonly maxRunning: number;
  readonly perTenant: number;
  readonly tenants: Map<string, Tenant>;
  /** Tenants with builds waiting. */
  turns: string[];
  /** Slots given so far. */
  served: number;
  running: number;
  queued: number;
}

export function createBuildScheduler(options: BuildSchedulerOptions): BuildScheduler {
  const slots: Slots = {
    options,
    maxRunning: Math.max(1, Math.floor(options.maxRunning)),
    perTenant: Math.max(1, Math.floor(options.maxRunningPerTenant)),
    tenants: new Map(),
    turns: [],
    served: 0,
    running: 0,
    queued: 0,
  };
  return {
    run(request, build) {
      const name = request.tenant;
      const tenant = tenantOf(slots, name);
      const held = heldBack(slots, name, tenant);
      if (held !== undefined) return Promise.reject(held);
      if (request.signal.aborted) return Promise.reject(request.signal.reason);
      return new Promise((resolve, reject) => {
        const onAbort = () => {
          const at = tenant.queue.indexOf(waiting);
          if (at < 0) return;
          tenant.queue.splice(at, 1);
          slots.queued -= 1;
          if (tenant.queue.length === 0) slots.turns = slots.turns.filter((turn) => turn !== name);
          dropIfIdle(slots, name, tenant);
          options.onChange?.('changed');
          reject(request.signal.reason);
        };
        const waiting: Waiting = {
          start: () => {
            request.signal.removeEventListener('abort', onAbort);
            slots.queued -= 1;
            slots.running += 1;
            tenant.running += 1;
            execute(slots, { name, tenant }, request, build).then(resolve, reject);
          },
          refuse: (error) => {
            request.signal.removeEventListener('abort', onAbort);
            slots.queued -= 1;
            reject(error);
          },
        };
        request.signal.addEventListener('abort', onAbort, { once: true });
        if (tenant.queue.length === 0) slots.turns.push(name);
        tenant.queue.push(waiting);
        slots.queued += 1;
        dispatch(slots);
      });
    },
    counts: () => ({ queued: slots.queued, running: slots.running }),
  };
}

function tenantOf(slots: Slots, name: string): Tenant {
  let tenant = slots.tenants.get(name);
  if (tenant === undefined) {
    tenant = { queue: [], running: 0, timeouts: 0, heldUntil: 0, servedAt: 0 };
    slots.tenants.set(name, tenant);
  }
  return tenant;
}

/** A tenant with nothing waiting, running or remembered is forgotten: the map holds active tenants only. */
function dropIfIdle(slots: Slots, name: string, tenant: Tenant): void {
  if (tenant.queue.length === 0 && tenant.running === 0 && tenant.timeouts === 0) slots.tenants.delete(name);
}

function heldBack(slots: Slots, name: string, tenant: Tenant): BuildsHeldBackError | undefined {
  const left = tenant.heldUntil - slots.options.now();
  return left > 0 ? new BuildsHeldBackError(name, tenant.timeouts, left) : undefined;
}

/**
 * Starts what may start, within both caps: each slot goes to the tenant with builds waiting that runs
 * the fewest (fair share), the one served longest ago first among equals (round-robin). A held-back
 * tenant's waiting builds are refused.
 */
function dispatch(slots: Slots): void {
  for (const name of slots.turns) {
    const tenant = tenantOf(slots, name);
    const held = heldBack(slots, name, tenant);
    if (held === undefined) continue;
    for (const waiting of tenant.queue.splice(0)) waiting.refuse(held);
    dropIfIdle(slots, name, tenant);
  }
  slots.turns = slots.turns.filter((name) => (slots.tenants.get(name)?.queue.length ?? 0) > 0);
  while (slots.running < slots.maxRunning) {
    let chosen: Tenant | undefined;
    for (const name of slots.turns) {
      const tenant = tenantOf(slots, name);
      if (tenant.running >= slots.perTenant) continue;
      if (
        chosen === undefined ||
        tenant.running < chosen.running ||
        (tenant.running === chosen.running && tenant.servedAt < chosen.servedAt)
      )
        chosen = tenant;
    }
    if (chosen === undefined) break;
    slots.served += 1;
    chosen.servedAt = slots.served;
    const next = chosen.queue.shift() as Waiting;
    if (chosen.queue.length === 0)
      slots.turns = slots.turns.filter((name) => slots.tenants.get(name) !== chosen);
    next.start();
  }
  slots.options.onChange?.('changed');
}

/** One build under its time limit; a timeout holds its tenant back, longer at each one in a row. */
async function execute<T>(
  slots: Slots,
  { name, tenant }: { name: string; tenant: Tenant },
  request: BuildRequest,
  build: (limits: BuildLimits) => Promise<T>,
): Promise<T> {
  const timedOut = request.timeoutError();
  const limit = new AbortController();
  const timer = setTimeout(() => limit.abort(timedOut), request.timeoutMs);
  try {
    const result = await build({
      signal: AbortSignal.any([request.signal, limit.signal]),
      timeoutMs: request.timeoutMs,
    });
    tenant.timeouts = 0;
    tenant.heldUntil = 0;
    return result;
  } catch (error) {
    if (!limit.signal.aborted || request.signal.aborted) throw error;
    const { baseHoldMs = DEFAULT_BASE_HOLD_MS, maxHoldMs = DEFAULT_MAX_HOLD_MS } = slots.options;
    tenant.timeouts += 1;
    const holdMs = Math.min(maxHoldMs, baseHoldMs * 2 ** Math.min(tenant.timeouts - 1, 20));
    tenant.heldUntil = slots.options.now() + holdMs;
    slots.options.onChange?.('held');
    throw timedOut;
  } finally {
    clearTimeout(timer);
    tenant.running -= 1;
    slots.running -= 1;
    dropIfIdle(slots, name, tenant);
    dispatch(slots);
  }
}
