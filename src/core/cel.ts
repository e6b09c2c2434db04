// CEL, compiled and run with @bufbuild/cel, for the health gates of `health-gates` (docs/gates.md).
// Loaded only by a dynamic import, and only when that input names a gate: the library costs a few
// hundred milliseconds of start-up that a merge-queue run with nothing to roll must not pay (bench/
// startup.ts). Pure: an expression in, a function of one object out.
import { celEnv, isCelError, isCelList, isCelMap, isCelType, isCelUint, parse, plan, type CelResult } from '@bufbuild/cel';
import type { CelOutcome } from './model/gates.js';

/** What one object made of the expression: its type (and value, for a boolean or a number), or the error. */
export type CelTest = (object: Record<string, unknown>) => CelOutcome;

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
 * x-kubernetes-validations rules). Its answer is read into a CelOutcome: whether it is the boolean
 * `true` is src/rules/gateFinding.ts's to say, and so is what of it may be shown (the error's message
 * may quote the object, so it is never shown).
 */
export function compileCel(expression: string): CelTest {
  const run = plan(celEnv(), parse(expression)) as (ctx: Record<string, unknown>) => CelResult;
  return (object) => {
    let out: CelResult;
    try {
      out = run({ self: object });
    } catch (e) {
      return { type: 'error', message: (e as Error).message };
    }
    return outcomeOf(out);
  };
}

/** The type of a CEL value (the library's runtime forms: bigint int, CelUint, number double, …). */
function outcomeOf(v: CelResult): CelOutcome {
  if (isCelError(v)) return { type: 'error', message: v.message };
  if (typeof v === 'boolean') return { type: 'boolean', value: v };
  if (typeof v === 'bigint') return { type: 'number', value: Number(v) };
  if (typeof v === 'number') return { type: 'number', value: v };
  if (isCelUint(v)) return { type: 'number', value: Number(v.value) };
  if (typeof v === 'string') return { type: 'string' };
  if (v === null) return { type: 'null' };
  if (v instanceof Uint8Array) return { type: 'bytes' };
  if (isCelList(v)) return { type: 'list' };
  if (isCelMap(v)) return { type: 'map' };
  if (isCelType(v)) return { type: 'type' };
  const typeName = (v as { desc?: { typeName?: unknown } }).desc?.typeName;
  if (typeName === 'google.protobuf.Timestamp') return { type: 'timestamp' };
  if (typeName === 'google.protobuf.Duration') return { type: 'duration' };
  return { type: 'message' };
}
