// The exact, CAS-guarded command a person runs to release a node this run left claimed.
import type { Config } from './config.js';
import type { AnnotationKeys, ClaimCapture } from './model.js';
import { buildReleasePatch } from './rules/release.js';

function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/**
 * The release patch tests our owner token and the uid, so it cannot release a node another run
 * claimed meanwhile or a replacement node of the same name. It sets no verified-revision.
 */
export function releaseCommand(capture: ClaimCapture, keys: AnnotationKeys, config: Pick<Config, 'kubeconfig' | 'kubeContext'>): string {
  const ops = buildReleasePatch(capture, keys, {});
  const globals = [
    config.kubeconfig ? `--kubeconfig=${shellQuote(config.kubeconfig)}` : '',
    config.kubeContext ? `--context=${shellQuote(config.kubeContext)}` : '',
  ]
    .filter(Boolean)
    .join(' ');
  return `\`kubectl ${globals ? `${globals} ` : ''}patch node ${capture.node} --type=json -p ${shellQuote(JSON.stringify(ops))}\``;
}
