// The one shape of a JSON Patch operation the action sends, to a Node (claim, guard, release,
// quarantine) and to the run Lease alike, so every patch builder and both adapters share it. No I/O.

/** One JSON Patch (RFC 6902) operation as the action sends it. */
export type JsonPatchOp =
  | { op: 'test'; path: string; value: unknown }
  | { op: 'add'; path: string; value: unknown }
  | { op: 'replace'; path: string; value: unknown }
  | { op: 'remove'; path: string };
