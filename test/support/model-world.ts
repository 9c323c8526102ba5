// The model-based test's world and steps: an emulator started in-process (so that the test reads
// its state directly, not through pcsync), a working directory, and the steps a team, its CI and
// other people take on one service: apply, plan, apply of a saved plan, rollback, an apply killed
// at a write and resumed, a heal cycle, another actor's edit or create over HTTP, a second owner's
// apply (alone, or racing the first owner), and export then plan. After every step the invariants
// are checked against the emulator's own state; a broken one throws with the step transcript.

import { readdir, readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import {
  type EmulatorData,
  type FaultOptions,
  type ProfileName,
  type RunningEmulator,
  startEmulator,
} from "../../src/emulator/index.js";
import type { FamilyName } from "../../src/families.js";
import { parseJournal, type RecordImage } from "../../src/journal/journal-format.js";
import { readMark } from "../../src/owner-mark.js";
import { type CliRun, spawnCli } from "./cli.js";
import { FE, PC } from "./families.js";
import { runCliInProcess } from "./in-process.js";
import {
  anyGlobMatches,
  asksMislaid,
  configsOf,
  FAMILIES,
  identity,
  type ManifestModel,
  MISLAID,
  manages,
  NAME_PLUGINS,
  OWNER_B,
  PROJECTS,
  type ProjectId,
  protectionOf,
  type RemoteRecordModel,
  remoteData,
  renderManifest,
  type StoredRecord,
  spell,
  type Variant,
} from "./model-manifests.js";
import { hasStackTrace } from "./output-checks.js";
import { KEY } from "./scenario.js";

/** `--target`, `--exclude` and `--allow-destroy` of a run (each at most one glob). */
export interface Scope {
  target?: string;
  exclude?: string;
  allowDestroy?: string;
  /** `--takeover`: the run may claim records another owner marked (so no owner rule binds it). */
  takeover?: boolean;
}

export type EditKind = "toggle-enabled" | "describe" | "rename-look-alike" | "delete" | "reorder";

export type Step =
  | { kind: "apply"; manifest: number; scope: Scope; faults?: TransportFaults | undefined }
  | { kind: "plan"; manifest: number; scope: Scope }
  | { kind: "apply-saved" }
  | { kind: "rollback"; faults?: TransportFaults | undefined }
  | { kind: "rollback-during-apply"; manifest: number; writes: number }
  | { kind: "kill-resume"; manifest: number; writes: number; faults?: TransportFaults | undefined }
  | { kind: "kill-rollback"; manifest: number; writes: number; faults?: TransportFaults | undefined }
  | { kind: "kill-apply"; manifest: number; writes: number; faults?: TransportFaults | undefined }
  | {
      kind: "heal";
      manifest: number;
      /** The manifest with a `rollout:` block. */
      rollout?: boolean;
      faults?: TransportFaults | undefined;
    }
  | { kind: "edit"; pick: number; change: EditKind }
  | { kind: "create"; project: ProjectId; family: FamilyName; pick: number; variant: Variant }
  | { kind: "second-owner"; race: boolean }
  /** The manifest applied by two processes at once, as two CI jobs of one merge do. */
  | { kind: "twin"; manifest: number; faults?: TransportFaults | undefined }
  | { kind: "export-plan"; templates: boolean }
  | { kind: "lookup"; pick: number }
  | {
      kind: "rollout";
      manifest: number;
      /** --target, --exclude, --allow-destroy or --takeover on the rollout's plan and apply. */
      scope?: Scope | undefined;
      failing: boolean;
      onFailure: "rollback" | "halt";
      /** Another actor creates a record of this family in the last wave's project during the first wave. */
      meddle?: FamilyName | undefined;
      /** The rollout meets these (not with `meddle`: the actor's own writes would meet them). */
      faults?: TransportFaults | undefined;
      /** Each wave's bake (0s when not given): with 1s, each wave is read again as its bake ends. */
      bake?: "0s" | "1s" | undefined;
      /**
       * Another actor edits a config the first wave updates, this long after the rollout's write of
       * it (not with `meddle`): in its bake, before or after its re-read, or after it. With
       * `editNext`, a record the next wave updates, this long after the first wave's first write.
       */
      editAfterMs?: number | undefined;
      editNext?: boolean | undefined;
      /** Once it ended (complete, or halted with on_failure: halt), undone whole by its journal. */
      undo?: boolean | undefined;
    }
  | {
      kind: "rollout-signal";
      manifest: number;
      failing: boolean;
      signal: "SIGINT" | "SIGTERM" | "SIGKILL";
      /** The signal is sent this long after the rollout's `writes`-th write (a rollback's included). */
      writes: number;
      delayMs: number;
      /** Once applied again and ended, undone whole by its journal (its resumed wave's journals too). */
      undo?: boolean | undefined;
    };

/** One step in words, for the transcript a failure prints. */
/**
 * Faults of the network and the service an apply meets: those the guarantees name
 * (docs/guarantees.md: 503, 429, writes committed then unanswered, creates answered 500 after they
 * committed, a proxy's 502/504 pages), each at a rate of its own.
 */
export interface TransportFaults {
  fail503Rate: number;
  /** The 503s state a wait (Retry-After), as a service shedding load does. */
  retryAfter503: boolean;
  fail429Rate: number;
  dropWriteRate: number;
  /** Writes held past the client's timeout (300 ms at FAULTED_TIME_SCALE), then committed. */
  lateWriteRate: number;
  /**
   * How long a late write is held: it commits at most twice the timeout after the client gave up,
   * the bound the create rule covers (450: half a timeout after; 850: nearly two).
   */
  lateWriteMs: 450 | 850;
  commitThen500Rate: number;
  proxyErrorRate: number;
  seed: number;
}

/**
 * Every duration of a faulted run (timeouts, proof windows, backoffs, the service's stated waits)
 * at 1/100, as the fault soak runs them: one factor for all, so that no window is shrunk alone.
 */
const FAULTED_TIME_SCALE = 0.01;
/** Every duration of a run without faults: a 1.5 s request timeout. */
const STEADY_TIME_SCALE = 0.05;

function describeFaults(faults: TransportFaults): string {
  const rates = [
    [faults.retryAfter503 ? "503 with Retry-After" : "503", faults.fail503Rate],
    ["429", faults.fail429Rate],
    ["dropped", faults.dropWriteRate],
    [`late by ${faults.lateWriteMs} ms`, faults.lateWriteRate],
    ["commit-then-500", faults.commitThen500Rate],
    ["proxy 502/504", faults.proxyErrorRate],
  ] as const;
  const named = rates
    .filter(([, rate]) => rate > 0)
    .map(([what, rate]) => `${what} ${Math.round(rate * 100)}%`);
  return ` under faults (${named.join(", ") || "none"}; seed ${faults.seed})`;
}

export function describeStep(step: Step): string {
  const scope = (s: Scope) =>
    [
      s.target === undefined ? "" : ` --target '${s.target}'`,
      s.exclude === undefined ? "" : ` --exclude '${s.exclude}'`,
      s.allowDestroy === undefined ? "" : ` --allow-destroy '${s.allowDestroy}'`,
      s.takeover === true ? " --takeover" : "",
    ].join("");
  switch (step.kind) {
    case "apply":
      return `apply -f m${step.manifest}${scope(step.scope)}${step.faults === undefined ? "" : describeFaults(step.faults)}`;
    case "plan":
      return `plan -f m${step.manifest}${scope(step.scope)} -o saved.json`;
    case "apply-saved":
      return "apply --plan saved.json (the latest saved plan)";
    case "twin":
      return `apply -f m${step.manifest} in two processes at once${step.faults === undefined ? "" : describeFaults(step.faults)}`;
    case "rollback":
      return `rollback --journal (the latest journal)${step.faults === undefined ? "" : describeFaults(step.faults)}`;
    case "rollback-during-apply":
      return `apply -f m${step.manifest} in a process; after ${step.writes} writes, rollback of its journal while it runs`;
    case "kill-resume":
      return `plan -f m${step.manifest} -o; apply --plan killed with SIGKILL after ${step.writes} writes; apply --plan --resume${step.faults === undefined ? "" : `, both${describeFaults(step.faults)}`}`;
    case "kill-rollback":
      return `apply -f m${step.manifest} killed with SIGKILL after ${step.writes} writes; rollback of its journal at once${step.faults === undefined ? "" : `, both${describeFaults(step.faults)}`}`;
    case "kill-apply":
      return `apply -f m${step.manifest} killed with SIGKILL after ${step.writes} writes; apply -f m${step.manifest} again at once${step.faults === undefined ? "" : `, both${describeFaults(step.faults)}`}`;
    case "heal":
      return `watch --mode heal --once -f m${step.manifest}${step.rollout === true ? " (with rollout:)" : ""} --keep-heal-journals ${KEPT_HEAL_JOURNALS}${step.faults === undefined ? "" : describeFaults(step.faults)}`;
    case "edit":
      return `another actor: ${step.change} of live record #${step.pick} (over HTTP)`;
    case "create":
      return `another actor: create name #${step.pick} (${step.variant}) in project ${step.project} ${step.family} (over HTTP)`;
    case "second-owner":
      return step.race ? "owner team-b's apply racing m0's apply (two processes)" : "owner team-b's apply";
    case "export-plan":
      return `export --project 1 --project 2${step.templates ? " --templates" : ""} -o; plan -f the export --detailed-exitcode`;
    case "lookup":
      return `job --project P --family F --config NAME of live record #${step.pick}`;
    case "rollout-signal":
      return `apply -f m${step.manifest} with rollout: 2 waves, on_failure: rollback, ${step.failing ? "its plugin configs logging errors after a change" : "healthy logs"}; ${step.signal} ${step.delayMs} ms after its write ${step.writes}; applied again${step.undo === true ? "; once ended, undone whole by `rollback --journal` of its rollout journal" : ""}`;
    case "rollout":
      return `apply -f m${step.manifest}${scope(step.scope ?? {})} with rollout: 2 waves, bake ${step.bake ?? "0s"}, on_failure: ${step.onFailure}, ${step.failing ? "its plugin configs logging errors after a change" : "healthy logs"}${step.meddle === undefined ? "" : `; another actor creates a ${step.meddle} record in the last wave's project during the first wave`}${step.meddle === undefined && step.editAfterMs !== undefined ? `; another actor edits a config ${step.editNext === true ? "the next wave updates" : "the first wave updates"} ${step.editAfterMs} ms after ${step.editNext === true ? "the first wave's first write" : "its write"}` : ""}${step.faults === undefined || step.meddle !== undefined || step.editAfterMs !== undefined ? "" : describeFaults(step.faults)}${step.undo === true ? "; once ended, undone whole by `rollback --journal` of its rollout journal" : ""}`;
  }
}

/** A manifest with a `rollout:` of 2 waves (half the plan's projects, then the rest), no bake unless given. */
function withRollout(model: ManifestModel, onFailure: "rollback" | "halt", bake = "0s"): string {
  return `${renderManifest(model)}${[
    "rollout:",
    "  waves:",
    "    - name: first",
    "      percent: 50",
    "    - name: rest",
    "      percent: 100",
    `  bake: ${bake}`,
    "  health:",
    "    logs:",
    "      min_entries: 1",
    `  on_failure: ${onFailure}`,
  ].join("\n")}\n`;
}

/** The heal step's --keep-heal-journals: small, so that a run of a few heals prunes. */
const KEPT_HEAL_JOURNALS = 1;

/** A broken invariant: what it is, and what showed it. */
export class InvariantBroken extends Error {}

interface JournalEntryOfWorld {
  path: string;
  /** The owner of the run that wrote it (null: none). */
  owner: string | null;
  /** The records right after that run (fingerprint): whether anything changed since. */
  stateAfter: string;
  what: string;
}

interface SavedPlan {
  path: string;
  manifest: number;
  scope: Scope;
  stateAtSave: string;
}

export interface WorldSetup {
  profile: ProfileName;
  remote: RemoteRecordModel[];
  /** The first team's manifests (all with its owner, or none). */
  manifests: ManifestModel[];
  /** The second owner's manifest. */
  second: ManifestModel;
}

type Run = { code: number | null; signal?: NodeJS.Signals | null; stdout: string; stderr: string };

export class World {
  readonly transcript: string[] = [];
  private readonly journals: JournalEntryOfWorld[] = [];
  private saved: SavedPlan | undefined;
  private files = 0;
  /** Called with the emulator's log line of each write it answers. */
  private onWrite: ((line: string) => void) | undefined;
  private emulator!: RunningEmulator;
  /** How much of the emulator's request log checkWritesThroughOwnFamily has read. */
  private writesChecked = 0;
  private stepLabel = "setup";
  private readonly knownJournalFiles = new Set<string>();
  /**
   * The projects earlier rollouts failed, each with what the manifest asked of it then: while one
   * holds that (no change for it in a plan) and no rollout since judged it healthy, a rollout of a
   * manifest that asks it the same is refused (exit 4), whatever else the manifest changed.
   */
  private readonly halts: { project: string; asks: string }[] = [];

  constructor(
    readonly setup: WorldSetup,
    readonly directory: string,
  ) {}

  async start(): Promise<void> {
    this.emulator = await startEmulator({
      profile: this.setup.profile,
      data: remoteData(this.setup.remote),
      keys: [{ key: KEY, scopes: null, projects: "*" }],
      // 1,000 entries a second: a rollout with no bake has enough to judge by the time it judges.
      logRate: 60_000,
      log: (line) => {
        if (!line.startsWith("GET ")) this.onWrite?.(line);
      },
    });
  }

  close(): Promise<void> {
    return this.emulator.close();
  }

  /**
   * Every run's environment. A run after a kill waits for the writes the killed run had in flight
   * (3.5 x --timeout at most: 105 s at the defaults), so every run has every duration at
   * STEADY_TIME_SCALE (a faulted one at FAULTED_TIME_SCALE): the defaults' proportions, shorter.
   */
  private get env(): NodeJS.ProcessEnv {
    return {
      PCSYNC_BASE_URL: this.emulator.url,
      PCSYNC_API_KEY: KEY,
      PCSYNC_TIME_SCALE: String(STEADY_TIME_SCALE),
    };
  }

  private path(name: string): string {
    this.files += 1;
    return join(this.directory, `${this.files}-${name}`);
  }

  private async writeManifest(model: ManifestModel): Promise<string> {
    const file = this.path("manifest.yaml");
    await writeFile(file, renderManifest(model));
    return file;
  }

  private manifest(index: number): ManifestModel {
    return this.setup.manifests[index % this.setup.manifests.length] as ManifestModel;
  }

  // -------------------------------------------------------------------------------------------
  // Running pcsync and reading the state.

  /**
   * Runs `body` against a service that meets `faults` (and `also`, such as log errors), with the
   * environment a run under them takes (every duration at FAULTED_TIME_SCALE); the service is
   * well again, and idle, once it ends.
   */
  private async faulted<T>(
    faults: TransportFaults | undefined,
    body: (env: NodeJS.ProcessEnv) => Promise<T>,
    also: FaultOptions = {},
  ): Promise<T> {
    // The waits the service states are scaled with the rest: 1 s for a 429, 2 s for a 503 when
    // it states one.
    const { retryAfter503, ...rates } = faults ?? { retryAfter503: false };
    this.emulator.setFaults({
      ...rates,
      ...(faults === undefined ? {} : { fail429WaitSeconds: 1 * FAULTED_TIME_SCALE }),
      ...(retryAfter503 ? { fail503RetryAfterSeconds: 2 * FAULTED_TIME_SCALE } : {}),
      ...also,
    });
    try {
      return await body(faults === undefined ? {} : { PCSYNC_TIME_SCALE: String(FAULTED_TIME_SCALE) });
    } finally {
      this.emulator.setFaults({});
      if (faults !== undefined) await this.emulator.idle();
    }
  }

  /** `pcsync ARGS` in-process; its output and exit code are held to the invariants of every run. */
  private async pcsync(args: string[], env: NodeJS.ProcessEnv = {}): Promise<Run> {
    const run = await runCliInProcess(args, { env: { ...this.env, ...env }, cwd: this.directory });
    this.checkOutput(args, run, false);
    return run;
  }

  private checkOutput(args: readonly string[], run: Run, killed: boolean): void {
    const command = `pcsync ${args.join(" ")}`;
    this.transcript.push(`    ${command.replaceAll(this.directory, ".")} -> ${run.signal ?? run.code}`);
    const output = `${run.stdout}\n${run.stderr}`;
    if (/internal error/i.test(output) || hasStackTrace(output))
      this.broken("no internal error", `${command} printed an internal error:\n${output}`);
    const allowed = killed ? [0, 1, 2, 3, 4, 130, 143] : [0, 1, 2, 3, 4];
    if (!(killed && run.signal === "SIGKILL") && !allowed.includes(run.code ?? -1))
      this.broken("exit codes 0-4", `${command} ended with ${run.signal ?? run.code}:\n${output}`);
  }

  private broken(invariant: string, detail: string): never {
    const manifests = [
      ...this.setup.manifests.map((model, index) => `m${index}:\n${renderManifest(model)}`),
      `the second owner's:\n${renderManifest(this.setup.second)}`,
    ];
    const added = this.setup.remote.map(
      (record) =>
        `project ${record.project} ${record.family} ${record.name === null ? "null" : JSON.stringify(spell(record.name, record.variant))}${record.mark === null ? "" : ` (marked ${record.mark})`}`,
    );
    throw new InvariantBroken(
      `invariant "${invariant}" broken at ${this.stepLabel}\n${detail}\n\nsteps so far (${this.setup.profile}):\n${this.transcript.join("\n")}\n\nrecords added to the example data: ${added.join("; ") || "none"}\n\n${manifests.join("\n")}`,
    );
  }

  private snapshot(): EmulatorData {
    return this.emulator.snapshot();
  }

  /** A record's name as the service shows it (posthog-2024 shows the plugin's for an empty one). */
  private shownName(data: EmulatorData, record: StoredRecord): string | null {
    if (this.setup.profile === "posthog-2024" && (record.name === null || record.name === ""))
      return data.plugins.find((plugin) => plugin.id === record.plugin)?.name ?? null;
    return record.name;
  }

  private managedRecords(data: EmulatorData): StoredRecord[] {
    return data.records.filter((record) => PROJECTS.includes(String(record.project) as ProjectId));
  }

  private fingerprint(data: EmulatorData = this.snapshot()): string {
    return JSON.stringify(
      data.records.map(({ id, name, plugin, enabled, order, description, deleted, match_action }) => ({
        id,
        name,
        plugin,
        enabled,
        order,
        description,
        deleted,
        match_action,
      })),
    );
  }

  private async journalFiles(): Promise<string[]> {
    const directory = join(this.directory, ".pcsync", "journal");
    const names = await readdir(directory).catch(() => [] as string[]);
    return names.filter((name) => name.endsWith(".jsonl")).map((name) => join(directory, name));
  }

  /** Journals written under `.pcsync/journal/` since the last look. */
  private async newDefaultJournals(): Promise<string[]> {
    const fresh = (await this.journalFiles()).filter((file) => !this.knownJournalFiles.has(file)).sort();
    for (const file of fresh) this.knownJournalFiles.add(file);
    return fresh;
  }

  /**
   * `raced`: the run raced another, whose writes may have come after its own: what it left is not
   * known, so a rollback of it may rightly find records changed since.
   */
  private async noteJournal(path: string, owner: string | null, what: string, raced = false): Promise<void> {
    const exists = await readFile(path, "utf8").then(
      () => true,
      () => false,
    );
    if (exists) this.journals.push({ path, owner, stateAfter: raced ? "raced" : this.fingerprint(), what });
  }

  // -------------------------------------------------------------------------------------------
  // The invariants.

  /** No two live records of one name (the identity rule) in a project's family. */
  private checkNoDuplicates(data: EmulatorData): void {
    const seen = new Map<string, StoredRecord>();
    for (const record of data.records) {
      if (record.deleted) continue;
      const shown = this.shownName(data, record);
      if (shown === null || identity(shown) === "") continue;
      const key = `project ${record.project} ${record.family} "${identity(shown)}"`;
      const first = seen.get(key);
      if (first)
        this.broken(
          "no two live records of one name per family",
          `${key}: live records ${first.id} (${JSON.stringify(first.name)}) and ${record.id} (${JSON.stringify(record.name)})`,
        );
      seen.set(key, record);
    }
  }

  /** A run of `model` deleted no record its manifest protects, unless `--allow-destroy` named it. */
  private checkProtected(
    before: EmulatorData,
    after: EmulatorData,
    model: ManifestModel,
    scope: Scope,
  ): void {
    const now = new Map(after.records.map((record) => [record.id, record]));
    for (const record of this.managedRecords(before)) {
      if (record.deleted || !now.get(record.id)?.deleted) continue;
      // Only a run of pcsync ever makes a mislaid record, by mistake, and taking it back (a killed
      // run's, by the next one) is no delete of a config the manifest protects.
      if (this.setup.profile === "posthog-2024" && isMislaid(record)) continue;
      const project = String(record.project) as ProjectId;
      const { globs, names } = protectionOf(model, project, record.family);
      const shown = this.shownName(before, record);
      const protectedBy =
        globs.find((glob) => anyGlobMatches([glob], shown)) ??
        names.find((name) => shown !== null && identity(name) === identity(shown));
      if (protectedBy === undefined) continue;
      if (scope.allowDestroy !== undefined && anyGlobMatches([scope.allowDestroy], shown)) continue;
      this.broken(
        "a protected record is never deleted",
        `record ${record.id} (${JSON.stringify(record.name)}, project ${project} ${record.family}) was deleted, but the manifest protects it (${JSON.stringify(protectedBy)})\nmanifest:\n${renderManifest(model)}`,
      );
    }
  }

  /** A run with an owner wrote no record that another owner marked. */
  private checkOthersUntouched(before: EmulatorData, after: EmulatorData, owner: string | null): void {
    if (owner === null) return;
    const now = new Map(after.records.map((record) => [record.id, record]));
    for (const record of before.records) {
      const mark = readMark(record.description).owner;
      if (mark === null || mark === owner) continue;
      const later = now.get(record.id);
      const fields = [
        "name",
        "description",
        "plugin",
        "enabled",
        "order",
        "deleted",
        "match_action",
      ] as const;
      const changed = fields.filter((field) => later?.[field] !== record[field]);
      if (changed.length > 0)
        this.broken(
          "another owner's record is never written",
          `owner "${owner}"'s run changed ${changed.join(", ")} of record ${record.id} (${JSON.stringify(record.name)}), which carries owner "${mark}"'s mark: ${JSON.stringify(record)} -> ${JSON.stringify(later)}`,
        );
    }
  }

  /**
   * posthog-2024 makes a config asked of the frontend apps whose plugin is none under
   * plugin_configs: whatever the run (killed, resumed, rolled back, a heal, a rollout), none is
   * left there (the model's remote records and other actors never make one).
   */
  /** A run of `model` that ended 1 because posthog-2024 cannot hold its mislaid config. */
  private failsByDesign(model: ManifestModel, run: Run): boolean {
    return (
      this.setup.profile === "posthog-2024" &&
      asksMislaid(model) &&
      run.code === 1 &&
      `${run.stdout}${run.stderr}`.includes("is not a frontend app")
    );
  }

  private checkNoMislaidLeft(data: EmulatorData): void {
    if (this.setup.profile !== "posthog-2024") return;
    const left = this.liveRecords(data).filter(isMislaid);
    if (left.length > 0)
      this.broken(
        "a config the service keeps in another family than asked is taken back",
        `live: ${left.map((record) => `record ${record.id} ("${record.name}", plugin ${record.plugin}) of project ${record.project}`).join(", ")}`,
      );
  }

  /**
   * A record is written only through its own family's endpoint: never a frontend app through
   * plugin_configs, which also lists the apps on posthog-2024 (the model's plugin configs never
   * run a frontend app's plugin, so none of them may take an app for its record).
   */
  private checkWritesThroughOwnFamily(data: EmulatorData): void {
    const log = this.emulator.requestLog;
    for (const entry of log.slice(this.writesChecked)) {
      if (entry.method === "GET") continue;
      const [, project, family, id] = /^\/api\/projects\/(\d+)\/(\w+)\/(\d+)\//.exec(entry.path) ?? [];
      const record = data.records.find((candidate) => candidate.id === Number(id));
      // posthog-2024 keeps a mislaid config (asked of the frontend apps, of a plugin that is none)
      // under plugin_configs: that is where it is taken back.
      const keptUnderPc =
        record !== undefined && this.setup.profile === "posthog-2024" && isMislaid(record) && family === PC;
      if (record !== undefined && record.family !== family && !keptUnderPc)
        this.broken(
          "a record is written only through its own family",
          `${entry.method} ${entry.path} (answered ${entry.status}): record ${id} of project ${project} is one of ${record.family} ("${record.name}")`,
        );
    }
    this.writesChecked = log.length;
  }

  /** The invariants every step is held to: the state's, and a run's of `model` when it wrote. */
  private checkAfter(
    before: EmulatorData,
    run?: { model: ManifestModel; scope: Scope; owner: string | null; killed?: boolean },
  ): EmulatorData {
    const after = this.snapshot();
    this.checkNoDuplicates(after);
    // A run killed (or stopped by a signal) between a create and its take-back leaves the record:
    // the next run's to finish.
    if (run?.killed !== true) this.checkNoMislaidLeft(after);
    this.checkWritesThroughOwnFamily(after);
    if (run) {
      this.checkProtected(before, after, run.model, run.scope);
      this.checkOthersUntouched(before, after, run.owner);
    }
    return after;
  }

  /** A plan right after a clean apply has nothing to do. */
  private async expectEmptyPlan(manifest: string, scope: Scope, after: string): Promise<void> {
    const planned = await this.pcsync(["plan", "-f", manifest, "--detailed-exitcode", ...scopeArgs(scope)]);
    if (planned.code !== 0)
      this.broken(
        "a plan after a clean apply is empty",
        `after ${after} (exit 0), plan --detailed-exitcode ended with ${planned.code}:\n${planned.stdout}${planned.stderr}\nmanifest:\n${await readFile(manifest, "utf8")}`,
      );
  }

  // -------------------------------------------------------------------------------------------
  // The steps.

  async step(index: number, step: Step): Promise<void> {
    this.stepLabel = `step ${index + 1} (${describeStep(step)})`;
    this.transcript.push(`  ${index + 1}. ${describeStep(step)}`);
    switch (step.kind) {
      case "apply":
        return this.apply(this.manifest(step.manifest), step.scope, step.faults);
      case "plan":
        return this.plan(step.manifest, step.scope);
      case "apply-saved":
        return this.applySaved();
      case "rollback":
        return this.rollback(step.faults);
      case "rollback-during-apply":
        return this.rollbackDuringApply(this.manifest(step.manifest), step.writes);
      case "kill-resume":
        return this.killAndResume(this.manifest(step.manifest), step.writes, step.faults);
      case "kill-rollback":
        return this.killAndRollBack(this.manifest(step.manifest), step.writes, step.faults);
      case "kill-apply":
        return this.killAndApply(this.manifest(step.manifest), step.writes, step.faults);
      case "heal":
        return this.heal(this.manifest(step.manifest), step.rollout === true, step.faults);
      case "edit":
        return this.edit(step.pick, step.change);
      case "create":
        return this.create(step.project, step.family, step.pick, step.variant);
      case "second-owner":
        return step.race ? this.race() : this.apply(this.setup.second, {});
      case "export-plan":
        return this.exportAndPlan(step.templates);
      case "lookup":
        return this.lookup(step.pick);
      case "twin":
        return this.twin(this.manifest(step.manifest), step.faults);
      case "rollout":
        return this.rollout(
          this.manifest(step.manifest),
          step.scope ?? {},
          step.failing,
          step.onFailure,
          step.meddle,
          step.meddle === undefined && step.editAfterMs === undefined ? step.faults : undefined,
          step.bake,
          step.meddle === undefined ? step.editAfterMs : undefined,
          step.editNext === true,
          step.undo === true,
        );
      case "rollout-signal":
        return this.rolloutSignal(
          this.manifest(step.manifest),
          step.failing,
          step.signal,
          step.writes,
          step.delayMs,
          step.undo === true,
        );
    }
  }

  /**
   * `apply` of the manifest; with `faults`, against a service that meets them (every duration at
   * 1/100). Faults never duplicate a record or touch one outside the run's reach (the checks of
   * every run), and at these rates the one apply converges: when it ends 1, the same apply
   * without faults right after must not find a change it could make, or the faults, not the
   * manifest, made the run fall short.
   */
  private async apply(model: ManifestModel, scope: Scope, faults?: TransportFaults): Promise<void> {
    const manifest = await this.writeManifest(model);
    const journal = this.path("journal.jsonl");
    const before = this.snapshot();
    const args = ["apply", "--auto-approve", "-f", manifest, "--journal", journal, ...scopeArgs(scope)];
    const applied = await this.faulted(faults, (env) => this.pcsync(args, env));
    const owner = ruledBy(model, scope);
    this.checkAfter(before, { model, scope, owner });
    await this.noteJournal(journal, owner, "apply");
    if (applied.code === 0) await this.expectEmptyPlan(manifest, scope, "apply");
    if (faults === undefined || applied.code !== 1) return;
    const afterFaults = this.snapshot();
    const again = await this.pcsync([
      "apply",
      "--auto-approve",
      "-f",
      manifest,
      "--journal",
      this.path("journal.jsonl"),
      ...scopeArgs(scope),
    ]);
    this.checkAfter(afterFaults, { model, scope, owner });
    if (again.code === 0 && this.changedRecords(afterFaults, this.snapshot()).length > 0)
      this.broken(
        "an apply under the faults the guarantees name converges in one run",
        `under faults it ended 1:\n${applied.stdout}${applied.stderr}\nthe same apply without faults then ended 0 and wrote:\n${again.stdout}${again.stderr}`,
      );
  }

  private async plan(index: number, scope: Scope): Promise<void> {
    const model = this.manifest(index);
    const manifest = await this.writeManifest(model);
    const out = this.path("saved-plan.json");
    const before = this.snapshot();
    const planned = await this.pcsync(["plan", "-f", manifest, "-o", out, ...scopeArgs(scope)]);
    if (this.fingerprint() !== this.fingerprint(before))
      this.broken("plan writes nothing", "the records changed during a plan");
    if (planned.code === 0)
      this.saved = { path: out, manifest: index, scope, stateAtSave: this.fingerprint() };
  }

  private async applySaved(): Promise<void> {
    const saved = this.saved;
    if (saved === undefined) {
      this.transcript.push("    (no saved plan yet: nothing to do)");
      return;
    }
    const model = this.manifest(saved.manifest);
    const journal = this.path("journal.jsonl");
    const before = this.snapshot();
    const clean = this.fingerprint(before) === saved.stateAtSave;
    // `plan --allow-destroy` only lets the plan be made; its apply is given the same, as the
    // manual says (docs/safety.md).
    const allow = saved.scope.allowDestroy === undefined ? [] : ["--allow-destroy", saved.scope.allowDestroy];
    const applied = await this.pcsync(["apply", "--plan", saved.path, "--journal", journal, ...allow]);
    const owner = ruledBy(model, saved.scope);
    this.checkAfter(before, { model, scope: saved.scope, owner });
    // Nothing changed since the plan was saved: apply --plan computes its guards again and finds
    // the ones the plan found, so it refuses (exit 3, without --force) exactly the plans it did.
    const guards = (JSON.parse(await readFile(saved.path, "utf8")) as { guards: { rule: string }[] }).guards;
    const refusedByGuard = applied.code === 3 && /safety guard|--force|--allow-destroy/.test(applied.stderr);
    if (clean && guards.length > 0 !== refusedByGuard)
      this.broken(
        "apply --plan refuses the plans whose guards plan showed",
        `the saved plan's guards (${guards.map((guard) => guard.rule).join(", ") || "none"}) and apply --plan's refusal disagree; it ended with ${applied.code}:\n${applied.stdout}${applied.stderr}`,
      );
    await this.noteJournal(journal, owner, "apply --plan");
    if (applied.code === 0 && clean)
      await this.expectEmptyPlan(await this.writeManifest(model), saved.scope, "apply --plan");
  }

  private async rollback(faults?: TransportFaults): Promise<void> {
    const latest = this.journals.at(-1);
    if (latest === undefined) {
      this.transcript.push("    (no journal yet: nothing to do)");
      return;
    }
    await this.newDefaultJournals();
    const before = this.snapshot();
    const clean = this.fingerprint(before) === latest.stateAfter;
    const journal = parseJournal(await readFile(latest.path, "utf8"), latest.path);
    const rolledBack = await this.faulted(faults, (env) =>
      this.pcsync(["rollback", "--journal", latest.path, "--auto-approve"], env),
    );
    // The rollback acts as the run it undoes: its owner's rules hold.
    this.checkAfter(before);
    this.checkOthersUntouched(before, this.snapshot(), latest.owner);
    if (clean && rolledBack.code !== 0)
      this.broken(
        "rollback restores the journal's before image exactly",
        `nothing changed since the ${latest.what} that wrote the journal, yet rollback ended with ${rolledBack.code}:\n${rolledBack.stdout}${rolledBack.stderr}`,
      );
    if (rolledBack.code === 0) await this.expectRestored(journal.intents, journal.outcomes, before);
    for (const file of await this.newDefaultJournals())
      await this.noteJournal(file, latest.owner, "rollback");
  }

  /**
   * A rollback of a journal whose apply still runs (another process, slowed down by the service):
   * refused while the apply holds it. A rollback that says it succeeded must have restored the
   * journal's before images, judged once the apply has ended.
   */
  private async rollbackDuringApply(model: ManifestModel, writesFirst: number): Promise<void> {
    const manifest = await this.writeManifest(model);
    const journal = this.path("journal.jsonl");
    const before = this.snapshot();
    const args = ["apply", "--auto-approve", "-f", manifest, "--journal", journal, "--concurrency", "1"];
    this.emulator.setFaults({ latencyMs: 25 });
    const { done } = spawnCli(args, { env: this.env, cwd: this.directory, timeoutMs: 30_000 });
    let applyEnded = false;
    let rollback: Promise<Run> | undefined;
    let rollbackStartedWhileRunning = false;
    let writes = 0;
    this.onWrite = () => {
      writes += 1;
      if (writes === writesFirst && rollback === undefined) {
        rollbackStartedWhileRunning = !applyEnded;
        rollback = this.pcsync(["rollback", "--journal", journal, "--auto-approve"]);
      }
    };
    let applied: CliRun;
    try {
      applied = await done;
      applyEnded = true;
      await rollback?.catch(() => undefined);
    } finally {
      this.onWrite = undefined;
      this.emulator.setFaults({});
    }
    this.checkOutput(args, applied, false);
    const rolledBack = await rollback;
    this.checkAfter(before, { model, scope: {}, owner: model.owner });
    if (rolledBack === undefined) {
      // The apply wrote fewer times than that: it is an ordinary apply, its journal the latest.
      await this.noteJournal(journal, model.owner, "apply");
      if (applied.code === 0) await this.expectEmptyPlan(manifest, {}, "apply");
      return;
    }
    this.transcript.push(
      `    (the rollback started ${rollbackStartedWhileRunning ? "while the apply ran" : "after the apply"})`,
    );
    await this.noteJournal(journal, model.owner, "apply (rolled back while it ran)");
    if (rolledBack.code === 0) {
      const read = parseJournal(await readFile(journal, "utf8"), journal);
      await this.expectRestored(read.intents, read.outcomes, before);
    }
    await this.newDefaultJournals();
  }

  /** After a rollback that succeeded: each record the journal touched is as its first before image. */
  private async expectRestored(
    intents: ReturnType<typeof parseJournal>["intents"],
    outcomes: ReturnType<typeof parseJournal>["outcomes"],
    before: EmulatorData,
  ): Promise<void> {
    const firstImages = new Map<number, { image: RecordImage; project: string; family: FamilyName }>();
    const created = new Map<number, { project: string; family: FamilyName }>();
    for (const intent of intents) {
      // A record the run created has no image from before the run (a later intent's image of it,
      // such as the delete of its copy that lost a race to another owner, is the run's own).
      for (const image of intent.before)
        if (!firstImages.has(image.id) && !created.has(image.id))
          firstImages.set(image.id, { image, project: intent.project, family: intent.family });
      const outcome = outcomes.get(intent.seq);
      if (intent.op === "create" && outcome?.status === "done")
        for (const record of outcome.records ?? [])
          if (!firstImages.has(record.id))
            created.set(record.id, { project: intent.project, family: intent.family });
    }
    // Judged once every write in flight (one held late, one of a killed run) has landed.
    await this.emulator.idle();
    const problems: string[] = [];
    for (const [id, { image, project, family }] of firstImages) {
      const shown = await this.shownRecord(project, family, id);
      const fields = Object.keys(image).filter((field) => field !== "id") as (keyof RecordImage)[];
      const differs = fields.filter((field) => shown[field] !== image[field]);
      if (differs.length > 0)
        problems.push(
          `record ${id}: ${differs.map((field) => `${field} is ${JSON.stringify(shown[field])}, the journal's before image has ${JSON.stringify(image[field])}`).join("; ")}`,
        );
    }
    for (const [id, { project, family }] of created) {
      const shown = await this.shownRecord(project, family, id);
      if (shown.deleted !== true) problems.push(`record ${id} was created by the run, and is still live`);
    }
    if (problems.length > 0)
      this.broken(
        "rollback restores the journal's before image exactly",
        `${problems.join("\n")}\nrecords before the rollback: ${this.fingerprint(before)}`,
      );
  }

  /** A record as the service shows it (a GET, as pcsync would read it). */
  private async shownRecord(
    project: string,
    family: FamilyName,
    id: number,
  ): Promise<Record<string, unknown>> {
    const read = (through: FamilyName) =>
      fetch(`${this.emulator.url}/api/projects/${project}/${through}/${id}/`, {
        headers: { authorization: `Bearer ${KEY}` },
      });
    let response = await read(family);
    // posthog-2024 keeps a mislaid config made through the frontend apps under plugin_configs.
    if (response.status === 404 && family === FE) response = await read(PC);
    return (await response.json()) as Record<string, unknown>;
  }

  /**
   * `pcsync ARGS` in a process killed with SIGKILL at its `writesBeforeKill`-th write (as the
   * service sees it), or ended on its own first; its output held to the invariants of a killed run.
   */
  private async killedAfter(args: string[], env: NodeJS.ProcessEnv, writesBeforeKill: number): Promise<Run> {
    const { child, done } = spawnCli(args, {
      env: { ...this.env, ...env },
      cwd: this.directory,
      timeoutMs: 30_000,
    });
    let writes = 0;
    this.onWrite = () => {
      writes += 1;
      if (writes === writesBeforeKill) child.kill("SIGKILL");
    };
    let killed: Run;
    try {
      killed = await done;
    } finally {
      this.onWrite = undefined;
    }
    this.checkOutput(args, killed, true);
    return killed;
  }

  private async killAndResume(
    model: ManifestModel,
    writesBeforeKill: number,
    faults?: TransportFaults,
  ): Promise<void> {
    const manifest = await this.writeManifest(model);
    const plan = this.path("killed-plan.json");
    const journal = this.path("journal.jsonl");
    const planned = await this.pcsync(["plan", "-f", manifest, "-o", plan]);
    if (planned.code !== 0) return;
    const before = this.snapshot();
    const args = ["apply", "--plan", plan, "--journal", journal];
    const killed = await this.faulted(faults, (env) => this.killedAfter(args, env, writesBeforeKill));
    this.checkAfter(before, { model, scope: {}, owner: model.owner, killed: true });
    const afterKill = this.snapshot();
    const resumed = await this.faulted(faults, (env) =>
      this.pcsync(["apply", "--plan", plan, "--resume", "--journal", journal], env),
    );
    this.checkAfter(afterKill, { model, scope: {}, owner: model.owner });
    await this.noteJournal(journal, model.owner, "apply --plan (killed, then resumed)");
    if (resumed.code !== 0 && killed.signal === "SIGKILL" && !this.failsByDesign(model, resumed))
      this.broken(
        "a plan after a clean apply is empty",
        `nothing else ran, yet the resume of the killed apply ended with ${resumed.code}:\n${resumed.stdout}${resumed.stderr}`,
      );
    if (resumed.code === 0) await this.expectEmptyPlan(manifest, {}, "the resumed apply");
  }

  /**
   * `apply` killed with SIGKILL after its `writesBeforeKill`-th write (others, held late by the
   * faults, may still be in flight), then a rollback of its journal at once, the service well again
   * but not idle: once every write has landed, the records are as the journal's before images say.
   */
  private async killAndRollBack(
    model: ManifestModel,
    writesBeforeKill: number,
    faults?: TransportFaults,
  ): Promise<void> {
    const manifest = await this.writeManifest(model);
    const journal = this.path("journal.jsonl");
    await this.newDefaultJournals();
    const before = this.snapshot();
    const args = ["apply", "--auto-approve", "-f", manifest, "--journal", journal];
    const rollback = (env: NodeJS.ProcessEnv) =>
      this.pcsync(["rollback", "--journal", journal, "--auto-approve"], env);
    const rolledBack = await this.faulted(faults, async (env) => {
      await this.killedAfter(args, env, writesBeforeKill);
      const exists = await readFile(journal, "utf8").then(
        () => true,
        () => false,
      );
      // The service is well again (a write it holds still lands when its time comes), and the
      // rollback runs at the killed run's time scale.
      this.emulator.setFaults({});
      return exists ? await rollback(env) : undefined;
    });
    if (rolledBack === undefined) return;
    if (rolledBack.code !== 0)
      this.broken(
        "rollback restores the journal's before image exactly",
        `nothing but the killed apply changed the records, yet its rollback ended with ${rolledBack.code}:\n${rolledBack.stdout}${rolledBack.stderr}`,
      );
    const parsed = parseJournal(await readFile(journal, "utf8"), journal);
    await this.expectRestored(parsed.intents, parsed.outcomes, before);
    for (const file of await this.newDefaultJournals()) await this.noteJournal(file, model.owner, "rollback");
  }

  /**
   * `apply` killed with SIGKILL after its `writesBeforeKill`-th write (others, held late by the
   * faults, may still be in flight), then `apply` of the same manifest at once beside its journal,
   * the service well again but not idle: the second makes no record twice (it waits for the creates
   * of the killed run it would make again), and once every write has landed a plan is empty.
   */
  private async killAndApply(
    model: ManifestModel,
    writesBeforeKill: number,
    faults?: TransportFaults,
  ): Promise<void> {
    const manifest = await this.writeManifest(model);
    // The apply again keeps its journal beside the killed one's (a journal holds one run: the same
    // path would be refused, and nothing tried again).
    const killedJournal = this.path("journal.jsonl");
    const journal = this.path("journal.jsonl");
    const before = this.snapshot();
    const args = (path: string) => ["apply", "--auto-approve", "-f", manifest, "--journal", path];
    const again = await this.faulted(faults, async (env) => {
      await this.killedAfter(args(killedJournal), env, writesBeforeKill);
      this.emulator.setFaults({});
      return await this.pcsync(args(journal), env);
    });
    await this.emulator.idle();
    this.checkAfter(before, { model, scope: {}, owner: model.owner });
    await this.noteJournal(journal, model.owner, "apply (after a killed one)");
    if (again.code === 0) await this.expectEmptyPlan(manifest, {}, "the apply after the killed one");
  }

  /**
   * `apply` of the manifest with a rollout of 2 waves (half the plan's projects, then the rest),
   * its plugin configs logging only errors after a change when `failing`. After a halt no project
   * of a later wave was written; after a rollback the records are as before the rollout; after a
   * complete one, a second apply writes nothing. Its journals stay out of the rollback step's list.
   * With `meddle`, another actor creates a record in the last wave's project at the rollout's first
   * write (after the run read the state): the rollout never deletes it, never writes a second
   * record of its name, and ends complete, halted, or stopped (exit 1) after a wave's writes
   * ("still differ from the manifest") or before them ("since the plan was made"), never otherwise.
   */
  private async rollout(
    model: ManifestModel,
    scope: Scope,
    failing: boolean,
    onFailure: "rollback" | "halt",
    meddle?: FamilyName,
    faults?: TransportFaults,
    bake?: "0s" | "1s",
    editAfterMs?: number,
    editNext = false,
    undo = false,
  ): Promise<void> {
    const manifest = this.path("rollout.yaml");
    await writeFile(manifest, withRollout(model, onFailure, bake));
    const planned = await this.pcsync(["plan", "-f", manifest, "--format", "json", ...scopeArgs(scope)]);
    if (planned.code !== 0) return;
    const waves =
      (JSON.parse(planned.stdout) as { rollout?: { waves: { name: string; projects: string[] }[] } }).rollout
        ?.waves ?? [];
    const before = this.snapshot();
    // The actor writes in a later wave's project than the first write's: a create of the same name
    // at the same instant as the rollout's own is a race no client can win without the service.
    const written = waves.filter((wave) => wave.projects.length > 0);
    const lastProject = (written.length > 1 ? written.at(-1)?.projects[0] : undefined) as
      | ProjectId
      | undefined;
    let made: Promise<number | undefined> | undefined;
    if (meddle !== undefined && lastProject !== undefined)
      this.onWrite = () => {
        this.onWrite = undefined;
        const wanted = model.projects[lastProject]?.[meddle]?.configs.map((config) => config.name) ?? [];
        made = this.createFree(lastProject, meddle, before, wanted);
      };
    const edit =
      editAfterMs === undefined
        ? undefined
        : this.editAfterWrite(planned.stdout, written[editNext ? 1 : 0], editAfterMs, editNext);
    const rolloutJournal = this.path("rollout.jsonl");
    let applied: Run;
    try {
      applied = await this.faulted(
        faults,
        (env) =>
          this.pcsync(
            ["apply", "--auto-approve", "-f", manifest, "--journal", rolloutJournal, ...scopeArgs(scope)],
            env,
          ),
        failing ? { logErrors: [{ name: "*", ratio: 1 }] } : {},
      );
    } finally {
      this.onWrite = undefined;
    }
    const output = `${applied.stdout}${applied.stderr}`;
    // A name flag is checked once, against the whole plan: a wave's re-plan, which reads only its
    // projects, does not take a name another wave's project holds for a typo.
    const wavesFrom = applied.stderr.indexOf("rollout: wave ");
    if (wavesFrom >= 0 && applied.stderr.slice(wavesFrom).includes(" matches no config of the manifest"))
      this.broken(
        "a rollout warns of a name flag that matches nothing only from the plan of the whole run, never from a wave",
        output,
      );
    if (this.checkHaltRefusal(model, scope, planned.stdout, before, applied)) return;
    this.noteVerdicts(model, applied);
    const edited = await edit?.done();
    if (edited !== undefined) {
      this.checkEditInBake(edited, written[0]?.name ?? "", applied, editNext);
      this.checkNoDuplicates(this.snapshot());
      // The checks below hold a run to the state before it, which the actor changed: not here.
      return;
    }
    const madeId = await made;
    if (madeId !== undefined) {
      const record = this.snapshot().records.find((entry) => entry.id === madeId);
      if (record === undefined || record.deleted)
        this.broken(
          "a rollout never deletes a record another actor made while it ran",
          `record ${madeId} (${meddle} in project ${lastProject}) is gone after the rollout:\n${output}`,
        );
      // Stopped after a wave's writes (its re-read differs), or before a wave whose lists changed
      // since the plan was made (the record made under a name the wave creates).
      const stopped =
        applied.code === 1 &&
        /still differs? from the manifest|since the plan was made|no longer held what the wave wrote/.test(
          applied.stderr,
        );
      // 1 also where a wave's write fails by design (the mislaid config).
      if (applied.code !== 0 && applied.code !== 4 && !stopped && !this.failsByDesign(model, applied))
        this.broken(
          "a rollout that another actor writes beside ends complete, halted, or stopped before its next wave",
          `exit ${applied.code}:\n${output}`,
        );
      this.checkNoDuplicates(this.snapshot());
      // The checks below hold a run to the state before it, which the actor changed: not here.
      return;
    }
    const after = this.checkAfter(before, { model, scope, owner: ruledBy(model, scope) });
    const halted = /Rollout halted in wave "([^"]+)"/.exec(applied.stdout)?.[1];
    // Busy plugins and healthy logs: every config a wave judges has entries, and those it cannot
    // judge (frontend apps, deletes, configs left disabled) pass and say so.
    if (!failing && applied.code === 4)
      this.broken("a rollout of a change whose plugins log no errors completes", output);
    // Nobody else writes: it is not stopped short (3: refused by a guard before any write, which
    // the plan warned of).
    // 1: a wave's write failed by design (a config the service keeps in another family than asked).
    if (![0, 3, 4].includes(applied.code ?? -1) && !this.failsByDesign(model, applied))
      this.broken("a rollout nobody else writes beside ends complete, halted or refused", output);
    if (applied.code === 4 && halted !== undefined) {
      const haltedAt = waves.findIndex((wave) => wave.name === halted);
      const later = new Set(waves.slice(haltedAt + 1).flatMap((wave) => wave.projects));
      const changed = this.changedRecords(before, after).filter((record) =>
        later.has(String(record.project)),
      );
      if (changed.length > 0)
        this.broken(
          "no project of a later wave is written after a halt",
          `the rollout halted in wave "${halted}", yet records of later waves changed: ${JSON.stringify(changed)}\n${output}`,
        );
      if (onFailure === "rollback") {
        const left = this.changedRecords(before, after);
        if (left.length > 0 || !applied.stderr.includes("every wave applied was rolled back"))
          this.broken(
            "after a rollout's rollback the records are as before it",
            `records not restored: ${JSON.stringify(left)}\n${output}`,
          );
        return;
      }
      // Halted, its change left in place: a dry run of the same manifest (with the rollout journal,
      // which is not in the default place plan reads) says that apply will refuse, and the same
      // manifest applied again (a CI job run again) writes nothing while the failing projects hold
      // the change, and ends 4 again.
      const replanned = await this.pcsync([
        "apply",
        "--dry-run",
        "-f",
        manifest,
        "--journal",
        rolloutJournal,
        ...scopeArgs(scope),
      ]);
      if (
        !replanned.stderr.includes(
          "warning: apply will refuse (exit 4): the last rollout of this manifest halted",
        )
      )
        this.broken(
          "a dry run of a manifest whose rollout halted, its change left in place, says that apply will refuse",
          `${replanned.stdout}${replanned.stderr}`,
        );
      const applyAgain = (...extra: string[]) =>
        this.pcsync([
          "apply",
          "--auto-approve",
          "-f",
          manifest,
          "--journal",
          rolloutJournal,
          ...extra,
          ...scopeArgs(scope),
        ]);
      this.emulator.setFaults({ logErrors: [{ name: "*", ratio: 1 }] });
      let again: Run;
      try {
        again = await applyAgain();
      } finally {
        this.emulator.setFaults({});
      }
      const written = this.changedRecords(after, this.snapshot());
      if (again.code !== 4 || written.length > 0)
        this.broken(
          "a halted rollout applied again writes nothing while its failing projects hold the change",
          `the second apply ended with ${again.code} and changed ${JSON.stringify(written)}:\n${again.stdout}${again.stderr}`,
        );
      // Nor does a run that --project narrows to one of its projects: a failing project it leaves
      // out is not read, so it may still hold the change.
      const project = Object.keys(model.projects).at(-1) ?? "1";
      const narrowed = await applyAgain("--project", project);
      const narrowedWrote = this.changedRecords(after, this.snapshot());
      if (narrowed.code !== 4 || narrowedWrote.length > 0)
        this.broken(
          "a halted rollout applied again with --project writes nothing while its failing projects may hold the change",
          `apply --project ${project} ended with ${narrowed.code} and changed ${JSON.stringify(narrowedWrote)}:\n${narrowed.stdout}${narrowed.stderr}`,
        );
      if (undo) await this.undoRollout(rolloutJournal, before, applied);
      return;
    }
    if (applied.code !== 0) return;
    const again = await this.pcsync([
      "apply",
      "--auto-approve",
      "-f",
      manifest,
      "--journal",
      this.path("again.jsonl"),
      ...scopeArgs(scope),
    ]);
    const changed = this.changedRecords(after, this.snapshot());
    if (again.code !== 0 || changed.length > 0 || /": writing/.test(again.stderr))
      this.broken(
        "a second apply of a finished rollout writes nothing",
        `the second apply ended with ${again.code} and changed ${JSON.stringify(changed)}:\n${again.stdout}${again.stderr}`,
      );
    if (undo) await this.undoRollout(rolloutJournal, before, applied);
  }

  /**
   * A rollout that ended, undone whole by its journal: every record is as before the rollout, and
   * the same command again changes nothing.
   */
  private async undoRollout(rolloutJournal: string, before: EmulatorData, applied: Run): Promise<void> {
    // A plan with nothing to change rolls nothing out, and keeps no rollout journal.
    if (!applied.stderr.includes("Rollout journal:")) return;
    const undone = await this.pcsync(["rollback", "--auto-approve", "--journal", rolloutJournal]);
    const left = this.changedRecords(before, this.snapshot());
    if (undone.code !== 0 || left.length > 0)
      this.broken(
        "a rollout undone whole by its journal leaves the records as before it",
        `rollback ended with ${undone.code}; records not restored: ${JSON.stringify(left)}\n${undone.stdout}${undone.stderr}`,
      );
    const again = await this.pcsync(["rollback", "--auto-approve", "--journal", rolloutJournal]);
    if (again.code !== 0 || !again.stdout.includes("Nothing to roll back: the rollout"))
      this.broken(
        "a rollout undone whole, undone again, changes nothing",
        `the second rollback ended with ${again.code}:\n${again.stdout}${again.stderr}`,
      );
  }

  /**
   * A rollout (on_failure: rollback) stopped by a signal wherever it lands (a wave's writes, the
   * re-read, the read before the next wave, the judging, the rollback): SIGINT and SIGTERM end it
   * with 130 or 143 (or 0 or 4, when it had ended), never with an error; applied again, it
   * finishes: complete with nothing left to plan, or (its configs logging errors) halted with
   * every record as before the rollout.
   */
  private async rolloutSignal(
    model: ManifestModel,
    failing: boolean,
    signal: "SIGINT" | "SIGTERM" | "SIGKILL",
    writesBefore: number,
    delayMs: number,
    undo = false,
  ): Promise<void> {
    const manifest = this.path("rollout.yaml");
    await writeFile(manifest, withRollout(model, "rollback"));
    // Nothing to roll out (0), or a plan refused: no rollout to stop.
    const planned = await this.pcsync(["plan", "-f", manifest, "--detailed-exitcode"]);
    if (planned.code !== 2) return;
    const before = this.snapshot();
    const rolloutJournal = this.path("rollout.jsonl");
    const args = ["apply", "--auto-approve", "-f", manifest, "--journal", rolloutJournal];
    if (failing) this.emulator.setFaults({ logErrors: [{ name: "*", ratio: 1 }] });
    let stopped: CliRun;
    let again: Run;
    try {
      const { child, done } = spawnCli(args, { env: this.env, cwd: this.directory, timeoutMs: 30_000 });
      let writes = 0;
      this.onWrite = () => {
        writes += 1;
        if (writes === writesBefore) setTimeout(() => child.kill(signal), delayMs);
      };
      try {
        stopped = await done;
      } finally {
        this.onWrite = undefined;
      }
      this.checkOutput(args, stopped, true);
      // A signal, as a kill, may come between a create and its take-back (no write starts after
      // it): the record is the next run's to take back, checked once it has run.
      this.checkAfter(before, { model, scope: {}, owner: model.owner, killed: true });
      const output = `${stopped.stdout}${stopped.stderr}`;
      const expected = signal === "SIGINT" ? 130 : 143;
      // 3: refused by a guard before any write (the plan warned of it), nothing to stop.
      if (stopped.code === 3) return;
      // 1: it had ended, a wave's write failing by design (the mislaid config), as 0 and 4 end it.
      if (
        signal !== "SIGKILL" &&
        ![0, 4, expected].includes(stopped.code ?? -1) &&
        !this.failsByDesign(model, stopped)
      )
        this.broken(
          "a signal ends a rollout as it ends apply (130, 143), with a true account",
          `${signal} after write ${writesBefore} (+${delayMs} ms): exit ${stopped.signal ?? stopped.code}:\n${output}`,
        );
      again = await this.pcsync(args);
    } finally {
      this.emulator.setFaults({});
    }
    const after = this.checkAfter(before, { model, scope: {}, owner: model.owner });
    const told = `${signal} after write ${writesBefore} (+${delayMs} ms), then applied again: exit ${again.code}:\n${again.stdout}${again.stderr}`;
    // A wave's write that fails by design (the mislaid config) stops the rollout there, every time.
    if (this.failsByDesign(model, again)) return;
    // Its plugin configs log errors, but a wave that changes none of them (frontend apps, deletes,
    // configs left disabled) has nothing to judge: it passes, and says so.
    const verdicts = [...`${stopped.stderr}${again.stderr}`.matchAll(/: project \S+ (passes|FAILS): (.*)/g)];
    const nothingToJudge =
      verdicts.length > 0 && verdicts.every((verdict) => verdict[2]?.startsWith("nothing to judge"));
    if (failing && !(again.code === 0 && nothingToJudge)) {
      const left = this.changedRecords(before, after);
      if (again.code !== 4 || left.length > 0)
        this.broken(
          "a rollout stopped by a signal and applied again finishes: halted, every record as before it",
          `${told}\nrecords not restored: ${JSON.stringify(left)}`,
        );
    } else {
      if (again.code !== 0) this.broken("a rollout stopped by a signal and applied again finishes", told);
      await this.expectEmptyPlan(manifest, {}, "a rollout stopped by a signal and applied again");
    }
    // The stopped run kept the rollout's journal (the run applied again finished it).
    if (undo)
      await this.undoRollout(rolloutJournal, before, {
        ...again,
        stderr: `${stopped.stderr}${again.stderr}`,
      });
  }

  /** The records of `after` that differ from `before` (a record new since: one still live). */
  private changedRecords(before: EmulatorData, after: EmulatorData): StoredRecord[] {
    const fields = ["name", "plugin", "enabled", "order", "description", "deleted", "match_action"] as const;
    const earlier = new Map(before.records.map((record) => [record.id, record]));
    return after.records.filter((record) => {
      const was = earlier.get(record.id);
      return was === undefined ? !record.deleted : fields.some((field) => was[field] !== record[field]);
    });
  }

  private async heal(model: ManifestModel, rollout: boolean, faults?: TransportFaults): Promise<void> {
    const manifest = rollout ? this.path("heal-rollout.yaml") : await this.writeManifest(model);
    if (rollout) await writeFile(manifest, withRollout(model, "rollback"));
    await this.newDefaultJournals();
    const before = this.snapshot();
    const healed = await this.faulted(faults, (env) =>
      this.pcsync(
        [
          "watch",
          "--mode",
          "heal",
          "--once",
          "-f",
          manifest,
          "--keep-heal-journals",
          String(KEPT_HEAL_JOURNALS),
        ],
        env,
      ),
    );
    this.checkAfter(before, { model, scope: {}, owner: model.owner });
    // The cycle's line names each family still drifting (the first five), as many as it counts.
    const counted = /, (\d+) drifting \(/.exec(healed.stdout);
    if (counted !== null) {
      const named = healed.stdout.match(/^ {2}drift in project \S+ \S+: /gm) ?? [];
      if (named.length !== Math.min(Number(counted[1]), 5) || new Set(named).size !== named.length)
        this.broken(
          "a watch cycle names each drifting family it counts, once",
          `${counted[1]} drifting, ${named.length} named:\n${healed.stdout}`,
        );
    }
    if (rollout && this.fingerprint() !== this.fingerprint(before))
      this.broken(
        "with rollout:, heal never sends a manifest change to the fleet",
        `watch --once (which has seen no family in sync) changed records:\n${healed.stdout}${healed.stderr}`,
      );
    const journals = await this.newDefaultJournals();
    // A record the heal made and took back (a mislaid config on posthog-2024) leaves a deleted row
    // and nothing to undo: the heal keeps no journal of it.
    const beforeIds = new Set(before.records.map((record) => record.id));
    const after = this.snapshot();
    const left = {
      ...after,
      records: after.records.filter((record) => beforeIds.has(record.id) || !record.deleted),
    };
    if (this.fingerprint(left) !== this.fingerprint(before) && journals.length === 0)
      this.broken(
        "every write can be rolled back: a heal keeps a journal",
        `the heal changed records but kept no journal under .pcsync/journal/, so it cannot be rolled back:\n${healed.stdout}${healed.stderr}`,
      );
    for (const file of journals) await this.noteJournal(file, model.owner, "heal");
    // With this heal's journal noted as the newest: an older heal's may have gone, never it.
    await this.checkHealJournalsPruned();
    if (healed.code === 0 && this.fingerprint() !== this.fingerprint(before))
      await this.expectEmptyPlan(manifest, {}, "a heal cycle");
  }

  /**
   * A watcher's heal journals do not pile up (at most KEPT_HEAL_JOURNALS ended ones), and pruning
   * them never removes another run's journal, nor the one the rollback step would undo.
   */
  private async checkHealJournalsPruned(): Promise<void> {
    const files = await this.journalFiles();
    for (const entry of this.journals) {
      const mayGo = entry.path.endsWith("-heal.jsonl") && entry !== this.journals.at(-1);
      const exists = await stat(entry.path).then(
        () => true,
        () => false,
      );
      if (!mayGo && !exists)
        this.broken(
          "pruning heal journals removes only older, ended heal journals",
          `${entry.path} (the ${entry.what}'s journal) is gone after a heal`,
        );
    }
    const ended: string[] = [];
    for (const file of files) {
      if (!file.endsWith("-heal.jsonl")) continue;
      const last = (await readFile(file, "utf8")).trimEnd().split("\n").at(-1) ?? "";
      if (last.includes('"type":"end"')) ended.push(file);
    }
    if (ended.length > KEPT_HEAL_JOURNALS)
      this.broken(
        "a watcher keeps at most --keep-heal-journals ended heal journals",
        `${ended.length} ended heal journals are left, more than ${KEPT_HEAL_JOURNALS}:\n${ended.join("\n")}`,
      );
  }

  private liveRecords(data: EmulatorData): StoredRecord[] {
    return this.managedRecords(data).filter((record) => !record.deleted);
  }

  /**
   * `job --family F --config NAME` of a live record by the name the service shows: it acts on the
   * family's own record of that name (never another family's that F's list also shows), or, where
   * the family holds the name twice, on none (exit 1, asking for the id).
   */
  private async lookup(pick: number): Promise<void> {
    const data = this.snapshot();
    const live = this.liveRecords(data);
    const record = live[pick % Math.max(1, live.length)];
    const name = record === undefined ? null : this.shownName(data, record);
    if (record === undefined || name === null || /^\d{1,15}$/.test(name.trim())) {
      this.transcript.push("    (no live record with a name: nothing to look up)");
      return;
    }
    const own = live.filter(
      (candidate) =>
        candidate.project === record.project &&
        candidate.family === record.family &&
        this.shownName(data, candidate) === name,
    );
    const from = this.emulator.requestLog.length;
    const job = `model-lookup-${from}`;
    const run = await this.pcsync([
      "job",
      "--project",
      String(record.project),
      "--family",
      record.family,
      "--config",
      name,
      "--job",
      job,
    ]);
    const posted = this.emulator.requestLog
      .slice(from)
      .filter((entry) => entry.method === "POST" && entry.path.includes("/job"));
    const expected = `/api/projects/${record.project}/${record.family}/${own[0]?.id}/job/`;
    const acted =
      own.length === 1
        ? run.code === 0 && posted.length === 1 && posted[0]?.path === expected
        : run.code === 1 && posted.length === 0;
    if (!acted)
      this.broken(
        "a command given --family and a name acts on that family's own record of the name",
        `${own.length === 1 ? `expected one job at ${expected}` : `${own.length} records of ${record.family} are named ${JSON.stringify(name)}: expected exit 1 and no job`}; got exit ${run.code}, jobs posted: ${posted.map((entry) => entry.path).join(", ") || "none"}\n${run.stdout}${run.stderr}`,
      );
    this.checkAfter(data);
  }

  /** Another actor edits a live record through the service's API. */
  private async edit(pick: number, change: EditKind): Promise<void> {
    const data = this.snapshot();
    const live = this.liveRecords(data);
    const record = live[pick % Math.max(1, live.length)];
    if (record === undefined) return;
    const path = `/api/projects/${record.project}/${record.family}/${record.id}/`;
    this.transcript.push(
      `    record ${record.id} (${JSON.stringify(record.name)}, project ${record.project} ${record.family})`,
    );
    let body: Record<string, unknown> | undefined;
    switch (change) {
      case "toggle-enabled":
        body = { enabled: !record.enabled };
        break;
      case "describe":
        body = { description: "edited by hand" };
        break;
      case "reorder":
        body = { order: record.order + 7 };
        break;
      case "rename-look-alike":
        if (record.name === null) return;
        body = {
          name:
            identity(record.name) === record.name
              ? `${record.name.normalize("NFD")} `
              : identity(record.name),
        };
        break;
      case "delete":
        await this.http("DELETE", path);
        this.checkAfter(data);
        return;
    }
    await this.http("PATCH", path, body);
    this.checkAfter(data);
  }

  /**
   * Sets another actor to edit, over HTTP, the description of a config `wave` updates, `afterMs`
   * after the rollout's write of it (with `afterAnyWrite`, after the rollout's first write of all);
   * `done` holds when the edit was answered (undefined: the wave updates none, or the write that
   * sets the edit off was never made).
   */
  private editAfterWrite(
    plannedJson: string,
    wave: { name: string; projects: string[] } | undefined,
    afterMs: number,
    afterAnyWrite: boolean,
  ): { done: () => Promise<{ id: number; text: string; answeredAt: number } | undefined> } {
    const changes =
      (
        JSON.parse(plannedJson) as {
          changes?: { action: string; project: string; family: string; id: number | null }[];
        }
      ).changes ?? [];
    const target = changes.find(
      (change) =>
        change.action === "update" && change.id !== null && wave?.projects.includes(change.project) === true,
    );
    if (target === undefined) return { done: () => Promise.resolve(undefined) };
    const path = `/api/projects/${target.project}/${target.family}/${target.id}/`;
    let resolve: (value: { id: number; text: string; answeredAt: number } | undefined) => void = () =>
      undefined;
    const done = new Promise<{ id: number; text: string; answeredAt: number } | undefined>((settle) => {
      resolve = settle;
    });
    const text = `edited by another actor ${afterMs} ms after the rollout's write`;
    let seen = false;
    this.onWrite = (line) => {
      if (!afterAnyWrite && !line.startsWith(`PATCH ${path} 200 `)) return;
      this.onWrite = undefined;
      seen = true;
      this.transcript.push(
        `    (during the rollout) another actor edits ${path} ${afterMs} ms after the rollout's ${afterAnyWrite ? "first write" : "write of it"}`,
      );
      setTimeout(() => {
        fetch(`${this.emulator.url}${path}`, {
          method: "PATCH",
          headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
          body: JSON.stringify({ description: text }),
        }).then(
          (response) =>
            resolve(
              response.status === 200 ? { id: Number(target.id), text, answeredAt: Date.now() } : undefined,
            ),
          () => resolve(undefined),
        );
      }, afterMs);
    };
    // Asked once the run has ended: a write it never made (refused, halted before it) sets no edit.
    return { done: () => (seen ? done : Promise.resolve(undefined)) };
  }

  /** What the manifest asks of a project, as the model wrote it: equal text, equal digest. */
  private asksOf(model: ManifestModel, project: string): string {
    return JSON.stringify([model.owner ?? null, model.projects[project as ProjectId] ?? null]);
  }

  /**
   * A rollout refused because an earlier one halted: only where a project that failed there holds
   * what the manifest asks of it (no change for it in the plan), nothing written; and, for a run of
   * the whole manifest, always where one holds exactly what failed there. True when it was refused.
   */
  private checkHaltRefusal(
    model: ManifestModel,
    scope: Scope,
    plannedJson: string,
    before: EmulatorData,
    applied: Run,
  ): boolean {
    const output = `${applied.stdout}${applied.stderr}`;
    const changes =
      (JSON.parse(plannedJson) as { changes?: { project: string }[] }).changes?.map(
        (change) => change.project,
      ) ?? [];
    const holding = this.halts.filter((halt) => !changes.includes(halt.project));
    const refused =
      applied.code === 4 &&
      !/Rollout halted in wave/.test(applied.stdout) &&
      /which failed the health check, (still holds?|may still hold) the change/.test(applied.stderr);
    if (refused) {
      // The run may refuse where the plan writes a failing project's other configs (the one that
      // failed stays): the model knows projects, not which config failed, so any halt it holds will do.
      if (this.halts.length === 0)
        this.broken(
          "a rollout is refused for an earlier halt only while a project that failed holds what the manifest asks of it",
          `no failing project of an earlier rollout holds it (${JSON.stringify(this.halts)}):
${output}`,
        );
      const written = this.changedRecords(before, this.snapshot());
      if (written.length > 0)
        this.broken(
          "a rollout refused for a halt writes nothing",
          `${JSON.stringify(written)}
${output}`,
        );
      return true;
    }
    // --target and --exclude narrow the plan: a failing project's change left out reads as held.
    const wholeRun = scope.target === undefined && scope.exclude === undefined;
    const same = holding.filter((halt) => halt.asks === this.asksOf(model, halt.project));
    if (wholeRun && same.length > 0)
      this.broken(
        "a rollout of a manifest that asks a project what failed there, which it still holds, is refused (exit 4) before any write",
        `project ${same[0]?.project} failed an earlier rollout and holds the same change:
${output}`,
      );
    return false;
  }

  /**
   * Remembers the projects a rollout failed (what the manifest asked of each), and forgets those a
   * rollout since judged healthy on their logs (not passed with nothing to judge, or unknown).
   */
  private noteVerdicts(model: ManifestModel, applied: Run): void {
    for (const match of applied.stderr.matchAll(
      /rollout: wave \d+\/\d+ "[^"]+": project (\S+) passes: (.*)/g,
    )) {
      if (match[2]?.startsWith("nothing to judge") || match[2]?.includes("health unknown")) continue;
      for (let index = this.halts.length - 1; index >= 0; index--)
        if (this.halts[index]?.project === match[1]) this.halts.splice(index, 1);
    }
    const block = /Rollout halted in wave "[^"]+": failing projects:\n((?: {2}project .*\n)+)/.exec(
      applied.stdout,
    );
    for (const line of block?.[1]?.split("\n") ?? []) {
      const project = / {2}project (\S+?):/.exec(line)?.[1];
      if (project !== undefined) this.halts.push({ project, asks: this.asksOf(model, project) });
    }
  }

  /**
   * After an edit another actor made during a rollout: to a config the first wave wrote, the run
   * never writes over it (but by a rollback, which checks first), and an edit made before that
   * wave's bake ended (by 100 ms) stops the rollout before the wave is judged (exit 1): it is seen
   * by the re-read after the writes or the one as the bake ends. To a record the next wave updates,
   * made before the first wave's bake ended, the run never writes over it: it is seen by the read
   * of the next wave's lists after that bake, and the rollout stops before the next wave.
   */
  private checkEditInBake(
    edited: { id: number; text: string; answeredAt: number },
    firstWave: string,
    applied: Run,
    nextWave: boolean,
  ): void {
    const output = `${applied.stdout}${applied.stderr}`;
    const until = new RegExp(`"${firstWave}": written and seen as planned; baking [^,]+, until (\\S+)`).exec(
      applied.stderr,
    )?.[1];
    const inBake = until !== undefined && edited.answeredAt < Date.parse(until) - 100;
    const record = this.snapshot().records.find((entry) => entry.id === edited.id);
    if (
      (nextWave ? inBake : !applied.stderr.includes("rolling back wave")) &&
      record?.description !== edited.text
    )
      this.broken(
        nextWave
          ? "a rollout never writes over an edit another actor made to a record of a later wave before the bake before that wave ended"
          : "a rollout never writes over an edit another actor made after its write of that record (but by a rollback)",
        `record ${edited.id}'s description is ${JSON.stringify(record?.description)}:\n${output}`,
      );
    if (nextWave || !inBake || until === undefined) return;
    const stopped =
      applied.code === 1 &&
      /still differs? from the manifest|no longer held what the wave wrote/.test(applied.stderr);
    if (!stopped)
      this.broken(
        "a wave whose judged config another actor edits before its bake ends is not judged: the rollout stops (exit 1)",
        `the edit was answered ${Date.parse(until) - edited.answeredAt} ms before the bake's end; exit ${applied.code}:\n${output}`,
      );
  }

  /**
   * Another actor creates, over HTTP, a record of a name no live record of the family holds in
   * `data`; its id, or undefined when every name is taken.
   */
  private async createFree(
    project: ProjectId,
    family: FamilyName,
    data: EmulatorData,
    prefer: readonly string[],
  ): Promise<number | undefined> {
    const taken = new Set(
      this.liveRecords(data)
        .filter((record) => String(record.project) === project && record.family === family)
        .map((record) => identity(this.shownName(data, record) ?? "")),
    );
    // A name the rollout is about to create there, when there is one: the closest call.
    const names = [...prefer, ...Object.keys(NAME_PLUGINS[family])];
    const name = names.find(
      (candidate) =>
        !taken.has(identity(candidate)) && candidate in NAME_PLUGINS[family] && candidate !== MISLAID,
    );
    if (name === undefined) return undefined;
    this.transcript.push(
      `    (during the rollout) another actor creates ${JSON.stringify(name)} in project ${project} ${family}`,
    );
    const response = await fetch(`${this.emulator.url}/api/projects/${project}/${family}/`, {
      method: "POST",
      headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ name, plugin: NAME_PLUGINS[family][name], order: 40, enabled: true }),
    });
    const body = (await response.json()) as { id?: number };
    if (response.status !== 201 || typeof body.id !== "number")
      throw new Error(`POST during the rollout: ${response.status} ${JSON.stringify(body)}`);
    return body.id;
  }

  /** Another actor creates a record of a name no live record of that family holds. */
  private async create(
    project: ProjectId,
    family: FamilyName,
    pick: number,
    variant: Variant,
  ): Promise<void> {
    const data = this.snapshot();
    const names = Object.keys(NAME_PLUGINS[family]).filter((name) => name !== MISLAID);
    const taken = new Set(
      this.liveRecords(data)
        .filter((record) => String(record.project) === project && record.family === family)
        .map((record) => identity(this.shownName(data, record) ?? "")),
    );
    const free = names.filter((name) => !taken.has(identity(name)));
    const name = free[pick % Math.max(1, free.length)];
    if (name === undefined) return;
    const spelled = spell(name, variant);
    this.transcript.push(`    creates ${JSON.stringify(spelled)}`);
    await this.http("POST", `/api/projects/${project}/${family}/`, {
      name: spelled,
      plugin: NAME_PLUGINS[family][name],
      order: 40,
      enabled: true,
    });
    this.checkAfter(data);
  }

  private async http(method: string, path: string, body?: unknown): Promise<void> {
    const response = await fetch(`${this.emulator.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    await response.text();
    if (response.status >= 400) throw new Error(`${method} ${path}: ${response.status}`);
  }

  /**
   * The first owner's manifest and the second owner's applied at once, in two processes. Each run
   * that ends with exit 0 owns every record its configs claim: they carry its mark afterwards.
   */
  private async race(): Promise<void> {
    const first = this.setup.manifests.find((model) => model.owner !== null && model.owner !== OWNER_B);
    if (first === undefined) return this.apply(this.setup.second, {});
    const runs = [first, this.setup.second];
    const files = await Promise.all(runs.map((model) => this.writeManifest(model)));
    const journals = runs.map(() => this.path("journal.jsonl"));
    const before = this.snapshot();
    // A slower service widens the window between each run's read and its write, as a busy one does.
    this.emulator.setFaults({ latencyMs: 100 });
    const results = await Promise.all(
      runs.map(
        (_, index) =>
          spawnCli(
            ["apply", "--auto-approve", "-f", files[index] as string, "--journal", journals[index] as string],
            {
              env: this.env,
              cwd: this.directory,
              timeoutMs: 30_000,
            },
          ).done,
      ),
    ).finally(() => this.emulator.setFaults({}));
    const after = this.checkAfter(before);
    for (const [index, model] of runs.entries()) {
      const result = results[index] as CliRun;
      this.checkOutput(["apply", `(${model.owner})`], result, false);
      await this.noteJournal(
        journals[index] as string,
        model.owner,
        `owner ${model.owner}'s racing apply`,
        true,
      );
      if (result.code !== 0) continue;
      for (const project of PROJECTS)
        for (const family of FAMILIES) {
          if (!manages(model, project, family)) continue;
          for (const config of configsOf(model, project, family)) {
            if (config.deleted || config.ignore_fields?.includes("description")) continue;
            const record = this.liveRecords(after).find(
              (candidate) =>
                String(candidate.project) === project &&
                candidate.family === family &&
                identity(this.shownName(after, candidate) ?? "") === identity(config.name),
            );
            const mark = readMark(record?.description).owner;
            if (record !== undefined && mark !== model.owner)
              this.broken(
                "another owner's record is never written",
                `owner "${model.owner}"'s apply ended with exit 0, but record ${record.id} (${JSON.stringify(record.name)}) that its config claims carries ${mark === null ? "no mark" : `owner "${mark}"'s mark`}: the other run wrote it (exit codes ${results.map((run) => run.code).join(" and ")})`,
              );
          }
        }
    }
  }

  /**
   * One manifest applied by two processes at once (a slow service, or one meeting `faults`,
   * widens the window between each run's read and its writes). Neither duplicates a record or
   * touches one outside its reach; when both end 0, a plan has nothing left to do.
   */
  private async twin(model: ManifestModel, faults?: TransportFaults): Promise<void> {
    const manifest = await this.writeManifest(model);
    const journals = [this.path("journal.jsonl"), this.path("journal.jsonl")];
    const before = this.snapshot();
    const results = await this.faulted(
      faults,
      (env) =>
        Promise.all(
          journals.map(
            (journal) =>
              spawnCli(["apply", "--auto-approve", "-f", manifest, "--journal", journal], {
                env: { ...this.env, ...env },
                cwd: this.directory,
                timeoutMs: 30_000,
              }).done,
          ),
        ),
      faults === undefined ? { latencyMs: 100 } : {},
    );
    for (const result of results)
      this.checkOutput(["apply", "-f", manifest, "(one of two at once)"], result, false);
    this.checkAfter(before, { model, scope: {}, owner: model.owner });
    for (const journal of journals) await this.noteJournal(journal, model.owner, "twin apply", true);
    if (results.every((result) => result.code === 0))
      await this.expectEmptyPlan(manifest, {}, "two applies of it at once");
  }

  private async exportAndPlan(templates: boolean): Promise<void> {
    const out = this.path("export.yaml");
    const before = this.snapshot();
    const exported = await this.pcsync([
      "export",
      "--project",
      "1",
      "--project",
      "2",
      ...(templates ? ["--templates"] : []),
      "-o",
      out,
    ]);
    this.checkAfter(before);
    if (exported.code !== 0) return;
    const text = await readFile(out, "utf8");
    // Every live record is exported, one with no name under its plugin's name and id, unless that
    // name is taken (then it is left out, and said).
    const leftOut = new Set(
      [...exported.stderr.matchAll(/record (\d+) in \w+ has no name and was left out/g)].map((match) =>
        Number(match[1]),
      ),
    );
    const marks = new Set(
      this.liveRecords(before)
        .filter((record) => !leftOut.has(record.id))
        .map((record) => readMark(record.description).owner),
    );
    const [only] = marks;
    if (marks.size === 1 && only !== null && only !== undefined && !text.includes(`owner: ${only}`))
      this.broken(
        "export names the owner whose mark its records carry",
        `every exported record carries owner "${only}"'s mark, but the export names no owner:\n${text}`,
      );
    const owners = [...marks].filter((owner): owner is string => owner !== null);
    if (owners.length > 1 && !owners.every((owner) => exported.stderr.includes(owner)))
      this.broken(
        "export names the owner whose mark its records carry",
        `the exported records carry the marks of ${owners.join(" and ")}, and export warned of no mixed marks:\n${exported.stderr}`,
      );
    const planned = await this.pcsync(["plan", "-f", out, "--detailed-exitcode", "--format", "json"]);
    // What export warned of: a record with no name, or with white space at its ends, is exported
    // under a name the manifest takes, pinned by id; planning it sets that name, and nothing else.
    const renamed = new Set(
      [...exported.stderr.matchAll(/record (\d+) in \w+ [^\n]*planning it will set that name/g)].map(
        (match) => Number(match[1]),
      ),
    );
    const changes = planned.code === 2 ? planChanges(planned.stdout) : [];
    const unexpected = changes.filter(
      (change) =>
        change.action !== "update" ||
        !renamed.has(change.id ?? -1) ||
        Object.keys(change.fields ?? {}).some((field) => field !== "name"),
    );
    if ((planned.code !== 0 && planned.code !== 2) || unexpected.length > 0)
      this.broken(
        "export then plan shows no change",
        `plan of the export ended with ${planned.code}:\n${planned.stdout}${planned.stderr}\nexport:\n${text}\n${exported.stderr}`,
      );
  }
}

interface PlannedChangeOfJson {
  action: string;
  id: number | null;
  fields?: Record<string, unknown>;
}

function planChanges(json: string): PlannedChangeOfJson[] {
  const plan = JSON.parse(json) as { changes: PlannedChangeOfJson[]; reorders: { moves: unknown[] }[] };
  const moves = plan.reorders.flatMap((reorder) => reorder.moves).length;
  return [...plan.changes, ...Array.from({ length: moves }, () => ({ action: "reorder", id: null }))];
}

/**
 * The owner whose rule a run keeps: none under --takeover (it claims what another owner marked,
 * and its rollbacks give it back, then take it again), else the manifest's.
 */
function ruledBy(model: ManifestModel, scope: Scope): string | null {
  return scope.takeover === true ? null : model.owner;
}

function scopeArgs(scope: Scope): string[] {
  return [
    ...(scope.target === undefined ? [] : ["--target", scope.target]),
    ...(scope.exclude === undefined ? [] : ["--exclude", scope.exclude]),
    ...(scope.allowDestroy === undefined ? [] : ["--allow-destroy", scope.allowDestroy]),
    ...(scope.takeover === true ? ["--takeover"] : []),
  ];
}

export { FE, PC };

/** The plugins of the model's frontend apps: a frontend-family record of another plugin is mislaid. */
const FRONTEND_PLUGINS = new Set(
  Object.entries(NAME_PLUGINS[FE])
    .filter(([name]) => name !== MISLAID)
    .map(([, plugin]) => plugin),
);

function isMislaid(record: { family: string; plugin: number }): boolean {
  return record.family === FE && !FRONTEND_PLUGINS.has(record.plugin);
}
