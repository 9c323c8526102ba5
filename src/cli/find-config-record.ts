// The record a command acts on (`--project`, `--family`, `--config NAME|ID`), shared by logs, job and
// frontend, and the hints they add to service refusals.

import { type Command, Option } from "commander";
import {
  type ApiClient,
  getConfig,
  isApiError,
  listAllConfigs,
  type PluginConfigRecord,
} from "../api/index.js";
import type { FamilyName } from "../families.js";
import { InputError } from "../input-error.js";
import { mapConcurrent } from "../map-concurrent.js";
import { quoteServerText } from "../neutralise-server-text.js";
import type { CliIo } from "./cli-io.js";
import { type ConnectionFlags, createClientFromFlags } from "./connection.js";
import { familyOption } from "./shared-options.js";

export interface TargetFlags {
  project?: string;
  family?: FamilyName;
  config?: string;
}

/** The record a command acts on, as named on the command line. */
export interface Target {
  project: string;
  /** The family given with --family; undefined: the command looks in its families. */
  family: FamilyName | undefined;
  config: string;
}

/** The record found, and the family it was found in. */
export interface FoundConfigRecord {
  record: PluginConfigRecord;
  family: FamilyName;
}

/**
 * Adds `--project`, `--config` and `--family`. They are checked by `readTarget` rather than made
 * commander's required options: commander reports a missing required option before an unknown
 * one, so `--projcet 1` would say "--project not specified" instead of suggesting the right name.
 */
export function addTargetOptions(command: Command): Command {
  return command
    .addOption(new Option("--project <id>", "the project holding the config (required)"))
    .addOption(
      familyOption(
        "the family of the config (default: both are searched; needed only when a name is in both)",
        { repeatable: false },
      ),
    )
    .addOption(new Option("--config <name|id>", "the config: its name, or its numeric id (required)"));
}

export function readTarget(flags: TargetFlags): Target {
  const project = requireFlag(flags.project, "--project <id>", "--project 1");
  const config = requireFlag(flags.config, "--config <name|id>", "--config GeoIP or --config 12");
  return { project, family: flags.family, config };
}

/** A flag the command cannot run without; `example` shows the user what to add. */
export function requireFlag(value: string | undefined, flag: string, example: string): string {
  if (value === undefined || value.trim() === "") {
    throw new InputError("usage", `${flag} is required (e.g. ${example})`);
  }
  return value;
}

const CONFIG_ID = /^\d{1,15}$/;
// Enough to recognise a typo without flooding the terminal when a family is large.
const NAMES_SHOWN = 20;

/**
 * Finds the record: a numeric `--config` is an id (checked to exist), anything else a name that
 * must match exactly one record. Without --family, every family in `searched` is looked in; where
 * one record is listed in several (posthog-2024 servers list frontend apps in plugin_configs too;
 * ids are the service's, unique across families), the first of `searched` is its family.
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
  const [onlyFamily] = inFamilies;
  if (inFamilies.length === 1 && onlyFamily !== undefined) {
    throw new InputError("config_ambiguous", {
      name: target.config,
      project: target.project,
      family: onlyFamily,
      ids,
      each: "",
    });
  }
  const each = ids
    .map((id) => {
      const where = found.matches.filter((match) => match.record.id === id).map((match) => match.family);
      return `id ${id} in ${where.join(" and ")}`;
    })
    .join(", ");
  throw new InputError("config_ambiguous", { name: target.config, project: target.project, ids, each });
}

interface Found {
  matches: FoundConfigRecord[];
  /** The families' records, when they were listed (for the names a failed lookup shows). */
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
  const lists = await mapConcurrent(families, 2, async (family) => ({
    family,
    records: await listAllConfigs(client, project, family),
  }));
  const matches = lists.flatMap(({ family, records }) =>
    records.filter((record) => record.name === name).map((record) => ({ family, record })),
  );
  return { matches, lists };
}

function describeWhere(families: readonly FamilyName[], project: string): string {
  return families.length === 1
    ? `${families[0]} of project ${project}`
    : `project ${project} (${families.join(" or ")})`;
}

function describeNames(lists: Found["lists"]): string {
  return lists
    .map(({ family, records }) => {
      const prefix = lists.length > 1 ? `${family} ` : "";
      if (records.length === 0) return `${prefix === "" ? "the family" : prefix.trim()} is empty`;
      const shown = records
        .slice(0, NAMES_SHOWN)
        .map((record) => `${record.name ?? "(no name)"} (${record.id})`);
      const more = records.length > NAMES_SHOWN ? `, and ${records.length - NAMES_SHOWN} more` : "";
      return `${prefix === "" ? "it" : prefix.trim()} has: ${shown.join(", ")}${more}`;
    })
    .join("; ");
}

export function describeRecord(record: PluginConfigRecord): string {
  return record.name === null ? `config ${record.id}` : `${quoteServerText(record.name)} (id ${record.id})`;
}

/**
 * Connects, finds the record `target` names (see findConfigRecord), and runs `act` on it; a refusal
 * of the key is explained as one of `action` (explainRefusal). The client is closed at the end.
 */
export async function actOnConfigRecord(
  target: Target,
  searched: readonly FamilyName[],
  run: { flags: ConnectionFlags; io: CliIo; action: string },
  act: (client: ApiClient, found: FoundConfigRecord) => Promise<void>,
): Promise<void> {
  const client = await createClientFromFlags(run.flags, run.io);
  try {
    await act(client, await findConfigRecord(client, target, searched));
  } catch (error) {
    throw explainRefusal(error, run.action);
  } finally {
    await client.close();
  }
}

const SCOPED_KEY_REFUSAL = "does not support Personal API Key access";

/** A refusal the bare status does not explain becomes one that says what to do; others pass as they are. */
function explainRefusal(error: unknown, action: string): unknown {
  if (isApiError(error, 403) && error.serviceError?.detail.includes(SCOPED_KEY_REFUSAL)) {
    return new InputError("scoped_key_refused", { refusal: error, action: action }, { cause: error });
  }
  return error;
}
