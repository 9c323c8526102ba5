// Terraform's rhythm for `apply` on a terminal: the plan is shown, then the user types `yes` or the
// run ends with nothing changed. Nothing is asked, and stdin never read, when it is not a terminal.

import { createInterface } from "node:readline";
import type { Readable, Writable } from "node:stream";

/** Whether apply asks before writing: only with a terminal on stdin. */
export function canAsk(stdin: { isTTY?: boolean } | undefined): stdin is Readable & { isTTY?: boolean } {
  return stdin?.isTTY === true;
}

/**
 * Asks `question` on stderr (stdout may be redirected; the question is for the person at the
 * terminal) and reads one line. Only the exact word `yes` (white space around it aside) approves;
 * stdin ending before a line is a no.
 */
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

/** `Apply 3 changes? (yes/no) ` */
export function applyQuestion(changes: number, server: string): string {
  const what = changes === 1 ? "1 change" : `${changes} changes`;
  return `\npcsync will make the changes above on ${server}. Only "yes" goes ahead.\nApply ${what}? (yes/no) `;
}
