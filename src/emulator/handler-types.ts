// What every operation handler receives and returns. Handlers are synchronous: they read and change
// the store in one go and describe the response; the server writes it.

import type { FamilyName } from "../families.js";
import { notFound } from "./http-error.js";
import type { LogStream } from "./log-stream.js";
import type { ProfileBehaviour } from "./profiles.js";
import type { RouteParams } from "./router.js";
import type { EmulatorStore } from "./store.js";
import type { ApiKeySpec, ProjectData, StoredRecord } from "./types.js";

export interface HandlerContext {
  store: EmulatorStore;
  profile: ProfileBehaviour;
  key: ApiKeySpec;
  /** The project the path names, already checked against the key; absent for the project list. */
  project: ProjectData | undefined;
  params: RouteParams;
  /** The parsed body: a JSON value, a FormBody (see request-body.ts), or undefined when there was none. */
  body: unknown;
  /** The absolute URL the client requested, for pagination links. */
  requestUrl: URL;
  /** The log entries plugin configs write by themselves. */
  logStream: LogStream;
}

export type HandlerResult =
  | { status: number; kind: "json"; body: unknown }
  | { status: number; kind: "text"; body: string; contentType: string }
  | { status: number; kind: "empty" };

export type Handler = (context: HandlerContext) => HandlerResult;

export function json(status: number, body: unknown): HandlerResult {
  return { status, kind: "json", body };
}

export function empty(status: number): HandlerResult {
  return { status, kind: "empty" };
}

/** The project and family of a family route; the router guarantees both are there. */
export function familyScope(context: HandlerContext): { projectId: number; family: FamilyName } {
  const { project, params } = context;
  if (project === undefined || params.family === undefined) throw new Error("family route without project");
  return { projectId: project.id, family: params.family };
}

/** The numeric record id of the path, or undefined for one that cannot name a record. */
export function parseRecordId(segment: string | undefined): number | undefined {
  if (segment === undefined || !/^[0-9]{1,15}$/.test(segment)) return undefined;
  return Number(segment);
}

/** The record the path names within its project and family; 404 when there is none. */
export function findRecordOrThrow(context: HandlerContext): StoredRecord {
  const record = findRecord(context);
  if (!record) throw notFound();
  return record;
}

export function findRecord(context: HandlerContext): StoredRecord | undefined {
  const { projectId, family } = familyScope(context);
  const id = parseRecordId(context.params.id);
  if (id === undefined) return undefined;
  return context.store.findInFamily(projectId, family, id, context.profile);
}
