// JSON Pointer (RFC 6901) paths of a Node's annotations, for every patch builder of rules/ (claim,
// autoscaler marks, release, marker, quarantine). In a file of its own so a builder the claim uses can
// build paths without importing the claim.

/** RFC 6901 path segment: `~` → `~0` first, then `/` → `~1` (annotation keys contain `/`). */
export function escapePointer(segment: string): string {
  return segment.replace(/~/g, '~0').replace(/\//g, '~1');
}

export function annotationPath(key: string): string {
  return `/metadata/annotations/${escapePointer(key)}`;
}
