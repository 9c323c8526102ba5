// The GitHub step summary: the markdown plan (and what an apply or a rollback did), with the API key
// as [REDACTED]; the log shows the text plan, the action hands this on for the pull request's comment.

import type { ApplyReport } from "../apply/types.js";
import { appendToFile } from "../files/append-file.js";
import { describeFileError, isOutputError } from "../files/file-errors.js";
import type { Plan } from "../plan/types.js";
import { renderApplyReport } from "../render/apply-report.js";
import { type PlanNotice, renderMarkdown } from "../render/index.js";
import { type CliIo, redactForDisplay } from "./cli-io.js";

export async function appendStepSummary(
  plan: Plan,
  io: CliIo,
  title: string,
  display: {
    forced?: boolean;
    report?: ApplyReport;
    command?: "apply" | "rollback";
    /** Lines the run printed after its report (how a rollout ended). */
    after?: string;
    notices?: readonly PlanNotice[];
  } = {},
): Promise<void> {
  const summaryFile = io.env.GITHUB_STEP_SUMMARY;
  if (io.env.GITHUB_ACTIONS !== "true" || !summaryFile) return;
  const outcome =
    display.report === undefined
      ? ""
      : reportMarkdown(display.report, display.command ?? "apply", display.after ?? "");
  // The whole must fit a pull-request comment (65,536 characters), as the plan alone does.
  const markdown = `${renderMarkdown(redactForDisplay(plan, io), {
    title,
    forced: display.forced === true,
    ...(display.notices === undefined ? {} : { notices: display.notices }),
    maxChars: MARKDOWN_MAX_CHARS - outcome.length,
  })}${outcome}
`;
  const text = io.edge === undefined ? io.secrets.redact(markdown).text : io.edge.redactText(markdown);
  try {
    await appendToFile(summaryFile, text, { cwd: io.cwd });
  } catch (error) {
    // The summary is a copy for the job page: failing it must not turn a good plan or a finished
    // apply into an error, nor change --detailed-exitcode.
    const reason = isOutputError(error) ? error.facts.reason : describeFileError(error, summaryFile);
    io.stderr.write(
      `warning: could not append the plan to $GITHUB_STEP_SUMMARY (${summaryFile}): ${reason}\n`,
    );
  }
}

const MARKDOWN_MAX_CHARS = 60_000;
/** Lines of an apply's report in the summary; the log has them all. */
const REPORT_MAX_LINES = 40;

function reportMarkdown(report: ApplyReport, command: "apply" | "rollback", after: string): string {
  const chunks: string[] = [];
  renderApplyReport(report, { write: (chunk: string) => chunks.push(chunk) }, { colour: false, command });
  // The report's summary line is its last: kept when the list before it is cut.
  const shown = [...capLines(chunks.join(""), 1), ...capLines(after, 0)];
  const body = shown.map((line) => (line.length > 300 ? `${line.slice(0, 297)}...` : line)).join("\n");
  // A fence longer than any run of backticks in the text, so that nothing in it closes the block.
  const longest = [...body.matchAll(/`+/g)].reduce((most, match) => Math.max(most, match[0].length), 2);
  const fence = "`".repeat(longest + 1);
  return `\n\n#### What the ${command} did\n\n${fence}text\n${body}\n${fence}`;
}

function capLines(text: string, keepLast: number): string[] {
  const lines = text.trimEnd() === "" ? [] : text.trimEnd().split("\n");
  if (lines.length <= REPORT_MAX_LINES) return lines;
  return [
    ...lines.slice(0, REPORT_MAX_LINES - 1 - keepLast),
    `... ${lines.length - REPORT_MAX_LINES + 1} more lines in the job's log`,
    ...lines.slice(lines.length - keepLast),
  ];
}
