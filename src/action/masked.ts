// The one way text leaves the action: every log line and log group, annotation, step output, job
// summary, report file and failure message of the main step and of the post step is written through
// a MaskedCore, which replaces every registered secret (in each of its forms, src/core/redact.ts)
// before the runner sees it. The saved state goes through it too, but is never masked: the runner
// keeps the state file to itself (it becomes the post step's `STATE_*` variables, shown nowhere), the
// post step parses it, and a registered value that also occurs in an owner token, a node name or a uid
// would rewrite it, so the post step would misread its own claim. Nothing secret is saved: only node
// names, claims, the Lease's name and the kubectl flags (src/action/state.ts). This is the only file that imports the runner's protocol
// (src/action/runnerCommands.ts; __tests__/repo/consistency.test.ts checks), so nothing can be written
// unmasked, whoever writes it.
//
// Why at the sinks and not where a child's output is captured: the action parses what kubectl,
// talosctl and the Talos API answer, and a masked byte there is a wrong reading (a node name, an owner
// token, a `true`). So data is kept as it was printed, and text is masked on its way out.
// core.setSecret is still called for every secret, so the runner's own log masking covers anything
// written past this port (a crash's stack trace on stderr).
import { Redactor } from '../core/redact.js';
import { writePrivateFile } from './reportFile.js';
import { runnerProtocol, type AnnotationProps, type CorePort } from './runnerCommands.js';

// The raw port's shape is the protocol's (runnerCommands.ts implements it); named here too, so every
// other file reaches the runner's protocol only through this one.
export type { AnnotationProps, CorePort } from './runnerCommands.js';

/** Writes a file's text (masked already): the report file's writer (src/action/reportFile.ts), or a recorder in tests. */
export type FileSink = (path: string, text: string) => void;

/** `raw` with every text it is given masked first; `addSecret` registers a secret with both the masking and the runner. */
export class MaskedCore implements CorePort {
  readonly summary: CorePort['summary'];

  constructor(
    private readonly raw: CorePort,
    readonly redactor: Redactor = new Redactor(),
    private readonly files: FileSink = writePrivateFile,
  ) {
    this.summary = { addRaw: (text) => raw.summary.addRaw(this.mask(text)) };
  }

  /** Masks `value` from now on, in every sink, and in the runner's log (core.setSecret, once per value: every node's config repeats the cluster's secrets). */
  addSecret(value: string): void {
    if (this.redactor.add(value)) this.raw.setSecret(value);
  }

  setSecret(value: string): void {
    this.addSecret(value);
  }

  mask(text: string): string {
    return this.redactor.redact(String(text));
  }

  getInput(name: string): string {
    return this.raw.getInput(name);
  }

  getState(name: string): string {
    return this.raw.getState(name);
  }

  info(message: string): void {
    this.raw.info(this.mask(message));
  }

  notice(message: string, properties?: AnnotationProps): void {
    this.raw.notice(this.mask(message), this.props(properties));
  }

  warning(message: string, properties?: AnnotationProps): void {
    this.raw.warning(this.mask(message), this.props(properties));
  }

  error(message: string, properties?: AnnotationProps): void {
    this.raw.error(this.mask(message), this.props(properties));
  }

  startGroup(name: string): void {
    this.raw.startGroup(this.mask(name));
  }

  endGroup(): void {
    this.raw.endGroup();
  }

  setOutput(name: string, value: string): void {
    this.raw.setOutput(name, this.mask(value));
  }

  setFailed(message: string): void {
    this.raw.setFailed(this.mask(message));
  }

  /** As it is, never masked: the post step parses it (see the header); src/action/state.ts saves no secret. */
  saveState(name: string, value: string): void {
    this.raw.saveState(name, value);
  }

  /** A file of the run (the report file), its text masked like every other sink's. */
  writeFile(path: string, text: string): void {
    this.files(path, this.mask(text));
  }

  private props(p: AnnotationProps | undefined): AnnotationProps | undefined {
    return p && { ...p, ...(p.title === undefined ? {} : { title: this.mask(p.title) }) };
  }
}

/** The runner's protocol behind the masking: what the main step and the post step write through. */
export function runnerCore(redactor?: Redactor): MaskedCore {
  return new MaskedCore(runnerProtocol, redactor);
}
