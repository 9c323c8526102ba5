// The logs endpoint of plugin configs: newest first, filtered by type, message text and time, and
// paginated like every list. An unknown config id is an empty page, as in the real service. Each
// config's own stream (log-stream.ts) is merged with the entries the store holds.

import { familyScope, type Handler, json, parseRecordId } from "./handler-types.js";
import { validationError } from "./http-error.js";
import { type LogFilter, matchesLogFilter, paginateLogs } from "./log-stream.js";
import { parsePageRequest } from "./pagination.js";

function parseInstant(query: URLSearchParams, name: string): number | undefined {
  const raw = query.get(name);
  if (raw === null) return undefined;
  const ms = /^\d{4}-\d{2}-\d{2}/.test(raw) ? Date.parse(raw) : Number.NaN;
  if (Number.isNaN(ms)) throw validationError("invalid_input", "Enter a valid date/time.", name);
  return ms;
}

function parseLogFilter(query: URLSearchParams): LogFilter {
  // type_filter may be repeated or comma-separated.
  const types = new Set(
    query
      .getAll("type_filter")
      .flatMap((value) => value.split(","))
      .map((value) => value.trim().toUpperCase())
      .filter((value) => value !== ""),
  );
  const search = query.get("search")?.toLowerCase() ?? "";
  return { types, search, after: parseInstant(query, "after"), before: parseInstant(query, "before") };
}

export const listLogs: Handler = (context) => {
  const query = context.requestUrl.searchParams;
  const page = parsePageRequest(query);
  const filter = parseLogFilter(query);
  const { projectId, family } = familyScope(context);
  const configId = parseRecordId(context.params.id);
  if (configId === undefined) return json(200, paginateLogs([], undefined, page, context.requestUrl));
  const stored = context.store.logsOf(projectId, configId).filter((entry) => matchesLogFilter(entry, filter));
  // The stored entries (jobs, data-file ones) come with the stream the config logs by itself.
  const record = context.store.findInFamily(projectId, family, configId, context.profile);
  const synthesized =
    record && context.logStream.of(record, context.store.plugin(record.plugin), context.profile, filter);
  return json(200, paginateLogs(stored, synthesized, page, context.requestUrl));
};
