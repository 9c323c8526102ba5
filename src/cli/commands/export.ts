// `pcsync export`: write a manifest of projects' current state; planning it back shows no changes.

import { readFile } from "node:fs/promises";
import { parseManifestTarget } from "../../export/manifest-target.js";
import { FAMILY_NAMES, type FamilyName } from "../../families.js";
import { outputUnwritable } from "../../files/file-errors.js";
import { resolveOutputTarget } from "../../files/output-target.js";
import { writeFileSafely } from "../../files/write-file.js";
import { InputError } from "../../input-error.js";
import { resolveTextWith } from "../../manifest/index.js";
import { neutraliseInline } from "../../neutralise-server-text.js";
import { plural } from "../../plural.js";
import {
  exportManifestText,
  locateSecretsInRead,
  ownerWarning,
  readExport,
  updateExportedManifest,
} from "../../run/export-manifest.js";
import { loadVariablesOrThrow, type ManifestInput, runInputs } from "../../run/load-manifest.js";
import { type CommandRegistrar, newCommand } from "../command.js";
import {
  addConnectionOptions,
  type ConnectionFlags,
  concurrencyOf,
  createClientFromFlags,
} from "../connection.js";
import { refuseSecretIn } from "../print-plan.js";
import { addOptionAlias, addVariableOptions, collect, familyOption, outOption } from "../shared-options.js";
import { requireFlag } from "../target-options.js";

const EXPORT_REMEDY =
  "If the service puts the key's text into these records, fix them there; `pcsync plan` shows them with the key as [REDACTED].";

interface ExportFlags extends ConnectionFlags, Pick<ManifestInput, "var" | "varFile"> {
  project?: string[];
  all?: boolean;
  templates?: boolean;
  family?: FamilyName[];
  out?: string;
}

/** Undefined if there is none yet; one it cannot read is an error. */
async function readExisting(path: string, shown: string): Promise<string | undefined> {
  try {
    return await readFile(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw outputUnwritable(shown, error);
  }
}

export const registerExportCommand: CommandRegistrar = (io) => {
  const command = newCommand(
    "export",
    "Write a manifest of projects' current state (both families, in order).",
    `
Examples:
  $ pcsync export --project 1 -o pcsync.yaml
  $ pcsync export --project 2 --family plugin_configs
  $ pcsync export --all --templates -o fleet.yaml   # shared configs written once, as templates
  $ pcsync export --project 42 -o pcsync.yaml --var PROJECT_ID=42   # updates the "\${PROJECT_ID}" block`,
  )
    // Checked in the action, not by commander, so that a mistyped flag still gets a suggestion.
    .option("--project <id>", "a project to export (repeatable; or --all)", collect)
    .option("--all", "export every project the API key can see")
    .option("--templates", "write configs that projects share once, as templates the projects use")
    .addOption(familyOption("only this family (repeatable)", { repeatable: true }))
    .addOption(
      outOption(
        "write to this file instead of stdout (- is stdout); an existing manifest is updated in place, keeping its comments",
      ),
    );
  addOptionAlias(command, { flags: "--output <file>", replacement: "-o/--out", attribute: "out" }, io);
  // An existing manifest's ${NAME} (a project key, a value) is matched with what plan would read.
  addVariableOptions(command);
  addConnectionOptions(command, "none");
  return command.action(async (given: ExportFlags) => {
    // `-o -` is standard output, as with curl and tar: what export writes without -o.
    const { out, ...rest } = given;
    const flags: ExportFlags = out === "-" ? rest : given;
    if (!flags.all && flags.project === undefined) {
      throw new InputError("usage", "--project <id> or --all is required (e.g. --project 1)");
    }
    if (flags.all && flags.project !== undefined) {
      throw new InputError(
        "usage",
        "give either --all or --project <id>, not both (--all already exports every project)",
      );
    }
    const projects = (flags.project ?? []).map((project) =>
      requireFlag(project, "--project <id>", "--project 1"),
    );
    // Before any request: a broken var file ends the command, as it does for plan.
    const variables = await loadVariablesOrThrow(flags, io);
    // Before any request: an output pcsync may not write, and --templates does not merge into a
    // manifest someone keeps. Relative to the command's working directory, as the manifest paths are.
    const outputOptions = { cwd: io.cwd, inputs: runInputs(flags, { manifests: false }) };
    const output = flags.out === undefined ? undefined : await resolveOutputTarget(flags.out, outputOptions);
    if (flags.templates && flags.out && output?.kind === "file" && output.existing !== undefined) {
      throw new InputError("export_target_exists", { file: flags.out });
    }
    // Before any request too: a file that is not a pcsync manifest (a compose file) is refused.
    // Only a regular file is updated in place: a device or a descriptor is written to.
    const existing =
      flags.out && output?.kind === "file" ? await readExisting(output.path, flags.out) : undefined;
    if (flags.out && existing !== undefined) parseManifestTarget(existing, flags.out);
    const client = await createClientFromFlags(flags, io);
    try {
      const exported = await readExport(client, {
        projects: flags.all ? "all" : projects,
        families: flags.family ?? FAMILY_NAMES,
        templates: flags.templates === true,
        concurrency: concurrencyOf(flags),
      });
      for (const result of exported.results) {
        const about = exported.projects.length === 1 ? "" : `project ${result.project}: `;
        // A warning may quote a record's name: server text, shown on one line, every character visible.
        for (const warning of result.warnings)
          io.stderr.write(`warning: ${about}${neutraliseInline(warning)}\n`);
      }
      const { factored } = exported;
      const owners = ownerWarning(
        exported,
        existing === undefined
          ? undefined
          : { text: existing, file: flags.out ?? "", resolveText: resolveTextWith(variables) },
      );
      if (owners !== undefined) io.stderr.write(`warning: ${neutraliseInline(owners)}\n`);
      // A manifest must plan back to what was read: written exactly, or refused if it holds the key.
      const refuseSecret = (text: string, what: string, existing?: string) =>
        refuseSecretIn(
          text,
          what,
          () => {
            const places = locateSecretsInRead(exported, io.secrets);
            return places.length === 0 && existing !== undefined ? [`the text already in ${what}`] : places;
          },
          EXPORT_REMEDY,
          io.secrets,
        );
      if (flags.out && output) {
        const file = flags.out;
        if (existing !== undefined && factored) throw new InputError("export_target_exists", { file });
        // Printed (a device or FIFO given to -o), server text is escaped: the same data.
        const text =
          existing === undefined
            ? exportManifestText(exported, output.kind === "file" ? "file" : "display")
            : updateExportedManifest(exported, existing, file, {
                resolveText: resolveTextWith(variables),
                warn: (message) => io.stderr.write(`warning: ${neutraliseInline(message)}\n`),
              });
        refuseSecret(text, file, existing);
        await writeFileSafely(file, text, outputOptions);
        const configCount = exported.results
          .flatMap((result) => result.families)
          .reduce((total, family) => total + family.configs.length, 0);
        const { projects } = exported;
        const what = projects.length === 1 ? `project ${projects[0]}` : `${projects.length} projects`;
        const templates = factored?.templates.length;
        const shared = templates === undefined ? "" : ` (${plural(templates, "template")})`;
        io.stderr.write(
          `${existing === undefined ? "Wrote" : "Updated"} ${plural(configCount, "config")} of ${what} in ${file}${shared}\n`,
        );
      } else {
        const text = exportManifestText(exported, "display");
        refuseSecret(text, "the exported manifest");
        io.stdout.write(text);
      }
    } finally {
      await client.close();
    }
  });
};
