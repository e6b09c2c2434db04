// Classify a failed kubectl run from its stderr (the texts: docs/kubernetes-facts.md#k8-kubectl-errors);
// the classification happens once, here.
import type { FailureCause } from '../../../core/errors.js';

const RULES: Array<[RegExp, FailureCause]> = [
  // transport first: a refused connection during discovery also prints "Unhandled Error" lines
  [
    /was refused - did you specify the right host or port|connect: connection refused|connection reset by peer|Unable to connect to the server|unexpected EOF|\bEOF\b|i\/o timeout|TLS handshake|tls: |broken pipe|no route to host|http2: |net\/http: /,
    'transport',
  ],
  [/The request is invalid|is invalid: /, 'invalid'],
  [/Error from server \(Conflict\)|Error from server \(AlreadyExists\)/, 'conflict'],
  [/Error from server \(NotFound\)/, 'not-found'],
  [/Error from server \(Forbidden\)|You must be logged in|Unauthorized/, 'forbidden'],
  [/Error from server \(TooManyRequests\)/, 'too-many-requests'],
  [/Error from server \((InternalError|ServiceUnavailable|Timeout|ServerTimeout)\)|an error on the server/, 'server'],
  // a Status without a reason: the apiserver's answer to an error its storage did not classify, a 500
  // (etcd's "etcdserver: request timed out", docs/kubernetes-facts.md#k8-kubectl-errors)
  [/^Error from server: /m, 'server'],
  [/global timeout reached|timed out waiting for the condition|context deadline exceeded/, 'timeout'],
  [/unknown flag|unknown shorthand flag|unknown command|required flag|error: (flag|invalid argument)/, 'usage'],
];

export function classifyKubectlFailure(stderr: string): FailureCause {
  for (const [re, cause] of RULES) if (re.test(stderr)) return cause;
  return 'unknown';
}

// The kubeconfig has no context of the name asked (`--context`, or its own current-context), before any
// request is sent: client-go's tools/clientcmd validation.go (`context was not found for specified
// context: %v`, which kubectl prefixes with `Error in configuration: `) for most commands, its
// client_config.go getContext (`context %q does not exist`) for patch, drain and create
// (docs/kubernetes-facts.md#k8-kubectl-errors, observed with kubectl v1.32.4).
const MISSING_CONTEXT = [/context was not found for specified context: (.*)$/m, /^error: context "(.*)" does not exist$/m];

/** The context kubectl says its kubeconfig lacks, or undefined when `stderr` says something else. */
export function missingContext(stderr: string): string | undefined {
  for (const re of MISSING_CONTEXT) {
    const m = re.exec(stderr);
    if (m) return m[1].trim();
  }
  return undefined;
}
