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

export class PartialApplyError extends PcsyncError {
  constructor(report: ApplyReport) {
    const unknown = report.unknown > 0 ? `${report.unknown} unknown, ` : "";
    const unchecked = report.unchecked > 0 ? `, ${report.unchecked} unchecked` : "";
    const settle =
      report.unknown > 0 || report.unchecked > 0
        ? " Run `pcsync plan` first to see what the server holds where this run could not tell."
        : "";
    super(
      "apply_incomplete",
      `apply incomplete: ${report.failed} failed, ${report.skipped} skipped, ${unknown}${report.done} done${unchecked}. Fix the errors above and run apply again; it continues from where this run stopped.${settle}`,
      { exitCode: EXIT_ERROR },
    );
  }
}

/** Apply stopped by SIGINT or SIGTERM: the summary above says what was done and what was not started. */
export class InterruptedApplyError extends PcsyncError {
  constructor(report: ApplyReport, signal: InterruptSignal) {
    const notStarted = report.outcomes.filter((outcome) => outcome.notStarted === true).length;
    const unknown = report.unknown > 0 ? `, ${report.unknown} unknown` : "";
    super(
      "interrupted",
      `apply interrupted by ${signal}: ${report.done} done, ${notStarted} not started, ${report.failed} failed${unknown}. Run \`pcsync plan\` to see what is left, then apply again to finish.`,
      { exitCode: SIGNAL_EXIT_CODES[signal] },
    );
  }
}
