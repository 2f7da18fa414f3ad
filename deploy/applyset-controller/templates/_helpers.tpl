{{/* The release's name, or the chart's when the release already contains it; at most 63 characters. */}}
{{- define "applyset-controller.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "applyset-controller.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "applyset-controller.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "applyset-controller.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{- define "applyset-controller.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "applyset-controller.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- required "serviceAccount.name is required when serviceAccount.create is false" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/*
The namespace the controller watches; empty means every namespace. Namespaced RBAC grants rights in one
namespace only, so there an empty value means the release namespace rather than a controller that could
see ApplySets everywhere and act on none of them.
*/}}
{{- define "applyset-controller.watchNamespace" -}}
{{- if .Values.watchNamespace -}}
{{- .Values.watchNamespace -}}
{{- else if .Values.rbac.namespaced -}}
{{- .Release.Namespace -}}
{{- end -}}
{{- end -}}

{{/* What the controller itself needs, whatever its children are. */}}
{{- define "applyset-controller.controllerRules" -}}
# The ApplySets, their inventory annotations included: written as the controller, never as an account.
- apiGroups: ["applyset.dev"]
  resources: ["applysets"]
  verbs: ["get", "list", "watch", "update", "patch"]
- apiGroups: ["applyset.dev"]
  resources: ["applysets/status"]
  verbs: ["get", "update", "patch"]
# Removing the finalizer after pruning the children of a deleted ApplySet (deletionPolicy Delete).
- apiGroups: ["applyset.dev"]
  resources: ["applysets/finalizers"]
  verbs: ["update"]
# Notifications are configuration, listed by the controller; their Secrets are read as each ApplySet's
# account (docs/notifications.md), never with these rights.
- apiGroups: ["applyset.dev"]
  resources: ["notifications"]
  verbs: ["get", "list", "watch"]
# What each Notification last sent, kept in its status so a restart does not send it again.
- apiGroups: ["applyset.dev"]
  resources: ["notifications/status"]
  verbs: ["patch"]
{{- if not .Values.rbac.namespaced }}
# ClusterNotifications are the platform team's (cluster-scoped, so a namespaced Role cannot grant
# them): listed by the controller, which reads the labels of a namespace to match their
# spec.namespaces.matchLabels. Their Secrets: notification-secret-rbac.yaml.
- apiGroups: ["applyset.dev"]
  resources: ["clusternotifications"]
  verbs: ["get", "list", "watch"]
- apiGroups: ["applyset.dev"]
  resources: ["clusternotifications/status"]
  verbs: ["patch"]
- apiGroups: [""]
  resources: ["namespaces"]
  verbs: ["get"]
{{- end }}
{{- if .Values.tenancy.applyAsController }}
# Applying as the controller: Git credentials named by spec.source.secretRef are read as the controller,
# by name: no list or watch of Secrets (a fixed credential is noticed by polling the Secrets of ApplySets
# that are not Ready). Otherwise they are read as each ApplySet's account and the controller needs none.
- apiGroups: [""]
  resources: ["secrets"]
  verbs: ["get"]
{{- end }}
- apiGroups: ["", "events.k8s.io"]
  resources: ["events"]
  verbs: ["create", "patch"]
# spec.serviceAccountName (or the default account): writes to the children are made as that
# ServiceAccount, once the controller's watch of ServiceAccounts (names only), or a get, has shown it
# exists.
- apiGroups: [""]
  resources: ["serviceaccounts"]
  verbs: ["get", "list", "watch"]
{{- $names := include "applyset-controller.impersonatedAccounts" . | fromJsonArray }}
{{- if $names }}
# Impersonation by name: the default account and tenancy.serviceAccountNames, in any namespace (RBAC
# cannot say "the ApplySet's own namespace"; the controller never names another). The request sends
# Impersonate-User only: the API server then gives the account its own groups without asking for
# impersonate on groups, so no other right is needed. Another name is refused by the API server (403).
- apiGroups: [""]
  resources: ["serviceaccounts"]
  verbs: ["impersonate"]
  resourceNames: {{ $names | toJson }}
{{- end }}
{{- end -}}

{{/*
The ServiceAccounts the controller may impersonate, as a JSON list: the default account
(tenancy.defaultServiceAccount, else applyset-deployer) unless tenancy.applyAsController, and the names
in tenancy.serviceAccountNames that spec.serviceAccountName may use.
*/}}
{{- define "applyset-controller.impersonatedAccounts" -}}
{{- $tenancy := .Values.tenancy | default dict }}
{{- $names := list }}
{{- if not $tenancy.applyAsController }}
{{- $names = append $names ($tenancy.defaultServiceAccount | default "applyset-deployer") }}
{{- end }}
{{- range ($tenancy.serviceAccountNames | default list) }}
{{- $names = append $names . }}
{{- end }}
{{- $names | uniq | toJson }}
{{- end -}}
