// The journal of a rollout: where it stands, on disk before each step is taken, so that a rollout
// killed anywhere (in a wave's writes, in a bake, in its rollback) and applied again finishes what
// it started. One JSON object per line; each wave's writes keep an ordinary apply journal of their
// own, named here, which `pcsync rollback` undoes like any other.

import { randomBytes } from "node:crypto";
import { mkdir, open, rename, stat } from "node:fs/promises";
import { join, relative, resolve } from "node:path";
import type { RunInput } from "../files/output-target.js";
import { parseJson, readBoundedText } from "../files/read-json-file.js";
import { regularFilesIn } from "../files/regular-files.js";
import { InputError, isInputError } from "../input-error.js";
import { JournalFile } from "../journal/journal-file.js";
import { compareText } from "../manifest/compare-projects.js";
import { type DesiredState, manifestFingerprint } from "../manifest/index.js";
import type { LockSubject } from "../refused-error.js";
import type { ProjectHealth } from "./health-gate.js";
import type { RolloutHeader, RolloutLine } from "./rollout-journal-lines.js";
import { getRolloutLineValidator } from "./rollout-journal-validator.js";

/** Rollout journals live apart from apply journals, which resume reads by the directory. */
export const ROLLOUT_JOURNAL_DIR = join(".pcsync", "rollout");

/** The lock the run that drives a rollout holds (one at a time), by the rollout's digest. */
export function rolloutRunLock(digest: string): string {
  return join(ROLLOUT_JOURNAL_DIR, `rollout-of-${digest.slice(0, 16)}`);
}

/** What the rollout's run lock guards, in the words of its refusal. */
export const ROLLOUT_RUN_LOCK_HELD: LockSubject = {
  subject: "this manifest's rollout (its change, on this server, from this directory)",
  rule: "one run at a time drives a rollout, where a second would resume the journal the first still writes or start a rollout beside it",
};

export type {
  RolloutHeader,
  RolloutLine,
  RolloutTarget,
} from "./rollout-journal-lines.js";

/** What the journal says of one wave. */
export interface WaveState {
  journals: string[];
  writtenAt?: Date;
  judged?: { healthy: boolean; verdicts: ProjectHealth[] };
  rolledBack?: boolean;
}

export interface RolloutState {
  path: string;
  header: RolloutHeader;
  waves: WaveState[];
  halted?: { wave: number; failing: string[] };
  ended?: "complete" | "halted";
}

/**
 * The waves up to `through` whose writes are not undone, newest first, each with its journals newest
 * first (a wave resumed after a kill wrote through more than one): the order a rollback takes them.
 */
export function wavesToUndo(
  state: RolloutState,
  through = state.waves.length - 1,
): { index: number; journals: string[] }[] {
  return state.waves
    .flatMap((wave, index) =>
      index > through || wave.journals.length === 0 || wave.rolledBack === true
        ? []
        : [{ index, journals: [...wave.journals].reverse() }],
    )
    .reverse();
}

/**
 * A rollout's identity: the server and the change, what the manifest asks of the records (not
 * where the files say it, so a comment or a moved block neither orphans an interrupted rollout nor
 * lifts a halt; nor the `rollout:` block, so a new bake, budget or on_failure does not lift a halt
 * either: it is the change that failed, and a rollout that did not end is finished as it started).
 */
export function rolloutDigest(server: string, desired: DesiredState): string {
  const { rollout: _rollout, ...change } = desired;
  return manifestFingerprint(server, change);
}

/**
 * The digests a rollout of this manifest may carry: its own, and the one pcsync gave it before the
 * `rollout:` block was left out of it (a rollout started then is still found, and finished).
 */
export function rolloutDigests(server: string, desired: DesiredState): ReadonlySet<string> {
  return new Set([rolloutDigest(server, desired), manifestFingerprint(server, desired)]);
}

/** A rollout that ended, moved aside from `--journal PATH` (`to`, from cwd) to start a new one. */
interface MovedAside {
  to: string;
  ended: NonNullable<RolloutState["ended"]>;
}

/** Appends lines, each synced to disk before the step it announces is taken. */
export class RolloutJournal {
  private constructor(
    readonly path: string,
    readonly state: RolloutState,
    /** Where the finished rollout that `--journal PATH` held was moved to, to start this one. */
    readonly movedAside?: MovedAside,
  ) {}

  static async start(
    cwd: string,
    path: string | undefined,
    header: RolloutHeader,
    inputs: readonly RunInput[] = [],
  ): Promise<RolloutJournal> {
    const chosen =
      path ??
      join(
        ROLLOUT_JOURNAL_DIR,
        `${header.startedAt.replace(/:/g, "-")}-${randomBytes(3).toString("hex")}.jsonl`,
      );
    // --journal PATH as any journal: not a device, not one of the run's own files.
    if (path !== undefined)
      await JournalFile.checkTarget(path, { fresh: false, cwd, inputs }).catch((error: unknown) => {
        if (isInputError(error, "journal_unwritable"))
          throw new InputError("journal_unwritable", { ...error.facts, rollout: true });
        throw error;
      });
    const absolute = resolve(cwd, chosen);
    await mkdir(resolve(absolute, ".."), { recursive: true });
    const create = () => open(absolute, "wx", 0o600);
    let movedAside: MovedAside | undefined;
    const handle = await create().catch(async (error: NodeJS.ErrnoException) => {
      if (error.code !== "EEXIST") throw error;
      // A fixed --journal PATH (a CI workflow's, run again) that holds a rollout which ended
      // (complete, or halted with its rollback finished) is moved aside, its waves' journals left
      // where they are: a rollout journal holds one rollout, and nothing of that one is left to do.
      // One still unfinished (another manifest's, another server's) or not a rollout journal is
      // left alone, and this run refused.
      const earlier = await readRolloutJournal(cwd, chosen).catch(() => undefined);
      if (earlier?.ended === undefined)
        throw new InputError("journal_unwritable", {
          path: chosen,
          reason:
            "it exists already and holds no rollout of this manifest to finish, nor one that ended (a rollout journal holds one rollout: give a new path, or leave --journal out to keep it under .pcsync/rollout/)",
          rollout: true,
        });
      const to = await asidePath(absolute, earlier.header.startedAt);
      await rename(absolute, to);
      movedAside = { to: relative(cwd, to) || to, ended: earlier.ended };
      return await create();
    });
    try {
      await handle.write(`${JSON.stringify(header)}\n`);
      await handle.sync();
    } finally {
      await handle.close();
    }
    return new RolloutJournal(
      chosen,
      { path: chosen, header, waves: header.rollout.waves.map(() => ({ journals: [] })) },
      movedAside,
    );
  }

  static resume(state: RolloutState): RolloutJournal {
    return new RolloutJournal(state.path, state);
  }

  async append(line: RolloutLine, cwd: string): Promise<void> {
    // Through the apply journal's file: a last line cut off by a kill is ended first, so that
    // this line reads whole.
    const file = await JournalFile.openForAppend(this.path, { fresh: false, cwd, inputs: [] });
    file.append(JSON.stringify(line));
    await file.close();
    applyLine(this.state, line);
  }
}

function applyLine(state: RolloutState, line: RolloutLine): void {
  const wave = "wave" in line ? state.waves[line.wave] : undefined;
  switch (line.kind) {
    case "wave_started":
      wave?.journals.push(line.journal);
      return;
    case "wave_written":
      if (wave) wave.writtenAt = new Date(line.at);
      return;
    case "wave_judged":
      if (wave) wave.judged = { healthy: line.healthy, verdicts: line.verdicts };
      return;
    case "halted":
      state.halted = { wave: line.wave, failing: line.failing };
      return;
    case "wave_rolled_back":
      if (wave && line.complete) wave.rolledBack = true;
      return;
    case "end":
      state.ended = line.result;
      return;
  }
}

/** `journal.jsonl` -> `journal.<its start>.jsonl` beside it (a free name). */
async function asidePath(absolute: string, startedAt: string): Promise<string> {
  const stem = absolute.endsWith(".jsonl") ? absolute.slice(0, -".jsonl".length) : absolute;
  const base = `${stem}.${startedAt.replace(/:/g, "-")}`;
  for (let attempt = 0; ; attempt += 1) {
    const candidate = `${base}${attempt === 0 ? "" : `-${attempt}`}.jsonl`;
    if (
      !(await stat(candidate).then(
        () => true,
        () => false,
      ))
    )
      return candidate;
  }
}

/** Why a rollout journal cannot be read: said with its path and line. */
export class RolloutJournalProblem extends Error {}

/** The largest rollout journal read: it holds a line per step of a few waves. */
export const MAX_ROLLOUT_JOURNAL_BYTES = 64 * 1024 * 1024;

/** Reads a rollout journal; a torn last line is left out, any other bad line refused. */
export async function readRolloutJournal(cwd: string, path: string): Promise<RolloutState> {
  const read = await readBoundedText(path, cwd, MAX_ROLLOUT_JOURNAL_BYTES);
  if (read.problem !== undefined) {
    const reason =
      read.problem.kind === "unreadable" ? read.problem.reason : read.problem.kind.replace("_", " ");
    throw new RolloutJournalProblem(`${path}: cannot be read (${reason})`);
  }
  const text = read.value;
  const lines = text.split("\n");
  const endsWhole = text.endsWith("\n");
  if (endsWhole) lines.pop();
  const parsed: unknown[] = [];
  lines.forEach((line, index) => {
    const value = parseJson(line);
    if (value.problem === undefined) parsed.push(value.value);
    // A last line cut off by a kill is read without it; the next append ends it first.
    else if (index < lines.length - 1 || endsWhole)
      throw new RolloutJournalProblem(`${path}:${index + 1}: not a line pcsync wrote (not JSON)`);
  });
  const validate = getRolloutLineValidator();
  const [header, ...rest] = parsed;
  if (!validate(header) || header.kind !== "rollout")
    throw new RolloutJournalProblem(`${path}:1: not a rollout journal's header`);
  const state: RolloutState = {
    path,
    header,
    waves: header.rollout.waves.map(() => ({ journals: [] })),
  };
  rest.forEach((line, index) => {
    if (!validate(line) || line.kind === "rollout" || ("wave" in line && line.wave >= state.waves.length))
      throw new RolloutJournalProblem(`${path}:${index + 2}: not a line pcsync wrote`);
    applyLine(state, line);
  });
  return state;
}

/**
 * The rollouts of `server`, newest first, in the default place and in `also` (the folder of a
 * --journal PATH): whatever change each rolled out, however it ended.
 */
export async function findRollouts(cwd: string, server: string, also?: string): Promise<RolloutState[]> {
  const folders = [...new Set([ROLLOUT_JOURNAL_DIR, ...(also === undefined ? [] : [also])])];
  const found = new Map<string, RolloutState>();
  for (const folder of folders) {
    for (const name of await regularFilesIn(resolve(cwd, folder), ".jsonl")) {
      const path = join(folder, name);
      // Beside a --journal PATH lie the waves' apply journals, which can be large: a file is read
      // whole only when it starts as a rollout journal does.
      if (!(await startsAsRolloutJournal(resolve(cwd, path)))) continue;
      // One that cannot be read may hold a halt: the lookup fails closed, not open. But for a
      // header cut short by a kill as the journal was made: nothing was written after it.
      const state = await readRolloutJournal(cwd, path).catch(async (error: unknown) => {
        const text = (await readBoundedText(path, cwd, MAX_ROLLOUT_JOURNAL_BYTES)).value;
        if (text !== undefined && !text.includes("\n")) return undefined;
        throw new InputError("journal_unreadable", {
          path,
          reason: `${error instanceof Error ? error.message : String(error)}; pcsync reads every rollout journal in ${folder} to honour a rollout that halted, so it cannot tell whether one holds: put the file back as pcsync wrote it, or move it out of ${folder}`,
          directory: folder,
        });
      });
      if (state?.header.server === server) found.set(resolve(cwd, path), state);
    }
  }
  return [...found.values()].sort((a, b) => compareText(b.header.startedAt, a.header.startedAt));
}

/** Whether the file's first bytes are those of a rollout journal's header (`{"kind":"rollout"`). */
export async function startsAsRolloutJournal(path: string): Promise<boolean> {
  const opening = '{"kind":"rollout"';
  const handle = await open(path, "r").catch(() => undefined);
  if (handle === undefined) return false;
  try {
    const buffer = Buffer.alloc(opening.length);
    const { bytesRead } = await handle.read(buffer, 0, opening.length, 0);
    return buffer.toString("utf8", 0, bytesRead) === opening;
  } finally {
    await handle.close();
  }
}

/** The newest rollout of this manifest (server and digest) under the default place, however it ended. */
export async function findLatestRollout(
  cwd: string,
  server: string,
  digests: ReadonlySet<string>,
): Promise<RolloutState | undefined> {
  return (await findRollouts(cwd, server)).find((state) => digests.has(state.header.digest));
}
