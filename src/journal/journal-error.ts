// Why a journal cannot be read, written or used: each code with its message and what to do next.

import type { WriteIntent } from "../apply/journaled-writes.js";
import { type FactsOf, type MessageTable, messageOf, PcsyncError } from "../errors.js";

const JOURNAL_MESSAGES = {
  journal_invalid: ({ path, line, reason }: { path: string; line: number; reason: string }) =>
    `${path}:${line}: ${reason}. The journal was not written this way by pcsync (edited or copied in part?); nothing was changed.`,
  journal_unreadable: ({ path, reason }: { path: string; reason: string; directory: string }) =>
    `cannot read the journal ${path}: ${reason}`,
  journal_unwritable: ({ path, reason }: { path: string; reason: string }) =>
    `cannot write the journal ${path}: ${reason}`,
  /** The directory of a journal that is only read (a rollback's) takes no lock file. */
  journal_unlockable: ({ path, reason }: { path: string; reason: string }) =>
    `cannot lock the journal ${path}: ${reason}`,
  /** A write whose journal line would hold the API key is not sent. */
  journal_would_hold_key: ({ intent }: { intent: WriteIntent }) =>
    `the ${intent.op} of ${intent.id === null ? `"${intent.name ?? "?"}"` : `record ${intent.id}`} in project ${intent.project} ${intent.family} was not sent: its journal line would hold the API key, and a journal never does`,
  /** `apply --plan FILE --resume` found no journal of that plan. */
  journal_not_found: ({ planFile, directory }: { planFile: string; directory: string }) =>
    `no journal of an apply of ${planFile} in ${directory}/. Give the interrupted apply's journal with --journal PATH.`,
} satisfies MessageTable;

export type JournalErrorCode = keyof typeof JOURNAL_MESSAGES;

const JOURNAL_HINTS: {
  [Code in JournalErrorCode]?: (facts: FactsOf<typeof JOURNAL_MESSAGES, Code>) => string;
} = {
  journal_invalid: () => "use the journal exactly as the apply wrote it",
  journal_unreadable: ({ directory }) =>
    `an apply names its journal at the end of its output; by default they are in ${directory}/`,
  journal_unwritable: () => "give another path with --journal PATH, or skip the journal with --no-journal",
  journal_would_hold_key: () => "remove the key's text from that record, or apply with --no-journal",
};

export class JournalError<Code extends JournalErrorCode = JournalErrorCode> extends PcsyncError {
  declare readonly code: Code;

  constructor(code: Code, facts: FactsOf<typeof JOURNAL_MESSAGES, Code>) {
    const hint = JOURNAL_HINTS[code] as
      | ((facts: FactsOf<typeof JOURNAL_MESSAGES, Code>) => string)
      | undefined;
    super(code, messageOf(JOURNAL_MESSAGES, code, facts), {
      hint: hint?.(facts),
    });
  }
}
