// How Talos reads and writes its machine config's YAML, where it differs from a YAML 1.2 library:
// - reading (go.yaml.in/yaml/v4, as gopkg.in/yaml.v3: resolve.go takes an int with
//   strconv.ParseInt(s, 0, 64)), a leading `0` is an octal: `permissions: 0644` is 420, while a YAML
//   1.2 core schema reads it as 644 — a different file mode;
// - writing (its encoder, 4-space indentation), a file mode is `0o644` (v1alpha1 FileMode.MarshalYAML).
// The twin decodes every config text it is sent with parseGoYaml, so an edit that rewrote `0644` as
// `644` is a changed mode to it, as it is to Talos.
import { Document, isScalar, parseAllDocuments, visit } from 'yaml';

/** YAML 1.1's octal int (`0644`, `-012`), tried before the core schema's decimal int. */
const GO_OCTAL = {
  identify: () => false,
  default: true,
  tag: 'tag:yaml.org,2002:int',
  format: 'OCT',
  test: /^[-+]?0[0-7_]+$/,
  resolve: (s: string) => parseInt(s.replace(/_/g, ''), 8),
};

export interface GoYamlDoc {
  /** the document's value (null for an empty document) */
  value: unknown;
  /** the first parse error's position, when the document is not valid YAML */
  error?: { line: number; col: number; message: string };
}

/** Every document of a multi-document text, read with Go's int rules. */
export function parseGoYaml(text: string): GoYamlDoc[] {
  return parseAllDocuments(text, { customTags: (tags) => [GO_OCTAL, ...tags] }).map((d) => {
    if (d.errors.length === 0) return { value: d.toJS() as unknown };
    const pos = d.errors[0].linePos?.[0];
    return { value: undefined, error: { line: pos?.line ?? 0, col: pos?.col ?? 0, message: d.errors[0].message.split('\n')[0] } };
  });
}

/** One document as Talos's encoder writes it: 4-space indentation, file modes as `0o…`. */
export function encodeGoYaml(value: unknown): string {
  const doc = new Document(value);
  visit(doc, {
    Pair(_key, pair) {
      if (isScalar(pair.key) && pair.key.value === 'permissions' && isScalar(pair.value) && typeof pair.value.value === 'number')
        pair.value.format = 'OCT';
    },
  });
  return doc.toString({ indent: 4 });
}
