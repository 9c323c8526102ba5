// Which family lists to read, and which of the records listed a family owns: the one home of the
// overlap of lists (a family's list that also shows another family's records, `listAlsoShows`).

import { FAMILIES, FAMILY_NAMES, type FamilyName, type FamilyRef, familyKey } from "./families.js";

/** A family list a caller needs, and what it does with the records. */
export interface ListNeed extends FamilyRef {
  /**
   * Every record the family owns is acted on (pruned, exported): the lists of the families its
   * list also shows are read too, so that their records can be left out.
   */
  wholeFamily?: boolean;
  /**
   * The family is reordered: the lists that show every record of the project are read too (see
   * `showsEveryRecord`).
   */
  reordered?: boolean;
}

/** The families whose records `family`'s list also shows (`listAlsoShows`). */
export function familiesShownBy(family: FamilyName): readonly FamilyName[] {
  return FAMILIES.find((candidate) => candidate.name === family)?.listAlsoShows ?? [];
}

/** The families whose lists also show `family`'s records (the reverse of `familiesShownBy`). */
export function familiesListing(family: FamilyName): readonly FamilyName[] {
  return FAMILY_NAMES.filter((list) => familiesShownBy(list).includes(family));
}

/** Whether `list`'s list may show records of `family`: its own, or those `listAlsoShows` names. */
export function listMayShow(list: FamilyName, family: FamilyName): boolean {
  return list === family || familiesShownBy(list).includes(family);
}

/** Families whose records no other family's list shows: their lists show every record. */
const TOP_FAMILIES: readonly FamilyName[] = FAMILY_NAMES.filter(
  (family) => !FAMILY_NAMES.some((other) => familiesShownBy(other).includes(family)),
);

/**
 * The lists to read for `needs`, each once. A need's own lists come first and in its order (callers
 * that read project by project keep a project's lists side by side); the lists only a reorder
 * needs come last.
 */
export function listsToRead(needs: readonly ListNeed[]): FamilyRef[] {
  const refs: FamilyRef[] = [];
  const seen = new Set<string>();
  const add = (project: string, family: FamilyName) => {
    const key = familyKey(project, family);
    if (seen.has(key)) return;
    seen.add(key);
    refs.push({ project, family });
  };
  for (const need of needs) {
    add(need.project, need.family);
    if (need.wholeFamily) for (const shown of familiesShownBy(need.family)) add(need.project, shown);
  }
  for (const need of needs) {
    if (need.reordered) for (const family of TOP_FAMILIES) add(need.project, family);
  }
  return refs;
}

/** Whether the lists of these families, read for one project, show every record of it. */
export function showsEveryRecord(families: readonly FamilyName[]): boolean {
  const shown = new Set(families.flatMap((family) => [family, ...familiesShownBy(family)]));
  return FAMILY_NAMES.every((family) => shown.has(family));
}

/**
 * The order in which families claim records: a family after those its list also shows, so that a
 * record listed twice goes to its own family first.
 */
export const FAMILIES_IN_CLAIM_ORDER: readonly FamilyName[] = orderForClaims();

function orderForClaims(): FamilyName[] {
  const ordered: FamilyName[] = [];
  while (ordered.length < FAMILY_NAMES.length) {
    const next = FAMILY_NAMES.filter(
      (family) =>
        !ordered.includes(family) && familiesShownBy(family).every((shown) => ordered.includes(shown)),
    );
    if (next.length === 0) throw new Error("families.ts: the lists' listAlsoShows go round in a circle");
    ordered.push(...next); // bounded-spread: at most the families of families.ts
  }
  return ordered;
}

/**
 * `idsOfOtherFamilies` of `project`'s list of `family`, from a state read that may hold the lists
 * of other projects too.
 */
export function idsOfOtherFamiliesIn(
  state: { families: readonly { project: string; family: FamilyName; records: readonly { id: number }[] }[] },
  project: string,
  family: FamilyName,
): Set<number> {
  return idsOfOtherFamilies(
    family,
    state.families.filter((list) => list.project === project),
  );
}

/**
 * Whether `lists` (one project's) hold the list of every family that `family`'s list also shows:
 * then `idsOfOtherFamilies` tells all of that list's records of other families.
 */
export function showsOtherFamiliesOf(family: FamilyName, lists: Iterable<{ family: FamilyName }>): boolean {
  const read = new Set([...lists].map((list) => list.family));
  return familiesShownBy(family).every((shown) => read.has(shown));
}

/**
 * Whether `record`, in a list that also shows other families' records (`otherIds`), is another
 * family's config than one that runs `plugin`: a config takes such a record by its name only if it
 * runs the config's plugin, or the config names none (a plugin config may share its name with a
 * frontend app). The planner claims by this rule, and a saved plan's stale check follows it.
 */
export function isAnotherFamilysConfig(
  record: { id: number; plugin: number },
  plugin: unknown,
  otherIds: ReadonlySet<number>,
): boolean {
  return otherIds.has(record.id) && typeof plugin === "number" && record.plugin !== plugin;
}

/**
 * Ids in `family`'s list that are another family's records, as far as the project's lists read
 * tell: those the lists of the families its list also shows hold.
 */
export function idsOfOtherFamilies(
  family: FamilyName,
  lists: Iterable<{ family: FamilyName; records: readonly { id: number }[] }>,
): Set<number> {
  const shown = familiesShownBy(family);
  const ids = new Set<number>();
  for (const list of lists) {
    if (shown.includes(list.family)) for (const record of list.records) ids.add(record.id);
  }
  return ids;
}
