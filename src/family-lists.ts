// Which family lists to read, and which listed records a family owns: the one home of the overlap of
// lists (a family's list that also shows another family's records, `listAlsoShows`).

import { FAMILIES, FAMILY_NAMES, type FamilyName, type FamilyRef, familyKey } from "./families.js";

export interface ListNeed extends FamilyRef {
  /** Pruned or exported: the lists its list also shows are read too, so their records can be left out. */
  wholeFamily?: boolean;
  /** The lists that show every record of the project are read too (`showsEveryRecord`). */
  reordered?: boolean;
}

export function familiesShownBy(family: FamilyName): readonly FamilyName[] {
  return FAMILIES.find((candidate) => candidate.name === family)?.listAlsoShows ?? [];
}

export function familiesListing(family: FamilyName): readonly FamilyName[] {
  return FAMILY_NAMES.filter((list) => familiesShownBy(list).includes(family));
}

export function listMayShow(list: FamilyName, family: FamilyName): boolean {
  return list === family || familiesShownBy(list).includes(family);
}

/** Families no other list shows: their lists show every record. */
const TOP_FAMILIES = FAMILY_NAMES.filter((family) => familiesListing(family).length === 0);

/** Each once, needs' own lists first in their order (a project's side by side), a reorder's last. */
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

export function showsEveryRecord(families: readonly FamilyName[]): boolean {
  const shown = new Set(families.flatMap((family) => [family, ...familiesShownBy(family)]));
  return FAMILY_NAMES.every((family) => shown.has(family));
}

/** A family after those its list also shows, so that a record listed twice goes to its own family first. */
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

/** `idsOfOtherFamilies` from a state that may hold other projects' lists too. */
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

/** Whether `idsOfOtherFamilies` can tell all of the list's records of other families. */
export function showsOtherFamiliesOf(family: FamilyName, lists: Iterable<{ family: FamilyName }>): boolean {
  const read = new Set([...lists].map((list) => list.family));
  return familiesShownBy(family).every((shown) => read.has(shown));
}

/**
 * A config takes another family's record by name only if it runs the config's plugin or the config
 * names none (a plugin config may share a frontend app's name); the planner and stale check agree.
 */
export function isAnotherFamilysConfig(
  record: { id: number; plugin: number },
  plugin: unknown,
  otherIds: ReadonlySet<number>,
): boolean {
  return otherIds.has(record.id) && typeof plugin === "number" && record.plugin !== plugin;
}

/** As far as the project's lists read tell. */
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
