// Who may do what: resolving the bearer key, the project a path names, and the scope an operation
// needs. The order of checks follows the real service so errors come out in the same order.

import { authenticationFailed, notAuthenticated, permissionDenied, projectNotFound } from "./http-error.js";
import type { ApiKeySpec, ProfileBehaviour, ProjectData } from "./types.js";

/** Throws 401 unless the header is `Bearer <a known key>`. */
export function authenticate(header: string | undefined, keys: readonly ApiKeySpec[]): ApiKeySpec {
  const match = header === undefined ? null : /^Bearer\s+(\S+)\s*$/i.exec(header);
  const token = match?.[1];
  if (token === undefined) throw notAuthenticated();
  const key = keys.find((candidate) => candidate.key === token);
  if (!key) throw authenticationFailed();
  return key;
}

/** In id order. */
export function accessibleProjects(key: ApiKeySpec, projects: readonly ProjectData[]): ProjectData[] {
  const sorted = [...projects].sort((a, b) => a.id - b.id);
  if (key.projects === "*") return sorted;
  const allowed = new Set(key.projects);
  return sorted.filter((project) => allowed.has(project.id));
}

/**
 * Only a canonical decimal id or `@current` (the key's first listed project that exists) name a
 * project; anything else is "Project not found." rather than being decoded or interpreted.
 */
export function resolveProject(
  segment: string,
  key: ApiKeySpec,
  projects: readonly ProjectData[],
): ProjectData {
  const byId = (id: number) => projects.find((candidate) => candidate.id === id);
  let project: ProjectData | undefined;
  if (segment === "@current") {
    const ids = key.projects === "*" ? accessibleProjects(key, projects).map(({ id }) => id) : key.projects;
    project = ids.map(byId).find((found) => found !== undefined);
  } else if (/^(0|[1-9][0-9]{0,15})$/.test(segment)) project = byId(Number(segment));
  if (!project) throw projectNotFound();
  if (key.projects !== "*" && !key.projects.includes(project.id)) {
    throw permissionDenied(`API key does not have access to the requested project '${project.id}'`);
  }
  return project;
}

function scopeSatisfies(held: string, required: string): boolean {
  if (held === "*" || held === required) return true;
  // A write scope implies the read scope of the same object.
  return required.endsWith(":read") && held === `${required.slice(0, -":read".length)}:write`;
}

/** null lets any valid key in. */
export type RequiredScope = "plugin:read" | "plugin:write" | null;

export function authorizeOperation(
  operation: { scope: RequiredScope; unscoped?: true },
  key: ApiKeySpec,
  profile: ProfileBehaviour,
): void {
  if (key.scopes === null) return;
  const isWildcardKey = key.scopes.length === 1 && key.scopes[0] === "*";
  if (profile.refusesScopedKeysOnActions && operation.unscoped && !isWildcardKey) {
    throw permissionDenied("This action does not support Personal API Key access");
  }
  const required = operation.scope;
  if (required === null) return;
  if (!key.scopes.some((held) => scopeSatisfies(held, required))) {
    throw permissionDenied(`API key missing required scope '${required}'`);
  }
}
