// Errors the user fixes in what pcsync was given (flags, the manifest, a saved plan or journal, the API
// key, a file to write, the install itself), each with its message; every one ends a run with exit 1.

import type { ServiceError } from "./api/service-error.js";
import { describeCode, type ErrorTable, type FactsOf, PcsyncError } from "./errors.js";
import type { ManifestDiagnostic } from "./manifest/diagnostics.js";
import { plural } from "./plural.js";
import { MIN_SECRET_LENGTH, REDACTED } from "./redact.js";

/** `problem` follows the file's name as the user gave it. */
const fileProblem = ({ file, problem }: { file: string; problem: string }) => `${file} ${problem}`;

const notWritten = ({ path, reason }: { path: string; reason: string }) => `cannot write ${path}: ${reason}`;

const INPUT_CODES = {
  // -- Flags and arguments
  usage: {
    message: (text: string) => text,
  },
  // -- The manifest
  /** Every diagnostic is kept for callers to print or annotate; `message` replaces the summary. */
  manifest_invalid: {
    message: ({ diagnostics, message }: { diagnostics: readonly ManifestDiagnostic[]; message?: string }) =>
      message ?? summarizeErrors(diagnostics),
  },
  // -- A plan that cannot be made from the manifest and the server, or a saved plan file
  plan_invalid: {
    message: ({ problems }: { problems: readonly string[] }) =>
      `the plan cannot be made:\n${problems.map((problem) => `  ${problem}`).join("\n")}`,
  },
  plan_file_invalid: {
    message: fileProblem,
  },
  /** One of pcsync's own files, of another kind than the command reads (a journal given as a plan). */
  wrong_file_kind: {
    message: fileProblem,
  },
  plan_file_unreadable: {
    message: ({ file, reason }: { file: string; reason: string }) =>
      `cannot read the plan file ${file}: ${reason}`,
  },
  /** `where`: the project's place in the manifest; `failure`: the 404's own line. */
  project_not_found: {
    message: (f: { project: string; where: string | undefined; server: string; failure: string }) =>
      `project ${f.project}${f.where === undefined ? "" : ` (${f.where})`}: the server at ${f.server} does not know it, or it is not visible to this API key (${f.failure}). Check the project id, or use a key with access to project ${f.project}.`,
  },
  // -- Journals
  journal_invalid: {
    message: ({ path, line, reason }: { path: string; line: number; reason: string }) =>
      `${path}:${line}: ${reason}. The journal was not written this way by pcsync (edited or copied in part?); nothing was changed.`,
    hint: () => "use the journal exactly as the apply wrote it",
  },
  journal_unreadable: {
    message: ({ path, reason }: { path: string; reason: string; directory: string }) =>
      `cannot read the journal ${path}: ${reason}`,
    hint: ({ directory }: { directory: string }) =>
      `an apply names its journal at the end of its output; by default they are in ${directory}/`,
  },
  /** A rollout's journal handed to rollback that is not as a rollout wrote it (`message` says where). */
  rollout_journal_invalid: {
    message: ({ message }: { message: string }) =>
      `${message}. The rollout's journal was not written this way by pcsync (edited or copied in part?); nothing was changed.`,
    hint: () => "use the rollout's journal exactly as the rollout wrote it",
  },
  /** A rollout's journal handed to rollback while the rollout has not ended: finished first. */
  rollout_unfinished: {
    message: ({ path }: { path: string; journals: readonly string[] }) =>
      `${path} holds a rollout that did not end (killed, or stopped in a wave); nothing was changed`,
    hint: ({ journals }: { path: string; journals: readonly string[] }) =>
      `finish it with the same \`pcsync apply -f MANIFEST\`, then undo it with this command${journals.length === 0 ? "" : `; or undo its waves' journals yourself, newest first: ${journals.map((journal) => `\`pcsync rollback --journal ${journal}\``).join(", then ")}`}`,
  },
  journal_unwritable: {
    message: ({ path, reason }: { path: string; reason: string; rollout?: boolean }) =>
      `cannot write the journal ${path}: ${reason}`,
    // A rollout cannot go without its journal.
    hint: ({ rollout }: { rollout?: boolean }) =>
      rollout === true
        ? "give another path with --journal PATH, or leave --journal out"
        : "give another path with --journal PATH, or skip the journal with --no-journal",
  },
  /** The directory of a journal that is only read (a rollback's) takes no lock file. */
  journal_unlockable: {
    message: ({ path, reason }: { path: string; reason: string }) =>
      `cannot lock the journal ${path}: ${reason}`,
  },
  journal_would_hold_key: {
    // `intent`: apply's WriteIntent, as much of it as the message shows.
    message: ({
      intent,
    }: {
      intent: { op: string; id: number | null; name: string | null; project: string; family: string };
    }) =>
      `the ${intent.op} of ${intent.id === null ? `"${intent.name ?? "?"}"` : `record ${intent.id}`} in project ${intent.project} ${intent.family} was not sent: its journal line would hold the API key, and a journal never does`,
    hint: () => "remove the key's text from that record, or apply with --no-journal",
  },
  /** `apply --plan FILE --resume` found no journal of that plan. */
  journal_not_found: {
    message: ({ planFile, directory }: { planFile: string; directory: string }) =>
      `no journal of an apply of ${planFile} in ${directory}/. Give the interrupted apply's journal with --journal PATH.`,
  },
  // -- The API client's setup and arguments, refused before any request is sent
  /** `source`: where the base URL was given (`server.base_url at pcsync.yaml:3`), when known. */
  insecure_http: {
    message: ({ host, source }: { host: string; source?: string | undefined }) =>
      `Refusing to send the API key over plain http to ${host}${source === undefined ? "" : ` (the base URL from ${source})`}: use an https:// base URL, or pass --insecure-http if the network is trusted.`,
  },
  prometheus_credentials_missing: {
    message: ({ variable, key }: { variable: string; key: string }) =>
      `rollout.health.prometheus.${key} names the environment variable ${variable}, which is not set (or is empty): set it to the ${key === "bearer_token_env" ? "token" : "password"} Prometheus asks for; nothing was written`,
  },
  prometheus_credentials_invalid: {
    message: ({ variable, key }: { variable: string; key: string }) =>
      `rollout.health.prometheus.${key} names the environment variable ${variable}, whose value holds a line break or another control character (a trailing newline?), which no HTTP header can carry: set it to the value alone; nothing was written`,
  },
  prometheus_insecure_http: {
    message: ({ host }: { host: string }) =>
      `Refusing to send Prometheus credentials over plain http to ${host}: give rollout.health.prometheus an https:// URL, or pass --insecure-http if the network is trusted; nothing was written`,
  },
  /** The proxy variable's value may hold a password, so it is never shown. */
  invalid_proxy: {
    message: ({ variable, reason }: { variable: string; reason: string }) =>
      `The proxy in ${variable} cannot be used: ${reason}.`,
  },
  invalid_base_url: {
    message: ({ shown, reason, source }: { shown: string; reason: string; source?: string | undefined }) =>
      `Invalid base URL ${shown}${source === undefined ? "" : ` (from ${source})`}: ${reason}.`,
  },
  /** A project id that could be turned into another path. */
  invalid_project_id: {
    message: ({ projectId, reason }: { projectId: string; reason: string }) =>
      `Invalid project id ${JSON.stringify(projectId)}: ${reason}.`,
  },
  invalid_config_id: {
    message: ({ configId }: { configId: unknown }) =>
      `Invalid config id ${String(configId)}: it must be a non-negative integer.`,
  },
  /** An argument the service would reject or misread. */
  invalid_request: {
    message: ({ message }: { message: string }) => message,
  },
  logs_not_supported: {
    message: ({ family }: { family: string }) =>
      `The ${family} family has no logs endpoint; logs exist for plugin_configs only.`,
  },
  /** Its value is never shown. */
  api_key_invalid: {
    message: ({ source, reason }: { source: string; reason: string }) =>
      `The API key from ${source} ${reason}.`,
  },
  // -- A command's own inputs: the API key, targets, configs, addresses, the install
  api_key_missing: {
    message: (_: Record<string, never>) =>
      "No API key: set PCSYNC_API_KEY, or pass --api-key-file PATH naming a file that holds the key.",
  },
  /** Its content is never shown. */
  api_key_file: {
    message: ({ file, reason }: { file: string; reason: string }) => `API key file ${file}: ${reason}.`,
  },
  /** posthog-2024 servers refuse scoped keys on job, frontend and logs, whatever their scopes. */
  scoped_key_refused: {
    message: ({ refusal }: { refusal: ServiceError; action: string }) => refusal.message,
    hint: ({ action }: { action: string }) =>
      `this server (posthog-2024 generation) refuses scoped personal API keys for ${action}; use an unscoped (legacy) key or a key with the "*" scope`,
  },
  /** Output that must be written exactly (a saved plan, an export) holds the API key. */
  secret_in_output: {
    message: ({
      what,
      places,
      remedy,
      shortestSecret,
    }: {
      what: string;
      places: readonly string[];
      remedy: string;
      shortestSecret: number;
    }) => {
      const shown = places.length > 0 ? places : ["its fixed text (field names)"];
      const listed =
        shown.length > 5 ? `${shown.slice(0, 5).join("; ")}; and ${shown.length - 5} more` : shown.join("; ");
      const shortKey =
        shortestSecret > 0 && shortestSecret < MIN_SECRET_LENGTH
          ? ` The API key is only ${shortestSecret} characters long, so ordinary text contains it: use a real key.`
          : "";
      return `refusing to write ${what}: the API key's text appears in it (${listed}). It is data that pcsync reads back, so it is written exactly or not at all, and pcsync never writes the key nor replaces it with ${REDACTED} there. ${remedy}${shortKey}`;
    },
  },
  /** An empty manifest would hide why there is nothing. */
  export_no_projects: {
    message: (_: Record<string, never>) =>
      "the API key sees no project, so there is nothing to export; check that the key is given access to the projects (or use --project ID)",
  },
  /** `--templates` writes a whole fleet manifest; merging one into a manifest a person keeps is not done. */
  export_target_exists: {
    message: ({ file }: { file: string }) =>
      `${file} exists; export --templates writes a new manifest and does not update one: choose a new file, or remove ${file}`,
  },
  export_target_invalid: {
    message: fileProblem,
  },
  export_target_fleet: {
    message: ({ file, keys }: { file: string; keys: readonly string[] }) =>
      `${file} uses ${keys.join(" and ")}, which export does not update in place; export to a new file (with --templates for a compact one) and carry the differences over`,
  },
  /** `what`: `with id 5` or `named "x"`; `next`: how to find the right one. */
  config_not_found: {
    message: ({ what, where, next }: { what: string; where: string; next: string }) =>
      `no config ${what} in ${where}; ${next}`,
  },
  /** Several configs have the name: in one `family` (`ids`), or in both families (`each` says where). */
  config_ambiguous: {
    message: ({
      name,
      project,
      family,
      ids,
      each,
    }: {
      name: string;
      project: string;
      family?: string | undefined;
      ids: readonly number[];
      each: string;
    }) =>
      family !== undefined
        ? `${ids.length} configs in ${family} of project ${project} are named "${name}" (ids ${ids.join(", ")}); pass one id with --config`
        : `"${name}" names configs in both families of project ${project} (${each}); pass --family with the one you mean, or its id with --config`,
  },
  listen_failed: {
    message: ({ where, why }: { where: string; why: string }) =>
      `--listen ${where}: ${why}; choose another with --listen HOST:PORT`,
  },
  serve_listen_failed: {
    message: ({ address, code }: { address: string; code: string }) =>
      code === "EADDRINUSE"
        ? `cannot listen on ${address}: the port is in use; pick another with --port`
        : code === "ENOTFOUND" || code === "EAI_AGAIN" || code === "EAI_NONAME"
          ? `cannot listen on ${address}: no such host (${code}); give --host an address of this machine, e.g. 127.0.0.1 or 0.0.0.0`
          : `cannot listen on ${address} (${code}); check --host and --port`,
  },
  /** A module the build generates (src/precompiled.ts) is missing, cut short, or lacks a dependency. */
  build_broken: {
    message: ({ what, reason }: { what: string; reason: string }) =>
      `this copy of pcsync is broken: it cannot load ${what}, which its build compiles ahead of time (${reason}). Reinstall pcsync; in a clone of its repository, run \`npm run build\` (or \`npm ci\`).`,
  },
  emulator_data_invalid: {
    message: ({ problem, advice }: { problem: string; advice: string }) => `${problem}; ${advice}`,
  },
  // -- A file pcsync was asked to write (`-o`, the step summary, a journal): `reason` without the path
  /** The system said no. */
  output_unwritable: {
    message: notWritten,
  },
  /** Not a file pcsync may replace. */
  output_refused: {
    message: notWritten,
  },
  /** One of the files this run reads. */
  output_is_input: {
    message: notWritten,
  },
} satisfies ErrorTable;

export type InputErrorCode = keyof typeof INPUT_CODES;
export type InputFacts<Code extends InputErrorCode> = FactsOf<typeof INPUT_CODES, Code>;

export class InputError<Code extends InputErrorCode = InputErrorCode> extends PcsyncError {
  declare readonly code: Code;
  readonly facts: InputFacts<Code>;

  constructor(code: Code, facts: InputFacts<Code>, options: { cause?: unknown } = {}) {
    super(code, describeCode(INPUT_CODES, code, facts), options);
    this.facts = facts;
  }
}

/** Of one of `codes` when given. */
export function isInputError<Code extends InputErrorCode>(
  error: unknown,
  ...codes: Code[]
): error is InputError<Code> {
  return error instanceof InputError && (codes.length === 0 || (codes as string[]).includes(error.code));
}

/** "manifest invalid: 3 errors in 2 files" */
export function summarizeErrors(diagnostics: readonly ManifestDiagnostic[]): string {
  const errors = diagnostics.filter((diagnostic) => diagnostic.severity === "error");
  const files = new Set(errors.map((diagnostic) => diagnostic.file)).size;
  return `manifest invalid: ${plural(errors.length, "error")} in ${plural(files, "file")}`;
}
