// `pcsync frontend`: print the JavaScript module a site loads for a config's frontend app.

import { Command } from "commander";
import { getFrontend } from "../../api/index.js";
import type { CommandRegistrar } from "../command-registrar.js";
import { addConnectionOptions, type ConnectionFlags, createClientFromFlags } from "../connection.js";
import {
  addTargetOptions,
  explainRefusal,
  readTarget,
  resolveConfig,
  type TargetFlags,
} from "../resolve-config.js";

export const registerFrontendCommand: CommandRegistrar = (program, io) => {
  const command = new Command("frontend").description("Print the frontend module (JavaScript) of a config.");
  addTargetOptions(command);
  addConnectionOptions(command, "none");
  command.addHelpText(
    "after",
    `
Examples:
  $ pcsync frontend --project 1 --config "Notification Bar"
  $ pcsync frontend --project 1 --config 4 > frontend.js
  $ pcsync frontend --project 1 --family pipeline_frontend_apps_configs --config Banner   # a name in both families`,
  );
  command.action(async (flags: TargetFlags & ConnectionFlags) => {
    const target = readTarget(flags);
    const client = await createClientFromFlags(flags, io);
    try {
      // Frontend apps are that family's; posthog-2024 servers list them in plugin_configs as well.
      const { record, family } = await resolveConfig(client, target, [
        "pipeline_frontend_apps_configs",
        "plugin_configs",
      ]);
      const source = await getFrontend(client, target.project, family, record.id);
      // Byte for byte when redirected to a file; a terminal gets a final newline for its prompt.
      io.stdout.write(source);
      if (io.stdout.isTTY === true && !source.endsWith("\n")) io.stdout.write("\n");
    } catch (error) {
      throw explainRefusal(error, "frontend modules");
    } finally {
      await client.close();
    }
  });
  program.addCommand(command);
};
