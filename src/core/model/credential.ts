// The registry credential as containerd's CRI config carries it: the four auth fields and the credential
// the auth patch asks for. Its own file because the readings (a config file's auth entries), the auth
// patch and the redaction all speak of it. Plain data, no I/O.

/** The four auth fields containerd's CRI config carries for a registry host (empty string = absent). */
export interface AuthFields {
  username: string;
  password: string;
  auth: string;
  identitytoken: string;
}

/** The credential the auth patch asks for. The secret fields must never be logged. */
export interface DesiredCredential {
  /** registry host as named in the patch (e.g. `ghcr.io`, `docker.io`) */
  host: string;
  /** the key containerd's TOML uses for it (`docker.io` becomes `registry-1.docker.io`) */
  tomlHost: string;
  fields: AuthFields;
}
