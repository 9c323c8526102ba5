// A project's list answered 404: in the user's terms, pointing at the manifest. Either the project
// does not exist or the key cannot see it, or (when nothing has answered yet) the base URL's path
// is not where the service's API is; one request to the project list tells the two apart.

import { type ApiClient, isApiError, reachesProjectList, type ServiceError } from "../api/index.js";
import type { PcsyncError } from "../errors.js";
import type { FamilyRef } from "../families.js";
import { InputError } from "../input-error.js";
import { formatSource } from "../manifest/diagnostics.js";
import type { SourceLocation } from "../manifest/types.js";

/** Whether `error` is the 404 of a family's list (not of a record read on the way). */
export function isMissingList(error: unknown, ref: FamilyRef): error is ServiceError<"api_error"> {
  return (
    isApiError(error, 404) &&
    error.method === "GET" &&
    error.path.endsWith(`/api/projects/${encodeURIComponent(ref.project)}/${ref.family}/`)
  );
}

/**
 * The error to report for the 404 of `ref`'s list: the project named at `source` is unknown to the
 * server or not visible to the key; or, if the project list answers 404 too before anything else
 * answered, the base URL is wrong.
 */
export async function explainMissingProject(
  client: ApiClient,
  ref: FamilyRef,
  source: SourceLocation | undefined,
  error: ServiceError<"api_error">,
): Promise<PcsyncError> {
  const { base } = client;
  if (!client.hasSucceeded() && (await reachesProjectList(client)) === false) {
    return new InputError("invalid_base_url", {
      shown: base.display,
      reason: `${error.method} ${error.path} and GET ${base.prefix}/api/projects/ both answer 404, so the service's API is not under it; check its path: it is the service's root (with the path prefix it is mounted under, if any), and pcsync adds /api/projects/... itself`,
      source: base.source,
    });
  }
  return new InputError("project_not_found", {
    project: ref.project,
    where: source === undefined ? undefined : formatSource(source),
    server: base.display,
    failure: error.message,
  });
}
