// List, create, retrieve, update and delete of plugin config records, in either family.

import {
  empty,
  familyScope,
  findRecord,
  findRecordOrThrow,
  type Handler,
  type HandlerContext,
  json,
} from "./handler-types.js";
import { notFound, serverError } from "./http-error.js";
import { paginate, parsePageRequest } from "./pagination.js";
import { readConfigChanges } from "./record-config.js";
import { type RecordContext, renderRecord } from "./record-view.js";
import type { StoredRecord } from "./types.js";
import { validateRecordInput } from "./validation.js";

export function renderFor(context: HandlerContext, record: StoredRecord, as: RecordContext = "single") {
  return renderRecord(record, context.store.plugin(record.plugin), context.profile, as);
}

export const listRecords: Handler = (context) => {
  const page = parsePageRequest(context.requestUrl.searchParams);
  const { projectId, family } = familyScope(context);
  const records = context.store.listFamily(projectId, family, context.profile);
  const rendered = paginate(records, page, context.requestUrl);
  return json(200, {
    ...rendered,
    results: rendered.results.map((record) => renderFor(context, record, "collection")),
  });
};

export const createRecord: Handler = (context) => {
  const { projectId, family } = familyScope(context);
  const input = validateRecordInput(context.body, {
    partial: false,
    ignored: [],
    pluginExists: (id) => context.store.plugin(id) !== undefined,
    trimText: context.profile.trimsText,
  });
  const { plugin, order } = input;
  // validateRecordInput has checked both are present; this narrows their types.
  if (plugin === undefined || order === undefined)
    throw new Error("required fields missing after validation");
  const { config, attach, detach } = readConfigChanges(context.body);
  const record = context.store.createRecord(family, projectId, {
    ...input,
    plugin,
    order,
    ...(config === undefined ? {} : { config }),
  });
  // As the service does: the record is saved, then its attachments.
  if (attach.length + detach.length > 0) context.store.updateAttachments(record, attach, detach);
  return json(201, renderFor(context, record));
};

export const retrieveRecord: Handler = (context) => json(200, renderFor(context, findRecordOrThrow(context)));

export const updateRecord: Handler = (context) => {
  const record = findRecordOrThrow(context);
  const changes = validateRecordInput(context.body, {
    partial: true,
    ignored: context.profile.pluginWritableOnUpdate ? [] : ["plugin"],
    pluginExists: (id) => context.store.plugin(id) !== undefined,
    trimText: context.profile.trimsText,
  });
  const { config, attach, detach } = readConfigChanges(context.body);
  context.store.updateRecord(record, config === undefined ? changes : { ...changes, config });
  if (attach.length + detach.length > 0) context.store.updateAttachments(record, attach, detach);
  return json(200, renderFor(context, record));
};

export const deleteRecord: Handler = (context) => {
  const record = findRecord(context);
  if (!record) {
    // The real service fails inside its delete override when the id is unknown.
    throw context.profile.deleteUnknownStatus === 500 ? serverError() : notFound();
  }
  if (context.profile.deleteMode === "soft-delete") context.store.updateRecord(record, { deleted: true });
  else context.store.updateRecord(record, { enabled: false });
  return empty(204);
};
