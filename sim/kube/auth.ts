// Who may call the twin's API server, as kube-apiserver's authenticators decide it: without `auth` every
// request is served (the plain-http default); with it, a request is served only when it proves the
// identity, else 401 with the apiserver's own Status (k8s.io/apiserver pkg/endpoints/handlers/
// responsewriters: `Unauthorized`). The forms a kubeconfig can carry that the twin serves:
// - `token`: `Authorization: Bearer <token>` (the token authenticator), from a kubeconfig `token`;
// - `exec`: the same bearer token, which kubectl gets from an exec credential plugin (a script that
//   prints an ExecCredential, client.authentication.k8s.io/v1) instead of the kubeconfig;
// - `client-cert`: TLS with a client certificate the cluster CA signed (the x509 authenticator); the
//   server presents a certificate for 127.0.0.1 from the same CA.
// Every form is served over TLS: kubectl sends a kubeconfig's user credentials to an https server only
// (client-go tools/clientcmd client_config.go, "only try to read the auth information if we are
// secure"), so a token over plain http is never sent and the twin answers 401. The certificates are
// the Talos twin's openssl-made ones (sim/talos/api/certs.ts), which serve any TLS twin.
import { chmodSync, writeFileSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import { join } from 'node:path';
import { clusterCerts, type KeyPair } from '../talos/api/certs.js';

export type KubeAuth = { kind: 'token'; token: string } | { kind: 'exec'; token: string } | { kind: 'client-cert' };

export const UNAUTHORIZED = {
  kind: 'Status',
  apiVersion: 'v1',
  metadata: {},
  status: 'Failure',
  message: 'Unauthorized',
  reason: 'Unauthorized',
  code: 401,
};

/** The TLS material of a `client-cert` twin: the CA, the server's certificate, a client's. */
export interface KubeTls {
  ca: KeyPair;
  server: KeyPair;
  client: KeyPair;
}

export function kubeTls(): KubeTls {
  const certs = clusterCerts('kube-sim');
  return { ca: certs.ca, server: certs.server, client: certs.client('os:admin') };
}

/** Whether the request proves the identity `auth` asks for. */
export function authenticated(auth: KubeAuth | undefined, req: IncomingMessage): boolean {
  if (!auth) return true;
  if (auth.kind === 'client-cert') return (req.socket as TLSSocket).authorized === true;
  return req.headers.authorization === `Bearer ${auth.token}`;
}

const b64 = (s: string) => Buffer.from(s).toString('base64');

/**
 * The kubeconfig's `cluster` fields and `user` for `auth` (YAML lines, indented for the kubeconfig).
 * `exec` writes its plugin script beside the kubeconfig: it prints the token as an ExecCredential.
 */
export function kubeconfigAuth(auth: KubeAuth | undefined, tls: KubeTls | undefined, dir: string): { cluster: string[]; user: string[] } {
  const cluster = tls ? [`    certificate-authority-data: ${b64(tls.ca.crt)}`] : [];
  if (!auth) return { cluster, user: ['  user: {}'] };
  if (auth.kind === 'token') return { cluster, user: ['  user:', `    token: ${auth.token}`] };
  if (auth.kind === 'client-cert') {
    return {
      cluster,
      user: ['  user:', `    client-certificate-data: ${b64(tls!.client.crt)}`, `    client-key-data: ${b64(tls!.client.key)}`],
    };
  }
  const plugin = join(dir, 'credential-plugin.sh');
  const credential = JSON.stringify({
    apiVersion: 'client.authentication.k8s.io/v1',
    kind: 'ExecCredential',
    status: { token: auth.token },
  });
  writeFileSync(
    plugin,
    `#!/bin/sh\necho "$(date +%s%N)" >> "${join(dir, 'credential-plugin.calls')}"\ncat <<'JSON'\n${credential}\nJSON\n`,
  );
  chmodSync(plugin, 0o755);
  return {
    cluster,
    user: [
      '  user:',
      '    exec:',
      '      apiVersion: client.authentication.k8s.io/v1',
      `      command: ${plugin}`,
      '      interactiveMode: Never',
    ],
  };
}
