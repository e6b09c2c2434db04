// The report file's JSON Schema (schema/run-report.v<version>.json, the version the code writes) as the
// tests hold every report to it: one compiled validator (ajv, draft 2020-12, with ajv-formats for
// `date-time`), and the one reader of a report file, so a test whose run writes a report the schema
// refuses fails with ajv's own errors.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import formats from 'ajv-formats';
import standaloneCode from 'ajv/dist/standalone/index.js';
import { readSessionCache, writeSessionCache } from '../../sim/sessionCache.js';
import { RUN_REPORT_VERSION, type RunReportDocument } from '../../src/report/runReport.js';

/** The schema file of a version: the file a consumer of a report with that `version` validates against. */
export const reportSchemaFile = (version: number): URL => new URL(`../../schema/run-report.v${version}.json`, import.meta.url);
export const readSchema = (version: number): Record<string, unknown> =>
  JSON.parse(readFileSync(reportSchemaFile(version), 'utf8')) as Record<string, unknown>;

/** The schema the document's `version` names today. */
export const REPORT_SCHEMA_FILE = reportSchemaFile(RUN_REPORT_VERSION);
export const REPORT_SCHEMA = readSchema(RUN_REPORT_VERSION);

const compiled = new Map<number, ValidateFunction>();

function validator(version: number): ValidateFunction {
  const known = compiled.get(version);
  if (known) return known;
  const file = `report-schema-v${version}.cjs`;
  const validate = loadStandalone(readSessionCache(file)) ?? compileSchema(version, (source) => writeSessionCache(file, source));
  compiled.set(version, validate);
  return validate;
}

export function compileSchema(version: number, keep: (source: string) => void): ValidateFunction {
  // strict: a keyword ajv does not know, or a type it cannot check, is a mistake in the schema, not ignored
  const ajv = new Ajv2020({ strict: true, allErrors: true, code: { source: true } });
  formats.default(ajv, ['date-time']);
  const validate = ajv.compile(version === RUN_REPORT_VERSION ? REPORT_SCHEMA : readSchema(version));
  // ajv's own standalone output of this very compilation: the session's other workers load it (10 ms)
  // instead of compiling the schema again (0.4 s of CPU each)
  keep(standaloneCode.default(ajv, validate));
  return validate;
}

/** A validator from ajv's standalone CommonJS source; its `require`s (ajv's runtime, ajv-formats) resolve here. */
export function loadStandalone(source: string | undefined): ValidateFunction | undefined {
  if (source === undefined) return undefined;
  const module = { exports: {} as { default?: ValidateFunction } };
  new Function('module', 'exports', 'require', source)(module, module.exports, createRequire(import.meta.url));
  return module.exports.default;
}

/** ajv's errors, one line each: where in the document, what the schema of `version` (default: today's) asked. */
export function schemaErrors(doc: unknown, version: number = RUN_REPORT_VERSION): string[] {
  const validate = validator(version);
  if (validate(doc)) return [];
  return (validate.errors ?? []).map((e: ErrorObject) => `${e.instancePath || '/'} ${e.message ?? e.keyword} ${JSON.stringify(e.params)}`);
}

/** The document as it is when the schema accepts it; otherwise throws with ajv's errors (the test fails on them). */
export function checkReport(doc: unknown): RunReportDocument {
  const errors = schemaErrors(doc);
  if (errors.length > 0) {
    throw new Error(`the report does not match schema/run-report.v${RUN_REPORT_VERSION}.json:\n- ${errors.join('\n- ')}`);
  }
  return doc as RunReportDocument;
}

/** Reads a report file and checks it against the schema: every test that reads one reads it here. */
export function readReport(path: string): RunReportDocument {
  return checkReport(JSON.parse(readFileSync(path, 'utf8')));
}
