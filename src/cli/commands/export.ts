// `pcsync export`: write a manifest of a project's current state; planning it back shows no changes.

import { readFile } from "node:fs/promises";
import { resolve } from "node:path";
import { Command } from "commander";
import { buildManifest } from "../../export/build-manifest.js";
import { locateSecretsInExport } from "../../export/locate-secrets.js";
import { renderNewManifest, updateManifestText } from "../../export/update-manifest.js";
import { FAMILY_NAMES, type FamilyName } from "../../families.js";
import { listsToRead } from "../../family-lists.js";
import { resolveTextWith } from "../../manifest/index.js";
import { readCurrentState } from "../../read/read-current-state.js";
import type { CommandRegistrar } from "../command-registrar.js";
import { addConnectionOptions, type ConnectionFlags, createClientFromFlags } from "../connection.js";
import { addVariableOptions, loadVariablesOrThrow } from "../manifest-options.js";
import { addDeprecatedAlias, familyOption, outOption } from "../options.js";
import { EXPORT_REMEDY, refuseSecretIn, writeFileAtomic } from "../output.js";
import { requireFlag } from "../resolve-config.js";

interface ExportFlags extends ConnectionFlags {
  project?: string;
  family?: FamilyName[];
  out?: string;
  var?: string[];
  varFile?: string[];
}

export const registerExportCommand: CommandRegistrar = (program, io) => {
  const command = new Command("export")
    .description("Write a manifest of a project's current state (both families, in order).")
    // Checked in the action, not by commander, so that a mistyped flag still gets a suggestion.
    .option("--project <id>", "the project to export (required)")
    .addOption(familyOption("only this family (repeatable)", { repeatable: true }))
    .addOption(
      outOption(
        "write to this file instead of stdout; an existing manifest is updated in place, keeping its comments",
      ),
    );
  addDeprecatedAlias(command, { flags: "--output <file>", replacement: "-o/--out", attribute: "out" }, io);
  // An existing manifest's ${NAME} (a project key, a value) is matched with what plan would read.
  addVariableOptions(command);
  addConnectionOptions(command, "none");
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
    const families: readonly FamilyName[] = flags.family ?? FAMILY_NAMES;
    // Before any request: a broken var file ends the command, as it does for plan.
    const variables = await loadVariablesOrThrow(flags, io);
    const client = await createClientFromFlags(flags, io);
    try {
      // An export holds every record a family owns: the lists that also show other families'
      // records are read with theirs, to leave those out (see family-lists.ts).
      // Every listed plugin's info is read where lists leave it out (posthog-2024): buildManifest
      // leaves out a description that is the plugin's own (see read/read-family.ts).
      const toRead = listsToRead(families.map((family) => ({ project, family, wholeFamily: true })));
      const withPluginInfo = toRead.map((ref) => ({ ...ref, pluginInfoFor: "all" as const }));
      const read = (await readCurrentState(client, withPluginInfo, { concurrency: 2 })).families;
      const result = buildManifest({
        project,
        families: read.filter((item) => families.includes(item.family)),
        otherLists: read.filter((item) => !families.includes(item.family)),
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
      if (flags.out) {
        // Relative to the command's working directory, as the manifest paths are.
        const target = resolve(io.cwd, flags.out);
        const existing = await readFile(target, "utf8").catch(() => undefined);
        // An existing manifest is updated in place: its comments, layout and other projects stay.
        const text =
          existing === undefined
            ? renderNewManifest(result)
            : updateManifestText(existing, result, flags.out, {
                resolveText: resolveTextWith(variables),
                warn: (message) => io.stderr.write(`warning: ${message}\n`),
              });
        refuseSecret(text, flags.out, existing);
        await writeFileAtomic(target, text);
        io.stderr.write(
          `${existing === undefined ? "Wrote" : "Updated"} ${result.configCount} configs of project ${project} in ${flags.out}\n`,
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
