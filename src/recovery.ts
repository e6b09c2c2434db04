// The exact, CAS-guarded command a person runs to release a node this run left claimed.
import type { Config } from './config.js';
import type { AnnotationKeys, ClaimCapture } from './model.js';
import { buildReleasePatch } from './rules/release.js';

/** One argument for a POSIX shell, single-quoted. */
export function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/** A kubectl command line a person can paste, with the run's kubeconfig and context, in backticks. */
export function kubectlCommand(config: Pick<Config, 'kubeconfig' | 'kubeContext'>, args: string): string {
  const globals = [
    config.kubeconfig ? `--kubeconfig=${shellQuote(config.kubeconfig)}` : '',
    config.kubeContext ? `--context=${shellQuote(config.kubeContext)}` : '',
  ].filter(Boolean);
  return `\`${['kubectl', ...globals, args].join(' ')}\``;
}

/**
 * The release patch tests our owner token and the uid, so it cannot release a node another run
 * claimed meanwhile or a replacement node of the same name. It sets no verified-revision.
 */
export function releaseCommand(capture: ClaimCapture, keys: AnnotationKeys, config: Pick<Config, 'kubeconfig' | 'kubeContext'>): string {
  const ops = buildReleasePatch(capture, keys, {});
  return kubectlCommand(config, `patch node ${capture.node} --type=json -p ${shellQuote(JSON.stringify(ops))}`);
}
