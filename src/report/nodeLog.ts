// The job log when several nodes run at once. GitHub's log groups cannot interleave (a group is the
// lines between one `::group::` and the next `::endgroup::`), so each node's lines are buffered and
// written as ONE contiguous group when the node ends, titled with its outcome. So that a user still
// sees progress while a drain or a reboot takes minutes, each step is also written at once as one
// short un-grouped line prefixed with the node name (`w1: ▶ drain`). One code path whatever
// max-unavailable is: the log reads the same with one node in flight or twenty-five.
//
// Lines from code that does not know its node (the runner's record of each command) are routed to
// the node whose work started them: `within(log, fn)` runs a node's work in an AsyncLocalStorage
// context, which follows every await, timer and child-process callback started inside it. A line
// outside any node (the run's own lines, the Lease renewal) is written at once.
// Nothing is ever dropped: a line for a node whose group was already written is written at once with
// the node's name, and `flushAll` writes the groups still open when the run ends early.
import { AsyncLocalStorage } from 'node:async_hooks';

/** What the log is written to: the runner's info, startGroup and endGroup (src/action/runnerCommands.ts). */
export interface LogSink {
  info(line: string): void;
  startGroup(title: string): void;
  endGroup(): void;
}

/** One node's log; `info` and `group` are the pipeline's RolloutLog, `progress` is for step starts. */
export interface NodeLog {
  readonly node: string;
  /** a line for the node's group */
  info(message: string): void;
  /** a step starting: written at once as `node: message`, and kept for the group */
  progress(message: string): void;
  /** sets the group's title; the returned function writes the group, under `finalTitle` when given */
  group(title: string): (finalTitle?: string) => void;
}

class BufferedNodeLog implements NodeLog {
  private title: string;
  private readonly lines: string[] = [];
  private written = false;

  constructor(
    readonly node: string,
    private readonly sink: LogSink,
    private readonly onWritten: (log: BufferedNodeLog) => void,
  ) {
    this.title = node;
  }

  info(message: string): void {
    if (this.written) this.sink.info(`${this.node}: ${message}`);
    else this.lines.push(message);
  }

  progress(message: string): void {
    this.sink.info(`${this.node}: ${message}`);
    if (!this.written) this.lines.push(message);
  }

  group(title: string): (finalTitle?: string) => void {
    this.title = title;
    return (finalTitle?: string) => this.write(finalTitle ?? this.title);
  }

  /** writes the group once; later calls do nothing */
  write(title: string): void {
    if (this.written) return;
    this.written = true;
    this.sink.startGroup(title);
    for (const l of this.lines) this.sink.info(l);
    this.sink.endGroup();
    this.lines.length = 0;
    this.onWritten(this);
  }

  get pendingTitle(): string {
    return this.title;
  }
}

export class NodeLogs {
  private readonly current = new AsyncLocalStorage<NodeLog>();
  private readonly open = new Set<BufferedNodeLog>();

  constructor(private readonly sink: LogSink) {}

  /** a line of the run itself: written at once */
  info(message: string): void {
    this.sink.info(message);
  }

  /** a new node's log: nothing of it is written (but progress lines) until its group ends */
  forNode(node: string): NodeLog {
    const log = new BufferedNodeLog(node, this.sink, (l) => this.open.delete(l));
    this.open.add(log);
    return log;
  }

  /** runs a node's work so that `line` calls made anywhere inside it go to `log` */
  within<T>(log: NodeLog, fn: () => Promise<T>): Promise<T> {
    return this.current.run(log, fn);
  }

  /** a line from code that does not know its node: to the node whose work is running, else at once */
  line(text: string): void {
    const log = this.current.getStore();
    if (log) log.info(text);
    else this.sink.info(text);
  }

  /** the nodes whose group is not written yet */
  get openNodes(): string[] {
    return [...this.open].map((l) => l.node);
  }

  /** writes every group still open (the run ends early: a crash, a cancellation), marked as such */
  flushAll(note = 'unfinished when the run ended'): void {
    for (const l of [...this.open]) l.write(`${l.pendingTitle} (${note})`);
  }
}
