// Commander wiring: one file per command under commands/, errors mapped to exit codes here only.

import { Command, CommanderError, Option } from "commander";
import { isApiError } from "../api/service-error.js";
import { EXIT_ERROR, type ExitCode, PcsyncError } from "../errors.js";
import { COMMAND_NAMES, type CommandName, isCommandName } from "../exit-codes.js";
import { InputError } from "../input-error.js";
import { neutraliseLines } from "../neutralise-server-text.js";
import { packageVersion } from "../package-files.js";
import { SecretRegistry } from "../redact.js";
import { API_KEY_ENV, registerSecretWords } from "../run/credentials.js";
import { type CliIo, type GivenIo, withOutputEdge } from "./cli-io.js";
import { type CommandRegistrar, describeExitCodes } from "./command.js";
import { COMMANDS_HANDLING_SIGNALS, releaseEarlySignals, withoutNoColor } from "./early-signals.js";

// Each command is imported only by a run that can reach it: undici, ajv, yaml... cost more than
// Node's own start. demo runs pcsync itself, so it is handed runCli.
const COMMAND_MODULES = {
  validate: async () => (await import("./commands/validate.js")).registerValidateCommand,
  plan: async () => (await import("./commands/plan.js")).registerPlanCommand,
  apply: async () => (await import("./commands/apply.js")).registerApplyCommand,
  watch: async () => (await import("./commands/watch.js")).registerWatchCommand,
  rollback: async () => (await import("./commands/rollback.js")).registerRollbackCommand,
  export: async () => (await import("./commands/export.js")).registerExportCommand,
  show: async () => (await import("./commands/show.js")).registerShowCommand,
  demo: async () => {
    const { registerDemoCommand } = await import("./commands/demo.js");
    return (io, setExit) => registerDemoCommand(io, setExit, runCli);
  },
  serve: async () => (await import("./commands/serve.js")).registerServeCommand,
  logs: async () => (await import("./commands/logs.js")).registerLogsCommand,
  job: async () => (await import("./commands/job.js")).registerJobCommand,
  frontend: async () => (await import("./commands/frontend.js")).registerFrontendCommand,
  completion: async () => (await import("./commands/completion.js")).registerCompletionCommand,
} satisfies Record<CommandName, () => Promise<CommandRegistrar>>;

// Cached per instance of this module: every run through it keeps the same modules (and secret
// registry) even where the module registry is reset beneath it, as the in-process test CLIs do.
const loadedCommands = new Map<string, Promise<CommandRegistrar>>();

function loadCommand(name: CommandName): Promise<CommandRegistrar> {
  const registrar = loadedCommands.get(name) ?? COMMAND_MODULES[name]();
  loadedCommands.set(name, registrar);
  return registrar;
}

const VERSION_FLAGS = new Set(["-V", "--version", "-v"]);

/** These describe the whole program, so every command must be registered for them. */
const WHOLE_PROGRAM_COMMANDS = new Set(["completion", "help"]);

/**
 * Program options are read only before the command (enablePositionalOptions), so a known command
 * first decides the output alone; anything else (help, a typo to suggest for) gets every command.
 */
export function commandsReachedBy(argv: readonly string[] | undefined): readonly CommandName[] {
  const first = argv?.[0];
  if (first === undefined) return COMMAND_NAMES;
  if (VERSION_FLAGS.has(first)) return [];
  if (WHOLE_PROGRAM_COMMANDS.has(first) || !isCommandName(first)) return COMMAND_NAMES;
  return [first];
}

/** Commands that change the service: when their output fails they still finish their writes. */
const KEEP_RUNNING_WHEN_OUTPUT_LOST = new Set(["apply", "rollback", "job"]);

/** The program, with the commands that `argv` can reach (every command without `argv`). */
export async function buildProgram(
  io: CliIo,
  setExit: (code: ExitCode) => void,
  argv?: readonly string[],
): Promise<Command> {
  const program = new Command();
  program
    .name("pcsync")
    .description("Keep plugin configs equal to a YAML manifest: validate, plan, apply, export, serve.")
    .version(packageVersion(), "-V, --version", "print pcsync's version")
    .option("--no-color", "no colours in the output, on any command (as NO_COLOR=1)")
    // `-v` is every command's --verbose, never the version: before a command it is answered with
    // both meanings, not guessed.
    .enablePositionalOptions()
    .addOption(new Option("-v").hideHelp())
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
  $ pcsync apply --plan plan.json
${describeExitCodes(undefined)}`,
  );
  program.on("option:v", () => {
    throw new InputError(
      "usage",
      "-v is --verbose, an option of each command (pcsync plan -v); to print the version, run pcsync --version (or -V)",
    );
  });
  program.hook("preAction", (_program, command) => {
    if (io.edge && KEEP_RUNNING_WHEN_OUTPUT_LOST.has(command.name())) io.edge.keepRunningFor = command.name();
    if (!COMMANDS_HANDLING_SIGNALS.has(command.name())) releaseEarlySignals();
  });
  const registrars = await Promise.all(commandsReachedBy(argv).map(loadCommand));
  // Subcommands built with `new Command()` do not inherit these settings on their own.
  for (const register of registrars)
    program.addCommand(register(io, setExit, program).copyInheritedSettings(program));
  return program;
}

/** Never throws; output goes through `given.edge` (the binary's, an outer run's) or a new one. */
export async function runCli(argv: readonly string[], given: GivenIo): Promise<ExitCode> {
  const secrets = given.secrets ?? given.edge?.registry ?? new SecretRegistry();
  registerSecretWords(given.env[API_KEY_ENV] ?? "", secrets);
  const keyFlag = registerMistypedKeyFlags(argv, secrets);
  // --no-color anywhere before `--`, on every command: the same as NO_COLOR=1.
  const rest = withoutNoColor(argv);
  if (rest.length < argv.length) {
    argv = rest;
    given = { ...given, env: { ...given.env, NO_COLOR: "1" } };
  }
  const io = given.edge === undefined ? withOutputEdge({ ...given, secrets }) : { ...given, secrets };
  let exitCode: ExitCode = 0;
  try {
    if (keyFlag !== undefined)
      throw new InputError(
        "usage",
        `${keyFlag} is not an option: pcsync never takes the API key on the command line, where shell history and process lists would keep it. Set PCSYNC_API_KEY in the environment, or pass --api-key-file PATH naming a file that holds the key.`,
      );
    const program = await buildProgram(
      io,
      (code) => {
        exitCode = code;
      },
      argv,
    );
    await program.parseAsync([...argv], { from: "user" });
    return exitCode;
  } catch (error) {
    return reportError(error, io);
  } finally {
    if (given.edge === undefined) io.edge?.finish();
  }
}

/** A `--api-key KEY` value is registered as a secret, never to be printed; returns the first such flag. */
function registerMistypedKeyFlags(argv: readonly string[], secrets: SecretRegistry): string | undefined {
  let first: string | undefined;
  const end = argv.indexOf("--");
  (end === -1 ? argv : argv.slice(0, end)).forEach((arg, index) => {
    const match = /^(--?(?:api[-_]?key|token))(?:=(.*))?$/i.exec(arg);
    if (!match) return;
    first ??= match[1];
    const value = match[2] ?? argv[index + 1];
    if (value !== undefined && !value.startsWith("-")) registerSecretWords(value, secrets);
  });
  return first;
}

function reportError(error: unknown, io: CliIo): ExitCode {
  if (error instanceof CommanderError) {
    // Commander already printed its message (help, version, unknown option...).
    return error.exitCode === 0 ? 0 : EXIT_ERROR;
  }
  if (error instanceof PcsyncError) {
    // A message may quote the service (an error body, a record's name): made safe line by line.
    io.stderr.write(`pcsync: ${neutraliseLines(error.message).join("\n")}\n`);
    // The key refused (401): the hint names where pcsync reads it, which the client cannot know.
    const keyHint = isApiError(error, 401)
      ? "Check the API key (PCSYNC_API_KEY or --api-key-file)."
      : undefined;
    const hint = error.hint ?? keyHint;
    if (hint !== undefined) io.stderr.write(`hint: ${hint}\n`);
    return error.exitCode;
  }
  const message = error instanceof Error ? (error.stack ?? error.message) : String(error);
  io.stderr.write(`pcsync: internal error (please report it): ${message}\n`);
  return EXIT_ERROR;
}
