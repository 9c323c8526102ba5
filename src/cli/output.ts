// Writing results: the plan in the chosen format, saved plan files (atomically), and the GitHub
// step summary.

import { appendFile, rename, rm, writeFile } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { Option } from "commander";
import { PcsyncError, UsageError } from "../errors.js";
import type { Plan } from "../plan/types.js";
import { renderMarkdown, renderPlan, serializePlan } from "../render/index.js";
import { type CliIo, useColour } from "./io.js";

export const FORMATS = ["text", "json", "markdown"] as const;
export type OutputFormat = (typeof FORMATS)[number];

export function formatOption(): Option {
  return new Option("--format <format>", "output format").choices(FORMATS).default("text");
}

export function parseFormat(value: string | undefined): OutputFormat {
  const format = value ?? "text";
  if (!(FORMATS as readonly string[]).includes(format)) {
    throw new UsageError(`--format must be one of ${FORMATS.join(", ")}, not "${format}"`);
  }
  return format as OutputFormat;
}

export function printPlan(plan: Plan, format: OutputFormat, io: CliIo): void {
  renderPlan(plan, format, io.stdout, { colour: useColour(io.stdout, io.env) });
}

/** A file pcsync was asked to write (--out, -o) could not be written. */
export class OutputFileError extends PcsyncError {
  constructor(path: string, error: unknown) {
    super("output_unwritable", `cannot write ${path}: ${describeFileError(error, path)}`, { cause: error });
  }
}

/** A file system error as a user can act on it, naming the path they gave, not a temporary one. */
function describeFileError(error: unknown, path: string): string {
  switch ((error as NodeJS.ErrnoException).code) {
    case "ENOENT":
    case "ENOTDIR":
      return `the directory ${dirname(path)} does not exist; create it or choose another path`;
    case "EACCES":
    case "EPERM":
    case "EROFS":
      return "permission denied; choose a path you can write to";
    case "EISDIR":
      return "it is a directory; give a file name";
    case "ENOSPC":
      return "no space left on the device";
    default:
      return error instanceof Error ? error.message : String(error);
  }
}

/** Writes a file so that a reader never sees half of it: a temporary file, then a rename. */
export async function writeFileAtomic(path: string, content: string): Promise<void> {
  const temporary = join(dirname(path), `.${basename(path)}.${process.pid}.tmp`);
  try {
    await writeFile(temporary, content, { mode: 0o600 });
    await rename(temporary, path);
  } catch (error) {
    await rm(temporary, { force: true }).catch(() => undefined);
    throw new OutputFileError(path, error);
  }
}

export async function savePlan(plan: Plan, path: string): Promise<void> {
  await writeFileAtomic(path, serializePlan(plan));
}

/** With GITHUB_ACTIONS=true, appends the markdown plan to the job's step summary. */
export async function appendStepSummary(plan: Plan, io: CliIo, title: string): Promise<void> {
  const summaryFile = io.env.GITHUB_STEP_SUMMARY;
  if (io.env.GITHUB_ACTIONS !== "true" || !summaryFile) return;
  try {
    await appendFile(summaryFile, `${renderMarkdown(plan, { title })}\n`);
  } catch (error) {
    // The summary is a copy for the job page: failing it must not turn a good plan or a finished
    // apply into an error, nor change --detailed-exitcode.
    io.stderr.write(
      `warning: could not append the plan to $GITHUB_STEP_SUMMARY (${summaryFile}): ${describeFileError(error, summaryFile)}\n`,
    );
  }
}

export function warnGuards(plan: Plan, io: CliIo, force: boolean): void {
  for (const guard of plan.guards) {
    io.stderr.write(`warning: ${force ? "--force overrides" : "apply will refuse"}: ${guard.message}\n`);
  }
}

export function hasChanges(plan: Plan): boolean {
  return plan.changes.length > 0 || plan.reorders.length > 0;
}
