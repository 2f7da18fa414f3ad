// Manifests several controller e2e suites put in their Git repositories: a Deployment that needs no
// image pull worth the name, and the ClusterRoleBinding a tenant must never manage to apply.

/** Deployment `web` of one pause container, selected by app=web. */
export const webDeploymentYaml = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  selector:
    matchLabels: { app: web }
  template:
    metadata:
      labels: { app: web }
    spec:
      containers:
        - name: web
          image: registry.k8s.io/pause:3.10
`;

/** A ClusterRoleBinding `name` making ServiceAccount `namespace`/`account` cluster-admin: an escalation. */
export const clusterAdminBindingYaml = (
  name: string,
  namespace: string,
  account: string,
) => `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: ${name}
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: cluster-admin
subjects:
  - kind: ServiceAccount
    name: ${account}
    namespace: ${namespace}
`;
