// The response shapes, their schema files and the validators' options: shared by the build
// (scripts/build-validators.mjs) and validate-response.ts.

import type { LogEntry, Page, PluginConfigRecord, Project, ServiceErrorBody } from "../wire-types.js";

export interface ResponseShapes {
  record: PluginConfigRecord;
  recordList: PluginConfigRecord[];
  recordPage: Page<PluginConfigRecord>;
  logPage: Page<LogEntry>;
  projectPage: Page<Project>;
  errorBody: ServiceErrorBody;
}

export type ResponseShape = keyof ResponseShapes;

export type PageShape = "recordPage" | "logPage" | "projectPage";

export const SCHEMA_FILES: Record<ResponseShape, string> = {
  record: "record.schema.json",
  recordList: "record-list.schema.json",
  recordPage: "record-page.schema.json",
  logPage: "log-page.schema.json",
  projectPage: "project-page.schema.json",
  errorBody: "error-body.schema.json",
};

// Referenced by the schemas above but never validated against on their own.
export const SHARED_SCHEMA_FILES = ["log-entry.schema.json"];

/** At build time and at run time alike. */
export const AJV_OPTIONS = { allErrors: false, allowUnionTypes: true, strict: true } as const;
