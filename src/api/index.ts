// The public surface of the API client: what plan, apply and the CLI import.

export { REDACTED, SecretRegistry, secretForms } from "../redact.js";
// Every wire shape, so a caller of the client needs no second import for what it gets back.
export type * from "../wire-types.js";
export { checkApiKey, isValidApiKey } from "./api-key.js";
export { type BaseUrl, isLoopbackHost, type QueryParams } from "./base-url.js";
export {
  ApiClient,
  type ApiClientOptions,
  type ApiResponse,
  type ApiStats,
  CLIENT_DEFAULTS,
  type HttpMethod,
  type RequestSpec,
} from "./client.js";
export {
  CREATE_POSTS_DEFAULT,
  type CreateConfigOptions,
  type CreateResult,
  createConfig,
  createConfigDetailed,
  type FamilyListing,
  FamilyReader,
  findCreatedRecord,
  MIN_SETTLE_WINDOW_MS,
  minimumSettleTimeoutMs,
  SETTLE_TIMEOUT_FACTOR,
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
  classifyPostFailure,
  type FailureRules,
  isServiceEnvelope,
  type PostFailure,
  type PostFailureKind,
  postFailureOf,
} from "./failure-kind.js";
export { LIST_BOUND_DEFAULTS, type ListBounds, nameList } from "./list-bounds.js";
export type { LogQuery } from "./log-query.js";
export { LIST_READ_ATTEMPTS, paginate, readWholeList } from "./paginate.js";
export { encodeProjectId } from "./paths.js";
export {
  matchNoProxy,
  type ProxyDecision,
  type ProxyEnvironment,
  type ProxyRoute,
  parseProxyUrl,
  resolveProxy,
} from "./proxy.js";
export {
  type LearnedLimit,
  RATE_LIMITER_DEFAULTS,
  RateLimiter,
  type RateLimiterOptions,
  type RateLimiterState,
} from "./rate-limiter.js";
export type { RetrySafety } from "./request-with-retry.js";
export type { ResponseShape, ResponseShapes } from "./response-schemas.js";
export { RETRY_DEFAULTS, type RetryOptions } from "./retry.js";
export {
  apiError,
  type FailedRequest,
  isApiError,
  isOutcomeUnknown,
  isRequestError,
  isResponseError,
  type OutcomeErrorCode,
  type RequestErrorCode,
  type ResponseErrorCode,
  ServiceError,
} from "./service-error.js";
export { validateResponse } from "./validate-response.js";
