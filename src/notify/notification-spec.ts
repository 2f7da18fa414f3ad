import { isJsonObject, stringItems, type JsonValue } from '../manifests/json-value.js';
import type { NotificationEvent, NotificationSeverity, NotificationState } from './notification-event.js';

export const NOTIFICATION_API = {
  group: 'applyset.dev',
  version: 'v1alpha1',
  plural: 'notifications',
} as const;

/** Chat and alert receivers, and the forges a commit status goes to. */
type ProviderType =
  | 'slack'
  | 'msteams'
  | 'discord'
  | 'webhook'
  | 'alertmanager'
  | 'github'
  | 'gitlab'
  | 'gitea';
const PROVIDER_TYPES: ReadonlySet<string> = new Set([
  'slack',
  'msteams',
  'discord',
  'webhook',
  'alertmanager',
  'github',
  'gitlab',
  'gitea',
]);

/** A Notification as the controller acts on it: which ApplySets and events, and where to. */
export interface NotificationConfig {
  readonly namespace: string;
  readonly name: string;
  /** ApplySet names; empty: every ApplySet of the namespace (that the labels select). */
  readonly applySetNames: readonly string[];
  readonly matchLabels: Readonly<Record<string, string>>;
  /** Empty: every severity. */
  readonly severities: readonly NotificationSeverity[];
  /** Empty: every state. */
  readonly states: readonly NotificationState[];
  readonly provider: ProviderType;
  /** The Secret of the Notification's namespace holding `address` (and `token` or `hmacKey`). */
  readonly secretName: string;
  /**
   * Set for a ClusterNotification: the namespaces whose ApplySets it selects (by name and labels; both
   * empty: every namespace). Its `namespace` is then the controller's, where its Secret is.
   */
  readonly acrossNamespaces?: {
    readonly names: readonly string[];
    readonly matchLabels: Readonly<Record<string, string>>;
    /** `spec.repositories`: the only repositories its forge token marks (forgeScopeRefusal). */
    readonly repositories: readonly string[];
  };
}

export const CLUSTER_NOTIFICATION_API = {
  group: 'applyset.dev',
  version: 'v1alpha1',
  plural: 'clusternotifications',
} as const;

/**
 * Reads one ClusterNotification: a Notification's fields plus `spec.namespaces`, its Secret in
 * `controllerNamespace` (the platform's channel, read with the controller's identity).
 */
export function readClusterNotification(object: JsonValue, controllerNamespace: string): NotificationRead {
  const read = readNotification(object);
  if (!read.ok) return read;
  const spec = isJsonObject(object) && isJsonObject(object['spec']) ? object['spec'] : {};
  const namespaces = isJsonObject(spec['namespaces']) ? spec['namespaces'] : {};
  return {
    ok: true,
    config: {
      ...read.config,
      namespace: controllerNamespace,
      acrossNamespaces: {
        names: stringItems(namespaces['names']),
        matchLabels: labels(namespaces['matchLabels']),
        repositories: stringItems(spec['repositories']),
      },
    },
  };
}

/** Whether a ClusterNotification reaches the ApplySets of this namespace (a Notification: its own). */
export function reachesNamespace(
  config: NotificationConfig,
  namespace: { readonly name: string; readonly labels: Readonly<Record<string, string>> },
): boolean {
  const across = config.acrossNamespaces;
  if (across === undefined) return config.namespace === namespace.name;
  if (across.names.length > 0 && !across.names.includes(namespace.name)) return false;
  return Object.entries(across.matchLabels).every(([key, value]) => namespace.labels[key] === value);
}

/** One queue, rate limit and de-duplication per Notification or ClusterNotification. */
export function receiverIdOf(config: NotificationConfig): string {
  return config.acrossNamespaces === undefined
    ? `${config.namespace}/${config.name}`
    : `${CLUSTER_RECEIVERS}${config.name}`;
}

/** The receiver ids of ClusterNotifications: no namespace is named with capitals. */
export const CLUSTER_RECEIVERS = 'ClusterNotification/';

/** A Notification read, or why it cannot be acted on (logged: a broken one sends nothing). */
export type NotificationRead =
  | { readonly ok: true; readonly config: NotificationConfig }
  | { readonly ok: false; readonly name: string; readonly problem: string };

/** Reads one Notification object leniently: a wrong field makes it unusable, with the field named. */
export function readNotification(object: JsonValue): NotificationRead {
  const metadata = isJsonObject(object) && isJsonObject(object['metadata']) ? object['metadata'] : {};
  const spec = isJsonObject(object) && isJsonObject(object['spec']) ? object['spec'] : {};
  const name = typeof metadata['name'] === 'string' ? metadata['name'] : '';
  const namespace = typeof metadata['namespace'] === 'string' ? metadata['namespace'] : '';
  const selector = isJsonObject(spec['applySets']) ? spec['applySets'] : {};
  const provider = isJsonObject(spec['provider']) ? spec['provider'] : {};
  const type = provider['type'];
  const secretRef = isJsonObject(provider['secretRef']) ? provider['secretRef'] : {};
  if (typeof type !== 'string' || !PROVIDER_TYPES.has(type)) {
    return {
      ok: false,
      name,
      problem: `spec.provider.type must be one of ${[...PROVIDER_TYPES].join(', ')}`,
    };
  }
  if (typeof secretRef['name'] !== 'string' || secretRef['name'] === '') {
    return { ok: false, name, problem: 'spec.provider.secretRef.name is required' };
  }
  return {
    ok: true,
    config: {
      namespace,
      name,
      applySetNames: stringItems(selector['names']),
      matchLabels: labels(selector['matchLabels']),
      severities: stringItems(spec['severities']) as NotificationSeverity[],
      states: stringItems(spec['states']) as NotificationState[],
      provider: type as ProviderType,
      secretName: secretRef['name'],
    },
  };
}

/** Whether a Notification wants this event of this ApplySet. */
export function selects(
  config: NotificationConfig,
  applySet: { readonly name: string; readonly labels: Readonly<Record<string, string>> },
  event: NotificationEvent,
): boolean {
  if (config.applySetNames.length > 0 && !config.applySetNames.includes(applySet.name)) return false;
  if (Object.entries(config.matchLabels).some(([key, value]) => applySet.labels[key] !== value)) return false;
  if (config.severities.length > 0 && !config.severities.includes(event.severity)) return false;
  return config.states.length === 0 || config.states.includes(event.state);
}

function labels(value: JsonValue | undefined): Record<string, string> {
  if (!isJsonObject(value)) return {};
  return Object.fromEntries(
    Object.entries(value).filter((entry): entry is [string, string] => typeof entry[1] === 'string'),
  );
}
