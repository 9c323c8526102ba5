// Which handler serves which operation.

import { createJob, rearrangeRecords, retrieveFrontend } from "./action-handlers.js";
import type { Handler } from "./handler-types.js";
import { listLogs } from "./log-handlers.js";
import { listProjects, retrieveProject } from "./project-handlers.js";
import { createRecord, deleteRecord, listRecords, retrieveRecord, updateRecord } from "./record-handlers.js";
import type { Operation } from "./router.js";

export const HANDLERS: Readonly<Record<Operation, Handler>> = {
  "projects.list": listProjects,
  "projects.retrieve": retrieveProject,
  list: listRecords,
  create: createRecord,
  retrieve: retrieveRecord,
  update: updateRecord,
  delete: deleteRecord,
  frontend: retrieveFrontend,
  job: createJob,
  logs: listLogs,
  rearrange: rearrangeRecords,
};
