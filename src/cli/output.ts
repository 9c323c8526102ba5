// Writing results: the plan in the chosen format, saved plan files (atomically), and the GitHub
// step summary.

import { appendFile, rename, writeFile } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { Option } from "commander";
import { UsageError } from "../errors.js";
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

/** Writes a file so that a reader never sees half of it: a temporary file, then a rename. */
export async function writeFileAtomic(path: string, content: string): Promise<void> {
  const temporary = join(dirname(path), `.${basename(path)}.${process.pid}.tmp`);
  await writeFile(temporary, content, { mode: 0o600 });
  await rename(temporary, path);
}

export async function savePlan(plan: Plan, path: string): Promise<void> {
  await writeFileAtomic(path, serializePlan(plan));
}

/** With GITHUB_ACTIONS=true, appends the markdown plan to the job's step summary. */
export async function appendStepSummary(plan: Plan, io: CliIo, title: string): Promise<void> {
  const summaryFile = io.env.GITHUB_STEP_SUMMARY;
  if (io.env.GITHUB_ACTIONS !== "true" || !summaryFile) return;
  await appendFile(summaryFile, `${renderMarkdown(plan, { title })}\n`);
}

export function warnGuards(plan: Plan, io: CliIo, force: boolean): void {
  for (const guard of plan.guards) {
    io.stderr.write(`warning: ${force ? "--force overrides" : "apply will refuse"}: ${guard.message}\n`);
  }
}

export function hasChanges(plan: Plan): boolean {
  return plan.changes.length > 0 || plan.reorders.length > 0;
}
