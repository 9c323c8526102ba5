// The plan model: what `plan` computes and prints, what `plan --out` saves, and what `apply`
// executes. Mirrors schemas/plan.schema.json (a test checks they agree).

import type { FamilyName, WritableField } from "../families.js";
import type { RolloutHealthSpec } from "../manifest/types.js";
import type { PluginConfigRecord } from "../wire-types.js";

export type FieldValue = string | number | boolean | null;

export interface FieldChange {
  from: FieldValue | undefined;
  to: FieldValue;
}

export type FieldChanges = Partial<Record<WritableField, FieldChange>>;

export interface PlannedChange {
  action: "create" | "update" | "delete";
  project: string;
  family: FamilyName;
  /** Record name: the desired name for create/update, the remote one for delete. */
  name: string | null;
  id: number | null;
  /** Create: every field sent (from undefined). Update: only the fields that differ. Delete: empty. */
  fields: FieldChanges;
  /** A rename to a name that looks the same: how they differ, so the plan shows no invisible change. */
  lookAlike?: "white space" | "Unicode normalisation";
  /** A `deleted: true` delete, not a prune: allowed without prune, counted by no delete guard. */
  explicit?: true;
  /** `file:line` of the manifest config; for a prune delete, of the family block. */
  source: string;
  /** For a config from a template or project set: `file:line` where it was applied to this project. */
  via?: string;
  mark?: ChangeMark;
}

/**
 * The owner mark a write puts in `description`, over `fields.description` or else `keep`. `from`, when
 * the record changes hands: null for an adoption, the other owner for a `--takeover`.
 */
export interface ChangeMark {
  owner: string;
  from?: string | null;
  keep?: string | null;
}

export interface OrderMove {
  id: number;
  name: string | null;
  plugin: number;
  from: number;
  to: number;
}

export interface PlannedReorder {
  project: string;
  family: FamilyName;
  /** Existing records whose order changes. Created records are sent with their order. */
  moves: OrderMove[];
  source: string;
}

export interface UnmanagedRecord {
  id: number;
  name: string | null;
  plugin: number;
  order: number;
  enabled: boolean;
  owner?: string;
}

/** A config of the manifest at a tied order, after apply. */
export interface TiedConfig {
  id: number | null;
  name: string;
  plugin: number;
  /** "ignored": left at its order by `ignore_fields: [order]` though the manifest gives another. */
  placed: "create" | "move" | "kept" | "ignored";
  source: string;
}

export interface TiedRecord {
  id: number;
  name: string | null;
  plugin: number;
}

/** An order configs share after apply with unmanaged records or each other: who runs first is undefined. */
export interface OrderTie {
  order: number;
  managed: TiedConfig[];
  unmanaged: TiedRecord[];
}

/** What the plan read of one family, for stale-plan detection and reporting. */
export interface FamilyReport {
  project: string;
  family: FamilyName;
  prune: boolean;
  recordCount: number;
  /** Hash of the sorted ids of the family's list. */
  membership: string;
  /**
   * The same of its own records only, not those other families' lists hold (a frontend app made since
   * joins posthog-2024's plugin_configs, and is no record it prunes); absent where those were not read.
   */
  ownMembership?: string;
  /** Records in the list that no manifest config claims and that are not deleted. */
  unmanaged: UnmanagedRecord[];
  orderTies?: OrderTie[];
  protect?: ProtectEntry[];
  /** Differences left alone because a config's `ignore_fields` names the field. */
  ignored?: number;
  /** With --target/--exclude: the family's reorder was left out, as it moves records not targeted. */
  reorderLeftOut?: true;
  /** With `owner:` and `prune: true`: unclaimed records prune left alone for lack of this owner's mark. */
  pruneKept?: { unmarked: number; otherOwners: number };
}

/** A `protect:` name or `*` glob, or a `protect: true` config's name, and where the manifest says so. */
export interface ProtectEntry {
  pattern: string;
  source: string;
  /** A `protect: true` config's name: it protects that name (as the identity rule sees it), its `*` a `*`. */
  exact?: true;
}

/** --target and --exclude: record-name globs. */
export interface PlanTargets {
  target: string[];
  exclude: string[];
}

export type GuardRule = "max_delete_percent" | "prune_to_empty" | "max_update_percent" | "protected";

/** A safety guard the plan violates, as data; the words are render/guard-message.ts's. */
export type GuardViolation =
  | PruneToEmptyFinding
  | MaxDeletePercentFinding
  | MaxUpdatePercentFinding
  | ProtectedFinding;

interface GuardPlace {
  project: string;
  family: FamilyName;
  source: string;
}

interface GuardCounts extends GuardPlace {
  owned: number;
  deletes: number;
  /** With `owner:`: `owned` counts the records with this owner's mark only. */
  owner?: string;
}

export interface PruneToEmptyFinding extends GuardCounts {
  rule: "prune_to_empty";
}

export interface MaxDeletePercentFinding extends GuardCounts {
  rule: "max_delete_percent";
  limitPercent: number;
}

export interface MaxUpdatePercentFinding extends GuardPlace {
  rule: "max_update_percent";
  owned: number;
  updates: number;
  limitPercent: number;
}

/** Deletes of protected records that no --allow-destroy names. */
export interface ProtectedFinding extends GuardPlace {
  rule: "protected";
  records: { id: number; name: string | null; protectedBy: ProtectEntry }[];
}

export interface PlanSummary {
  create: number;
  update: number;
  delete: number;
  reorder: number;
}

export interface Plan {
  format: "pcsync-plan";
  version: 2;
  /** The service the plan was read from (base URL, no credentials); set by the CLI, not the planner. */
  server?: string;
  /** Apply checks the owner marks again before it writes. */
  owner?: string;
  takeover?: boolean;
  summary: PlanSummary;
  changes: PlannedChange[];
  reorders: PlannedReorder[];
  families: FamilyReport[];
  /** Fingerprint (hash of the writable fields) of every record a change or move touches, by "project/family/id". */
  fingerprints: Record<string, string>;
  guards: GuardViolation[];
  partial?: true;
  targets?: PlanTargets;
  rollout?: PlanRollout;
  /** What `plan` said of the manifest's last rollout (on stderr too): informational, never applied. */
  notices?: { level: "note" | "warning"; text: string }[];
}

export interface PlanRollout {
  /** In order; every project the plan writes is in exactly one. A wave may hold no project. */
  waves: PlanWave[];
  bakeSeconds: number;
  health: RolloutHealthSpec;
  failureBudget: number;
  onFailure: "rollback" | "halt";
}

export interface PlanWave {
  name: string;
  /** The project ids the wave writes, named ones first (as written), then by the rollout's hash. */
  projects: string[];
}

export interface CurrentFamily {
  project: string;
  family: FamilyName;
  records: PluginConfigRecord[];
}

export interface CurrentState {
  families: CurrentFamily[];
}
