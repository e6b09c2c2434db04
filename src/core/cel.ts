// CEL, compiled and run with @bufbuild/cel, for the health gates of `health-gates` (docs/gates.md).
// Loaded only by a dynamic import, and only when that input names a gate: the library costs a few
// hundred milliseconds of start-up that a merge-queue run with nothing to roll must not pay (bench/
// startup.ts). Pure: an expression in, a function of one object out.
import { celEnv, isCelError, parse, plan, type CelResult } from '@bufbuild/cel';

/** What one object made of the expression: the boolean true, or why not (one line). */
export type CelTest = (object: Record<string, unknown>) => string | undefined;

/** The compiler's message when `expression` does not compile, else undefined. */
export function celCompileError(expression: string): string | undefined {
  try {
    parse(expression);
    return undefined;
  } catch (e) {
    return (e as Error).message;
  }
}

/**
 * The expression compiled once, over the object bound as `self` (as Kubernetes binds it in a CRD's
 * x-kubernetes-validations rules): satisfied only by the boolean `true`; false, another type or an
 * error (a missing field) is the reason it is not.
 */
export function compileCel(expression: string): CelTest {
  const run = plan(celEnv(), parse(expression)) as (ctx: Record<string, unknown>) => CelResult;
  return (object) => {
    let out: CelResult;
    try {
      out = run({ self: object });
    } catch (e) {
      return `error: ${(e as Error).message}`;
    }
    if (isCelError(out)) return `error: ${out.message}`;
    if (out === true) return undefined;
    return out === false ? 'false' : `not a boolean: ${describe(out)}`;
  };
}

function describe(v: unknown): string {
  if (typeof v === 'string') return JSON.stringify(v);
  if (typeof v === 'bigint' || typeof v === 'number' || v === null) return String(v);
  return typeof v;
}
