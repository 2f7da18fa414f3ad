// Charts written for the Helm tests, as the trees of a repository: each feature the render must keep
// exactly as `helm template` does (a vendored subchart, a template a value turns off, a CRD in crds/,
// a test hook), a values file outside the chart, and hostile charts for the sandbox's limits.
import type { FileTree } from '../harness/git-server.js';

const deployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}-web
  namespace: {{ .Release.Namespace }}
  labels:
    chart: {{ .Chart.Name }}-{{ .Chart.Version }}
spec:
  replicas: {{ .Values.replicas }}
  selector:
    matchLabels: {app: {{ .Release.Name }}-web}
  template:
    metadata:
      labels: {app: {{ .Release.Name }}-web}
    spec:
      containers:
        - name: web
          image: "{{ .Values.image.repository }}:{{ .Values.image.tag }}"
`;

/** A chart with each feature: subchart in charts/, a conditional ConfigMap, a CRD, a test hook. */
export const webChart: FileTree = {
  'charts/web/Chart.yaml':
    'apiVersion: v2\nname: web\nversion: 1.2.3\ndependencies:\n  - name: cache\n    version: 0.1.0\n',
  'charts/web/values.yaml':
    'replicas: 1\nimage:\n  repository: registry.example/web\n  tag: v1\nextra:\n  enabled: true\n  greeting: hello\ncache:\n  size: 64\n',
  'charts/web/templates/deployment.yaml': deployment,
  'charts/web/templates/extra.yaml': `{{- if .Values.extra.enabled }}
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-extra
data:
  greeting: {{ .Values.extra.greeting | quote }}
  lookup: {{ lookup "v1" "Namespace" "" "kube-system" | toJson | quote }}
  escape: {{ .Files.Get "../../etc/passwd" | quote }}
  kube: {{ .Capabilities.KubeVersion.Version | quote }}
{{- end }}
`,
  'charts/web/templates/tests/test-connection.yaml': `apiVersion: v1
kind: Pod
metadata:
  name: {{ .Release.Name }}-test
  annotations:
    helm.sh/hook: test
spec:
  restartPolicy: Never
  containers:
    - name: wget
      image: busybox
      args: ["wget", "{{ .Release.Name }}-web"]
`,
  'charts/web/crds/widgets.yaml': `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  names: {kind: Widget, plural: widgets, singular: widget, listKind: WidgetList}
  scope: Namespaced
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
`,
  'charts/web/charts/cache/Chart.yaml': 'apiVersion: v2\nname: cache\nversion: 0.1.0\n',
  'charts/web/charts/cache/values.yaml': 'size: 16\n',
  'charts/web/charts/cache/templates/configmap.yaml': `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-cache
data:
  size: {{ .Values.size | quote }}
`,
  'values/prod.yaml': 'replicas: 3\nimage:\n  tag: v2\n',
  'README.md': 'not a manifest\n',
};

/** A template that includes itself forever: only the time limit ends it. */
export const recursiveChart: FileTree = {
  'Chart.yaml': 'apiVersion: v2\nname: loop\nversion: 0.1.0\n',
  'templates/_loop.tpl': '{{- define "loop" -}}{{ include "loop" . }}{{- end -}}\n',
  'templates/loop.yaml': 'x: {{ include "loop" . }}\n',
};

/** A render of about `megabytes` MiB: only the output limit ends it. */
export function hugeChart(megabytes: number): FileTree {
  return {
    'Chart.yaml': 'apiVersion: v2\nname: huge\nversion: 0.1.0\n',
    'templates/huge.yaml': `{{- range until ${megabytes} }}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: huge-{{ . }}
data:
  blob: {{ repeat 1048576 "x" | quote }}
{{- end }}
`,
  };
}
