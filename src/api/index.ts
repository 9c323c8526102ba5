// The public surface of the API client: what plan, apply and the CLI import.

export { REDACTED, SecretRegistry, secretForms } from "../redact.js";
// Every wire shape, so a caller of the client needs no second import for what it gets back.
export type * from "../wire-types.js";
export { realSleep, sleepUnlessAborted } from "./abortable-sleep.js";
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
export { createDispatcher } from "./dispatcher.js";
export {
  createJob,
  deleteConfig,
  getConfig,
  getFrontend,
  iterateLogs,
  type LogQuery,
  listAllConfigs,
  listLogs,
  listProjects,
  reachesProjectList,
  rearrange,
  rearrange as rearrangeConfigs,
  updateConfig,
} from "./endpoints.js";
export {
  apiError,
  ClientError,
  type ClientErrorCode,
  type FailedRequest,
  isApiError,
  isOutcomeUnknown,
  isRequestError,
  isResponseError,
  notMadeAfter,
  type OutcomeErrorCode,
  OutcomeUnknownError,
  RequestError,
  type RequestErrorCode,
  ResponseError,
  type ResponseErrorCode,
} from "./errors.js";
export { LIST_BOUND_DEFAULTS, type ListBounds, nameList } from "./list-bounds.js";
export { LIST_READ_ATTEMPTS, listItems, paginate } from "./paginate.js";
export { collectionPath, encodeProjectId } from "./paths.js";
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
export type { ResponseShape, ResponseShapes } from "./response-schemas.js";
export {
  RETRY_DEFAULTS,
  type RetryContext,
  type RetryOptions,
  type RetrySafety,
  sendWithRetry,
} from "./retry.js";
export { type AttemptResponse, sendAttempt, TransportFailure } from "./transport.js";
export { isServiceEnvelope, validateResponse } from "./validate-response.js";
