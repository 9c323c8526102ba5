// What the manifest's last rollout (its rollout journal) means for a run of the same manifest:
// one that did not end is finished, a halt that holds refuses apply (exit 4), and plan and a dry
// run say either, so that the plan a reviewer reads does not hide what apply will do.

import { dirname } from "node:path";
import type { ApiClient } from "../api/index.js";
import { haltWords, RunError } from "../apply/run-error.js";
import { formatDuration } from "../duration.js";
import { JournalLock } from "../journal/journal-lock.js";
import {
  configFingerprint,
  type DesiredState,
  type LoadedManifest,
  type RolloutSpec,
} from "../manifest/index.js";
import { projectsWritten } from "../plan/rollout-waves.js";
import type { Plan, PlanRollout } from "../plan/types.js";
import type { PlanNotice } from "../render/markdown.js";
import { resolveSilently } from "../run/plan-manifest.js";
import { shellWord } from "../shell-word.js";
import {
  findLatestRollout,
  findRollouts,
  ROLLOUT_RUN_LOCK_HELD,
  type RolloutState,
  readRolloutJournal,
  rolloutDigest,
  rolloutDigests,
  rolloutRunLock,
} from "./rollout-journal.js";

/**
 * The newest rollout of this manifest (server and digest): --journal's, or under the default place
 * (in `scanned`, the server's rollouts findRollouts read, when the caller has them).
 */
async function lastRolloutOf(
  client: ApiClient,
  desired: DesiredState,
  journal: string | undefined,
  cwd: string,
  scanned?: readonly RolloutState[],
): Promise<RolloutState | undefined> {
  const server = client.base.display;
  const digests = rolloutDigests(server, desired);
  const found =
    journal !== undefined
      ? await readRolloutJournal(cwd, journal).catch(() => undefined)
      : scanned !== undefined
        ? scanned.find((state) => digests.has(state.header.digest))
        : await findLatestRollout(cwd, server, digests);
  return found !== undefined && digests.has(found.header.digest) && found.header.server === server
    ? found
    : undefined;
}

/**
 * The rollout of this manifest that a run before this one started and did not end (killed, or
 * stopped in a wave): an apply of the same manifest finishes it, even when no change is left.
 */
export async function unfinishedRollout(
  client: ApiClient,
  desired: DesiredState,
  journal: string | undefined,
  cwd: string,
): Promise<RolloutState | undefined> {
  const last = await lastRolloutOf(client, desired, journal, cwd);
  return last?.ended === undefined ? last : undefined;
}

/**
 * The rollout an apply of `plan` finishes, as `unfinishedRollout`, read once; and refuses (exit 4,
 * nothing written) an apply of a manifest whose last rollout halted while a project it failed still
 * holds the change (on_failure: halt, or a failing project written again since): the waves already
 * written would have nothing left to write, so a new rollout would go straight on to the later
 * waves with no healthy wave before them, and an apply with no change left would say "no changes"
 * and exit 0. Once no failing project holds the change (rolled back by the rollout or by hand), the
 * same manifest rolls out again from its first wave.
 */
export async function rolloutToFinish(
  client: ApiClient,
  desired: DesiredState,
  plan: Pick<Plan, "changes" | "reorders">,
  journal: string | undefined,
  cwd: string,
  whole?: WholeManifest,
): Promise<RolloutState | undefined> {
  if (whole !== undefined) await refuseBesideWholeRun(client, whole, cwd);
  const found = await findLastRollout(client, desired, plan, cwd, journal, whole);
  if (found?.held !== undefined) throw new RunError("rollout_still_halted", found.held);
  return found?.unfinished;
}

/**
 * Refuses (exit 3) a run that --project, --family or --shard narrow while a run drives the whole
 * manifest's rollout: its own lock is the narrowed manifest's, so it would write a later wave's
 * project beside that rollout, while its canary bakes.
 */
async function refuseBesideWholeRun(client: ApiClient, whole: WholeManifest, cwd: string): Promise<void> {
  const desired = await resolveSilently(client, whole.desired);
  if (desired === undefined) return;
  await JournalLock.refuseIfHeld(rolloutRunLock(rolloutDigest(client.base.display, desired)), {
    cwd,
    held: ROLLOUT_RUN_LOCK_HELD,
  });
}

/** What the manifest's last rollout leaves this run: one to finish, or a halt that holds. */
type LastRollout = { unfinished: RolloutState; held?: never } | { held: HeldHalt; unfinished?: never };

async function findLastRollout(
  client: ApiClient,
  desired: DesiredState,
  plan: Pick<Plan, "changes" | "reorders">,
  cwd: string,
  journal: string | undefined,
  whole: WholeManifest | undefined,
): Promise<LastRollout | undefined> {
  // The server's rollouts, read once for the three lookups below.
  const scanned = await findRollouts(
    cwd,
    client.base.display,
    journal === undefined ? undefined : dirname(journal),
  );
  const last = await lastRolloutOf(client, desired, journal, cwd, scanned);
  if (last !== undefined && last.ended === undefined) return { unfinished: last };
  const held =
    (last === undefined ? undefined : heldHalt(last, plan)) ??
    (await heldHaltOfWhole(client, whole, plan, cwd, journal, scanned)) ??
    heldHaltOfAnother(client, desired, plan, scanned);
  return held === undefined ? undefined : { held };
}

/**
 * A halt of another rollout on this server that holds for this run: one of another change (an
 * earlier version of the manifest), or of this one found beside another --journal PATH. A project
 * it failed holds the change that failed there, this manifest asks that project for exactly that
 * change (the same digest), and no rollout since judged that project healthy. Without it, an
 * unrelated edit (a project added, another config changed), or a fresh --journal path, would start
 * a new rollout whose waves have nothing to write where the change failed, and write it to the
 * rest of the fleet with no healthy wave before it.
 */
function heldHaltOfAnother(
  client: ApiClient,
  desired: DesiredState,
  plan: Pick<Plan, "changes" | "reorders">,
  rollouts: readonly RolloutState[],
): HeldHalt | undefined {
  if (desired.rollout === undefined) return undefined;
  const own = rolloutDigests(client.base.display, desired);
  for (const [index, state] of rollouts.entries()) {
    const same = own.has(state.header.digest);
    const held = heldHalt(state, plan, same ? undefined : desired);
    if (held === undefined) continue;
    const since = rollouts.slice(0, index);
    const failing = held.failing.filter((project) => !since.some((later) => judgedHealthy(later, project)));
    if (failing.length > 0) return { ...held, failing, ...(same ? {} : { another: true as const }) };
  }
  return undefined;
}

/** Whether `state`, a rollout, judged `project` healthy on its logs (not passed unjudged, nor failed within a budget). */
function judgedHealthy(state: RolloutState, project: string): boolean {
  const index = state.header.rollout.waves.findIndex((wave) => wave.projects.includes(project));
  const verdict = state.waves[index]?.judged?.verdicts.find((entry) => entry.project === project);
  return verdict?.status === "pass";
}

/**
 * The manifest before a run's --project, --family or --shard narrowed it, and those flags in words:
 * a halt of the whole manifest's rollout holds for a narrowed run too, or `--project 2` would write
 * a later wave's project while the canary that failed still holds the change.
 */
export interface WholeManifest {
  desired: LoadedManifest;
  narrowedBy: string;
}

/**
 * A halt of the whole manifest's last rollout, for a narrowed run: a failing project the run leaves
 * out is not read, so it counts as holding the change (the refusal says to apply without the flags).
 */
async function heldHaltOfWhole(
  client: ApiClient,
  whole: WholeManifest | undefined,
  plan: Pick<Plan, "changes" | "reorders">,
  cwd: string,
  journal: string | undefined,
  scanned: readonly RolloutState[],
): Promise<HeldHalt | undefined> {
  if (whole === undefined) return undefined;
  // As a whole run records it: `projects: all` resolved from the listing.
  const desired = await resolveSilently(client, whole.desired);
  if (desired === undefined) return undefined;
  // --journal's, when it is the whole manifest's rollout; else the newest under the default place.
  const last = await lastRolloutOf(client, desired, journal, cwd, scanned);
  const held = last === undefined ? undefined : heldHalt(last, plan);
  return held === undefined ? undefined : { ...held, narrowed: whole.narrowedBy };
}

/**
 * A halt that still holds (see rolloutToFinish): the last rollout halted, and a project it failed
 * holds the change the plan would otherwise write there. The details the refusal names.
 */
interface HeldHalt {
  journal: string;
  wave: string;
  failing: string[];
  lastWave: boolean;
  undo: string[];
  /** The flags that leave a failing project out of this run (it was not read). */
  narrowed?: string;
  /** The halt is of a rollout of another change, whose failing projects this manifest asks the same. */
  another?: true;
}

function heldHalt(
  last: RolloutState,
  plan: Pick<Plan, "changes" | "reorders">,
  other?: DesiredState,
): HeldHalt | undefined {
  if (last.ended !== "halted" || last.halted === undefined) return undefined;
  const failing = last.halted.failing.filter((project) => holdsFailedChange(last, project, plan, other));
  if (failing.length === 0) return undefined;
  const index = last.halted.wave;
  const undo = last.waves
    .slice(0, index + 1)
    .flatMap((wave) => (wave.rolledBack === true ? [] : wave.journals))
    .reverse()
    .map((path) => shellWord(path));
  return {
    journal: last.path,
    wave: waveLabel(last, index),
    failing,
    lastWave: index === last.header.rollout.waves.length - 1,
    undo,
  };
}

/**
 * Whether `project`, which `last` failed, still holds a config it was judged on as the rollout wrote
 * it: one the plan does not write again (another config of the project, another family of it, or
 * its order may change: the config that failed stays). With `other`, a manifest of another change,
 * only a config it asks the same (configFingerprint). A journal that names no config of the
 * project (older) holds it while the plan writes nothing there.
 */
function holdsFailedChange(
  last: RolloutState,
  project: string,
  plan: Pick<Plan, "changes" | "reorders">,
  other: DesiredState | undefined,
): boolean {
  const targets = last.header.targets.filter((target) => target.project === project);
  if (targets.length === 0) return other === undefined && !projectsWritten(plan).has(project);
  return targets.some((target) => {
    const written = plan.changes.some(
      (change) =>
        change.project === project &&
        change.family === target.family &&
        (change.name === target.name || (target.id !== undefined && change.id === target.id)),
    );
    if (written) return false;
    if (other === undefined) return true;
    return target.asks !== undefined && target.asks === configFingerprint(other, target);
  });
}

/**
 * What `plan` and `apply --dry-run` say of the manifest's last rollout (`journal`'s, or the newest
 * under the default place, as apply finds it): a halt that still holds makes apply refuse (exit
 * 4), and a rollout that did not end is finished by apply, not started afresh.
 */
export async function rolloutNotice(
  client: ApiClient,
  desired: DesiredState,
  plan: Pick<Plan, "changes" | "reorders">,
  cwd: string,
  journal?: string,
  whole?: WholeManifest,
): Promise<PlanNotice | undefined> {
  const found = await findLastRollout(client, desired, plan, cwd, journal, whole);
  if (found === undefined) return undefined;
  if (found.unfinished !== undefined)
    return unfinishedRolloutNotice(client, desired, found.unfinished, plan, cwd);
  const { halted, fix } = haltWords(found.held);
  return { level: "warning", text: `apply will refuse (exit 4): ${halted}; ${fix}` };
}

/**
 * What apply does with `last`, a rollout that did not end: refuses (exit 3) while another run
 * drives it (it is under way, baking say, not stopped), else finishes it (unfinishedNotice).
 */
export async function unfinishedRolloutNotice(
  client: ApiClient,
  desired: DesiredState,
  last: RolloutState,
  plan: Pick<Plan, "changes" | "reorders">,
  cwd: string,
): Promise<PlanNotice> {
  const driver = await JournalLock.holder(rolloutRunLock(rolloutDigest(client.base.display, desired)), {
    cwd,
  });
  if (driver !== undefined)
    return {
      level: "warning",
      text: `a run drives this manifest's rollout now (pid ${driver.pid} on host ${driver.host}, ${driver.command}, since ${driver.since}; rollout journal ${shellWord(last.path)}): apply refuses (exit 3) until it ends, and then finishes what it left`,
    };
  return unfinishedNotice(last, plan, desired.rollout);
}

/**
 * That apply finishes `last`, a rollout that did not end, and where it stopped: with this run's
 * `plan`, whether the wave it stopped in still holds what it wrote; with the manifest's `rollout:`,
 * which of its settings differ from those the rollout keeps until it ends.
 */
export function unfinishedNotice(
  last: RolloutState,
  plan?: Pick<Plan, "changes" | "reorders">,
  manifestRollout?: RolloutSpec,
): PlanNotice {
  const journalName = shellWord(last.path);
  const kept = keptSettings(last.header.rollout, manifestRollout);
  if (last.halted !== undefined)
    return {
      level: "note",
      text: `apply finishes the rollback of this manifest's rollout, halted in wave ${waveLabel(last, last.halted.wave)} (rollout journal ${journalName}), and writes nothing else${kept}`,
    };
  const index = last.header.rollout.waves.findIndex((_, each) => last.waves[each]?.judged?.healthy !== true);
  const wave = last.waves[index];
  const waveProjects = last.header.rollout.waves[index]?.projects ?? [];
  const toWrite = plan === undefined ? new Set<string>() : projectsWritten(plan);
  const where =
    wave?.writtenAt !== undefined
      ? waveProjects.some((project) => toWrite.has(project))
        ? "written, and not yet judged, but its projects no longer hold all it wrote (rolled back or changed since?): apply writes it again, then bakes and judges it before the next wave"
        : "written, and not yet judged: apply bakes it for what is left of its bake and judges it before the next wave"
      : (wave?.journals.length ?? 0) > 0
        ? "cut short in its writes: apply writes the rest of it, then bakes and judges it before the next wave"
        : "not yet started";
  return {
    level: "note",
    text: `apply finishes the rollout of this manifest that did not end (rollout journal ${journalName}): it stopped in wave ${waveLabel(last, index)}, ${where}; the waves written and judged healthy are not written again, so the plan's waves show what is still to write, not the rollout's whole order${kept}`,
  };
}

/**
 * The settings a rollout keeps until it ends where the manifest's `rollout:` now says otherwise,
 * in words ("" when none differ): a rollout is finished as it started.
 */
export function keptSettings(started: PlanRollout, manifest: RolloutSpec | undefined): string {
  if (manifest === undefined) return "";
  const differ: string[] = [];
  if (started.bakeSeconds * 1000 !== manifest.bakeMs)
    differ.push(
      `bake ${formatDuration(started.bakeSeconds * 1000)} (the manifest now says ${formatDuration(manifest.bakeMs)})`,
    );
  if (started.onFailure !== manifest.onFailure)
    differ.push(`on_failure ${started.onFailure} (now ${manifest.onFailure})`);
  if (started.failureBudget !== manifest.failureBudget)
    differ.push(`failure_budget ${started.failureBudget} (now ${manifest.failureBudget})`);
  if (JSON.stringify(started.health) !== JSON.stringify(manifest.health)) differ.push("health");
  const names = (waves: readonly { name: string }[]) => waves.map((wave) => wave.name).join("\u0000");
  if (names(started.waves) !== names(manifest.waves)) differ.push("waves");
  return differ.length === 0
    ? ""
    : `; it keeps the rollout: settings it started with until it ends: ${differ.join(", ")}`;
}

/** `2 "second"`: a wave of the rollout by its number and name. */
function waveLabel(last: RolloutState, index: number): string {
  return `${index + 1} "${last.header.rollout.waves[index]?.name ?? ""}"`;
}
