// `pcsync export`: write a manifest of a project's current state; planning it back shows no changes.

import { readFile } from "node:fs/promises";
import { Command, Option } from "commander";
import { listAllConfigs } from "../../api/index.js";
import { mapConcurrent } from "../../apply/map-concurrent.js";
import { UsageError } from "../../errors.js";
import { buildManifest } from "../../export/build-manifest.js";
import { locateSecretsInExport } from "../../export/locate-secrets.js";
import { renderNewManifest, updateManifestText } from "../../export/update-manifest.js";
import { FAMILY_NAMES, type FamilyName, isFamilyName } from "../../families.js";
import { resolveTextWith } from "../../manifest/index.js";
import { addConnectionOptions, type ConnectionFlags, createClientFromFlags } from "../connection.js";
import { EXPORT_REMEDY, refuseSecretIn, writeFileAtomic } from "../output.js";
import type { CommandRegistrar } from "../program.js";
import { collect } from "../reconcile.js";
import { requireFlag } from "../resolve-config.js";
import { addVariableOptions, loadVariablesOrThrow } from "./validate.js";

interface ExportFlags extends ConnectionFlags {
  project?: string;
  family?: string[];
  output?: string;
  var?: string[];
  varFile?: string[];
}

export const registerExportCommand: CommandRegistrar = (program, io) => {
  const command = new Command("export")
    .description("Write a manifest of a project's current state (both families, in order).")
    // Checked in the action, not by commander, so that a mistyped flag still gets a suggestion.
    .option("--project <id>", "the project to export (required)")
    .addOption(new Option("--family <name>", "only this family (repeatable)").argParser(collect))
    .addOption(
      new Option(
        "-o, --output <file>",
        "write to this file instead of stdout; an existing manifest is updated in place, keeping its comments",
      ),
    );
  // An existing manifest's ${NAME} (a project key, a value) is matched with what plan would read.
  addVariableOptions(command);
  addConnectionOptions(command);
  command.addHelpText(
    "after",
    `
Examples:
  $ pcsync export --project 1 -o pcsync.yaml
  $ pcsync export --project 2 --family plugin_configs
  $ pcsync export --project 42 -o pcsync.yaml --var PROJECT_ID=42   # updates the "\${PROJECT_ID}" block`,
  );
  command.action(async (flags: ExportFlags) => {
    const project = requireFlag(flags.project, "--project <id>", "--project 1");
    const families: FamilyName[] = [];
    for (const family of flags.family ?? FAMILY_NAMES) {
      if (!isFamilyName(family))
        throw new UsageError(`unknown family "${family}": use one of ${FAMILY_NAMES.join(", ")}`);
      families.push(family);
    }
    // Before any request: a broken var file ends the command, as it does for plan.
    const variables = await loadVariablesOrThrow(flags, io);
    const client = await createClientFromFlags(flags, io);
    try {
      // Where plugin_configs also lists the frontend apps (posthog-2024), exporting it alone still
      // needs the frontend list: those records belong to the other family, not to this manifest.
      const excludeFrontend =
        families.includes("plugin_configs") && !families.includes("pipeline_frontend_apps_configs");
      const toRead: FamilyName[] = excludeFrontend
        ? [...families, "pipeline_frontend_apps_configs"]
        : families;
      const read = await mapConcurrent(toRead, 2, async (family) => ({
        family,
        records: await listAllConfigs(client, project, family),
      }));
      const frontend = read.find((item) => item.family === "pipeline_frontend_apps_configs");
      const result = buildManifest({
        project,
        families: read.filter((item) => families.includes(item.family)),
        ...(excludeFrontend && frontend
          ? { frontendIds: new Set(frontend.records.map((record) => record.id)) }
          : {}),
      });
      for (const warning of result.warnings) io.stderr.write(`warning: ${warning}\n`);
      // A manifest must plan back to what was read: written exactly, or refused if it holds the key.
      const refuseSecret = (text: string, what: string, existing?: string) =>
        refuseSecretIn(
          text,
          what,
          () => {
            const places = locateSecretsInExport(result, read);
            return places.length === 0 && existing !== undefined ? [`the text already in ${what}`] : places;
          },
          EXPORT_REMEDY,
        );
      if (flags.output) {
        const existing = await readFile(flags.output, "utf8").catch(() => undefined);
        // An existing manifest is updated in place: its comments, layout and other projects stay.
        const text =
          existing === undefined
            ? renderNewManifest(result)
            : updateManifestText(existing, result, flags.output, {
                resolveText: resolveTextWith(variables),
                warn: (message) => io.stderr.write(`warning: ${message}\n`),
              });
        refuseSecret(text, flags.output, existing);
        await writeFileAtomic(flags.output, text);
        io.stderr.write(
          `${existing === undefined ? "Wrote" : "Updated"} ${result.configCount} configs of project ${project} in ${flags.output}\n`,
        );
      } else {
        const text = renderNewManifest(result);
        refuseSecret(text, "the exported manifest");
        io.stdout.write(text);
      }
    } finally {
      await client.close();
    }
  });
  program.addCommand(command);
};
