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

/**
 * Which of Talos's two credential forms a machine config carries, by registry host: a
 * `RegistryAuthConfig` document (Talos 1.12+), and the legacy `machine.registries.config.<host>.auth`
 * map. Talos reads a host's document over its legacy map (docs/talos-api.md, "Which forms are written").
 */
export interface CredentialForms {
  /** hosts with a RegistryAuthConfig document */
  documents: string[];
  /** hosts with a legacy auth map */
  legacy: string[];
}

/** The forms an auth patch writes, and the RegistryAuthConfig documents it deletes (`$patch: delete`). */
export interface PatchForms extends CredentialForms {
  deletedDocuments: string[];
}
