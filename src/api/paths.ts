// The service's paths, built for any family from src/families.ts. Ids are checked and encoded
// here, so a project or config id can never turn into another path.

import { type FamilyName, getFamily } from "../families.js";
import { InputError } from "../input-error.js";

// C0 and C1 control characters and DEL: nothing a project name contains, and header/log hazards.
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point.
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f-\u009f]/;

/** Checks a project id and encodes it as one path segment. */
export function encodeProjectId(projectId: string): string {
  const reason =
    typeof projectId !== "string" || projectId === ""
      ? "it is empty; use an id from the project listing"
      : projectId === "." || projectId === ".."
        ? "a dot segment would name another path"
        : CONTROL_CHARACTERS.test(projectId)
          ? "it contains control characters"
          : undefined;
  if (reason !== undefined)
    throw new InputError("invalid_project_id", { projectId: String(projectId), reason });
  // `@` is a legal path character and `@current` is a documented alias; keep it readable.
  return encodeURIComponent(projectId).replace(/%40/g, "@");
}

export function checkConfigId(configId: number): number {
  if (!Number.isSafeInteger(configId) || configId < 0)
    throw new InputError("invalid_config_id", { configId: configId });
  return configId;
}

export function projectsPath(): string {
  return "/api/projects/";
}

/** `/api/projects/{project}/{family}/`, with the trailing slash the service's examples use. */
export function collectionPath(projectId: string, family: FamilyName): string {
  return `/api/projects/${encodeProjectId(projectId)}/${getFamily(family).pathSegment}/`;
}

/** A record's path, or one of its sub-resources. */
export function recordPath(
  projectId: string,
  family: FamilyName,
  configId: number,
  subresource?: "frontend" | "job" | "logs",
): string {
  const base = `${collectionPath(projectId, family)}${checkConfigId(configId)}/`;
  return subresource === undefined ? base : `${base}${subresource}/`;
}

export function rearrangePath(projectId: string, family: FamilyName): string {
  return `${collectionPath(projectId, family)}rearrange/`;
}
