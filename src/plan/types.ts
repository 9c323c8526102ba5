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
  /** Record id; null for a create. */
  id: number | null;
  /** Create: every field sent (from undefined). Update: only the fields that differ. Delete: empty. */
  fields: FieldChanges;
  /**
   * An update that renames a record to a name that looks the same (trim-as-service.ts): how the two
   * differ, so that the plan does not show an invisible change.
   */
  lookAlike?: "white space" | "Unicode normalisation";
  /**
   * A delete the manifest asks for by name (`deleted: true`), not a prune: made in a family without
   * prune, and counted by no delete guard.
   */
  explicit?: true;
  /** `file:line` of the manifest config; for a prune delete, of the family block. */
  source: string;
  /** For a config from a template or project set: `file:line` where it was applied to this project. */
  via?: string;
  /** With `owner:`: the write puts the owner's mark in `description` (see owner-mark.ts). */
  mark?: ChangeMark;
}

/**
 * The owner mark a create or update writes. `fields.description`, when present, is the text under
 * the mark; otherwise `keep` is. `from` is there when the record changes hands: null when it
 * carried no mark (an adoption), another owner's name for a `--takeover`.
 */
export interface ChangeMark {
  owner: string;
  from?: string | null;
  /** The text the description keeps under the mark when the change does not set it. */
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
  /** The owner whose mark the record carries, when it carries one (see owner-mark.ts). */
  owner?: string;
}

/** A config of the manifest at a tied order, after apply. */
export interface TiedConfig {
  /** Record id; null for a config the plan creates. */
  id: number | null;
  name: string;
  plugin: number;
  /**
   * How the config comes to the order: created at it, moved to it, already there, or left there
   * by `ignore_fields: [order]` though the manifest gives it another.
   */
  placed: "create" | "move" | "kept" | "ignored";
  /** `file:line` of the manifest config. */
  source: string;
}

/** A record the manifest does not manage, at a tied order: the plan never moves it. */
export interface TiedRecord {
  id: number;
  name: string | null;
  plugin: number;
}

/**
 * An order that, once the plan is applied, the manifest's configs share with records it does not
 * manage, or with each other where `ignore_fields: [order]` left one of them there: which of them
 * runs first is not defined (see order-ties.ts).
 */
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
  /** Number of records in the family's list when read. */
  recordCount: number;
  /** Hash of the sorted ids of the family's list (membership). */
  membership: string;
  /**
   * Hash of the sorted ids of the family's own records in its list: those no list of the families
   * it also shows holds (a frontend app made since joins posthog-2024's plugin_configs, and is not
   * a record this family prunes or reorders). Absent where those lists were not read.
   */
  ownMembership?: string;
  /** Records in the list that no manifest config claims and that are not deleted. */
  unmanaged: UnmanagedRecord[];
  /** Orders shared after apply that the manifest's own checks cannot see (order-ties.ts); absent if none. */
  orderTies?: OrderTie[];
  /** What is never deleted without --allow-destroy: `protect:` names and globs, and `protect: true` configs. */
  protect?: ProtectEntry[];
  /** Differences left alone because a config's `ignore_fields` names the field; absent if none. */
  ignored?: number;
  /** With --target/--exclude: the family's reorder was left out, as it moves records not targeted. */
  reorderLeftOut?: true;
  /**
   * With `owner:` and `prune: true`: the unclaimed records prune left alone because they do not
   * carry this owner's mark (they are listed in `unmanaged`); absent otherwise.
   */
  pruneKept?: { unmarked: number; otherOwners: number };
}

/** A record name or `*` glob that is protected, and where the manifest says so. */
export interface ProtectEntry {
  pattern: string;
  source: string;
  /** A `protect: true` config's name: it protects that name (as the identity rule sees it), its `*` a `*`. */
  exact?: true;
}

/** --target and --exclude of a partial plan: record-name globs. */
export interface PlanTargets {
  target: string[];
  exclude: string[];
}

/** The kinds of safety guard; safety-guards.ts says what each refuses. */
export type GuardRule = "max_delete_percent" | "prune_to_empty" | "max_update_percent" | "protected";

/**
 * A safety guard the plan violates, as data: its kind (`rule`), the counts it judged and the limit
 * it holds them to. The words are render/'s (src/render/guard-message.ts).
 */
export type GuardViolation =
  | PruneToEmptyFinding
  | MaxDeletePercentFinding
  | MaxUpdatePercentFinding
  | ProtectedFinding;

/** Where a guard was found: the family, and `file:line` of its block. */
interface GuardPlace {
  project: string;
  family: FamilyName;
  source: string;
}

interface GuardCounts extends GuardPlace {
  /** Records of the family that the manifest owns, and how many of them the prune deletes. */
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
  /** The share of `owned` that a prune may delete, in percent. */
  limitPercent: number;
}

export interface MaxUpdatePercentFinding extends GuardPlace {
  rule: "max_update_percent";
  /** Records of the family that the manifest owns, and how many of them the plan updates. */
  owned: number;
  updates: number;
  /** The share of `owned` that a plan may update, in percent. */
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
  /** `owner:` of the manifest: apply checks the marks again before it writes. */
  owner?: string;
  /** Made with `--takeover`: records marked by another owner may be taken over. */
  takeover?: boolean;
  summary: PlanSummary;
  changes: PlannedChange[];
  reorders: PlannedReorder[];
  families: FamilyReport[];
  /** Fingerprint (hash of the writable fields) of every record a change or move touches, by "project/family/id". */
  fingerprints: Record<string, string>;
  guards: GuardViolation[];
  /** With --target/--exclude: only the targeted records' changes are in the plan. */
  partial?: true;
  targets?: PlanTargets;
  /** With `rollout:` in the manifest: the waves `apply` writes the plan's projects in. */
  rollout?: PlanRollout;
  /** What `plan` said of the manifest's last rollout (on stderr too): informational, never applied. */
  notices?: { level: "note" | "warning"; text: string }[];
}

/** The rollout of a plan: its waves over the plan's projects, and how each wave is judged. */
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

/** Current state as read through the list endpoints. */
export interface CurrentFamily {
  project: string;
  family: FamilyName;
  records: PluginConfigRecord[];
}

export interface CurrentState {
  families: CurrentFamily[];
}
