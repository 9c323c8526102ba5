// The logs endpoint of plugin configs: newest first, filtered by type, message text and time, and
// paginated like every list. An unknown config id is an empty page, as in the real service.

import type { LogEntry } from "../wire-types.js";
import { familyScope, type Handler, json, parseRecordId } from "./handler-types.js";
import { validationError } from "./http-error.js";
import { paginate, parsePageRequest } from "./pagination.js";

function parseInstant(query: URLSearchParams, name: string): number | undefined {
  const raw = query.get(name);
  if (raw === null) return undefined;
  const ms = /^\d{4}-\d{2}-\d{2}/.test(raw) ? Date.parse(raw) : Number.NaN;
  if (Number.isNaN(ms)) throw validationError("invalid_input", "Enter a valid date/time.", name);
  return ms;
}

function buildLogFilter(query: URLSearchParams): (entry: LogEntry) => boolean {
  // type_filter may be repeated or comma-separated.
  const types = new Set(
    query
      .getAll("type_filter")
      .flatMap((value) => value.split(","))
      .map((value) => value.trim().toUpperCase())
      .filter((value) => value !== ""),
  );
  const search = query.get("search")?.toLowerCase() ?? "";
  const after = parseInstant(query, "after");
  const before = parseInstant(query, "before");
  return (entry) => {
    const timestamp = Date.parse(entry.timestamp);
    if (types.size > 0 && !types.has(entry.type.toUpperCase())) return false;
    if (search !== "" && !entry.message.toLowerCase().includes(search)) return false;
    if (after !== undefined && !(timestamp > after)) return false;
    if (before !== undefined && !(timestamp < before)) return false;
    return true;
  };
}

export const listLogs: Handler = (context) => {
  const query = context.requestUrl.searchParams;
  const page = parsePageRequest(query);
  const matches = buildLogFilter(query);
  const { projectId } = familyScope(context);
  const configId = parseRecordId(context.params.id);
  const entries = configId === undefined ? [] : context.store.logsOf(projectId, configId).filter(matches);
  const rendered = paginate(entries, page, context.requestUrl);
  return json(200, rendered);
};
