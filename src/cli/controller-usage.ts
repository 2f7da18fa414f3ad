/** `applyset controller --help`: every flag, and what the defaults mean for a shared cluster. */
import { GIT_LIMIT_USAGE } from './git-limit-flags.js';
import { KUSTOMIZE_USAGE } from './kustomize-flags.js';
import { NOTIFICATION_USAGE } from './notification-flags.js';

export const CONTROLLER_USAGE = `usage: applyset controller [--kubeconfig PATH] [--concurrency N] [--metrics-addr [HOST]:PORT]
                          [--leader-elect] [--namespace NS] [--git-cache-dir DIR]
                          [--watch-label-selector SELECTOR] [--lease-name NAME]
                          [--lease-duration 15s] [--renew-deadline 10s] [--retry-period 2s]
                          [--allowed-source-hosts HOST[:PORT],...]
                          [--default-service-account NAME | --apply-as-controller]
                          [--allow-cross-namespace-refs [--allow-secret-refs-from NS,...]]
                          [--allow-nested-applysets]
                          [--allowed-remote-cluster-hosts HOST[:PORT],...]
                          [--allow-remote-kubeconfig-exec] [--allow-remote-kubeconfig-files]
                          [--webhook-addr :9292 --webhook-secret NAMESPACE/NAME]
                          [--ui-address [HOST]:PORT] [--cluster-name NAME]
                          [--git-max-object-bytes 16Mi] [--git-max-fetch-bytes 48Mi]
                          [--git-max-fetch-objects 50000] [--git-cache-max-bytes 768Mi]
                          [--git-cache-max-repository-bytes 256Mi] [--shared-fetch-max-age 0s]
                          [--member-watches 16] [--member-watch-min-sets 8]
                          [--kustomize-binary PATH] [--kustomize-timeout 60s]
                          [--kustomize-max-memory 256Mi] [--helm-binary PATH]
                          [--max-builds N] [--max-builds-per-namespace 1]
                          [--notification-rate 1] [--notification-timeout 10s]
                          [--notification-attempts 4] [--notification-queue-length 100]
                          [--health-check-exprs JSON]

Runs the GitOps controller: watches ApplySet resources (every namespace, or --namespace), fetches each
one's Git source and applies and prunes it as kubectl apply would, every spec.interval. Serves /healthz,
/readyz and /metrics on --metrics-addr (default :8080). With --leader-elect, replicas elect one leader
through a Lease in POD_NAMESPACE (else --namespace, else default). SIGTERM finishes in-flight work,
releases the Lease and exits 0. Environment: LOG_LEVEL, POD_NAME, POD_NAMESPACE, APPLYSET_GIT_CACHE_DIR.

Shards: --watch-label-selector (e.g. 'sharding.applyset.dev/key in (shard1)') reconciles only the
ApplySets it matches; run one controller per shard, each with its own --lease-name (default
applyset-controller-leader), so that each shard elects a leader of its own.

Fetches: an ApplySet on schedule takes a fetch of its source (same URL, ref and credentials) younger
than its spec.interval. A new one asks the server, unless --shared-fetch-max-age (default 0s: off) lets
it take a fetch another made that recently: a fleet created at once then fetches a repository once, at
the cost of applying a commit up to that old. A changed spec, and a reconcile asked for (applyset
reconcile, a push webhook), always ask the server.

At rest: a reconcile that finds the ApplySet, its revision and the resourceVersion of every object it
holds as its last run in full left them answers with that run's outcome. It reads those versions with
a GET per object, or from a watch: once --member-watch-min-sets (default 8) ApplySets applied as one
account hold objects of one kind in one namespace, that collection is watched as that account (its
objects' names and versions kept, nothing else), at most --member-watches (default 16; 0: none) at once.
An account that may not list or watch the kind is read with GETs.

Sources: spec.source.url may never name a link-local or cloud metadata address (169.254.0.0/16,
fe80::/10, metadata.google.internal, ...; checked again on what DNS answers), nor loopback, localhost
or the pod's own addresses unless --allowed-source-hosts names the host. --allowed-source-hosts
limits it further to the hosts listed (host: any port; host:port: that port). A Git credentials Secret
must name the hosts its credentials are for in the annotation applyset.dev/source-hosts (same form);
they are never sent elsewhere, nor after a redirect to another origin, and a Secret without it is
refused (the ApplySet stalls).

Tenancy (the defaults are safe for a cluster shared by teams): an ApplySet is applied as a ServiceAccount
of its own namespace, never as the controller: spec.serviceAccountName, else applyset-deployer
(--default-service-account NAME renames it). Where that account does not exist, the ApplySet stalls
(ServiceAccountNotFound) and nothing is applied. Nothing of another namespace may be referenced: a
secretRef or dependsOn naming one stalls the ApplySet (CrossNamespaceRefRefused).
--allow-cross-namespace-refs lets spec.dependsOn name other namespaces, and spec.source.secretRef the
namespaces --allow-secret-refs-from lists.
The Git credentials Secret is read as the account the ApplySet is applied as (SecretNotReadable when it
may not get it); the ApplySet itself (its inventory) is written as the controller. An ApplySet whose
manifests hold an ApplySet stalls (NestedApplySetRefused) unless --allow-nested-applysets is given: it
lets whoever writes a repository create ApplySets naming any ServiceAccount of their namespace that the
controller may impersonate (the account must still be allowed to write applysets).
--apply-as-controller is the opt-out for a cluster with a single team: ApplySets without
spec.serviceAccountName are applied with the controller's own rights (anyone who may write an ApplySet
then may do what the controller may), and credentials Secrets without applyset.dev/source-hosts are
accepted (add --require-secret-source-hosts to keep refusing them). Cross-namespace references stay
refused. --no-cross-namespace-refs is the default and may be left out.

Remote clusters: an ApplySet with spec.kubeConfig.secretRef is applied to the cluster that kubeconfig
names (read as the ApplySet's account; its status stays here). Only inline credentials: exec and
auth-provider plugins are refused unless --allow-remote-kubeconfig-exec, file references
(certificate-authority, client-key, tokenFile, ...) unless --allow-remote-kubeconfig-files. The server
is checked as a source URL is, --allowed-remote-cluster-hosts playing --allowed-source-hosts' part.

Push webhooks: with --webhook-addr, POST /hook/<receiver> with a GitHub, GitLab, Gitea or Forgejo push
payload asks at once for the reconcile of every ApplySet whose source URL and branch (or tag) the push
names. The Secret --webhook-secret names holds the receivers: each key a receiver name, its value the
receiver's secret (the HMAC key, or GitLab's token); a bad signature is answered 401 and changes nothing.
POST /hook/registry/<receiver> with an OCI registry's (distribution's) notification envelope, the
receiver's secret sent as Authorization: Bearer, does the same for the oci:// ApplySets whose host,
repository and tag a manifest push names; a digest pin is never woken.

Web view: with --ui-address (e.g. :8090), serves the read-only web view of the ApplySets. Every request
needs a Kubernetes bearer token (Authorization: Bearer, or the sign-in form's cookie), checked with a
TokenReview; a namespace is shown only if a SubjectAccessReview says the user may get applysets there.
The controller then needs create on tokenreviews and subjectaccessreviews, and list and watch on events.

${GIT_LIMIT_USAGE}
${KUSTOMIZE_USAGE}
Builds: at most --max-builds run at once (default one per core, at most two; each may use
--kustomize-max-memory) and --max-builds-per-namespace of one namespace (1); namespaces take turns.
A build waiting for its turn holds no worker. One build may run half its ApplySet's spec.interval
(at least 10s, at most --kustomize-timeout); a namespace whose builds run past that is held back,
30s doubling up to 10m.

Health: --health-check-exprs takes a JSON list of CEL health checks in the shape of
spec.healthCheckExprs (Flux's: apiVersion, kind, current, inProgress, failed), the cluster's default
for spec.wait, waves and hooks; an ApplySet's own entry for a kind wins. A wrong expression stops the
controller at start, naming the entry (docs/health.md).

${NOTIFICATION_USAGE}`;
