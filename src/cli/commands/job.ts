// `pcsync job`: run a job (a plugin's named task) on a config and say what the service did.

import { createJob } from "../../api/index.js";
import { describeError } from "../../errors.js";
import { getFamily } from "../../families.js";
import { InputError } from "../../input-error.js";
import { neutraliseJson, quoteServerText } from "../../neutralise-server-text.js";
import { type CommandRegistrar, newCommand } from "../command.js";
import { addConnectionOptions, type ConnectionFlags } from "../connection.js";
import { addOptionAlias, formatOption, TEXT_OR_JSON, type TextOrJson } from "../shared-options.js";
import {
  actOnConfigRecord,
  addTargetOptions,
  describeRecord,
  readTarget,
  requireFlag,
  type TargetFlags,
} from "../target-options.js";

interface JobFlags extends ConnectionFlags, TargetFlags {
  type?: string;
  payload?: string;
  format: TextOrJson;
}

export function parsePayload(text: string | undefined): Record<string, unknown> {
  if (text === undefined) return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new InputError(
      "usage",
      `--payload is not valid JSON (${describeError(error)}); quote it for the shell, e.g. --payload '{"key": "value"}'`,
    );
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new InputError(
      "usage",
      `--payload must be a JSON object such as '{"key": "value"}', not ${text.trim().slice(0, 60)}`,
    );
  }
  return value as Record<string, unknown>;
}

export const registerJobCommand: CommandRegistrar = (io) => {
  const command = newCommand(
    "job",
    "Run a job on a config (a task the plugin exports).",
    `
Examples:
  $ pcsync job --project 1 --config "S3 Export" --type "Export historical events"
  $ pcsync job --project 1 --config 12 --type sync --payload '{"dateFrom": "2024-06-01"}'
  $ pcsync job --project 1 --config GeoIP --type sync --format json | jq .config.id`,
  );
  addTargetOptions(command);
  command
    .option("--type <job>", "the name of the job to run (required)")
    .option("--payload <json>", "the job's payload, a JSON object (default: {})")
    .addOption(formatOption("text, or json: one object naming the job and the record", TEXT_OR_JSON));
  // `--type` is the contract's name.
  addOptionAlias(
    command,
    { flags: "--job <name>", description: "the same as --type", attribute: "type" },
    io,
  );
  addConnectionOptions(command, "none");
  return command.action(async (flags: JobFlags) => {
    const target = readTarget(flags);
    const { project } = target;
    const type = requireFlag(flags.type, "--type <job>", '--type "Export historical events"');
    const payload = parsePayload(flags.payload);
    const searched = ["plugin_configs", "pipeline_frontend_apps_configs"] as const;
    await actOnConfigRecord(target, searched, { flags, io, action: "jobs" }, async (client, found) => {
      const { record, family } = found;
      await createJob(client, project, family, record.id, { type, payload });
      // Both profiles only queue the job (one returns the record, the other an empty body); its
      // outcome shows up in the config's logs.
      if (flags.format === "json") {
        const queued = {
          job: type,
          status: "queued",
          project,
          family,
          config: { id: record.id, name: record.name },
        };
        io.stdout.write(`${neutraliseJson(JSON.stringify(queued))}\n`);
        return;
      }
      io.stdout.write(
        `job ${quoteServerText(type)} queued for ${describeRecord(record)} in ${family} of project ${project}\n`,
      );
      if (getFamily(family).hasLogs) {
        io.stderr.write(`follow it with: pcsync logs --project ${project} --config ${record.id} --follow\n`);
      }
    });
  });
};
