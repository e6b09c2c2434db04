// Types for talosctl-client.cjs (plain CommonJS so the Node fallback starts without compiling anything).
export interface ClientCall {
  argv: string[];
  /** the caller's environment: TZ, TALOSCONFIG, TALOS_HOME and HOME are read */
  env: Record<string, string | undefined>;
  /** the caller's working directory (patch files are read relative to it) */
  cwd: string;
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  /** aborted: the caller was told to stop (SIGINT/SIGTERM) or went away */
  signal?: AbortSignal;
}
export declare function runClient(call: ClientCall): Promise<number>;
export declare const CLIENT: { tag: string; sha: string; go: string; os: string; arch: string };
