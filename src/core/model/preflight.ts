// The pre-flight check's data (docs/preflight.md): what the registry adapter asked and was answered,
// per host, and what the rule made of it. Plain data, no secret: `asked` names the request, never
// the credential; a token is never recorded.
/** `ping` GET /v2/, `token` the token endpoint, `login` /v2/ with basic auth, `manifest` the manifest HEAD. */
export type RegistryStep = 'ping' | 'token' | 'login' | 'manifest';

export interface RegistryExchange {
  step: RegistryStep;
  /** the request in words (method, URL, scope, how it was authenticated) */
  asked: string;
  /** set when it was answered */
  status?: number;
  statusText?: string;
  /** the error the body names (`UNAUTHORIZED authentication required`), or why the answer is unusable */
  registryError?: string;
  /** a 200 that does not carry what was asked (a token endpoint without a token) */
  unusable?: boolean;
  /** set when no answer came: the network, TLS, the timeout */
  failure?: string;
  /** set when the request was not sent: it would have carried the credential where it may not go (core/credentialRoute.ts) */
  withheld?: { reason: string; fix: string };
}

export interface RegistryCheck {
  host: string;
  /** the manifest asked for on this host (`org/app:tag`); undefined: the login alone */
  image?: string;
  /** what /v2/ asked for: a Bearer token, Basic auth, nothing, or it could not be told */
  auth: 'bearer' | 'basic' | 'none' | 'unknown';
  /** in order; the last is the one that ended the check */
  exchanges: RegistryExchange[];
}

/** The rule's verdict on one host (src/rules/preflight.ts). */
export type PreflightVerdict =
  | {
      verdict: 'ok';
      host: string;
      /** `pull`: a manifest HEAD went through; `login`: the credential was accepted, no pull asked; `none`: the registry asked for no credential */ proves:
        'pull' | 'login' | 'none';
      what: string;
    }
  | {
      verdict: PreflightStop;
      host: string;
      asked: string;
      answered: string;
      /** what to change, when the verdict's own advice does not say it (a withheld credential) */
      fix?: string;
    };

/**
 * Why a host stops the run: the credential refused, the token request not served (docs/preflight.md),
 * no answer, or the credential withheld: the check refused to send it where it would have gone.
 */
export type PreflightStop = 'refused' | 'unsupported' | 'unreachable' | 'withheld';

/** What the run carries to its report: one line per host checked, or why the check did not run. */
export interface PreflightSummary {
  /** `off`: `preflight: false` */
  ran: boolean;
  lines: string[];
}
