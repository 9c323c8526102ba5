// How an apply ends when it does not carry out the whole plan: incomplete, interrupted by a signal,
// or not approved. Each says what was done and what to do next. (Refusals are RefusedError.)

import {
  EXIT_ERROR,
  type ExitCode,
  type FactsOf,
  type InterruptSignal,
  type MessageTable,
  messageOf,
  PcsyncError,
  SIGNAL_EXIT_CODES,
} from "../errors.js";
import type { ApplyReport } from "./types.js";

export const APPLY_CANCELLED = "Apply cancelled; nothing was changed.";

/** What a run that applies a plan is, in its errors: `apply`, or `rollback` (with its journal). */
export interface RunWords {
  command: "apply" | "rollback";
  /** The command that carries on where the run stopped. */
  again: string;
}

const APPLY_WORDS: RunWords = { command: "apply", again: "run apply again" };

/** The run's journal lines (describeJournalNext), last: what to run next is where the eye ends. */
function endingWith(journal: string | undefined): string {
  return journal === undefined ? "" : `\n${journal.trimEnd()}`;
}

const APPLY_MESSAGES = {
  apply_incomplete: ({
    report,
    words = APPLY_WORDS,
    journal,
  }: {
    report: ApplyReport;
    words?: RunWords;
    journal?: string | undefined;
  }) => {
    const unknown = report.unknown > 0 ? `${report.unknown} unknown, ` : "";
    const unchecked = report.unchecked > 0 ? `, ${report.unchecked} unchecked` : "";
    const settle =
      report.unknown > 0 || report.unchecked > 0
        ? " Run `pcsync plan` first to see what the server holds where this run could not tell."
        : "";
    return `${words.command} incomplete: ${report.failed} failed, ${report.skipped} skipped, ${unknown}${report.done} done${unchecked}. Fix the errors above and ${words.again}; it continues from where this run stopped.${settle}${endingWith(journal)}`;
  },
  /** Stopped by SIGINT or SIGTERM: the summary above says what was done and what was not started. */
  interrupted: ({
    report,
    signal,
    words = APPLY_WORDS,
    journal,
  }: {
    report: ApplyReport;
    signal: InterruptSignal;
    words?: RunWords;
    journal?: string | undefined;
  }) => {
    const notStarted = report.outcomes.filter((outcome) => outcome.notStarted === true).length;
    const unknown = report.unknown > 0 ? `, ${report.unknown} unknown` : "";
    const next =
      words.command === "apply"
        ? "Run `pcsync plan` to see what is left, then apply again to finish"
        : `To finish, ${words.again}`;
    return `${words.command} interrupted by ${signal}: ${report.done} done, ${notStarted} not started, ${report.failed} failed${unknown}. ${next}.${endingWith(journal)}`;
  },
  /** The user answered something other than `yes`, or closed stdin: exit 1, as Terraform does. */
  apply_cancelled: (_: Record<string, never>) => APPLY_CANCELLED,
  /**
   * No terminal to ask on and no --auto-approve: refused before anything is read, as Terraform
   * does, so that a cron job or `ssh host pcsync apply` never writes unapproved.
   */
  approval_required: ({ command }: { command: "apply" | "rollback" }) =>
    command === "apply"
      ? "apply needs approval, and stdin is not a terminal to ask on. Run it on a terminal and answer `yes`, add --auto-approve (for CI and scripts), or save a plan with `pcsync plan --out FILE` and apply it with `pcsync apply --plan FILE`. Nothing was read or changed."
      : "rollback needs approval, and stdin is not a terminal to ask on. Run it on a terminal and answer `yes`, or review it with --dry-run and then add --auto-approve (for CI and scripts). Nothing was read or changed.",
} satisfies MessageTable;

export type ApplyErrorCode = keyof typeof APPLY_MESSAGES;

/** An apply (or rollback) that did not carry out the whole plan, or never started. */
export class ApplyError<Code extends ApplyErrorCode = ApplyErrorCode> extends PcsyncError {
  declare readonly code: Code;

  constructor(code: Code, facts: FactsOf<typeof APPLY_MESSAGES, Code>) {
    const signal = (facts as { signal?: InterruptSignal }).signal;
    const exitCode: ExitCode = signal === undefined ? EXIT_ERROR : SIGNAL_EXIT_CODES[signal];
    super(code, messageOf(APPLY_MESSAGES, code, facts), {
      exitCode,
    });
  }
}
