// The model-based test that looks for the next seam between features: sequences of steps a team,
// its CI and other people take on one service (apply, plan, apply of a saved plan, rollback of the
// latest journal, an apply killed with SIGKILL at a random write and resumed, a heal cycle, another
// actor's edit or create over HTTP, a second owner's apply alone or racing the first, export then
// plan), with manifests drawn from every manifest feature at once, against emulator states holding
// look-alike and null names, on both profiles. After every step the emulator's own state and every
// output are held to the invariants (test/support/model-world.ts): no two live records of one name
// per family, a protected record never deleted, another owner's record never written, a rollback
// restores the journal's before image exactly, a plan after a clean apply is empty, no internal
// error or stack trace, exit codes 0-4.
//
// `npm test` runs a few short sequences per profile; PCSYNC_MODEL_RUNS=200 runs that many (and
// PCSYNC_MODEL_STEPS sets the longest sequence). A failure prints the seed (PCSYNC_TEST_SEED
// replays it), the shrunk sequence and the transcript of the commands it ran.

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
import { type EditKind, type Scope, type Step, World, type WorldSetup } from "../support/model-world.js";
import { temporaryDirectory } from "../support/work-dir.js";

const RUNS = Number(process.env.PCSYNC_MODEL_RUNS ?? 2);
const LONGEST = Number(process.env.PCSYNC_MODEL_STEPS ?? 7);
/** New runs (and shrinking) stop after this long; the soak sets no limit of its own. */
const TIME_LIMIT_MS = process.env.PCSYNC_MODEL_RUNS === undefined ? 15_000 : 60_000 * 60;

const MANIFESTS = 2;

const scopeArb: fc.Arbitrary<Scope> = fc.oneof(
  { weight: 4, arbitrary: fc.constant({}) },
  { weight: 1, arbitrary: fc.record({ target: fc.constantFrom(...GLOBS) }) },
  { weight: 1, arbitrary: fc.record({ exclude: fc.constantFrom(...GLOBS) }) },
  { weight: 1, arbitrary: fc.record({ allowDestroy: fc.constantFrom(...GLOBS) }) },
);

const manifestIndex = fc.nat({ max: MANIFESTS - 1 });

const stepArb: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({ kind: fc.constant("apply" as const), manifest: manifestIndex, scope: scopeArb }),
  },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant("plan" as const), manifest: manifestIndex, scope: scopeArb }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("apply-saved" as const) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("rollback" as const) }) },
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
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("heal" as const), manifest: manifestIndex }) },
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
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("export-plan" as const), templates: fc.boolean() }) },
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
        { numRuns: RUNS, interruptAfterTimeLimit: TIME_LIMIT_MS },
      );
    },
    TIME_LIMIT_MS + 120_000,
  );
});
