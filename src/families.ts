// The two families of the service as data: every family-specific difference lives here, so no
// code is copied per family.

export interface FamilyInfo {
  readonly name: string;
  /** Under /api/projects/{project_id}/. */
  readonly pathSegment: string;
  readonly hasLogs: boolean;
  /** Families whose records this list also shows on some servers; they stay theirs (family-lists.ts). */
  readonly listAlsoShows: readonly string[];
}

export const FAMILIES = [
  {
    name: "plugin_configs",
    pathSegment: "plugin_configs",
    hasLogs: true,
    // posthog-2024 lists the frontend apps in plugin_configs as well.
    listAlsoShows: ["pipeline_frontend_apps_configs"],
  },
  {
    name: "pipeline_frontend_apps_configs",
    pathSegment: "pipeline_frontend_apps_configs",
    hasLogs: false,
    listAlsoShows: [],
  },
] as const satisfies readonly FamilyInfo[];

export type FamilyName = (typeof FAMILIES)[number]["name"];

export const FAMILY_NAMES: readonly FamilyName[] = FAMILIES.map((family) => family.name);

export function isFamilyName(value: string): value is FamilyName {
  return (FAMILY_NAMES as readonly string[]).includes(value);
}

export interface FamilyRef {
  project: string;
  family: FamilyName;
}

export function ofFamily(
  project: string,
  family: string,
): (entry: { project: string; family: string }) => boolean {
  return (entry) => entry.project === project && entry.family === family;
}

/** Unambiguous, as no family name holds a NUL. */
export function familyKey(project: string, family: string): string {
  return `${project}\u0000${family}`;
}

export function getFamily(name: FamilyName): FamilyInfo {
  const family = FAMILIES.find((candidate) => candidate.name === name);
  if (!family) throw new Error(`unknown family ${name}`);
  return family;
}

/** The only fields a reconciler compares. */
export const WRITABLE_FIELDS = [
  "plugin",
  "enabled",
  "order",
  "name",
  "description",
  "deleted",
  "match_action",
] as const;

export type WritableField = (typeof WRITABLE_FIELDS)[number];
