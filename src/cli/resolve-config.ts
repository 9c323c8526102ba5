// The record a command acts on (`--project`, `--family`, `--config NAME|ID`), shared by logs, job and
// frontend, and the hints they add to service refusals.

import { type Command, Option } from "commander";
import {
  type ApiClient,
  ApiError,
  getConfig,
  listAllConfigs,
  type PluginConfigRecord,
} from "../api/index.js";
import { PcsyncError, UsageError } from "../errors.js";
import { FAMILY_NAMES, type FamilyName, isFamilyName } from "../families.js";

export interface TargetFlags {
  project?: string;
  family?: string;
  config?: string;
}

/** The record a command acts on, as named on the command line. */
export interface Target {
  project: string;
  family: FamilyName;
  config: string;
}

export const DEFAULT_FAMILY: FamilyName = "plugin_configs";

/**
 * Adds `--project`, `--config` and `--family`. They are checked by `readTarget` rather than made
 * commander's required options: commander reports a missing required option before an unknown
 * one, so `--projcet 1` would say "--project not specified" instead of suggesting the right name.
 */
export function addTargetOptions(command: Command): Command {
  return command
    .addOption(new Option("--project <id>", "the project holding the config (required)"))
    .addOption(
      new Option("--family <name>", "the family of the config").choices(FAMILY_NAMES).default(DEFAULT_FAMILY),
    )
    .addOption(new Option("--config <name|id>", "the config: its name, or its numeric id (required)"));
}

export function readTarget(flags: TargetFlags): Target {
  const project = requireFlag(flags.project, "--project <id>", "--project 1");
  const config = requireFlag(flags.config, "--config <name|id>", "--config GeoIP or --config 12");
  return { project, family: parseFamilyFlag(flags.family), config };
}

/** A flag the command cannot run without; `example` shows the user what to add. */
export function requireFlag(value: string | undefined, flag: string, example: string): string {
  if (value === undefined || value.trim() === "") {
    throw new UsageError(`${flag} is required (e.g. ${example})`);
  }
  return value;
}

export function parseFamilyFlag(value: string | undefined): FamilyName {
  const family = value ?? DEFAULT_FAMILY;
  if (!isFamilyName(family)) {
    throw new UsageError(`unknown family "${family}": use one of ${FAMILY_NAMES.join(", ")}`);
  }
  return family;
}

const CONFIG_ID = /^\d{1,15}$/;
// Enough to recognise a typo without flooding the terminal when a family is large.
const NAMES_SHOWN = 20;

/**
 * Finds the record: a numeric `--config` is an id (checked to exist in the family), anything else a
 * name that must match exactly one listed record.
 */
export async function resolveConfig(client: ApiClient, target: Target): Promise<PluginConfigRecord> {
  const { project: projectId, family, config: nameOrId } = target;
  const where = `${family} of project ${projectId}`;
  if (CONFIG_ID.test(nameOrId.trim())) {
    const id = Number(nameOrId.trim());
    try {
      return await getConfig(client, projectId, family, id);
    } catch (error) {
      if (error instanceof ApiError && error.status === 404) {
        throw new PcsyncError(
          "config_not_found",
          `no config with id ${id} in ${where}; list them with: pcsync export --project ${projectId} --family ${family}`,
        );
      }
      throw error;
    }
  }
  const records = await listAllConfigs(client, projectId, family);
  const matches = records.filter((record) => record.name === nameOrId);
  const [only] = matches;
  if (only !== undefined && matches.length === 1) return only;
  if (matches.length > 1) {
    const ids = matches.map((record) => record.id).join(", ");
    throw new PcsyncError(
      "config_ambiguous",
      `${matches.length} configs in ${where} are named "${nameOrId}" (ids ${ids}); pass one id with --config`,
    );
  }
  throw new PcsyncError(
    "config_not_found",
    `no config named "${nameOrId}" in ${where}; ${describeNames(records)}`,
  );
}

function describeNames(records: readonly PluginConfigRecord[]): string {
  if (records.length === 0) return "the family is empty";
  const shown = records.slice(0, NAMES_SHOWN).map((record) => `${record.name ?? "(no name)"} (${record.id})`);
  const more = records.length > NAMES_SHOWN ? `, and ${records.length - NAMES_SHOWN} more` : "";
  return `it has: ${shown.join(", ")}${more}`;
}

export function describeRecord(record: PluginConfigRecord): string {
  return record.name === null ? `config ${record.id}` : `"${record.name}" (id ${record.id})`;
}

const SCOPED_KEY_REFUSAL = "does not support Personal API Key access";

/**
 * Adds what to do to a refusal the bare status does not explain: posthog-2024 servers refuse
 * scoped keys on job and frontend whatever their scopes.
 */
export function explainRefusal(error: unknown, action: string): unknown {
  if (!(error instanceof ApiError)) return error;
  if (error.status === 403 && error.serviceError?.detail.includes(SCOPED_KEY_REFUSAL)) {
    return new PcsyncError(
      "scoped_key_refused",
      `${error.message}\nhint: this server (posthog-2024 generation) refuses scoped personal API keys for ${action}; use an unscoped (legacy) key or a key with the "*" scope`,
      { cause: error },
    );
  }
  const { hint } = error;
  return hint === undefined
    ? error
    : new PcsyncError(error.code, `${error.message}\nhint: ${hint}`, { cause: error });
}
