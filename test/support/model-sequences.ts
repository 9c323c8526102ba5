// The shortest sequences that broke an invariant of the model-based test when it found them: each
// one of the seams between features, replayed as it was found. Two test files replay half each
// (model-based.test.ts and model-replays.test.ts), so that the two halves run side by side.

import { describe, it } from "vitest";
import { PROFILE_NAMES, type ProfileName } from "../../src/emulator/index.js";
import type { FamilyName } from "../../src/families.js";
import { FE, PC } from "./families.js";
import {
  type ConfigModel,
  type FamilyModel,
  type ManifestModel,
  OWNER_A,
  OWNER_B,
  type RemoteRecordModel,
  type Variant,
} from "./model-manifests.js";
import { type Step, World } from "./model-world.js";
import { temporaryDirectory } from "./work-dir.js";

/** A family block with defaults, for the sequences below. */
function family(configs: ConfigModel[], options: Partial<FamilyModel> = {}): FamilyModel {
  return { prune: false, fieldsAll: false, protect: [], explicitOrder: false, configs, ...options };
}

function manifest(
  owner: string | null,
  families: Partial<Record<FamilyName, FamilyModel>>,
  project2?: Partial<Record<FamilyName, FamilyModel>>,
): ManifestModel {
  return {
    owner,
    template: null,
    set: null,
    projects: { "1": families, ...(project2 ? { "2": project2 } : {}) },
  };
}

export const noManifest = manifest(OWNER_B, { [PC]: family([]) });

export interface Sequence {
  seam: string;
  profiles: readonly ProfileName[];
  remote: RemoteRecordModel[];
  manifests: ManifestModel[];
  second?: ManifestModel;
  steps: Step[];
}

const record = (
  name: string | null,
  variant: Variant = "as-is",
  fields: Partial<RemoteRecordModel> = {},
): RemoteRecordModel => ({ project: "1", family: PC, name, variant, enabled: true, mark: null, ...fields });

// The shortest sequences that broke an invariant when this test was written: each is one of the
// seams between features that the random sequences above found, replayed as it was found.
export const SEQUENCES: Sequence[] = [
  {
    seam: "a rollout with --exclude naming a record of one project only warns, wave after wave, that the name matches nothing (each wave's re-plan reads only its projects)",
    profiles: PROFILE_NAMES,
    remote: [record("bot-filter")],
    manifests: [
      manifest(null, { [PC]: family([{ name: "Billing" }]) }, { [PC]: family([{ name: "Billing" }]) }),
    ],
    steps: [
      { kind: "rollout", manifest: 0, scope: { exclude: "bot-filter" }, failing: false, onFailure: "halt" },
    ],
  },
  {
    seam: "the rollback of a --takeover run that deleted another owner's record is refused for that owner's mark, which the record carried before the run",
    profiles: PROFILE_NAMES,
    remote: [record("café", "as-is", { mark: OWNER_B })],
    manifests: [manifest(OWNER_A, { [PC]: family([{ name: "café", deleted: true }]) })],
    steps: [{ kind: "apply", manifest: 0, scope: { takeover: true } }, { kind: "rollback" }],
  },
  {
    seam: "export of records of one owner beside an unnamed record of another (exported under its plugin's name) names neither owner, and says why",
    profiles: PROFILE_NAMES,
    remote: [record(null, "as-is", { project: "2", family: FE, mark: OWNER_B })],
    manifests: [manifest(OWNER_A, { [PC]: family([{ name: "Property Filter", enabled: false }]) })],
    steps: [
      { kind: "apply", manifest: 0, scope: {} },
      { kind: "export-plan", templates: true },
    ],
  },
  {
    seam: "a rollout whose later wave creates a plugin config, a frontend app of its name made during the first wave (posthog-2024 lists it in plugin_configs), stops at its re-read with 'two records named'",
    profiles: PROFILE_NAMES,
    remote: [],
    manifests: [
      manifest(null, { [PC]: family([{ name: "app-banner" }]) }, { [PC]: family([{ name: "app-banner" }]) }),
    ],
    steps: [
      {
        kind: "rollout",
        manifest: 0,
        failing: false,
        onFailure: "rollback",
        meddle: "pipeline_frontend_apps_configs",
      },
    ],
  },
  {
    seam: "the rollback of an owner's claim that lost a race to another owner, whose mark a later write's answer showed, erases that owner's mark",
    profiles: PROFILE_NAMES,
    remote: [record("café", "as-is", { enabled: false })],
    manifests: [manifest(OWNER_A, { [PC]: family([{ name: "café", enabled: false }]) })],
    second: manifest(OWNER_B, {
      [PC]: family([{ name: "café", enabled: true, ignore_fields: ["enabled", "description"] }]),
    }),
    steps: [{ kind: "second-owner", race: true }, { kind: "rollback" }],
  },
  {
    seam: "a --takeover of another owner's record, its rollback, and the rollback of that rollback (which takes it over again)",
    profiles: PROFILE_NAMES,
    remote: [record("Billing")],
    manifests: [manifest(OWNER_A, { [PC]: family([{ name: "Billing", enabled: false }]) })],
    second: manifest(OWNER_B, { [PC]: family([{ name: "Billing", enabled: true }]) }),
    steps: [
      { kind: "second-owner", race: false },
      { kind: "apply", manifest: 0, scope: { takeover: true } },
      { kind: "rollback" },
      { kind: "rollback" },
    ],
  },
  {
    seam: "job --family plugin_configs --config NAME, the name a frontend app's too (posthog-2024 lists the app in plugin_configs), is refused as ambiguous",
    profiles: PROFILE_NAMES,
    remote: [record("app-banner", "as-is", { family: FE })],
    manifests: [manifest(null, { [PC]: family([{ name: "app-banner", enabled: false }]) })],
    steps: [
      { kind: "apply", manifest: 0, scope: {} },
      ...Array.from({ length: 12 }, (_, pick) => ({ kind: "lookup" as const, pick })),
    ],
  },
  {
    seam: "a rollout whose later wave creates a plugin config named like a frontend app (plugin_configs lists the apps on posthog-2024) stops before that wave, the app taken for a copy",
    profiles: PROFILE_NAMES,
    remote: [record("app-banner", "as-is", { family: FE })],
    manifests: [
      manifest(null, { [PC]: family([{ name: "app-banner" }]) }, { [PC]: family([{ name: "cfg-002" }]) }),
    ],
    steps: [{ kind: "rollout", manifest: 0, failing: false, onFailure: "rollback" }],
  },
  {
    seam: "a plugin config named like a frontend app that plugin_configs lists (posthog-2024) takes the app for its record, its family unmanaged",
    profiles: PROFILE_NAMES,
    remote: [record("app-banner", "as-is", { family: FE })],
    manifests: [manifest(null, { [PC]: family([{ name: "app-banner", enabled: false }]) })],
    steps: [{ kind: "apply", manifest: 0, scope: {} }, { kind: "rollback" }],
  },
  {
    seam: "a rollout killed after its `deleted: true` delete, applied again, is not refused by a prune guard the whole plan passed",
    profiles: PROFILE_NAMES,
    remote: [record("bot-filter", "as-is", { mark: OWNER_A })],
    manifests: [manifest(OWNER_A, { [PC]: family([{ name: "Legacy S3", deleted: true }], { prune: true }) })],
    steps: [
      { kind: "rollout-signal", manifest: 0, failing: false, signal: "SIGKILL", writes: 1, delayMs: 0 },
    ],
  },
  {
    // seed only: posthog-2024 trims names, so it never holds " Property Filter".
    seam: "rollback of a rollback puts a name that is the plugin's own back as that name, not emptied (seed shows empty names)",
    profiles: ["seed"],
    remote: [record("Property Filter", "leading-space", { project: "2" })],
    manifests: [manifest(null, {}, { [PC]: family([{ name: "Property Filter" }]) })],
    steps: [{ kind: "apply", manifest: 0, scope: {} }, { kind: "rollback" }, { kind: "rollback" }],
  },
  {
    seam: "a glob with a dash (--target 'cfg-*') ends in an internal error",
    profiles: PROFILE_NAMES,
    remote: [],
    manifests: [manifest(null, { [PC]: family([{ name: "cfg-001", enabled: true }]) })],
    steps: [{ kind: "apply", manifest: 0, scope: { target: "cfg-*" } }],
  },
  {
    seam: "protect: [café] does not protect an NFD café from prune",
    profiles: PROFILE_NAMES,
    remote: [record("café", "nfd")],
    manifests: [manifest(null, { [PC]: family([{ name: "GeoIP" }], { prune: true, protect: ["café"] }) })],
    steps: [{ kind: "apply", manifest: 0, scope: {} }],
  },
  {
    seam: "protect: ['*'] does not protect a record with no name from prune",
    profiles: ["seed"],
    remote: [record(null)],
    manifests: [
      manifest(null, {
        [PC]: family(
          ["GeoIP", "Property Filter", "Legacy S3"].map((name) => ({ name })),
          { prune: true, protect: ["*"] },
        ),
      }),
    ],
    steps: [{ kind: "apply", manifest: 0, scope: {} }],
  },
  {
    seam: "rollback of an owner's apply finds a change made since where there is none",
    profiles: PROFILE_NAMES,
    remote: [],
    manifests: [manifest(OWNER_A, { [PC]: family([{ name: "cfg-001", enabled: true, description: "x" }]) })],
    steps: [{ kind: "apply", manifest: 0, scope: {} }, { kind: "rollback" }],
  },
  {
    seam: "rollback brings back a deleted record whose name another record holds now",
    profiles: PROFILE_NAMES,
    remote: [record("Billing")],
    manifests: [manifest(null, { [PC]: family([{ name: "Billing", deleted: true }]) })],
    steps: [
      { kind: "apply", manifest: 0, scope: {} },
      { kind: "create", project: "1", family: PC, pick: 4, variant: "as-is" },
      { kind: "rollback" },
    ],
  },
  {
    seam: "rollback of a journal whose apply still runs says it is complete",
    profiles: ["seed"],
    remote: [],
    manifests: [
      manifest(null, {
        [PC]: family(
          ["cfg-001", "cfg-002", "bot-filter", "Billing"].map((name) => ({ name, enabled: true })),
        ),
      }),
    ],
    steps: [{ kind: "rollback-during-apply", manifest: 0, writes: 1 }],
  },
  {
    seam: "a heal writes without a journal",
    profiles: PROFILE_NAMES,
    remote: [],
    manifests: [manifest(null, { [PC]: family([{ name: "GeoIP", enabled: false }]) })],
    steps: [{ kind: "heal", manifest: 0 }],
  },
  {
    seam: "a heal sends a manifest change to every project at once, past the manifest's rollout:",
    profiles: PROFILE_NAMES,
    remote: [],
    manifests: [manifest(null, { [PC]: family([{ name: "GeoIP", enabled: false }]) })],
    steps: [{ kind: "heal", manifest: 0, rollout: true }],
  },
  {
    seam: "two owners adopting one unmarked record at once both succeed",
    profiles: ["seed"],
    remote: [record("cfg-001")],
    manifests: [manifest(OWNER_A, { [PC]: family([{ name: "cfg-001", description: "a's" }]) })],
    second: manifest(OWNER_B, { [PC]: family([{ name: "cfg-001", description: "b's" }]) }),
    steps: [{ kind: "second-owner", race: true }],
  },
  {
    seam: "rollback of the journal of an owner whose racing create lost (its copy deleted by the run) (model: the copy's image is the run's own)",
    profiles: PROFILE_NAMES,
    remote: [],
    manifests: [manifest(OWNER_A, { [PC]: family([{ name: "Billing" }]) })],
    second: manifest(OWNER_B, { [PC]: family([{ name: "Billing" }]) }),
    steps: [{ kind: "second-owner", race: true }, { kind: "rollback" }],
  },
  {
    seam: "deleted: true deletes a record another owner marked",
    profiles: PROFILE_NAMES,
    remote: [record("cfg-001", "as-is", { mark: OWNER_A })],
    manifests: [manifest(OWNER_A, { [PC]: family([]) })],
    second: manifest(OWNER_B, { [PC]: family([{ name: "cfg-001", deleted: true }]) }),
    steps: [{ kind: "second-owner", race: false }],
  },
  {
    seam: "export of records that carry one owner's mark writes no owner:",
    profiles: ["seed"],
    remote: [],
    manifests: [
      manifest(
        OWNER_A,
        {
          [PC]: family(
            ["GeoIP", "Property Filter", "Legacy S3"].map((name) => ({ name })),
            { prune: true },
          ),
          [FE]: family([{ name: "Notification Bar" }]),
        },
        { [PC]: family([{ name: "GeoIP" }]) },
      ),
    ],
    steps: [
      { kind: "apply", manifest: 0, scope: {} },
      { kind: "export-plan", templates: false },
    ],
  },
  {
    seam: "a rollout whose first wave fails rolls back or halts; the same change then, its logs healthy, under a journal of its own, is refused while the failing project holds it (a new journal does not lift a halt)",
    profiles: ["seed"],
    remote: [],
    manifests: [
      manifest(
        null,
        { [PC]: family([{ name: "cfg-001", enabled: true, description: "x" }]) },
        { [PC]: family([{ name: "cfg-001", enabled: true, description: "x" }]) },
      ),
    ],
    steps: [
      { kind: "rollout", manifest: 0, failing: true, onFailure: "rollback" },
      { kind: "rollout", manifest: 0, failing: true, onFailure: "halt" },
      { kind: "rollout", manifest: 0, failing: false, onFailure: "rollback" },
    ],
  },
  {
    seam: "a rollout undone whole by its journal (halted and left in place, or complete; creates, updates and a prune) leaves every record as before it; the halt undone no longer holds",
    profiles: PROFILE_NAMES,
    remote: [],
    manifests: [
      manifest(
        null,
        { [PC]: family([{ name: "cfg-001", enabled: true, description: "x" }]) },
        { [PC]: family([{ name: "cfg-001", enabled: true, description: "x" }]) },
      ),
      manifest(
        null,
        { [PC]: family([{ name: "cfg-001", enabled: false, description: "y" }, { name: "cfg-002" }]) },
        { [PC]: family([], { prune: true }) },
      ),
    ],
    steps: [
      { kind: "rollout", manifest: 0, failing: true, onFailure: "halt", undo: true },
      { kind: "rollout", manifest: 0, failing: false, onFailure: "rollback", undo: true },
      { kind: "apply", manifest: 0, scope: {} },
      { kind: "rollout", manifest: 1, failing: false, onFailure: "halt", undo: true },
    ],
  },
  {
    seam: "a rollout killed -9 after its first write, finished by the next apply (its first wave written through two journals), then undone whole: every record as before it",
    // One profile: the undo is the same on both (test/e2e/rollout.test.ts undoes on each), and a
    // kill costs a late-write wait.
    profiles: ["seed"],
    remote: [],
    manifests: [
      manifest(
        null,
        { [PC]: family([{ name: "cfg-001", description: "k" }, { name: "cfg-002" }, { name: "cfg-003" }]) },
        { [PC]: family([{ name: "cfg-001", description: "k" }, { name: "cfg-002" }, { name: "cfg-003" }]) },
      ),
    ],
    steps: [
      {
        kind: "rollout-signal",
        manifest: 0,
        failing: false,
        signal: "SIGKILL",
        writes: 1,
        delayMs: 0,
        undo: true,
      },
    ],
  },
  {
    seam: "a rollout whose records another actor edits in the first wave's bake stops before judging that wave (its config edited) or before writing the next (its record edited), and never writes over the edit",
    profiles: PROFILE_NAMES,
    remote: [],
    manifests: [
      manifest(
        null,
        { [PC]: family([{ name: "cfg-001", enabled: true, description: "x" }]) },
        { [PC]: family([{ name: "cfg-001", enabled: true, description: "x" }]) },
      ),
      manifest(
        null,
        { [PC]: family([{ name: "cfg-001", enabled: true, description: "y" }]) },
        { [PC]: family([{ name: "cfg-001", enabled: true, description: "y" }]) },
      ),
    ],
    steps: [
      { kind: "apply", manifest: 0, scope: {} },
      // The edit lands 300 ms into the first wave's 1 s bake.
      { kind: "rollout", manifest: 1, failing: false, onFailure: "rollback", bake: "1s", editAfterMs: 300 },
      // Applied again: the wave is written again; this edit lands after the bake.
      { kind: "rollout", manifest: 1, failing: false, onFailure: "rollback", bake: "1s", editAfterMs: 1400 },
      { kind: "apply", manifest: 0, scope: {} },
      // A record of the next wave, edited 300 ms into the first wave's bake: the rollout stops before it.
      {
        kind: "rollout",
        manifest: 1,
        failing: false,
        onFailure: "rollback",
        bake: "1s",
        editAfterMs: 300,
        editNext: true,
      },
    ],
  },
  {
    seam: "a rollout's re-read, with a record another actor made during its first wave in a pruned family's project",
    profiles: PROFILE_NAMES,
    remote: [],
    manifests: [
      manifest(
        null,
        { [PC]: family([{ name: "cfg-001", enabled: true, description: "x" }], { prune: true }) },
        { [PC]: family([{ name: "cfg-001", enabled: true, description: "x" }], { prune: true }) },
      ),
      manifest(
        null,
        {
          [PC]: family(
            [
              { name: "cfg-001", enabled: true, description: "y" },
              { name: "cfg-002", enabled: true, description: "y" },
            ],
            { prune: true },
          ),
        },
        { [PC]: family([{ name: "cfg-001", enabled: true, description: "y" }], { prune: true }) },
      ),
    ],
    steps: [
      { kind: "rollout", manifest: 0, failing: false, onFailure: "rollback", meddle: FE },
      // The actor creates cfg-002 in project 1 (the last wave, by the hash), which the rollout is about
      // to create there.
      { kind: "rollout", manifest: 1, failing: false, onFailure: "rollback", meddle: PC },
    ],
  },
  {
    seam: "a rollout stopped by a signal in its writes, its re-read, the read before its next wave, its rollback",
    profiles: PROFILE_NAMES,
    remote: [],
    manifests: [
      manifest(
        null,
        { [PC]: family([{ name: "cfg-001", enabled: true, description: "x" }]) },
        { [PC]: family([{ name: "cfg-001", enabled: true, description: "x" }]) },
      ),
      manifest(
        null,
        { [PC]: family([{ name: "cfg-001", enabled: true, description: "y" }]) },
        { [PC]: family([{ name: "cfg-001", enabled: true, description: "y" }]) },
      ),
    ],
    steps: [
      // The first wave's one write in flight: the re-read after it is refused by the client.
      { kind: "rollout-signal", manifest: 0, failing: false, signal: "SIGINT", writes: 1, delayMs: 0 },
      // After the first wave: in its judging or the read before the second.
      { kind: "rollout-signal", manifest: 1, failing: false, signal: "SIGTERM", writes: 1, delayMs: 40 },
      // A halting rollout: in its judging or its rollback, then killed in its rollback's write (its
      // second: the first wave wrote one); applied again, the rollback is finished.
      { kind: "rollout-signal", manifest: 0, failing: true, signal: "SIGINT", writes: 1, delayMs: 15 },
      { kind: "rollout-signal", manifest: 0, failing: true, signal: "SIGKILL", writes: 2, delayMs: 0 },
    ],
  },
  {
    seam: "a rollout whose configs are left disabled (enabled's default): they log nothing, so they pass as nothing to judge",
    profiles: PROFILE_NAMES,
    remote: [],
    manifests: [
      manifest(null, { [PC]: family([]) }, { [PC]: family([{ name: "cfg-002" }, { name: "Legacy S3" }]) }),
      manifest(null, { [PC]: family([{ name: "cfg-001" }]) }, { [PC]: family([{ name: "cfg-003" }]) }),
    ],
    steps: [
      { kind: "rollout-signal", manifest: 0, failing: false, signal: "SIGINT", writes: 1, delayMs: 0 },
      { kind: "rollout", manifest: 1, failing: false, onFailure: "rollback" },
    ],
  },
  {
    seam: "a rollout's later wave deletes a record by `deleted: true`: the check before the wave took it for a prune",
    profiles: PROFILE_NAMES,
    remote: [],
    manifests: [
      manifest(
        OWNER_A,
        { [PC]: family([{ name: "GeoIP", deleted: true }]) },
        { [FE]: family([{ name: "app-banner" }]) },
      ),
      manifest(
        null,
        { [PC]: family([{ name: "Legacy S3", deleted: true }]) },
        { [PC]: family([{ name: "cfg-002" }]) },
      ),
    ],
    // By the hash, project 2 is the first wave and project 1 the last.
    steps: [
      { kind: "rollout", manifest: 0, failing: false, onFailure: "rollback" },
      { kind: "rollout", manifest: 1, failing: false, onFailure: "rollback" },
    ],
  },
  {
    seam: "apply --plan --resume of a plan whose delete `deleted: true` asks for, killed after its first write",
    profiles: PROFILE_NAMES,
    remote: [],
    manifests: [
      manifest(
        OWNER_A,
        {
          [PC]: family([{ name: "Legacy S3" }, { name: "café" }]),
          [FE]: family([{ name: "Notification Bar", deleted: true }, { name: "app-banner" }]),
        },
        { [FE]: family([{ name: "Notification Bar", deleted: true }, { name: "app-banner" }]) },
      ),
    ],
    steps: [{ kind: "kill-resume", manifest: 0, writes: 1 }, { kind: "rollback" }],
  },
  {
    seam: "apply killed with its first create held past the timeout, then applied again at once beside its journal: the create is made once (a plugin config named like a frontend app)",
    profiles: PROFILE_NAMES,
    remote: [],
    manifests: [
      manifest(null, {
        [PC]: family([{ name: "app-banner" }, { name: "cfg-001" }]),
        [FE]: family([{ name: "Notification Bar" }, { name: "app-banner" }]),
      }),
    ],
    steps: [
      {
        kind: "kill-apply",
        manifest: 0,
        writes: 1,
        faults: {
          fail503Rate: 0,
          retryAfter503: false,
          fail429Rate: 0,
          dropWriteRate: 0,
          lateWriteRate: 1,
          lateWriteMs: 850,
          commitThen500Rate: 0,
          proxyErrorRate: 0,
          seed: 1,
        },
      },
      { kind: "rollback" },
    ],
  },
  {
    seam: "apply --plan --resume of deletes in both families, killed after four writes (posthog-2024: plugin_configs shows the frontend apps, not the other way round)",
    profiles: PROFILE_NAMES,
    remote: [record("Señal", "as-is", { family: FE, enabled: false })],
    manifests: [
      manifest(
        OWNER_A,
        {
          [PC]: family([
            { name: "cfg-001" },
            { name: "Legacy S3", deleted: true },
            { name: "Property Filter" },
          ]),
          [FE]: family([{ name: "Señal", deleted: true }]),
        },
        { [FE]: family([{ name: "Señal", deleted: true }]) },
      ),
    ],
    steps: [{ kind: "kill-resume", manifest: 0, writes: 4 }],
  },
  {
    seam: "export of a record an owner adopted while posthog-2024 showed the plugin's own description",
    profiles: PROFILE_NAMES,
    remote: [],
    manifests: [manifest(OWNER_A, { [PC]: family([]) }, { [PC]: family([{ name: "GeoIP" }]) })],
    steps: [
      { kind: "apply", manifest: 0, scope: {} },
      { kind: "export-plan", templates: false },
    ],
  },
  {
    seam: "apply --plan --resume of a run killed after its first write, its plan pruning an owner's record and creating from a template",
    profiles: PROFILE_NAMES,
    remote: [
      record("Legacy S3", "as-is", { project: "2", enabled: false }),
      record("Billing", "as-is", { project: "2", enabled: false, mark: OWNER_A }),
    ],
    manifests: [
      {
        owner: OWNER_A,
        template: { configs: [{ name: "Property Filter" }], protect: [] },
        set: { useTemplate: false, frontend: family([]) },
        projects: { "1": { [PC]: family([]) }, "2": { [PC]: family([], { prune: true }) } },
      },
    ],
    steps: [{ kind: "kill-resume", manifest: 0, writes: 1 }],
  },
  {
    seam: "apply --plan of an owner's prune of its last marked record beside an unmarked one passes the guard plan showed",
    profiles: PROFILE_NAMES,
    remote: [
      record("Legacy S3", "as-is", { project: "2", enabled: false }),
      record("Billing", "as-is", { project: "2", enabled: false, mark: OWNER_A }),
    ],
    manifests: [manifest(OWNER_A, { [PC]: family([]) }, { [PC]: family([], { prune: true }) })],
    steps: [{ kind: "plan", manifest: 0, scope: {} }, { kind: "apply-saved" }],
  },
  {
    seam: "apply --plan --resume of a run killed after deleting a plugin config, plugin_configs then listing only frontend apps (posthog-2024: the one taken for the other)",
    profiles: PROFILE_NAMES,
    remote: [record("early-access", "as-is", { project: "2", family: FE, enabled: false })],
    manifests: [
      {
        owner: OWNER_A,
        template: { configs: [{ name: "GeoIP", deleted: true }], protect: [] },
        set: { useTemplate: true, frontend: family([{ name: "early-access" }]) },
        projects: { "1": { [PC]: family([]) } },
      },
    ],
    steps: [{ kind: "kill-resume", manifest: 0, writes: 2 }],
  },
  {
    seam: "an apply under every fault at once (creates, adoptions, deletes and a reorder in both families), then its rollback, then a second owner's apply",
    profiles: PROFILE_NAMES,
    remote: [
      record("Legacy S3", "as-is", { project: "2", enabled: false }),
      record("early-access", "as-is", { project: "2", family: FE, enabled: false }),
    ],
    manifests: [
      manifest(
        OWNER_A,
        {
          [PC]: family([{ name: "cfg-001" }, { name: "GeoIP" }, { name: "Legacy S3", deleted: true }]),
          [FE]: family([{ name: "app-banner" }, { name: "Notification Bar" }]),
        },
        {
          [PC]: family([{ name: "café" }, { name: "GeoIP" }], { prune: true }),
          [FE]: family([{ name: "early-access" }, { name: "Señal" }]),
        },
      ),
    ],
    steps: [
      {
        kind: "apply",
        manifest: 0,
        scope: {},
        faults: {
          fail503Rate: 0.15,
          retryAfter503: false,
          fail429Rate: 0.1,
          dropWriteRate: 0.05,
          lateWriteRate: 0.05,
          lateWriteMs: 850,
          commitThen500Rate: 0.1,
          proxyErrorRate: 0.05,
          seed: 7,
        },
      },
      { kind: "rollback" },
      { kind: "second-owner", race: false },
    ],
    second: manifest(OWNER_B, { [PC]: family([{ name: "Property Filter" }], { prune: true }) }),
  },
  {
    seam: "apply --plan of a plan made with --allow-destroy, given the same at apply as the manual says, passes the guards plan showed (none)",
    profiles: ["posthog-2024"],
    remote: [record("cfg-002", "as-is", { project: "2", enabled: false })],
    manifests: [
      manifest(
        OWNER_A,
        { [PC]: family([]) },
        { [PC]: family([{ name: "cfg-002", deleted: true }], { protect: ["cfg-*"] }) },
      ),
    ],
    steps: [{ kind: "plan", manifest: 0, scope: { allowDestroy: "*" } }, { kind: "apply-saved" }],
  },
  {
    seam: "apply killed -9 after the create of a config asked of the frontend apps whose plugin is none (posthog-2024 keeps it under plugin_configs) was sent, its answer lost; rolled back at once, then healed",
    profiles: PROFILE_NAMES,
    remote: [],
    manifests: [
      manifest(OWNER_A, { [PC]: family([{ name: "cfg-002" }]) }, { [FE]: family([{ name: "mislaid" }]) }),
    ],
    steps: [
      { kind: "kill-rollback", manifest: 0, writes: 2 },
      { kind: "heal", manifest: 0 },
    ],
  },
  {
    seam: "the same killed apply, applied again at once: the record it made under plugin_configs is taken back with the new one",
    profiles: PROFILE_NAMES,
    remote: [],
    manifests: [
      manifest(null, { [PC]: family([{ name: "cfg-002" }]) }, { [FE]: family([{ name: "mislaid" }]) }),
    ],
    steps: [{ kind: "kill-apply", manifest: 0, writes: 2 }],
  },
  {
    seam: "the same killed apply, where plugin_configs holds a record of that name and plugin already: the new apply takes back the killed run's record, never that one",
    profiles: ["posthog-2024"],
    remote: [record("mislaid", "as-is", { project: "2" })],
    manifests: [
      manifest(null, { [PC]: family([{ name: "cfg-002" }]) }, { [FE]: family([{ name: "mislaid" }]) }),
    ],
    steps: [{ kind: "kill-apply", manifest: 0, writes: 2 }],
  },
  {
    seam: "the same config protected, its apply killed -9 after its create and resumed: the record the service keeps under plugin_configs is taken back all the same",
    profiles: ["posthog-2024"],
    remote: [],
    manifests: [manifest(null, { [PC]: family([]) }, { [FE]: family([{ name: "mislaid", protect: true }]) })],
    steps: [{ kind: "kill-resume", manifest: 0, writes: 1 }],
  },
  {
    seam: "a rollout whose first wave makes the mislaid config, stopped by SIGINT right after that create: applied again, the record the stopped run made is taken back",
    profiles: ["posthog-2024"],
    remote: [],
    manifests: [
      manifest(
        "team-a",
        { [PC]: family([]) },
        { [PC]: family([]), [FE]: family([{ name: "Notification Bar" }, { name: "mislaid" }]) },
      ),
    ],
    steps: [{ kind: "rollout-signal", manifest: 0, failing: false, signal: "SIGINT", writes: 1, delayMs: 0 }],
  },
];

/**
 * Replays the sequences `part` takes (by their index: 0, the even ones; 1, the odd ones), each on
 * its profiles, a test per sequence and profile.
 */
export function replaySequences(title: string, part: 0 | 1): void {
  describe(title, () => {
    const cases = SEQUENCES.filter((_, index) => index % 2 === part).flatMap((sequence) =>
      sequence.profiles.map((profile) => ({ ...sequence, profile, name: `${sequence.seam} (${profile})` })),
    );
    // A name of its own per case (not `it.each`'s "$name", which cuts it at 40 characters), so
    // that `-t` picks one sequence by any part of its seam.
    for (const { name, profile, remote, manifests, second, steps } of cases)
      it(name, async () => {
        const directory = await temporaryDirectory();
        const world = new World({ profile, remote, manifests, second: second ?? noManifest }, directory.path);
        await world.start();
        try {
          for (const [index, step] of steps.entries()) await world.step(index, step);
        } finally {
          await world.close();
          await directory.remove();
        }
      }, 60_000);
  });
}
