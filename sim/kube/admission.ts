// Pod admission as the apiserver runs it on a create: the ServiceAccount plugin (the account must
// exist; its pull secrets are injected into a pod that has none; the token volume is mounted) and the
// defaults a created pod gets (pull policy, restart and DNS policy, grace period, default tolerations).
import { randomSuffix } from './api.js';
import { clone } from './json.js';
import { defaultTolerations } from './objects.js';
import type { Toleration } from './objectFacts.js';
import { R } from './resources.js';
import { ApiError, failure } from './status.js';
import type { Store } from './store.js';

/** The pull policy a container gets when it names none: `Always` for an untagged or `:latest` image. */
export function defaultPullPolicy(image: string): string {
  if (image.includes('@')) return 'IfNotPresent';
  const last = image.split('/').pop()!;
  return !last.includes(':') || last.endsWith(':latest') ? 'Always' : 'IfNotPresent';
}

/** Admits `pod` in place: the ServiceAccount plugin, then the defaults. Throws a 403 ApiError without its account. */
export function admit(store: Store, pod: any): void {
  const ns = pod.metadata.namespace;
  const spec = (pod.spec ??= {});
  spec.serviceAccountName ||= 'default';
  spec.serviceAccount = spec.serviceAccountName;
  const sa = store.peek(R.serviceaccounts, ns, spec.serviceAccountName);
  if (!sa) {
    throw new ApiError(
      failure(
        403,
        'Forbidden',
        `pods "${pod.metadata.name}" is forbidden: error looking up service account ${ns}/${spec.serviceAccountName}: serviceaccount "${spec.serviceAccountName}" not found`,
        {
          name: pod.metadata.name,
          kind: 'pods',
        },
      ),
    );
  }
  // The ServiceAccount admission plugin: a pod without pull secrets inherits its service account's.
  if (!(spec.imagePullSecrets ?? []).length && (sa.imagePullSecrets ?? []).length) spec.imagePullSecrets = clone(sa.imagePullSecrets);
  if (spec.automountServiceAccountToken !== false && sa.automountServiceAccountToken !== false) {
    const vol = `kube-api-access-${randomSuffix()}`;
    spec.volumes = [
      ...(spec.volumes ?? []),
      {
        name: vol,
        projected: {
          defaultMode: 420,
          sources: [
            { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
            { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
            { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } },
          ],
        },
      },
    ];
    for (const c of spec.containers ?? []) {
      c.volumeMounts = [
        ...(c.volumeMounts ?? []),
        { name: vol, readOnly: true, mountPath: '/var/run/secrets/kubernetes.io/serviceaccount' },
      ];
    }
  }
  for (const c of spec.containers ?? []) {
    if (typeof c.image === 'string') c.imagePullPolicy ??= defaultPullPolicy(c.image);
    c.terminationMessagePath ??= '/dev/termination-log';
    c.terminationMessagePolicy ??= 'File';
    c.resources ??= {};
  }
  spec.restartPolicy ??= 'Always';
  spec.dnsPolicy ??= 'ClusterFirst';
  spec.schedulerName ??= 'default-scheduler';
  spec.terminationGracePeriodSeconds ??= 30;
  spec.securityContext ??= {};
  spec.enableServiceLinks ??= true;
  spec.priority ??= 0;
  spec.preemptionPolicy ??= 'PreemptLowerPriority';
  const tols: Toleration[] = (spec.tolerations ??= []);
  for (const d of defaultTolerations) {
    if (
      !tols.some(
        (t) =>
          (t.operator === 'Exists' && !t.key && (!t.effect || t.effect === d.effect)) ||
          (t.key === d.key && (!t.effect || t.effect === d.effect)),
      )
    )
      tols.push(clone(d));
  }
}
