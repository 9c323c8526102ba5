// `pcsync frontend`: print the JavaScript module a site loads for a config's frontend app.

import { getFrontend } from "../../api/index.js";
import { neutraliseLines } from "../../neutralise-server-text.js";
import { type CommandRegistrar, newCommand } from "../command.js";
import { addConnectionOptions, type ConnectionFlags } from "../connection.js";
import { actOnConfigRecord, addTargetOptions, readTarget, type TargetFlags } from "../target-options.js";

export const registerFrontendCommand: CommandRegistrar = (io) => {
  const command = newCommand(
    "frontend",
    "Print the frontend module (JavaScript) of a config.",
    `
Examples:
  $ pcsync frontend --project 1 --config "Notification Bar"
  $ pcsync frontend --project 1 --config 4 > frontend.js
  $ pcsync frontend --project 1 --family pipeline_frontend_apps_configs --config Banner   # a name in both families`,
  );
  addTargetOptions(command);
  addConnectionOptions(command, "none");
  return command.action(async (flags: TargetFlags & ConnectionFlags) => {
    const target = readTarget(flags);
    // Frontend apps are that family's; posthog-2024 servers list them in plugin_configs as well.
    const searched = ["pipeline_frontend_apps_configs", "plugin_configs"] as const;
    const run = { flags, io, action: "frontend modules" };
    await actOnConfigRecord(target, searched, run, async (client, { record, family }) => {
      const source = await getFrontend(client, target.project, family, record.id);
      // Byte for byte when redirected (a file, a pipe); a terminal, or the log of a GitHub Actions
      // job, gets it made safe (neutralise-server-text.ts), and a final newline for the prompt.
      const safe = io.stdout.isTTY === true || io.env.GITHUB_ACTIONS === "true";
      io.stdout.write(safe ? `${neutraliseLines(source).join("\n").replace(/\n$/, "")}\n` : source);
    });
  });
};
