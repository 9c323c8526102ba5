// The two families of the service as data: every family-specific difference lives here, so no
// code is copied per family.

export interface FamilyInfo {
  /** The name used in manifests, plans and on the command line. */
  readonly name: string;
  /** The path segment under /api/projects/{project_id}/. */
  readonly pathSegment: string;
  /** Whether the family publishes a logs endpoint. */
  readonly hasLogs: boolean;
  /**
   * The families whose records this family's list also shows on some servers: such a record is
   * the other family's (family-lists.ts reads and sorts the lists by this).
   */
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

/** One family of one project: what a list is read for, and what a plan groups by. */
export interface FamilyRef {
  project: string;
  family: FamilyName;
}

/** Whether an entry (a plan's change, reorder or report, a list read) is of that family of that project. */
export function ofFamily(
  project: string,
  family: string,
): (entry: { project: string; family: string }) => boolean {
  return (entry) => entry.project === project && entry.family === family;
}

/** The Map key of a family of a project; unambiguous, as no family name holds a NUL. */
export function familyKey(project: string, family: string): string {
  return `${project}\u0000${family}`;
}

export function getFamily(name: FamilyName): FamilyInfo {
  const family = FAMILIES.find((candidate) => candidate.name === name);
  if (!family) throw new Error(`unknown family ${name}`);
  return family;
}

/** The record fields a client may write; the only ones a reconciler compares. */
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
