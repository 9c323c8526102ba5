// The record that logs, job and frontend act on, as flags (`--project`, `--family`, `--config
// NAME|ID`): checked, then found (src/run/find-config-record.ts) through a client of the flags.

import type { Command } from "commander";
import type { ApiClient, PluginConfigRecord } from "../api/index.js";
import type { FamilyName } from "../families.js";
import { InputError } from "../input-error.js";
import { quoteServerText } from "../neutralise-server-text.js";
import {
  explainRefusal,
  type FoundConfigRecord,
  findConfigRecord,
  type Target,
} from "../run/find-config-record.js";
import type { CliIo } from "./cli-io.js";
import { type ConnectionFlags, createClientFromFlags } from "./connection.js";
import { familyOption } from "./shared-options.js";

export interface TargetFlags {
  project?: string;
  family?: FamilyName;
  config?: string;
}

/**
 * Checked by `readTarget`, not made required: commander reports a missing required option before an
 * unknown one, so `--projcet 1` would say "--project not specified" instead of suggesting the name.
 */
export function addTargetOptions(command: Command): Command {
  return command
    .option("--project <id>", "the project holding the config (required)")
    .addOption(
      familyOption(
        "the family of the config (default: both are searched; needed only when a name is in both)",
        { repeatable: false },
      ),
    )
    .option("--config <name|id>", "the config: its name, or its numeric id (required)");
}

export function readTarget(flags: TargetFlags): Target {
  const project = requireFlag(flags.project, "--project <id>", "--project 1");
  const config = requireFlag(flags.config, "--config <name|id>", "--config GeoIP or --config 12");
  return { project, family: flags.family, config };
}

export function requireFlag(value: string | undefined, flag: string, example: string): string {
  if (value === undefined || value.trim() === "") {
    throw new InputError("usage", `${flag} is required (e.g. ${example})`);
  }
  return value;
}

export function describeRecord(record: PluginConfigRecord): string {
  return record.name === null ? `config ${record.id}` : `${quoteServerText(record.name)} (id ${record.id})`;
}

/** A refusal of the key is explained as one of `action` (explainRefusal). */
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
