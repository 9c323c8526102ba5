// Writing results: the plan in the chosen format, saved plan files (atomically), and the GitHub
// step summary. Human-readable output shows the API key as [REDACTED]; documents that are read
// back (saved plans, JSON plans, exports) are written exactly, or refused if they hold the key.

import type { ApplyReport } from "../apply/types.js";
import { CommandError } from "../command-error.js";
import { appendToFile } from "../files/append-file.js";
import { describeFileError, OutputFileError } from "../files/file-errors.js";
import { describeDevice, type RunInput } from "../files/output-target.js";
import { writeFileSafely } from "../files/write-file.js";
import { locateSecretsInPlan, serializePlan } from "../plan/plan-file.js";
import { isForceable } from "../plan/safety-guards.js";
import type { Plan } from "../plan/types.js";
import { locateSecrets, REDACTED, redactDeep, type SecretRegistry } from "../redact.js";
import { renderApplyReport } from "../render/apply-report.js";
import { describeOverriddenGuard } from "../render/guard-message.js";
import { renderMarkdown, renderPlan } from "../render/index.js";
import { neutraliseJson } from "../server-text.js";
import { type CliIo, useColour } from "./io.js";
import type { OutputFormat } from "./options.js";

/** A copy of `value` with the API key redacted, for a renderer that cuts or diffs long strings. */
function forDisplay<T>(value: T, io: CliIo): T {
  return io.edge === undefined ? redactDeep(value, io.secrets).value : io.edge.redactForDisplay(value);
}

/**
 * `verbose`: each order tie in full (else one warning of at most two lines for them all).
 * `forced`: the plan is applied with --force, so its guards are shown as overridden.
 */
export function printPlan(
  plan: Plan,
  format: OutputFormat,
  io: CliIo,
  options: { forced?: boolean; verbose?: boolean } = {},
): void {
  if (format === "json") {
    io.stdout.write(planDocument(plan, "the JSON plan", io.secrets));
    return;
  }
  renderPlan(forDisplay(plan, io), format, io.stdout, {
    colour: useColour(io.stdout, io.env),
    forced: options.forced === true,
    verbose: options.verbose === true,
  });
}

const PLAN_REMEDY =
  "If the service puts the key's text into these records, fix them there; to look at the plan, use --format text or markdown, which show the key as [REDACTED].";

/** Throws a secret_in_output error if `text`, a document written exactly, holds the API key in any form. */
export function refuseSecretIn(
  text: string,
  what: string,
  locate: () => readonly string[],
  remedy: string,
  secrets: SecretRegistry,
): void {
  if (secrets.contains(text))
    throw new CommandError("secret_in_output", {
      what: what,
      places: locate(),
      remedy: remedy,
      shortestSecret: secrets.shortestSecretLength,
    });
}

export const EXPORT_REMEDY =
  "If the service puts the key's text into these records, fix them there; `pcsync plan` shows them with the key as [REDACTED].";

/** The plan as a JSON document, refused if it would hold the API key. */
function planDocument(plan: Plan, what: string, secrets: SecretRegistry): string {
  const text = serializePlan(plan);
  refuseSecretIn(text, what, () => locateSecretsInPlan(plan, secrets), PLAN_REMEDY, secrets);
  return text;
}

/** Refuses, before anything is changed, a plan that `--format json` could not print. */
export function checkPlanPrintableAsJson(plan: Plan, secrets: SecretRegistry): void {
  refuseSecretIn(
    serializePlan(plan),
    "the JSON output",
    () => locateSecretsInPlan(plan, secrets),
    `${PLAN_REMEDY} Nothing was changed.`,
    secrets,
  );
}

/** `apply --format json`: the plan and what became of it, as one document, never altered. */
export function printApplyJson(plan: Plan, result: ApplyReport | null, io: CliIo): void {
  const text = `${neutraliseJson(JSON.stringify({ plan, result }, null, 2))}\n`;
  const locate = () => {
    const places = locateSecrets(result, io.secrets).map((path) => {
      const outcome =
        path[0] === "outcomes" && typeof path[1] === "number" ? result?.outcomes[path[1]] : undefined;
      if (outcome === undefined) return "the apply result";
      const record =
        outcome.id === null ? `the ${outcome.action} from ${outcome.source}` : `record ${outcome.id}`;
      return `the outcome of project ${outcome.project} ${outcome.family} ${record}, field ${String(path[2])}`;
    });
    return [...new Set([...locateSecretsInPlan(plan, io.secrets), ...places])];
  };
  refuseSecretIn(
    text,
    "the JSON result of this apply",
    locate,
    `The apply itself ran to the end${result === null ? "" : ` (${result.done} done, ${result.failed} failed, ${result.skipped} skipped)`}; run \`pcsync plan\` to see the state, or apply with --format text, which shows the key as ${REDACTED}.`,
    io.secrets,
  );
  io.stdout.write(text);
}

/**
 * Saves the plan for `apply --plan` (see writeFileSafely: 0600, atomic, never over a device or one
 * of `inputs`). Returns the sentence that says where it went.
 */
export async function savePlan(
  plan: Plan,
  path: string,
  options: { cwd: string; inputs: readonly RunInput[]; secrets: SecretRegistry },
): Promise<string> {
  const target = await writeFileSafely(
    path,
    planDocument(plan, `the plan file ${path}`, options.secrets),
    options,
  );
  return target.kind === "file"
    ? `Saved the plan to ${path}; apply it with: pcsync apply --plan ${path}`
    : `Wrote the plan to ${path} (${describeDevice(target.device)}); to apply it later, save it to a file with -o FILE`;
}

/**
 * With GITHUB_ACTIONS=true, appends the markdown plan to the job's step summary (and, after an
 * apply, what it did): text for people, so the API key is shown as [REDACTED]. The summary is a
 * regular file, and private (0600) where this user may make it so (see appendToFile). The log
 * shows the text plan; the action hands this markdown on for the pull request's comment.
 */
export async function appendStepSummary(
  plan: Plan,
  io: CliIo,
  title: string,
  display: { forced?: boolean; report?: ApplyReport; command?: "apply" | "rollback" } = {},
): Promise<void> {
  const summaryFile = io.env.GITHUB_STEP_SUMMARY;
  if (io.env.GITHUB_ACTIONS !== "true" || !summaryFile) return;
  const outcome =
    display.report === undefined ? "" : reportMarkdown(display.report, display.command ?? "apply");
  // The whole must fit a pull-request comment (65,536 characters), as the plan alone does.
  const markdown = `${renderMarkdown(forDisplay(plan, io), {
    title,
    forced: display.forced === true,
    maxChars: MARKDOWN_MAX_CHARS - outcome.length,
  })}${outcome}
`;
  const text = io.edge === undefined ? io.secrets.redact(markdown).text : io.edge.redactText(markdown);
  try {
    await appendToFile(summaryFile, text, { cwd: io.cwd });
  } catch (error) {
    // The summary is a copy for the job page: failing it must not turn a good plan or a finished
    // apply into an error, nor change --detailed-exitcode.
    const reason = error instanceof OutputFileError ? error.reason : describeFileError(error, summaryFile);
    io.stderr.write(
      `warning: could not append the plan to $GITHUB_STEP_SUMMARY (${summaryFile}): ${reason}\n`,
    );
  }
}

const MARKDOWN_MAX_CHARS = 60_000;
/** Lines of an apply's report in the summary; the log has them all. */
const REPORT_MAX_LINES = 40;

/** What an apply or a rollback did, as its log says it, in a code block under the plan. */
function reportMarkdown(report: ApplyReport, command: "apply" | "rollback"): string {
  let text = "";
  renderApplyReport(
    report,
    {
      write: (chunk: string) => {
        text += chunk;
      },
    },
    { colour: false, command },
  );
  const lines = text.trimEnd().split("\n");
  // The summary line is the last: keep it when the list before it is cut.
  const shown =
    lines.length <= REPORT_MAX_LINES
      ? lines
      : [
          ...lines.slice(0, REPORT_MAX_LINES - 2),
          `... ${lines.length - REPORT_MAX_LINES + 1} more lines in the job's log`,
          ...lines.slice(-1),
        ];
  const body = shown.map((line) => (line.length > 300 ? `${line.slice(0, 297)}...` : line)).join("\n");
  // A fence longer than any run of backticks in the text, so that nothing in it closes the block.
  const longest = [...body.matchAll(/`+/g)].reduce((most, match) => Math.max(most, match[0].length), 2);
  const fence = "`".repeat(longest + 1);
  return `\n\n#### What the ${command} did\n\n${fence}text\n${body}\n${fence}`;
}

export function warnGuards(plan: Plan, io: CliIo, force: boolean): void {
  for (const guard of plan.guards) {
    const overridden = force && isForceable(guard.rule);
    const message = overridden ? describeOverriddenGuard(guard) : guard.message;
    io.stderr.write(`warning: ${overridden ? "--force overrides" : "apply will refuse"}: ${message}\n`);
  }
}

export function hasChanges(plan: Plan): boolean {
  return plan.changes.length > 0 || plan.reorders.length > 0;
}
