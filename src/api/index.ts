// The public surface of the API client: what plan, apply and the CLI import.

export type { ProxyEnvironment } from "../http/proxy.js";
export { isLoopbackHost } from "../http/proxy.js";
export { sendAttempt } from "../http/transport.js";
export { SecretRegistry } from "../redact.js";
// Every wire shape, so a caller of the client needs no second import for what it gets back.
export type * from "../wire-types.js";
export {
  type AttemptFailure,
  type AttemptProof,
  attemptFailureOfError,
  proofOf,
} from "./attempt-proof.js";
export {
  ApiClient,
  type ApiClientOptions,
  CLIENT_DEFAULTS,
  connectForeignEndpoint,
  LIST_BOUND_DEFAULTS,
} from "./client.js";
export {
  collectionPath,
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
  rearrangeConfigs,
  updateConfig,
} from "./endpoints.js";
export { paginate } from "./paginate.js";
export {
  type RetryContext,
  sendWithRetry,
} from "./retry.js";
export {
  isApiError,
  isRequestError,
  isServiceError,
  ServiceError,
} from "./service-error.js";
