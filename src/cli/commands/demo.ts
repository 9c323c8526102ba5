// `pcsync demo` (npm run demo): plans and applies examples/ against an in-process emulator with
// example data, then plans again.

import { randomBytes } from "node:crypto";
import { relative } from "node:path";
import { type Command, Option } from "commander";
import { startEmulator } from "../../emulator/index.js";
import { EXIT_ERROR, type ExitCode } from "../../errors.js";
import { findPackageFile } from "../../package-files.js";
import { parseVariableFlags } from "../../run/load-manifest.js";
import type { CliIo } from "../cli-io.js";
import { newCommand, type RunCli } from "../command.js";
import { addVariableOptions } from "../shared-options.js";

interface DemoFlags {
  profile: "seed" | "posthog-2024";
  file?: string;
  var?: string[];
  varFile?: string[];
}

/** Also takes `runCli`: the demo's steps are pcsync runs. */
export const registerDemoCommand = (
  io: CliIo,
  setExit: (code: ExitCode) => void,
  runCli: RunCli,
): Command => {
  const command = newCommand(
    "demo",
    "Try pcsync offline: plan, apply and re-plan examples/ against an in-process emulator.",
    "\nExamples:\n  $ pcsync demo --profile posthog-2024\n  $ pcsync demo -f pcsync.yaml --var-file dev.vars.yaml",
  )
    .addOption(
      new Option("--profile <profile>", "emulator profile").choices(["seed", "posthog-2024"]).default("seed"),
    )
    // No commander default: it would print `(default: "")` beside the one that means something.
    .option("-f, --file <path>", "manifest file or directory (default: the bundled examples/)");
  addVariableOptions(command);
  return command.action(async (flags: DemoFlags) => {
    const manifest = flags.file || relative(io.cwd, findPackageFile("examples")) || ".";
    // Checked before the emulator starts; the steps get the same flags in the same order.
    parseVariableFlags(flags.var);
    const variableArgs = [
      ...(flags.varFile ?? []).flatMap((file) => ["--var-file", file]),
      ...(flags.var ?? []).flatMap((assignment) => ["--var", assignment]),
    ];
    const apiKey = `phx_demo_${randomBytes(12).toString("hex")}`;
    const emulator = await startEmulator({
      profile: flags.profile,
      keys: [{ key: apiKey, scopes: null, projects: "*", label: "demo" }],
    });
    // No stdin, and --auto-approve: the demo changes only its own emulator, so it asks nothing.
    const { stdin: _unused, ...withoutStdin } = io;
    const demoIo: CliIo = {
      ...withoutStdin,
      env: { ...io.env, PCSYNC_BASE_URL: emulator.url, PCSYNC_API_KEY: apiKey },
    };
    const step = async (title: string, argv: string[]): Promise<number> => {
      // A --var value may be meant to stay private: the echoed command shows only its name.
      const shown = argv.map((arg, index) =>
        argv[index - 1] === "--var" ? `${arg.slice(0, arg.indexOf("="))}=...` : arg,
      );
      io.stdout.write(`\n\u2500\u2500 ${title}\n$ pcsync ${shown.join(" ")}\n\n`);
      return runCli(argv, demoIo);
    };
    try {
      io.stdout.write(`Emulator (profile ${flags.profile}) running at ${emulator.url} with example data.\n`);
      const manifestArgs = ["-f", manifest, ...variableArgs];
      const first = await step("1. What would change?", ["plan", ...manifestArgs]);
      const applied = await step("2. Make it so.", ["apply", "--auto-approve", ...manifestArgs]);
      const again = ["plan", ...manifestArgs, "--detailed-exitcode"];
      const second = await step("3. Plan again: nothing left to do.", again);
      if (first !== 0 || applied !== 0 || second !== 0) {
        io.stderr.write("demo: a step did not succeed (see above)\n");
        setExit(EXIT_ERROR);
      } else {
        io.stdout.write("\nDone: the second plan shows no changes.\n");
      }
    } finally {
      await emulator.close();
    }
  });
};
