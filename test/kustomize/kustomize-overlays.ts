// Overlays in the shapes real repositories use, written for the Kustomize tests: a base two levels
// under the overlay, a component, every kind of patch, generators with hash suffixes referenced from a
// Deployment, a name prefix and suffix, replacements, labels, annotations, images and replicas.
import type { FileTree } from '../harness/git-server.js';

const deployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: {tier: frontend}
spec:
  replicas: 1
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: nginx:1.25
        envFrom:
        - configMapRef: {name: app-config}
        - secretRef: {name: app-secret}
        volumeMounts:
        - {name: config, mountPath: /etc/app}
      volumes:
      - name: config
        configMap: {name: app-config}
`;

const service = `apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  selector: {app: web}
  ports:
  - port: 80
    targetPort: 8080
`;

/** A repository holding `base/`, `envs/common/`, `components/monitoring/` and `overlays/{staging,prod}/`. */
export const overlayRepository: FileTree = {
  'README.md': '# platform\n',
  'base/deployment.yaml': deployment,
  'base/service.yaml': service,
  'base/app.properties': 'log.level=info\ncache.size=64\n',
  'base/kustomization.yaml': `apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
- deployment.yaml
- service.yaml
labels:
- pairs: {app.kubernetes.io/name: web}
  includeSelectors: false
configMapGenerator:
- name: app-config
  files: [app.properties]
  literals: [MODE=base]
`,
  'envs/common/kustomization.yaml': `resources:
- ../../base
commonAnnotations:
  team.example.com/owner: platform
secretGenerator:
- name: app-secret
  literals: [PASSWORD=s3cr3t]
  type: Opaque
`,
  'components/monitoring/kustomization.yaml': `apiVersion: kustomize.config.k8s.io/v1alpha1
kind: Component
resources:
- monitoring.yaml
patches:
- target: {kind: Deployment, labelSelector: tier=frontend}
  patch: |-
    - op: add
      path: /spec/template/metadata/annotations
      value: {prometheus.io/scrape: "true"}
`,
  'components/monitoring/monitoring.yaml': `apiVersion: v1
kind: ConfigMap
metadata:
  name: scrape-config
data:
  interval: 30s
`,
  'overlays/staging/kustomization.yaml': `resources:
- ../../envs/common
namePrefix: staging-
images:
- name: nginx
  newTag: 1.27-alpine
`,
  'overlays/prod/kustomization.yaml': `resources:
- ../../envs/common
components:
- ../../components/monitoring
namePrefix: prod-
nameSuffix: -v1
namespace: shop
labels:
- pairs: {env: prod}
  includeSelectors: true
images:
- name: nginx
  newName: registry.example.com/nginx
  digest: sha256:0000000000000000000000000000000000000000000000000000000000000001
replicas:
- name: web
  count: 3
configMapGenerator:
- name: app-config
  behavior: merge
  literals: [MODE=prod]
  envs: [prod.env]
patchesStrategicMerge:
- resources-patch.yaml
patchesJson6902:
- target: {group: "", version: v1, kind: Service, name: web}
  path: service-port.yaml
patches:
- path: probe-patch.yaml
  target: {kind: Deployment, name: web}
replacements:
- source: {kind: Service, name: web, fieldPath: metadata.name}
  targets:
  - select: {kind: ConfigMap, name: scrape-config}
    fieldPaths: [data.target]
    options: {create: true}
`,
  'overlays/prod/prod.env': 'REGION=eu-west-1\nFEATURE_X=on\n',
  'overlays/prod/resources-patch.yaml': `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  template:
    spec:
      containers:
      - name: web
        resources:
          limits: {memory: 256Mi}
`,
  'overlays/prod/service-port.yaml': '- op: replace\n  path: /spec/ports/0/port\n  value: 8443\n',
  'overlays/prod/probe-patch.yaml': `apiVersion: apps/v1
kind: Deployment
metadata:
  name: not-used
spec:
  template:
    spec:
      containers:
      - name: web
        readinessProbe:
          httpGet: {path: /healthz, port: 8080}
`,
};
