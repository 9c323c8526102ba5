// The model-based test that looks for the next seam between features: sequences of steps a team,
// its CI and other people take on one service (apply, plan, apply of a saved plan, rollback of the
// latest journal, a rollback of a journal whose apply still runs, an apply killed with SIGKILL at a
// random write and resumed, a heal cycle (its manifest with rollout: or not), another actor's edit or create over HTTP, a second
// owner's apply alone or racing the first, export then plan, a rollout in waves), with manifests drawn from every
// manifest feature at once, against emulator states holding look-alike and null names, on both
// profiles. After every step the emulator's own state and every output are held to the invariants
// (test/support/model-world.ts): no two live records of one name per family, a protected record
// never deleted, another owner's record never written, a rollback restores the journal's before
// image exactly (and is not refused when nothing changed since), a heal that writes keeps a
// journal, a plan after a clean apply is empty, export names the owner its records carry and plans
// back to nothing but the renames it warned of, no project of a later wave written after a rollout's
// halt, the records as before after its rollback, a finished rollout applied again writes nothing,
// nor does a halted one whose change is still in place, a heal never sends a change past rollout:,
// apply --plan of a plan nothing has moved refuses exactly the plans whose guards plan showed,
// no internal error or stack trace, exit codes 0-4.
//
// `npm test` runs 3 short sequences per profile (new runs stop after 45 s);
// PCSYNC_MODEL_RUNS=200 runs that many with no time limit, PCSYNC_MODEL_STEPS sets the longest
// sequence (default 7). A failure prints the seed (PCSYNC_TEST_SEED=N replays it), the shrunk
// sequence, the commands it ran with their exit codes, the manifests and the records added.
// The shortest sequences that broke an invariant when this test found them are replayed on every
// run (test/support/model-sequences.ts): half here, half in model-replays.test.ts, side by side.

import { describe, it } from "vitest";
import { PROFILE_NAMES, type ProfileName } from "../../src/emulator/index.js";
import { FE, PC } from "../support/families.js";
import { fc } from "../support/fast-check.js";
import {
  GLOBS,
  manifestArb,
  namesOf,
  OWNER_A,
  OWNER_B,
  PROJECTS,
  remoteArb,
  type Variant,
} from "../support/model-manifests.js";
import { replaySequences } from "../support/model-sequences.js";
import {
  type EditKind,
  type Scope,
  type Step,
  type TransportFaults,
  World,
  type WorldSetup,
} from "../support/model-world.js";
import { temporaryDirectory } from "../support/work-dir.js";

const RUNS = Number(process.env.PCSYNC_MODEL_RUNS ?? 3);
const LONGEST = Number(process.env.PCSYNC_MODEL_STEPS ?? 7);
/**
 * New runs (and shrinking) stop after this long; the soak sets no limit of its own. The pinned
 * seed's three sequences take 6-10 s alone; 45 s lets a loaded machine finish the first one (under
 * 15 s a loaded full run failed with "Property interrupted after 0 tests").
 */
const TIME_LIMIT_MS = process.env.PCSYNC_MODEL_RUNS === undefined ? 45_000 : 60_000 * 60;
/**
 * `npm test` walks the sequences of one pinned seed, so that CI is not red on a seam found in a run
 * nobody asked for; PCSYNC_TEST_SEED (any seed) or PCSYNC_MODEL_RUNS (random seeds) explore further,
 * and a seam found there becomes a sequence of the block below. (Seed 751278929 found the plugin's
 * own description kept under an adopting owner's mark, posthog-2024.)
 */
const PINNED_SEED =
  process.env.PCSYNC_TEST_SEED === undefined && process.env.PCSYNC_MODEL_RUNS === undefined
    ? 20261127
    : undefined;

const MANIFESTS = 2;

const scopeArb: fc.Arbitrary<Scope> = fc.oneof(
  { weight: 4, arbitrary: fc.constant({}) },
  { weight: 1, arbitrary: fc.record({ target: fc.constantFrom(...GLOBS) }) },
  { weight: 1, arbitrary: fc.record({ exclude: fc.constantFrom(...GLOBS) }) },
  { weight: 1, arbitrary: fc.record({ allowDestroy: fc.constantFrom(...GLOBS) }) },
  { weight: 1, arbitrary: fc.record({ takeover: fc.constant(true) }) },
);

const manifestIndex = fc.nat({ max: MANIFESTS - 1 });

/**
 * The faults at the rates the guarantees name (docs/guarantees.md), each on or off so that runs
 * meet them alone too; or dropped or late writes alone, well beyond them (20%: each such create is
 * settled by re-reads, never sent twice). Not all at heavy rates at once: then every attempt of a
 * write fails about one time in two, and the retry budget (9 attempts) runs out now and then, as
 * it is meant to (the write is reported unknown, exit 1), which no invariant could tell from a seam.
 */
const faultsArb: fc.Arbitrary<TransportFaults> = fc.oneof(
  fc.record({
    fail503Rate: fc.constantFrom(0, 0.15),
    retryAfter503: fc.boolean(),
    fail429Rate: fc.constantFrom(0, 0.1),
    dropWriteRate: fc.constantFrom(0, 0.05),
    lateWriteRate: fc.constantFrom(0, 0.05),
    lateWriteMs: fc.constantFrom(450 as const, 850 as const),
    commitThen500Rate: fc.constantFrom(0, 0.1),
    proxyErrorRate: fc.constantFrom(0, 0.05),
    seed: fc.integer({ min: 1, max: 1_000_000 }),
  }),
  fc.record({
    fail503Rate: fc.constant(0),
    retryAfter503: fc.constant(false),
    fail429Rate: fc.constant(0),
    dropWriteRate: fc.constantFrom(0, 0.2),
    lateWriteRate: fc.constantFrom(0, 0.2),
    lateWriteMs: fc.constantFrom(450 as const, 850 as const),
    commitThen500Rate: fc.constant(0),
    proxyErrorRate: fc.constant(0),
    seed: fc.integer({ min: 1, max: 1_000_000 }),
  }),
);

/** A step that meets faults half the time. */
const sometimesFaults = fc.option(faultsArb, { nil: undefined, freq: 2 });

/**
 * A rollout step (2 waves, its configs logging errors or not, on_failure rollback or halt). Drawn in
 * explorations only (PCSYNC_TEST_SEED, PCSYNC_MODEL_RUNS): `npm test`'s pinned seed keeps the
 * sequences it walked before rollouts existed, and the replayed sequences below run rollouts on
 * every run.
 */
const rolloutStep = {
  weight: 1,
  arbitrary: fc.record({
    kind: fc.constant("rollout" as const),
    manifest: manifestIndex,
    scope: scopeArb,
    failing: fc.boolean(),
    onFailure: fc.constantFrom("rollback" as const, "halt" as const),
    meddle: fc.option(fc.constantFrom(PC, FE), { nil: undefined }),
    faults: sometimesFaults,
    // A bake of 1s: each wave is read again as its bake ends, and a later wave's lists after it.
    bake: fc.constantFrom("0s" as const, "1s" as const),
    editAfterMs: fc.option(fc.integer({ min: 0, max: 1500 }), { nil: undefined }),
    editNext: fc.boolean(),
    undo: fc.boolean(),
  }),
};

/** A rollout stopped by a signal somewhere in it, then applied again (explorations only, as above). */
const rolloutSignalStep = {
  weight: 1,
  arbitrary: fc.record({
    kind: fc.constant("rollout-signal" as const),
    manifest: manifestIndex,
    failing: fc.boolean(),
    signal: fc.constantFrom("SIGINT" as const, "SIGTERM" as const, "SIGKILL" as const),
    writes: fc.integer({ min: 1, max: 4 }),
    delayMs: fc.integer({ min: 0, max: 60 }),
    undo: fc.boolean(),
  }),
};

const stepArb: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({ kind: fc.constant("apply" as const), manifest: manifestIndex, scope: scopeArb }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("apply" as const),
      manifest: manifestIndex,
      scope: scopeArb,
      faults: faultsArb,
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant("plan" as const), manifest: manifestIndex, scope: scopeArb }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("apply-saved" as const) }) },
  {
    weight: 3,
    arbitrary: fc.record({ kind: fc.constant("rollback" as const), faults: sometimesFaults }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("rollback-during-apply" as const),
      manifest: manifestIndex,
      writes: fc.integer({ min: 1, max: 3 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("kill-resume" as const),
      manifest: manifestIndex,
      writes: fc.integer({ min: 1, max: 5 }),
      faults: sometimesFaults,
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("kill-rollback" as const),
      manifest: manifestIndex,
      writes: fc.integer({ min: 1, max: 5 }),
      faults: sometimesFaults,
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("kill-apply" as const),
      manifest: manifestIndex,
      writes: fc.integer({ min: 1, max: 5 }),
      faults: sometimesFaults,
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("heal" as const),
      manifest: manifestIndex,
      faults: sometimesFaults,
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("heal" as const),
      manifest: manifestIndex,
      rollout: fc.constant(true),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("edit" as const),
      pick: fc.nat({ max: 30 }),
      change: fc.constantFrom<EditKind>(
        "toggle-enabled",
        "describe",
        "rename-look-alike",
        "delete",
        "reorder",
      ),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("create" as const),
      project: fc.constantFrom(...PROJECTS),
      family: fc.constantFrom(PC, FE),
      pick: fc.nat({ max: Math.max(namesOf(PC).length, namesOf(FE).length) }),
      variant: fc.constantFrom<Variant>("as-is", "trailing-space", "nfd"),
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("second-owner" as const), race: fc.boolean() }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("twin" as const),
      manifest: manifestIndex,
      faults: sometimesFaults,
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("export-plan" as const), templates: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("lookup" as const), pick: fc.nat(40) }) },
  ...(PINNED_SEED === undefined ? [rolloutStep, rolloutSignalStep] : []),
);

function setupArb(profile: ProfileName): fc.Arbitrary<WorldSetup> {
  return fc.record({
    profile: fc.constant(profile),
    remote: remoteArb(profile),
    manifests: fc
      .constantFrom<string | null>(OWNER_A, OWNER_A, null)
      .chain((owner) =>
        fc.array(manifestArb(fc.constant(owner)), { minLength: MANIFESTS, maxLength: MANIFESTS }),
      ),
    second: manifestArb(fc.constant(OWNER_B)),
  });
}

describe.each(PROFILE_NAMES)("model-based: every feature against every other (%s)", (profile) => {
  it(
    `holds the invariants over ${RUNS} random sequences of up to ${LONGEST} steps`,
    async () => {
      await fc.assert(
        fc.asyncProperty(
          setupArb(profile),
          fc.array(stepArb, { minLength: 1, maxLength: LONGEST }),
          async (setup, steps) => {
            const directory = await temporaryDirectory();
            const world = new World(setup, directory.path);
            await world.start();
            try {
              for (const [index, step] of steps.entries()) await world.step(index, step);
            } finally {
              await world.close();
              await directory.remove();
            }
          },
        ),
        {
          numRuns: RUNS,
          // Shrinking a long failing sequence can take longer than finding it: PCSYNC_MODEL_NO_SHRINK=1
          // prints the sequence as found.
          ...(process.env.PCSYNC_MODEL_NO_SHRINK === "1" ? { endOnFailure: true } : {}),
          interruptAfterTimeLimit: TIME_LIMIT_MS,
          ...(PINNED_SEED === undefined ? {} : { seed: PINNED_SEED }),
        },
      );
    },
    TIME_LIMIT_MS + 120_000,
  );
});

replaySequences("model-based: the sequences that found seams, replayed", 0);
