// The record actions beyond CRUD: frontend module, job, and rearrange, each with the profile's
// own request shape and response.

import { FRONTEND_CONTENT_TYPE, renderFrontendModule } from "./frontend-module.js";
import {
  empty,
  familyScope,
  findRecordOrThrow,
  type Handler,
  type HandlerContext,
  json,
} from "./handler-types.js";
import { requiredField, serverError, validationError } from "./http-error.js";
import { renderFor } from "./record-handlers.js";
import type { StoredRecord } from "./types.js";
import { requireObjectBody } from "./validation.js";

export const retrieveFrontend: Handler = (context) => {
  const record = findRecordOrThrow(context);
  return {
    status: 200,
    kind: "text",
    body: renderFrontendModule(record, context.store.plugin(record.plugin)),
    contentType: FRONTEND_CONTENT_TYPE,
  };
};

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Validates `{"job": {"type": "<name>", "payload": {...}}}` and returns the type. */
function parseJobType(rawBody: unknown): string {
  const body = requireObjectBody(rawBody ?? {});
  if (!Object.hasOwn(body, "job")) throw requiredField("job");
  const job = body.job;
  if (!isPlainObject(job)) throw validationError("invalid_input", "Expected a dictionary of items.", "job");
  if (!Object.hasOwn(job, "type")) throw requiredField("job__type");
  if (typeof job.type !== "string" || job.type.trim() === "") {
    throw validationError("invalid_input", "A job type must be a non-empty string.", "job__type");
  }
  if (Object.hasOwn(job, "payload") && !isPlainObject(job.payload)) {
    throw validationError("invalid_input", "Expected a dictionary of items.", "job__payload");
  }
  return job.type;
}

export const createJob: Handler = (context) => {
  const record = findRecordOrThrow(context);
  const type = parseJobType(context.body);
  // A queued job shows up in the config's logs, so a client can observe that it ran.
  context.store.appendLog(record, { source: "SYSTEM", type: "INFO", message: `Job ${type} queued` });
  return context.profile.jobResponse === "empty" ? empty(200) : json(200, renderFor(context, record));
};

const CANONICAL_ID = /^(0|[1-9][0-9]{0,15})$/;
// The real service converts keys with Python's int(), which tolerates spaces and a sign.
const PYTHON_INT = /^\s*[+-]?[0-9]+\s*$/;
const INT_MAX = 2_147_483_647;
const INT_MIN = -2_147_483_648;

function isStoredOrder(value: unknown): value is number {
  return typeof value === "number" && Number.isInteger(value) && value >= INT_MIN && value <= INT_MAX;
}

function setOrder(context: HandlerContext, record: StoredRecord, order: number): void {
  if (record.order !== order) context.store.updateRecord(record, { order });
}

/** seed: orders keyed by config id within the family; bad input is a 400. */
function rearrangeByConfig(context: HandlerContext): unknown {
  const { projectId, family } = familyScope(context);
  const body = requireObjectBody(context.body ?? {});
  if (!Object.hasOwn(body, "orders")) throw requiredField("orders");
  const orders = body.orders;
  if (!isPlainObject(orders)) {
    throw validationError("invalid_input", "Expected a dictionary of config ids to orders.", "orders");
  }
  const entries = Object.entries(orders);
  // Validate everything first so a bad entry changes nothing.
  for (const [key, value] of entries) {
    if (!CANONICAL_ID.test(key)) {
      throw validationError("invalid_input", `"${key}" is not a valid config id.`, "orders");
    }
    if (!isStoredOrder(value)) {
      throw validationError(
        "invalid_input",
        `Order of config ${key}: a valid integer is required.`,
        "orders",
      );
    }
  }
  for (const [key, value] of entries) {
    const record = context.store.findInFamily(projectId, family, Number(key), context.profile);
    if (record && !record.deleted && isStoredOrder(value)) setOrder(context, record, value);
  }
  return context.store
    .listFamily(projectId, family, context.profile)
    .map((record) => renderFor(context, record, "collection"));
}

/**
 * posthog-2024: orders keyed by plugin id over the project's enabled configs of both families.
 * Like the real service it maps plugin -> config (the last config wins for duplicated plugins),
 * applies entries one by one, and fails with a 500 on input it cannot convert.
 */
function rearrangeByPlugin(context: HandlerContext): unknown {
  const { projectId } = familyScope(context);
  if (!isPlainObject(context.body ?? {})) throw serverError();
  const orders =
    isPlainObject(context.body) && Object.hasOwn(context.body, "orders") ? context.body.orders : {};
  if (!isPlainObject(orders)) throw serverError();
  const enabled = context.store.listEnabled(projectId);
  const byPlugin = new Map<number, StoredRecord>();
  for (const record of [...enabled].sort((a, b) => a.id - b.id)) byPlugin.set(record.plugin, record);
  for (const [key, value] of Object.entries(orders)) {
    if (!PYTHON_INT.test(key)) throw serverError();
    const record = byPlugin.get(Number(key.trim()));
    if (!record || record.order === value) continue;
    if (!isStoredOrder(value)) throw serverError();
    setOrder(context, record, value);
  }
  return context.store.listEnabled(projectId).map((record) => renderFor(context, record, "collection"));
}

export const rearrangeRecords: Handler = (context) =>
  json(
    200,
    context.profile.rearrangeKeyedBy === "plugin" ? rearrangeByPlugin(context) : rearrangeByConfig(context),
  );
