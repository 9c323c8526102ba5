// Finding the record a command acts on (`--project`, `--family`, `--config NAME|ID`) for logs, job
// and frontend: by id or by exact name, in one family or in several; and the refusal of a scoped key.

import {
  type ApiClient,
  getConfig,
  isApiError,
  listAllConfigs,
  type PluginConfigRecord,
} from "../api/index.js";
import type { FamilyName } from "../families.js";
import { familiesShownBy, idsOfOtherFamilies } from "../family-lists.js";
import { InputError } from "../input-error.js";
import { mapConcurrent } from "../map-concurrent.js";

export interface Target {
  project: string;
  /** Undefined: the command looks in its families. */
  family: FamilyName | undefined;
  config: string;
}

export interface FoundConfigRecord {
  record: PluginConfigRecord;
  family: FamilyName;
}

const CONFIG_ID = /^\d{1,15}$/;
// Enough to recognise a typo without flooding the terminal when a family is large.
const NAMES_SHOWN = 20;

/**
 * A numeric `--config` is an id, anything else a name matching exactly one record. A record listed in
 * several of `searched` (posthog-2024 lists frontend apps in plugin_configs too) is of the first.
 */
export async function findConfigRecord(
  client: ApiClient,
  target: Target,
  searched: readonly FamilyName[],
): Promise<FoundConfigRecord> {
  const families = target.family === undefined ? searched : [target.family];
  const nameOrId = target.config.trim();
  const found = CONFIG_ID.test(nameOrId)
    ? await findById(client, target.project, families, Number(nameOrId))
    : await findByName(client, target.project, families, target.config);
  const ids = [...new Set(found.matches.map((match) => match.record.id))].sort((a, b) => a - b);
  const [first] = found.matches;
  if (first !== undefined && ids.length === 1) return first;
  const where = describeWhere(families, target.project);
  if (first === undefined) {
    const list = `list them with: pcsync export --project ${target.project}${families.length === 1 ? ` --family ${families[0]}` : ""}`;
    throw new InputError(
      "config_not_found",
      CONFIG_ID.test(nameOrId)
        ? { what: `with id ${nameOrId}`, where, next: list }
        : { what: `named "${target.config}"`, where, next: describeNames(found.lists) },
    );
  }
  const inFamilies = [...new Set(found.matches.map((match) => match.family))];
  const family = inFamilies.length === 1 ? inFamilies[0] : undefined;
  const each = ids
    .map((id) => {
      const where = found.matches.filter((match) => match.record.id === id).map((match) => match.family);
      return `id ${id} in ${where.join(" and ")}`;
    })
    .join(", ");
  throw new InputError("config_ambiguous", {
    name: target.config,
    project: target.project,
    family,
    ids,
    each,
  });
}

interface Found {
  matches: FoundConfigRecord[];
  /** When listed: for the names a failed lookup shows. */
  lists: { family: FamilyName; records: PluginConfigRecord[] }[];
}

async function findById(
  client: ApiClient,
  project: string,
  families: readonly FamilyName[],
  id: number,
): Promise<Found> {
  const read = await mapConcurrent(families, 2, async (family) => {
    try {
      return { family, record: await getConfig(client, project, family, id) };
    } catch (error) {
      if (isApiError(error, 404)) return undefined;
      throw error;
    }
  });
  return { matches: read.filter((item) => item !== undefined), lists: [] };
}

async function findByName(
  client: ApiClient,
  project: string,
  families: readonly FamilyName[],
  name: string,
): Promise<Found> {
  const read = (family: FamilyName) => listAllConfigs(client, project, family);
  const lists = await mapConcurrent(families, 2, async (family) => ({ family, records: await read(family) }));
  const named = (family: FamilyName) =>
    lists.find((list) => list.family === family)?.records.filter((record) => record.name === name) ?? [];
  // A list that also shows another family's records (posthog-2024's plugin_configs) may hold the
  // name twice: the family's own is meant (the refusal says to choose with `--family`), so only then
  // the other lists are read to tell them apart. One only the other family's record holds stays found.
  const shown = new Map<FamilyName, Set<number>>();
  for (const family of families) {
    if (new Set(named(family).map((record) => record.id)).size < 2) continue;
    for (const other of familiesShownBy(family))
      if (!lists.some((list) => list.family === other))
        lists.push({ family: other, records: await read(other) });
    shown.set(family, idsOfOtherFamilies(family, lists));
  }
  const matches = families.flatMap((family) => {
    const records = named(family);
    const others = shown.get(family);
    const own = others === undefined ? records : records.filter((record) => !others.has(record.id));
    return (own.length > 0 ? own : records).map((record) => ({ family, record }));
  });
  return { matches, lists: lists.filter((list) => families.includes(list.family)) };
}

function describeWhere(families: readonly FamilyName[], project: string): string {
  return families.length === 1
    ? `${families[0]} of project ${project}`
    : `project ${project} (${families.join(" or ")})`;
}

function describeNames(lists: Found["lists"]): string {
  return lists
    .map(({ family, records }) => {
      const several = lists.length > 1;
      if (records.length === 0) return `${several ? family : "the family"} is empty`;
      const shown = records
        .slice(0, NAMES_SHOWN)
        .map((record) => `${record.name ?? "(no name)"} (${record.id})`);
      const more = records.length > NAMES_SHOWN ? `, and ${records.length - NAMES_SHOWN} more` : "";
      return `${several ? family : "it"} has: ${shown.join(", ")}${more}`;
    })
    .join("; ");
}

const SCOPED_KEY_REFUSAL = "does not support Personal API Key access";

/** A refusal the bare status does not explain becomes one that says what to do. */
export function explainRefusal(error: unknown, action: string): unknown {
  if (isApiError(error, 403) && error.serviceError?.detail.includes(SCOPED_KEY_REFUSAL)) {
    return new InputError("scoped_key_refused", { refusal: error, action: action }, { cause: error });
  }
  return error;
}
