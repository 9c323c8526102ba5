// The public surface of the API client: what plan, apply and the CLI import.

export { SecretRegistry } from "../redact.js";
// Every wire shape, so a caller of the client needs no second import for what it gets back.
export type * from "../wire-types.js";
export { isLoopbackHost } from "./base-url.js";
export { ApiClient, type ApiClientOptions, CLIENT_DEFAULTS } from "./client.js";
export {
  type CreateConfigOptions,
  type CreateResult,
  createConfig,
  createConfigDetailed,
  type FamilyListing,
  FamilyReader,
  MIN_SETTLE_WINDOW_MS,
  minimumSettleTimeoutMs,
  settleWindowMs,
} from "./create-config.js";
export {
  createJob,
  deleteConfig,
  getConfig,
  getFrontend,
  iterateLogs,
  listAllConfigs,
  listConfigs,
  listLogs,
  listProjects,
  reachesProjectList,
  rearrange,
  // The same function under the name that matches listConfigs/createConfig/updateConfig.
  rearrange as rearrangeConfigs,
  updateConfig,
} from "./endpoints.js";
export {
  ClientError,
  isApiError,
  isOutcomeUnknown,
  isRequestError,
  OutcomeUnknownError,
  RequestError,
  ResponseError,
} from "./errors.js";
export {
  classifyPostFailure,
  isServiceEnvelope,
  type PostFailure,
  type PostFailureKind,
  postFailureOf,
} from "./failure-kind.js";
export { LIST_BOUND_DEFAULTS, type ListBounds } from "./list-bounds.js";
export type { LogQuery } from "./log-query.js";
export { paginate } from "./paginate.js";
export { matchNoProxy, resolveProxy } from "./proxy.js";
export { RateLimiter, type RateLimiterOptions } from "./rate-limiter.js";
