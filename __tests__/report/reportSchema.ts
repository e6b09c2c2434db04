// The report file's JSON Schema (schema/run-report.v1.json) as the tests hold every report to it: one
// compiled validator (ajv, draft 2020-12, with ajv-formats for `date-time`), and the one reader of a
// report file, so a test whose run writes a report the schema refuses fails with ajv's own errors.
import { readFileSync } from 'node:fs';
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import formats from 'ajv-formats';
import type { RunReportDocument } from '../../src/report/runReport.js';

/** The schema the document's `version` names; the file a consumer validates against. */
export const REPORT_SCHEMA_FILE = new URL('../../schema/run-report.v1.json', import.meta.url);
export const REPORT_SCHEMA = JSON.parse(readFileSync(REPORT_SCHEMA_FILE, 'utf8')) as Record<string, unknown>;

let compiled: ValidateFunction | undefined;

function validator(): ValidateFunction {
  if (compiled) return compiled;
  // strict: a keyword ajv does not know, or a type it cannot check, is a mistake in the schema, not ignored
  const ajv = new Ajv2020({ strict: true, allErrors: true });
  formats.default(ajv, ['date-time']);
  compiled = ajv.compile(REPORT_SCHEMA);
  return compiled;
}

/** ajv's errors, one line each: where in the document, what the schema asked. */
export function schemaErrors(doc: unknown): string[] {
  const validate = validator();
  if (validate(doc)) return [];
  return (validate.errors ?? []).map((e: ErrorObject) => `${e.instancePath || '/'} ${e.message ?? e.keyword} ${JSON.stringify(e.params)}`);
}

/** The document as it is when the schema accepts it; otherwise throws with ajv's errors (the test fails on them). */
export function checkReport(doc: unknown): RunReportDocument {
  const errors = schemaErrors(doc);
  if (errors.length > 0) throw new Error(`the report does not match schema/run-report.v1.json:\n- ${errors.join('\n- ')}`);
  return doc as RunReportDocument;
}

/** Reads a report file and checks it against the schema: every test that reads one reads it here. */
export function readReport(path: string): RunReportDocument {
  return checkReport(JSON.parse(readFileSync(path, 'utf8')));
}
