// The order the suite's files start in. With more files at once than cores, the suite ends when its
// last long file does, so the long ones must start first. Vitest's own order does that from the
// durations it remembers; a fresh clone (CI) has none, and vitest then orders by file size, which
// started some long end-to-end files late and left the cores idle at the end while they ran alone.
// Without remembered durations, the files that wait on the twin's clocks (end to end, the twin's own,
// the demo's) go first, larger first; the unit files, each well under a second, fill in at the end.
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

const WAITS_ON_THE_TWIN = /__tests__\/(e2e|repo|sim-talos|sim-kube)\//;

export class SlowFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const { cache, config } = this.ctx;
    const key = (f: TestSpecification) => `${f.project.name}:${relative(config.root, f.moduleId)}`;
    const remembered = files.map((f) => cache.getFileTestResults(key(f))?.duration);
    // every file has a remembered duration: vitest's own order (longest first, failed first) is better
    if (remembered.every((d) => d !== undefined)) return super.sort(files);
    const waits = (f: TestSpecification) => (WAITS_ON_THE_TWIN.test(f.moduleId) ? 1 : 0);
    const size = (f: TestSpecification) => cache.getFileStats(key(f))?.size ?? 0;
    return [...files].sort((a, b) => waits(b) - waits(a) || size(b) - size(a));
  }
}
