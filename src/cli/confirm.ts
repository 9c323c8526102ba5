// Terraform's rhythm on a terminal: the plan is shown, then the user types `yes` or the run ends
// with nothing changed. Stdin is never read when it is not a terminal.

import { createInterface } from "node:readline";
import type { Readable, Writable } from "node:stream";
import { cancelledMessage, RunError } from "../apply/run-error.js";
import { InputError } from "../input-error.js";
import { plural } from "../plural.js";
import type { InterruptWatch } from "./interrupt.js";

export function canAsk(stdin: { isTTY?: boolean } | undefined): stdin is Readable & { isTTY?: boolean } {
  return stdin?.isTTY === true;
}

/** Before any file or request: with --format json there is no plan to say yes to. */
export function refuseUnanswerable(
  command: "apply" | "rollback",
  stdin: { isTTY?: boolean } | undefined,
  format: string,
  orElse = "",
): void {
  if (!canAsk(stdin)) throw new RunError("approval_required", { command });
  if (format === "json") {
    const advice = `on a terminal, add --auto-approve${orElse}`;
    throw new InputError("usage", `${command} --format json prints no plan to say yes to: ${advice}`);
  }
}

/** Asks on stderr (stdout may be redirected); only the exact word `yes` approves, and EOF is a no. */
export async function askForYes(stdin: Readable, stderr: Writable, question: string): Promise<boolean> {
  // Not `terminal: true`: that would take Ctrl-C for itself, and a Ctrl-C must stop the run as
  // it does everywhere else, through the SIGINT handler of apply.
  const reader = createInterface({ input: stdin, terminal: false });
  try {
    // Listening before asking: an answer typed ahead is not lost.
    const answered = new Promise<string | undefined>((resolve) => {
      reader.once("line", resolve);
      reader.once("close", () => resolve(undefined));
    });
    stderr.write(question);
    const line = await answered;
    if (line === undefined) stderr.write("\n");
    return line?.trim() === "yes";
  } finally {
    reader.close();
  }
}

/** Throws apply_cancelled unless the answer is yes; a Ctrl-C at the question says the same (exit 130). */
export async function confirmChanges(
  io: { stdin: Readable; stderr: Writable },
  interrupts: Pick<InterruptWatch, "setStopMessage">,
  ask: {
    verb: "Apply" | "Roll back with";
    changes: number;
    server: string;
    what: "Apply" | "Rollback";
    /** What the command changed before this question (a rollout's waves undone): said if cancelled. */
    before?: string | undefined;
  },
): Promise<void> {
  const what = plural(ask.changes, "change");
  const question = `\npcsync will make the changes above on ${ask.server}. Only "yes" goes ahead.\n${ask.verb} ${what}? (yes/no) `;
  interrupts.setStopMessage(`\npcsync: ${cancelledMessage(ask.what, ask.before)}\n`);
  let approved: boolean;
  try {
    approved = await askForYes(io.stdin, io.stderr, question);
  } finally {
    interrupts.setStopMessage(undefined);
  }
  if (!approved)
    throw new RunError("apply_cancelled", {
      what: ask.what,
      ...(ask.before === undefined ? {} : { before: ask.before }),
    });
}
