// How a writing run (apply, rollback, a rollout) ends short of its whole plan, each code with its exit
// code and a message saying what was done and what next. (Refusals are RefusedError.)

import {
  describeCode,
  type ErrorTable,
  EXIT_ERROR,
  EXIT_ROLLOUT_HALTED,
  type FactsOf,
  type InterruptSignal,
  PcsyncError,
  SIGNAL_EXIT_CODES,
} from "../errors.js";
import { nounAndList, plural } from "../plural.js";
import { shellWord } from "../shell-word.js";
import type { ApplyReport } from "./types.js";

/** `before`: what the command changed before the question it was cancelled at (a rollout's waves undone). */
export function cancelledMessage(what: "Apply" | "Rollback", before?: string): string {
  return before === undefined
    ? `${what} cancelled; nothing was changed.`
    : `${what} cancelled; nothing more was changed (${before}).`;
}

export interface RunWords {
  command: "apply" | "rollback";
  /** What carries on where the run stopped. */
  again: string;
}

const APPLY_WORDS: RunWords = { command: "apply", again: "run apply again" };

/** The journal lines (describeJournalNext) go last: what to run next is where the eye ends. */
function endingWith(journal: string | undefined): string {
  return journal === undefined ? "" : `\n${journal.trimEnd()}`;
}

interface RolloutStop {
  wave: string;
  /** What finishes it (names the rollout journal). */
  again: string;
}

/** Stopped after a wave's writes began: what they did (`done`). */
type RolloutStoppedInWrites = RolloutStop & { done: string };

/** Stopped while a wave baked or was judged (writes journaled), or before its writes (`check`). */
interface RolloutStoppedBetweenWaves extends RolloutStop {
  stage: InterruptedStage;
  /** In a halted rollout's rollback: waves undone, the one it stopped in, those left. */
  undoneWaves?: readonly string[];
  stoppedIn?: string;
  left?: readonly string[];
}

export type InterruptedStage = "check" | "reread" | "bake" | "judge" | "rollback";

export const STAGE_WORDS: Record<InterruptedStage, string> = {
  check: "while its projects were read again, before its writes",
  reread: "after its writes, before they were all read again",
  bake: "while it baked",
  judge: "while it was judged",
  rollback: "after it halted, while its waves were rolled back",
};

const RUN_CODES = {
  apply_incomplete: {
    exit: EXIT_ERROR,
    message: (
      facts:
        | { report: ApplyReport; words?: RunWords; journal?: string | undefined }
        | { rollout: RolloutStoppedInWrites },
    ) => {
      if ("rollout" in facts) {
        const { wave, done, again } = facts.rollout;
        return `the rollout stopped in wave "${wave}" because a write did not succeed (${done}); no later wave was written; ${again}.`;
      }
      const { report, words = APPLY_WORDS, journal } = facts;
      const unknown = report.unknown > 0 ? `${report.unknown} unknown, ` : "";
      const unchecked = report.unchecked > 0 ? `, ${report.unchecked} unchecked` : "";
      const checkFirst =
        report.unknown > 0 || report.unchecked > 0
          ? " Run `pcsync plan` first to see what the server holds where this run could not tell."
          : "";
      const next =
        report.throttledUntil === undefined
          ? `Fix the errors above and ${words.again}`
          : `The service throttled this API key until ${report.throttledUntil.toISOString()}, longer than pcsync waits (its hourly rate limit spent?), and the writes left were not sent: ${words.again} after then`;
      return `${words.command} incomplete: ${report.failed} failed, ${report.skipped} skipped, ${unknown}${report.done} done${unchecked}. ${next}; it continues from where this run stopped.${checkFirst}${endingWith(journal)}`;
    },
  },
  interrupted: {
    exit: ({ signal }: { signal: InterruptSignal }) => SIGNAL_EXIT_CODES[signal],
    message: (
      facts:
        | { report: ApplyReport; signal: InterruptSignal; words?: RunWords; journal?: string | undefined }
        | { signal: InterruptSignal; rollout: RolloutStoppedInWrites | RolloutStoppedBetweenWaves },
    ) => {
      if ("rollout" in facts) {
        const { signal, rollout } = facts;
        if ("done" in rollout)
          return `the rollout stopped in wave "${rollout.wave}" on ${signal} (${rollout.done}); no later wave was written; ${rollout.again}.`;
        if (rollout.stage === "rollback") {
          const waves = (names: readonly string[]) =>
            `${names.length === 1 ? "wave" : "waves"} ${names.map((name) => `"${name}"`).join(", ")}`;
          const done = rollout.undoneWaves ?? [];
          const left = rollout.left ?? [];
          const where =
            rollout.stoppedIn === undefined
              ? "what was rolled back is journaled"
              : `${done.length === 0 ? "no wave was rolled back yet" : `${waves(done)} ${done.length === 1 ? "was" : "were"} rolled back`}; the rollback of wave "${rollout.stoppedIn}" was stopped part-way (what it undid is in its journal), so it may still hold the change${left.length === 0 ? "" : `, and ${waves(left)} still ${left.length === 1 ? "holds" : "hold"} it`}`;
          return `the rollout halted in wave "${rollout.wave}" and was stopped by ${signal} while its waves were rolled back: ${where}; ${rollout.again.replace("to finish it", "to finish the rollback")}.`;
        }
        return rollout.stage === "check"
          ? `the rollout was stopped by ${signal} before wave "${rollout.wave}" was written (while its projects were read again): nothing of that wave or any later one was written; ${rollout.again}.`
          : `the rollout was stopped by ${signal} in wave "${rollout.wave}" (${STAGE_WORDS[rollout.stage]}): its writes are made and journaled, nothing more was written; ${rollout.again}.`;
      }
      const { report, signal, words = APPLY_WORDS, journal } = facts;
      const notStarted = report.outcomes.filter((outcome) => outcome.notStarted === true).length;
      const unknown = report.unknown > 0 ? `, ${report.unknown} unknown` : "";
      const next =
        words.command === "apply"
          ? "Run `pcsync plan` to see what is left, then apply again to finish"
          : `To finish, ${words.again}`;
      return `${words.command} interrupted by ${signal}: ${report.done} done, ${notStarted} not started, ${report.failed} failed${unknown}. ${next}.${endingWith(journal)}`;
    },
  },
  /** The user answered something other than `yes`, or closed stdin: exit 1, as Terraform does. */
  apply_cancelled: {
    exit: EXIT_ERROR,
    message: ({ what, before }: { what: "Apply" | "Rollback"; before?: string }) =>
      cancelledMessage(what, before),
  },
  /** Refused before anything is read, as Terraform does: cron or `ssh host pcsync apply` never write unapproved. */
  approval_required: {
    exit: EXIT_ERROR,
    message: ({ command }: { command: "apply" | "rollback" }) =>
      command === "apply"
        ? "apply needs approval, and stdin is not a terminal to ask on. Run it on a terminal and answer `yes`, add --auto-approve (for CI and scripts), or save a plan with `pcsync plan --out FILE` and apply it with `pcsync apply --plan FILE` (a manifest with rollout: takes --auto-approve: its waves are not applied from a saved plan). Nothing was read or changed."
        : "rollback needs approval, and stdin is not a terminal to ask on. Run it on a terminal and answer `yes`, or review it with --dry-run and then add --auto-approve (for CI and scripts). Nothing was read or changed.",
  },
  /** `rolledBack`: on_failure: rollback; else `undoneWaves` were undone, `undoneComplete` if wholly. */
  rollout_halted: {
    exit: EXIT_ROLLOUT_HALTED,
    message: ({
      wave,
      failing,
      rolledBack,
      undoneWaves,
      undoneComplete,
      byHand,
      again,
    }: RolloutStop & {
      failing: readonly string[];
      rolledBack: boolean;
      undoneWaves: number;
      undoneComplete: boolean;
      /** Commands that finish the rollback where running the rollout again would refuse again. */
      byHand?: readonly string[];
    }) =>
      `the rollout halted in wave "${wave}": ${plural(failing.length, "project")} failed the health check (${nounAndList(failing, "project")}); ${
        rolledBack
          ? "every wave applied was rolled back."
          : undoneWaves === 0
            ? "nothing was rolled back (on_failure: halt)."
            : undoneComplete
              ? "the waves were rolled back."
              : byHand !== undefined && byHand.length > 0
                ? `the rollback is incomplete: records a wave wrote were changed since by someone else, and applying again would refuse again; look at them (--dry-run) and finish the rollback with ${byHand.join(", then ")} (it puts back the values from before the rollout over those changes), or by hand, then ${again}.`
                : `the rollback is incomplete: ${again}.`
      }`,
  },
  /**
   * The last rollout halted and a failed project (may) still hold the change: a new rollout would find
   * nothing to write in the waves done and go on to the later ones.
   */
  rollout_still_halted: {
    exit: EXIT_ROLLOUT_HALTED,
    message: (held: HeldHaltFacts) => {
      const { halted, fix } = haltWords(held);
      const applying =
        held.another === true
          ? "Applying it would write that change to the rest of the fleet with no healthy wave before it"
          : `Applying the same manifest again ${held.lastWave ? "would find nothing left to write and end as if the rollout had passed" : "would write the waves after it with no healthy wave before them"}`;
      return `${halted}. ${applying}, so it is refused: nothing was changed. ${fix.charAt(0).toUpperCase()}${fix.slice(1)}.`;
    },
  },
  rollout_changed: {
    exit: EXIT_ERROR,
    message: ({ wave, reasons, again }: RolloutStop & { reasons: readonly string[] }) =>
      `the rollout stopped before wave "${wave}": since the plan was made, ${reasons.length === 1 ? "this changed" : "these changed"} (someone else writing?):\n${reasons.map((reason) => `  ${reason}`).join("\n")}\nNothing of that wave or any later one was written; run \`pcsync plan\` to see the state as it is now, then ${again}.`,
  },
  /** A resumed rollout completed, but none of its waves left took projects this run's plan changes. */
  rollout_left_out: {
    exit: EXIT_ERROR,
    message: ({ journal, projects }: { journal: string; projects: string }) =>
      `the rollout of ${journal} is complete, but it was planned by an earlier run, and none of its waves still to finish took ${projects}, where this run's plan has changes (the earlier run had other --project, --target or --exclude flags, their wave was judged healthy before they were made, or the records changed since): nothing of them was written. Apply the same manifest again: a new rollout writes them, from its first wave.`,
  },
  rollout_not_as_planned: {
    exit: EXIT_ERROR,
    message: ({
      wave,
      projects,
      when,
      again,
    }: RolloutStop & { projects: readonly string[]; when: "written" | "baked" }) =>
      when === "written"
        ? `the rollout stopped in wave "${wave}": after its writes, ${nounAndList(projects, "project")} still ${projects.length === 1 ? "differs" : "differ"} from the manifest (someone else writing?); no later wave was written; run \`pcsync plan\`, then ${again}.`
        : `the rollout stopped in wave "${wave}": when its bake ended, ${nounAndList(projects, "project")} no longer held what the wave wrote to the plugin configs it judges (changed, deleted or rolled back during the bake?), so the wave was not judged; no later wave was written; run \`pcsync plan\`, then ${again} (the wave is written again and baked from there).`,
  },
} satisfies ErrorTable;

export type RunErrorCode = keyof typeof RUN_CODES;

/** For failing projects a narrowed run leaves out (`narrowed`: its flags): they were not read. */
export function holdingTheChange(failing: readonly string[], narrowed: string | undefined): string {
  const one = failing.length === 1;
  if (narrowed === undefined) return `still ${one ? "holds" : "hold"} the change`;
  const flags = narrowed.includes(",") ? `${narrowed} leave` : `${narrowed} leaves`;
  return `may still hold the change (${flags} ${one ? "it" : "them"} out of this run, so ${one ? "it is" : "they are"} not read: apply without ${narrowed} checks)`;
}

export interface HeldHaltFacts {
  journal: string;
  wave: string;
  failing: readonly string[];
  lastWave: boolean;
  undo: readonly string[];
  /** The flags leaving a failing project out of the run. */
  narrowed?: string | undefined;
  /** A rollout of another change, whose failing projects this manifest asks the same. */
  another?: true | undefined;
}

/** Words of apply's refusal and plan's notice; `fix` is lower case, without a full stop. */
export function haltWords(held: HeldHaltFacts): { halted: string; fix: string } {
  const { failing, undo } = held;
  const one = failing.length === 1;
  const journal = `rollout journal ${shellWord(held.journal)}`;
  const undoing =
    undo.length === 0
      ? ""
      : `, or undo the waves written (\`pcsync rollback --journal ${shellWord(held.journal)}\` undoes the rollout, newest wave first)`;
  if (held.another === true)
    return {
      halted: `a rollout of another version of this manifest halted in wave ${held.wave} (${journal}), and ${nounAndList(failing, "project")}, which failed the health check, ${holdingTheChange(failing, held.narrowed)} that failed there, which this manifest asks of ${one ? "it" : "them"} as it was`,
      fix: `fix the change for ${one ? "that project" : "those projects"} in the manifest${undoing}, and this manifest rolls out from its first wave`,
    };
  return {
    halted: `the last rollout of this manifest halted in wave ${held.wave} (${journal}), and ${nounAndList(failing, "project")}, which failed the health check, ${holdingTheChange(failing, held.narrowed)}`,
    fix: `fix the change in the manifest (a new change starts a new rollout; a new rollout: block alone does not)${undoing}, and this manifest rolls out again from its first wave`,
  };
}

export class RunError<Code extends RunErrorCode = RunErrorCode> extends PcsyncError {
  declare readonly code: Code;
  readonly facts: FactsOf<typeof RUN_CODES, Code>;

  constructor(code: Code, facts: FactsOf<typeof RUN_CODES, Code>) {
    super(code, describeCode(RUN_CODES, code, facts));
    this.facts = facts;
  }
}
