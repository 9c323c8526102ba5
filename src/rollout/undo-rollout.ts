// A rollout undone whole (`pcsync rollback --journal` given a rollout's journal): its waves still
// written, newest first, each through its own journals as any rollback; each wave undone is recorded.

import { mkdir } from "node:fs/promises";
import { resolve } from "node:path";
import { InputError } from "../input-error.js";
import { JournalLock } from "../journal/journal-lock.js";
import {
  ROLLOUT_JOURNAL_DIR,
  ROLLOUT_RUN_LOCK_HELD,
  RolloutJournal,
  RolloutJournalProblem,
  readRolloutJournal,
  rolloutRunLock,
  startsAsRolloutJournal,
  wavesToUndo,
} from "./rollout-journal.js";

export interface WaveToUndo {
  index: number;
  name: string;
  projects: readonly string[];
  /** Newest first: a wave resumed after a kill wrote through more than one. */
  journals: readonly string[];
}

export interface RolloutUndo {
  journal: RolloutJournal;
  /** Newest first; empty when every wave written was undone already. */
  waves: readonly WaveToUndo[];
  ended: "complete" | "halted";
  /** Holds the rollout's run lock, so that no apply drives that rollout meanwhile. */
  release(): Promise<void>;
}

/** Whether `path` is a rollout's journal (by its first bytes), not an apply's. */
export function isRolloutJournal(cwd: string, path: string): Promise<boolean> {
  return startsAsRolloutJournal(resolve(cwd, path));
}

/**
 * The waves of the rollout in `path` left to undo. Refuses a rollout that did not end (a run drives
 * it, or was killed or stopped in it: an apply of its manifest finishes it first) and a journal that
 * cannot be read; with `lock`, holds the rollout's run lock (refused, exit 3, while a run holds it).
 */
export async function rolloutToUndo(cwd: string, path: string, lock: boolean): Promise<RolloutUndo> {
  const state = await readRolloutJournal(cwd, path).catch((error: unknown) => {
    if (error instanceof RolloutJournalProblem)
      throw new InputError("rollout_journal_invalid", { message: error.message });
    throw error;
  });
  // The lock's folder, made as apply makes it: the rollout may have kept its journal elsewhere.
  if (lock) await mkdir(resolve(cwd, ROLLOUT_JOURNAL_DIR), { recursive: true });
  const held = lock
    ? await JournalLock.acquire(rolloutRunLock(state.header.digest), {
        cwd,
        command: "rollback (rollout)",
        held: ROLLOUT_RUN_LOCK_HELD,
      })
    : undefined;
  try {
    const waves = wavesToUndo(state).map(({ index, journals }) => ({
      index,
      name: state.header.rollout.waves[index]?.name ?? String(index + 1),
      projects: state.header.rollout.waves[index]?.projects ?? [],
      journals,
    }));
    if (state.ended === undefined)
      throw new InputError("rollout_unfinished", { path, journals: waves.flatMap((wave) => wave.journals) });
    return {
      journal: RolloutJournal.resume(state),
      waves,
      ended: state.ended,
      release: async () => held?.release(),
    };
  } catch (error) {
    await held?.release();
    throw error;
  }
}

/** Records that the wave's journals were all rolled back: the rollout's own lines say so. */
export async function recordWaveUndone(undo: RolloutUndo, wave: WaveToUndo, cwd: string): Promise<void> {
  await undo.journal.append(
    { kind: "wave_rolled_back", wave: wave.index, at: new Date().toISOString(), complete: true },
    cwd,
  );
}
