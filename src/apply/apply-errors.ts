// How an apply ends when it does not carry out the whole plan: refused by a safety guard,
// incomplete, or interrupted by a signal. Each says what was done and what to do next.

import { EXIT_ERROR, EXIT_REFUSED, type InterruptSignal, PcsyncError, SIGNAL_EXIT_CODES } from "../errors.js";
import type { ApplyReport } from "./types.js";

export class SafetyGuardError extends PcsyncError {
  /** `lead` says who refuses: apply, or plan (which refuses only a delete of a protected record). */
  constructor(messages: string[], lead = "refusing to apply") {
    super(
      "safety_guard",
      `${lead}:\n${messages.map((message) => `  ${message}`).join("\n")}\nNothing was changed.`,
      { exitCode: EXIT_REFUSED },
    );
  }
}

/** What a run that applies a plan is, in its errors: `apply`, or `rollback` (with its journal). */
export interface RunWords {
  command: "apply" | "rollback";
  /** The command that carries on where the run stopped. */
  again: string;
}

const APPLY_WORDS: RunWords = { command: "apply", again: "run apply again" };

export class PartialApplyError extends PcsyncError {
  constructor(report: ApplyReport, words: RunWords = APPLY_WORDS) {
    const unknown = report.unknown > 0 ? `${report.unknown} unknown, ` : "";
    const unchecked = report.unchecked > 0 ? `, ${report.unchecked} unchecked` : "";
    const settle =
      report.unknown > 0 || report.unchecked > 0
        ? " Run `pcsync plan` first to see what the server holds where this run could not tell."
        : "";
    super(
      "apply_incomplete",
      `${words.command} incomplete: ${report.failed} failed, ${report.skipped} skipped, ${unknown}${report.done} done${unchecked}. Fix the errors above and ${words.again}; it continues from where this run stopped.${settle}`,
      { exitCode: EXIT_ERROR },
    );
  }
}

/** Apply stopped by SIGINT or SIGTERM: the summary above says what was done and what was not started. */
export class InterruptedApplyError extends PcsyncError {
  constructor(report: ApplyReport, signal: InterruptSignal, words: RunWords = APPLY_WORDS) {
    const notStarted = report.outcomes.filter((outcome) => outcome.notStarted === true).length;
    const unknown = report.unknown > 0 ? `, ${report.unknown} unknown` : "";
    super(
      "interrupted",
      `${words.command} interrupted by ${signal}: ${report.done} done, ${notStarted} not started, ${report.failed} failed${unknown}. ${words.command === "apply" ? "Run `pcsync plan` to see what is left, then apply again to finish" : `To finish, ${words.again}`}.`,
      { exitCode: SIGNAL_EXIT_CODES[signal] },
    );
  }
}
