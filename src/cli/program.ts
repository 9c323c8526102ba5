// Commander wiring: one file per command under commands/, errors mapped to exit codes here only.

import { Command, CommanderError, Option } from "commander";
import { ApiError } from "../api/index.js";
import { EXIT_ERROR, type ExitCode, NothingChangedError, PcsyncError, UsageError } from "../errors.js";
import { packageVersion } from "../package-files.js";
import type { CommandRegistrar } from "./command-registrar.js";
import { registerApplyCommand } from "./commands/apply.js";
import { registerCompletionCommand } from "./commands/completion.js";
import { registerDemoCommand } from "./commands/demo.js";
import { registerExportCommand } from "./commands/export.js";
import { registerFrontendCommand } from "./commands/frontend.js";
import { registerJobCommand } from "./commands/job.js";
import { registerLogsCommand } from "./commands/logs.js";
import { registerPlanCommand } from "./commands/plan.js";
import { registerServeCommand } from "./commands/serve.js";
import { registerValidateCommand } from "./commands/validate.js";
import { registerEnvironmentApiKey, registerSecretWords } from "./credentials.js";
import { type CliIo, withOutputEdge } from "./io.js";

// One entry per command; each lives in commands/<name>.ts. demo runs pcsync itself: it is handed runCli.
const registrars: CommandRegistrar[] = [
  registerValidateCommand,
  registerPlanCommand,
  registerApplyCommand,
  registerExportCommand,
  (program, io, setExit) => registerDemoCommand(program, io, setExit, runCli),
  registerServeCommand,
  registerLogsCommand,
  registerJobCommand,
  registerFrontendCommand,
  registerCompletionCommand,
];

/** Commands that change the service: when their output fails they still finish their writes. */
const KEEP_RUNNING_WHEN_OUTPUT_LOST = new Set(["apply", "job"]);

export function buildProgram(io: CliIo, setExit: (code: ExitCode) => void): Command {
  const program = new Command();
  program
    .name("pcsync")
    .description("Keep plugin configs equal to a YAML manifest: validate, plan, apply, export, serve.")
    .version(packageVersion(), "-V, --version", "print pcsync's version (also: -v)")
    // `pcsync -v` prints the version too, as `node -v` and `npm -v` do. Options of the program are
    // read only before the command, so that `pcsync plan -v` stays the command's --verbose.
    .enablePositionalOptions()
    .addOption(new Option("-v", "print pcsync's version").hideHelp())
    .showSuggestionAfterError(true)
    .showHelpAfterError("(run 'pcsync <command> --help' for usage)")
    .exitOverride()
    .configureOutput({
      writeOut: (text) => io.stdout.write(text),
      writeErr: (text) => io.stderr.write(text),
    });
  program.addHelpText(
    "after",
    `
Environment:
  PCSYNC_BASE_URL       the service's base URL (or --base-url)
  PCSYNC_API_KEY        the API key (or --api-key-file); never a flag value
  HTTPS_PROXY           proxy for https:// base URLs (HTTP_PROXY for http://); the key goes
                        only through its CONNECT tunnel, to the service
  NO_PROXY              hosts reached without the proxy: example.com (and its subdomains),
                        10.0.0.0/8, host:port, *; this machine never goes through a proxy
  NODE_EXTRA_CA_CERTS   a PEM file of extra CAs to trust: a private CA, or a proxy that inspects TLS

Examples:
  $ pcsync validate -f pcsync.yaml
  $ pcsync plan -f pcsync.yaml -o plan.json
  $ pcsync apply --plan plan.json`,
  );
  program.on("option:v", () => {
    io.stdout.write(`${packageVersion()}\n`);
    throw new CommanderError(0, "commander.version", packageVersion());
  });
  program.hook("preAction", (_program, command) => {
    if (KEEP_RUNNING_WHEN_OUTPUT_LOST.has(command.name())) io.edge?.keepRunningWhenOutputLost(command.name());
  });
  for (const register of registrars) register(program, io, setExit);
  // Subcommands built with `new Command()` do not inherit these settings on their own.
  for (const command of program.commands) command.copyInheritedSettings(program);
  return program;
}

/**
 * Runs the CLI with the given arguments and returns the exit code; never throws. Output goes
 * through `given.edge` if it has one (the binary's, or an outer run's), else through a new output
 * edge that is finished here.
 */
export async function runCli(argv: readonly string[], given: CliIo): Promise<ExitCode> {
  registerEnvironmentApiKey(given.env);
  const keyFlag = registerMistypedKeyFlags(argv);
  const io = given.edge === undefined ? withOutputEdge(given) : given;
  let exitCode: ExitCode = 0;
  const program = buildProgram(io, (code) => {
    exitCode = code;
  });
  try {
    if (keyFlag !== undefined) throw new KeyOnCommandLineError(keyFlag);
    await program.parseAsync([...argv], { from: "user" });
    return exitCode;
  } catch (error) {
    return reportError(error, io);
  } finally {
    if (given.edge === undefined) io.edge?.finish();
  }
}

/**
 * There is no key flag (a key in a command line lands in shell history and process lists), but a
 * user may try `--api-key KEY`: its value is registered as a secret, so that nothing printed later
 * shows it, and the first such flag (its name only) is returned for the error that answers it.
 */
function registerMistypedKeyFlags(argv: readonly string[]): string | undefined {
  let first: string | undefined;
  const end = argv.indexOf("--");
  (end === -1 ? argv : argv.slice(0, end)).forEach((arg, index) => {
    const match = /^(--?(?:api[-_]?key|token))(?:=(.*))?$/i.exec(arg);
    if (!match) return;
    first ??= match[1];
    const value = match[2] ?? argv[index + 1];
    if (value !== undefined && !value.startsWith("-")) registerSecretWords(value);
  });
  return first;
}

/** `--api-key` or `--token` given: the answer says how to pass the key, and never shows it. */
export class KeyOnCommandLineError extends UsageError {
  constructor(flag: string) {
    super(
      `${flag} is not an option: pcsync never takes the API key on the command line, where shell history and process lists would keep it. Set PCSYNC_API_KEY in the environment, or pass --api-key-file PATH naming a file that holds the key.`,
    );
  }
}

function reportError(error: unknown, io: CliIo): ExitCode {
  if (error instanceof CommanderError) {
    // Commander already printed its message (help, version, unknown option...).
    return error.exitCode === 0 ? 0 : EXIT_ERROR;
  }
  if (error instanceof PcsyncError) {
    io.stderr.write(`pcsync: ${error.message}\n`);
    const hint = error.hint ?? describeKeySources(error);
    if (hint !== undefined) io.stderr.write(`hint: ${hint}\n`);
    return error.exitCode;
  }
  const message = error instanceof Error ? (error.stack ?? error.message) : String(error);
  io.stderr.write(`pcsync: internal error (please report it): ${message}\n`);
  return EXIT_ERROR;
}

/** The service refused the key (401): the hint names where pcsync reads it, which the client cannot know. */
function describeKeySources(error: PcsyncError): string | undefined {
  const refusal = error instanceof NothingChangedError ? error.cause : error;
  return refusal instanceof ApiError && refusal.status === 401
    ? "Check the API key (PCSYNC_API_KEY or --api-key-file)."
    : undefined;
}
