// Refused by a guard or a check before anything is changed, exit code 3: each code with its message,
// which says why and what to do next.

import { describeCode, type ErrorTable, EXIT_REFUSED, type FactsOf, PcsyncError } from "./errors.js";

/** What a lock that is not a journal's guards ("this manifest's rollout"), and the rule it keeps. */
export interface LockSubject {
  subject: string;
  rule: string;
}

function indented(lines: readonly string[]): string {
  return lines.map((line) => `  ${line}`).join("\n");
}

const REFUSED_CODES = {
  stale_plan: {
    message: ({ file, reasons }: { file: string; reasons: readonly string[] }) =>
      `the saved plan ${file} is stale:\n${indented(reasons)}\nNothing was changed. Make a new plan (\`pcsync plan -f <manifest> --out ${file}\`), review it, and apply that.`,
  },
  plan_inconsistent: {
    message: ({ file, problems }: { file: string; problems: readonly string[] }) =>
      `the saved plan ${file} was changed after it was made, and is not applied:\n${indented(problems)}\nNothing was changed. A saved plan is applied only as \`pcsync plan --out\` wrote it: make a new plan (\`pcsync plan -f <manifest> --out ${file}\`), review it, and apply that.`,
  },
  plan_server_mismatch: {
    message: ({ file, planServer, server }: { file: string; planServer: string; server: string }) =>
      `the saved plan ${file} was made against ${planServer}, not ${server}. Nothing was changed. Point --base-url (or PCSYNC_BASE_URL) at the plan's server, or make a new plan.`,
  },
  journal_server_mismatch: {
    message: ({ path, journalServer, server }: { path: string; journalServer: string; server: string }) =>
      `the journal ${path} is of a run against ${journalServer}, not ${server}. Nothing was changed. Point --base-url (or PCSYNC_BASE_URL) at the journal's server if that is the one you mean.`,
  },
  journal_plan_mismatch: {
    message: ({ path, planFile, why }: { path: string; planFile: string; why: string }) =>
      `the journal ${path} is not of an apply of ${planFile} (${why}). Give the journal of the apply of this plan with --journal PATH.`,
  },
  journal_held: {
    message: ({
      journal,
      lock,
      holder,
      otherHost,
      held,
    }: {
      journal: string;
      lock: string;
      holder: { pid: number; host: string; since: string; command: string } | undefined;
      otherHost?: boolean;
      held?: LockSubject | undefined;
    }) =>
      holder === undefined
        ? `${held?.subject ?? `the journal ${journal}`} is being written by another run (its lock ${lock} is being taken). Nothing was changed. Run this again once that run has ended.`
        : `${held?.subject ?? `the journal ${journal}`} is held by pid ${holder.pid} on host ${holder.host} (${holder.command}, since ${holder.since}): ${held?.rule ?? "a journal has one writer"}. Nothing was changed. ${
            otherHost
              ? `pcsync cannot tell from this host whether that run still goes on: if it does not, delete ${lock} and run this again.`
              : "Run this again once that run has ended (stopping it with Ctrl-C or SIGTERM releases the lock)."
          }`,
  },
  rollback_name_taken: {
    message: ({ journal, clashes }: { journal: string; clashes: readonly string[] }) =>
      `rolling back ${journal} would leave two live records of one name in a family:\n${indented(clashes)}\nNothing was changed, and --force does not change that: rename or delete one of them first (or pin it in your manifest), then run the rollback again.`,
  },
  changed_while_asking: {
    message: ({ reasons }: { reasons: readonly string[] }) =>
      `the remote state changed while apply waited for your answer:\n${indented(reasons)}\nNothing was changed. Run apply again to see the plan as it is now.`,
  },
  /** `lead` says who refuses: apply, or plan (which refuses only a delete of a protected record). */
  safety_guard: {
    message: ({ messages, lead }: { messages: readonly string[]; lead?: string | undefined }) =>
      `${lead ?? "refusing to apply"}:\n${indented(messages)}\nNothing was changed.`,
  },
  owner_conflict: {
    message: ({ problems }: { problems: readonly string[] }) =>
      `the plan is refused: records of another owner:\n${indented(problems)}`,
  },
  owner_claim_lost: {
    message: ({ problems }: { problems: readonly string[] }) =>
      `another owner claimed records at the same time as this run, and its mark won:\n${indented(problems)}\nThose records are the other owner's now (this run's writes to them may have been overwritten): run \`pcsync plan\` to see them; to take one over, pass --takeover.`,
  },
  rollback_conflict: {
    message: ({ journal, conflicts }: { journal: string; conflicts: readonly string[] }) =>
      `records were changed since the run of ${journal}, by someone else:\n${indented(conflicts)}\nNothing was changed. Look at those changes first; to put back the journal's values over them, run the rollback again with --force.`,
  },
} satisfies ErrorTable;

export type RefusedCode = keyof typeof REFUSED_CODES;

/** They say themselves that nothing was changed. */
const SAVED_PLAN_REFUSALS: readonly RefusedCode[] = [
  "stale_plan",
  "plan_inconsistent",
  "plan_server_mismatch",
  "journal_server_mismatch",
];

export class RefusedError<Code extends RefusedCode = RefusedCode> extends PcsyncError {
  declare readonly code: Code;
  readonly facts: FactsOf<typeof REFUSED_CODES, Code>;

  constructor(code: Code, facts: FactsOf<typeof REFUSED_CODES, Code>) {
    super(code, describeCode(REFUSED_CODES, code, facts, EXIT_REFUSED));
    this.facts = facts;
  }
}

/**
 * For an apply that stopped before its first write. The words go into the error itself, so that its
 * class, code, exit code, hint and facts stay as they were.
 */
export function throwSayingNothingChanged(error: unknown): never {
  if (error instanceof PcsyncError && !(SAVED_PLAN_REFUSALS as readonly string[]).includes(error.code)) {
    error.message = `${error.message} Nothing was changed.`;
  }
  throw error;
}
