// What a command cannot do as asked: no usable API key, a target it must not write, a config it
// cannot find, an address it cannot listen on. Each code with its message and what to do next.

import type { RequestError } from "./api/errors.js";
import { type FactsOf, type MessageTable, messageOf, PcsyncError } from "./errors.js";
import { MIN_SECRET_LENGTH, REDACTED } from "./redact.js";

const COMMAND_MESSAGES = {
  api_key_missing: (_: Record<string, never>) =>
    "No API key: set PCSYNC_API_KEY, or pass --api-key-file PATH naming a file that holds the key.",
  /** The key file is missing, unreadable or empty; its content is never shown. */
  api_key_file: ({ file, reason }: { file: string; reason: string }) => `API key file ${file}: ${reason}.`,
  /** posthog-2024 servers refuse scoped keys on job, frontend and logs, whatever their scopes. */
  scoped_key_refused: ({ refusal }: { refusal: RequestError; action: string }) => refusal.message,
  /**
   * Output that must be written exactly (a saved plan, a JSON plan, an export) holds the API key;
   * `places` name where, `shortestSecret` is the length of the shortest key registered.
   */
  secret_in_output: ({
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
  /** `export --all` found no project: there is nothing to write, and an empty manifest would hide why. */
  export_no_projects: (_: Record<string, never>) =>
    "the API key sees no project, so there is nothing to export; check that the key is given access to the projects (or use --project ID)",
  /** `--templates` writes a whole fleet manifest; merging one into a manifest a person keeps is not done. */
  export_target_exists: ({ file }: { file: string }) =>
    `${file} exists; export --templates writes a new manifest and does not update one: choose a new file, or remove ${file}`,
  /** The manifest export would update is not one it can update (`problem` follows the file's name). */
  export_target_invalid: ({ file, problem }: { file: string; problem: string }) => `${file} ${problem}`,
  export_target_fleet: ({ file, keys }: { file: string; keys: readonly string[] }) =>
    `${file} uses ${keys.join(" and ")}, which export does not update in place; export to a new file (with --templates for a compact one) and carry the differences over`,
  /** `what`: `with id 5` or `named "x"`; `next`: how to find the right one. */
  config_not_found: ({ what, where, next }: { what: string; where: string; next: string }) =>
    `no config ${what} in ${where}; ${next}`,
  /** Several configs have the name: in one `family` (`ids`), or in both families (`each` says where). */
  config_ambiguous: ({
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
  /** `watch --listen` could not listen (`why`: in words). */
  listen_failed: ({ where, why }: { where: string; why: string }) =>
    `--listen ${where}: ${why}; choose another with --listen HOST:PORT`,
  /** `serve` could not listen: the port is in use (EADDRINUSE), or the address cannot be had. */
  serve_listen_failed: ({ address, code }: { address: string; code: string }) =>
    code === "EADDRINUSE"
      ? `cannot listen on ${address}: the port is in use; pick another with --port`
      : code === "ENOTFOUND" || code === "EAI_AGAIN" || code === "EAI_NONAME"
        ? `cannot listen on ${address}: no such host (${code}); give --host an address of this machine, e.g. 127.0.0.1 or 0.0.0.0`
        : `cannot listen on ${address} (${code}); check --host and --port`,
  /**
   * This copy of pcsync cannot load `what`, a module its build generates (src/precompiled.ts):
   * missing, cut short, or needing a dependency the install lacks (`reason`).
   */
  build_broken: ({ what, reason }: { what: string; reason: string }) =>
    `this copy of pcsync is broken: it cannot load ${what}, which its build compiles ahead of time (${reason}). Reinstall pcsync; in a clone of its repository, run \`npm run build\` (or \`npm ci\`).`,
  /** The emulator's data file cannot be loaded. */
  emulator_data_invalid: ({ problem, advice }: { problem: string; advice: string }) =>
    `${problem}; ${advice}`,
} satisfies MessageTable;

export type CommandErrorCode = keyof typeof COMMAND_MESSAGES;

export class CommandError<Code extends CommandErrorCode = CommandErrorCode> extends PcsyncError {
  declare readonly code: Code;

  constructor(code: Code, facts: FactsOf<typeof COMMAND_MESSAGES, Code>) {
    const refusal = (facts as { refusal?: RequestError; action?: string }).refusal;
    const action = (facts as { action?: string }).action;
    super(code, messageOf(COMMAND_MESSAGES, code, facts), {
      cause: refusal,
      hint:
        refusal === undefined
          ? undefined
          : `this server (posthog-2024 generation) refuses scoped personal API keys for ${action}; use an unscoped (legacy) key or a key with the "*" scope`,
    });
  }
}
