// `apply` from plan to report: the plan made, or saved and checked (or resumed), its guards, the
// approval and a re-read after it, then the journaled writes the caller hands in.

import type { ApiClient } from "../api/index.js";
import { checkApprovedPlan, checkSavedPlan, type RereadOptions } from "../apply/check-saved-plan.js";
import type { ApplyReport } from "../apply/types.js";
import { InputError } from "../input-error.js";
import type { LoadedManifest } from "../manifest/index.js";
import type { DesiredState } from "../manifest/types.js";
import { hasChanges } from "../plan/plan-file.js";
import type { GuardOptions } from "../plan/recompute-guards.js";
import { refusingGuards } from "../plan/safety-guards.js";
import type { CurrentState, Plan } from "../plan/types.js";
import { RefusedError, throwSayingNothingChanged } from "../refused-error.js";
import { describeGuard } from "../render/guard-message.js";
import { waitForKilledRunsCreates } from "./late-writes.js";
import { type PlanScope, type PlanSettings, planManifest } from "./plan-manifest.js";
import type { ResumedPlan } from "./resume-run.js";
import type { RunIo } from "./run-io.js";

export type PlanSource =
  | { from: "manifest"; desired: LoadedManifest; scope: PlanScope; settings: PlanSettings }
  | {
      from: "saved";
      plan: Plan;
      file: string;
      /** A saved plan's guards are computed again from the state read. */
      guards: GuardOptions;
      /** Protection is checked again on the records as they are. */
      allowDestroy: readonly string[];
      resumed?: ResumedPlan | undefined;
    };

export interface ApplyRunInput {
  source: PlanSource;
  /** Overrides the safety guards (not protection), shown as what they found. */
  force: boolean;
  dryRun: boolean;
  reread: RereadOptions;
  /** Besides the default directory (`--journal PATH`'s): where a killed run's journal may be. */
  journalDirectories?: readonly string[] | undefined;
}

export interface ApplyRunSteps {
  /** Before the guards refuse it and before any write. */
  show: (plan: Plan) => void;
  /** Work the run has to do beyond the plan's changes (an unfinished rollout to finish). */
  hasMoreWork?: ((plan: Plan, desired: DesiredState) => Promise<boolean>) | undefined;
  /** What else apply would do (a rollout to finish, a halt that holds). */
  dryRunNotes?: ((plan: Plan, desired: DesiredState) => Promise<void>) | undefined;
  /** Throws to cancel; the state is then read again (the answer may be late). */
  approve?: ((plan: Plan) => Promise<void>) | undefined;
  /** `desired`: the manifest planned (for a rollout), none for a saved plan. */
  apply: (plan: Plan, current: CurrentState, desired: DesiredState | undefined) => Promise<ApplyReport>;
}

export type ApplyRunOutcome =
  | { result: "dry_run"; plan: Plan }
  | { result: "nothing"; plan: Plan; current: CurrentState }
  | { result: "applied"; plan: Plan; report: ApplyReport };

export async function applyPlanRun(
  client: ApiClient,
  input: ApplyRunInput,
  steps: ApplyRunSteps,
  io: RunIo,
): Promise<ApplyRunOutcome> {
  // Nothing is written before the plan stands: say so, unless the refusal already does.
  let made = await makePlan(client, input.source, input.reread, io).catch(throwSayingNothingChanged);
  // A create a run killed here sent, and which may still land, is not sent again before then.
  const waited = await waitForKilledRunsCreates(client, io.cwd, made.plan, {
    directories: input.journalDirectories ?? [],
    what: "Apply",
    reading: "the state again, so that this apply does not make it a second time",
    dryRun: input.dryRun,
    onNote: (line) => io.stderr.write(`${line}\n`),
  });
  if (waited) made = await makePlan(client, input.source, input.reread, io).catch(throwSayingNothingChanged);
  if (made.plan.rollout !== undefined && made.desired === undefined) {
    throw new InputError(
      "usage",
      "this saved plan rolls out in waves (rollout: in its manifest): a rollout reads each wave's projects again as it goes and finishes itself from its journal, so apply it with `pcsync apply -f MANIFEST`, which also finishes an interrupted rollout",
    );
  }
  const plan = made.plan;
  steps.show(plan);
  if (input.dryRun) {
    if (made.desired !== undefined) await steps.dryRunNotes?.(plan, made.desired);
    return { result: "dry_run", plan };
  }
  const refusing = refusingGuards(plan.guards, input.force);
  if (refusing.length > 0)
    throw new RefusedError("safety_guard", { messages: refusing.map((guard) => describeGuard(guard)) });
  const moreWork =
    made.desired !== undefined && steps.hasMoreWork !== undefined
      ? await steps.hasMoreWork(plan, made.desired)
      : false;
  if (!hasChanges(plan) && !moreWork) return { result: "nothing", plan, current: made.current };
  let state = made.current;
  if (steps.approve !== undefined) {
    await steps.approve(plan);
    state = await checkApprovedPlan(plan, client, input.reread);
  }
  const report = await steps.apply(plan, state, made.desired);
  return { result: "applied", plan, report };
}

async function makePlan(
  client: ApiClient,
  source: PlanSource,
  reread: RereadOptions,
  io: RunIo,
): Promise<{ plan: Plan; current: CurrentState; desired?: DesiredState }> {
  if (source.from === "manifest")
    return planManifest(client, source.desired, source.scope, source.settings, io);
  if (source.resumed !== undefined) return source.resumed;
  return checkSavedPlan(source.plan, source.file, client, {
    ...reread,
    guards: source.guards,
    allowDestroy: source.allowDestroy,
  });
}
