// The planner: a pure function from desired state and current state to a plan. No I/O, no clock;
// the same inputs always give the same plan.

import { appendAll } from "../append-all.js";
import { FAMILY_NAMES, type FamilyName } from "../families.js";
import {
  FAMILIES_IN_CLAIM_ORDER,
  idsOfOtherFamilies,
  isAnotherFamilysConfig,
  showsOtherFamiliesOf,
} from "../family-lists.js";
import { groupBy } from "../group-by.js";
import { formatSource } from "../manifest/diagnostics.js";
import type { DesiredConfig, DesiredFamily, DesiredState } from "../manifest/types.js";
import { describeLookAlike, lookAlikeKey } from "../record-name.js";
import type { PluginConfigRecord } from "../wire-types.js";
import { createFields, diffFields, isIgnored, managedFields } from "./compare-fields.js";
import { fingerprintMembership, fingerprintRecord, recordKey } from "./fingerprint.js";
import { findOrderTies, type PlacedConfig } from "./order-ties.js";
import {
  describeOwnerConflict,
  markForCreate,
  markForUpdate,
  type OwnerConflict,
  type OwnerSettings,
  ownerOf,
  preferOwnRecord,
  splitPrunable,
  unmanagedOwner,
} from "./owner-plan.js";
import { PLAN_FORMAT, PLAN_VERSION, summarizePlan } from "./plan-file.js";
import { findProtectedDeletes, protectEntries } from "./protect.js";
import {
  countsAsUpdate,
  findGuard,
  findUpdateGuard,
  ownedForPrune,
  ownedForUpdates,
} from "./safety-guards.js";
import { isPartial, selectTargets } from "./targets.js";
import type {
  CurrentFamily,
  CurrentState,
  OrderMove,
  OrderTie,
  Plan,
  PlannedChange,
  PlanTargets,
} from "./types.js";

export interface PlanOptions {
  /** Refuse to delete more than this share of a family of 10 or more records. */
  maxDeletePercent?: number;
  /** Refuse to update more than this share of a family of 10 or more records. */
  maxUpdatePercent?: number;
  allowDestroy?: readonly string[];
  targets?: PlanTargets;
  /** computePlan takes the desired state's `owner:`. */
  owner?: string | undefined;
  takeover?: boolean | undefined;
  /** Watch: an owner conflict refuses its family only (listed in `refused`), not the whole plan. */
  refuseFamilyOnly?: boolean | undefined;
}

export const PLAN_DEFAULTS = { maxDeletePercent: 30, maxUpdatePercent: 30 } as const satisfies Required<
  Pick<PlanOptions, "maxDeletePercent" | "maxUpdatePercent">
>;

export interface PlanDiagnostic {
  project: string;
  family: FamilyName;
  message: string;
  source: string;
  /** A refusal (exit 3) rather than an error: a config matches a record another owner marked. */
  refused?: true;
}

export interface PlanResult {
  plan: Plan | undefined;
  errors: PlanDiagnostic[];
  /** With `refuseFamilyOnly`: the owner conflicts, each refusing its family. */
  refused: PlanDiagnostic[];
}

/** Records claimed by manifest configs, per project, shared across the project's families. */
interface Claim {
  family: FamilyName;
  config: DesiredConfig;
  record: PluginConfigRecord;
}

interface Claims {
  byRecord: Map<number, Claim>;
  byConfig: Map<DesiredConfig, Claim>;
}

interface ProjectInput {
  project: string;
  desired: Map<FamilyName, DesiredFamily>;
  current: Map<FamilyName, CurrentFamily>;
}

/** One project's part of a plan: projects are planned independently of each other. */
export interface ProjectPlan
  extends Pick<Plan, "changes" | "reorders" | "families" | "fingerprints" | "guards"> {
  project: string;
  errors: PlanDiagnostic[];
}

/** `planned`: projects already planned as their lists came in (read-and-plan.ts); the rest are planned here. */
export function computePlan(
  desired: DesiredState,
  current: CurrentState,
  options: PlanOptions = {},
  planned?: ReadonlyMap<string, ProjectPlan>,
): PlanResult {
  const withOwner: PlanOptions = { owner: desired.owner?.name, ...options };
  const currentByProject = groupBy(current.families, (family) => family.project);
  const parts = [...groupBy(desired.families, (family) => family.project)].map(
    ([project, families]) =>
      planned?.get(project) ?? planProject(project, families, currentByProject.get(project) ?? [], withOwner),
  );
  if (!withOwner.refuseFamilyOnly) return { ...assemblePlan(parts, withOwner), refused: [] };
  const refused = parts.flatMap((part) => part.errors.filter((error) => error.refused === true));
  const kept = parts.map((part) => ({
    ...part,
    errors: part.errors.filter((error) => error.refused !== true),
  }));
  return { ...assemblePlan(kept, withOwner), refused };
}

export function planProject(
  project: string,
  desired: readonly DesiredFamily[],
  current: readonly CurrentFamily[],
  options: PlanOptions = {},
): ProjectPlan {
  const input: ProjectInput = { project, desired: new Map(), current: new Map() };
  for (const family of desired) if (family.project === project) input.desired.set(family.family, family);
  for (const family of current) if (family.project === project) input.current.set(family.family, family);
  const part: ProjectPlan = {
    project,
    changes: [],
    reorders: [],
    families: [],
    fingerprints: {},
    guards: [],
    errors: [],
  };
  const owner: OwnerSettings | undefined =
    options.owner === undefined ? undefined : { name: options.owner, takeover: options.takeover === true };
  const claims = claimRecords(input, part.errors, owner);
  for (const family of FAMILY_NAMES) {
    const desiredFamily = input.desired.get(family);
    if (desiredFamily) planFamily(part, input, desiredFamily, claims, options, owner);
  }
  return part;
}

/** Joins plan parts in the order given; a rollback's plan (a journal's inverse) is joined here too. */
export function assemblePlan(
  parts: readonly ProjectPlan[],
  options: PlanOptions = {},
): Pick<PlanResult, "plan" | "errors"> {
  const errors = parts.flatMap((part) => part.errors);
  if (errors.length > 0) return { plan: undefined, errors };
  const changes = parts.flatMap((part) => part.changes);
  const reorders = parts.flatMap((part) => part.reorders);
  const plan: Plan = {
    format: PLAN_FORMAT,
    version: PLAN_VERSION,
    summary: summarizePlan(changes, reorders),
    changes,
    reorders,
    families: parts.flatMap((part) => part.families),
    fingerprints: mergeFingerprints(parts),
    guards: parts.flatMap((part) => part.guards),
  };
  if (options.owner !== undefined) {
    plan.owner = options.owner;
    if (options.takeover) plan.takeover = true;
  }
  if (isPartial(options.targets)) {
    plan.partial = true;
    plan.targets = options.targets;
  }
  return { plan, errors };
}

// A loop, not Object.assign({}, ...parts): a spread of one argument per project has a limit.
function mergeFingerprints(parts: readonly ProjectPlan[]): Plan["fingerprints"] {
  const fingerprints: Plan["fingerprints"] = {};
  for (const part of parts) Object.assign(fingerprints, part.fingerprints);
  return fingerprints;
}

/**
 * Matches every config of a project to at most one record: by pinned id, else by name. Families
 * claim in FAMILIES_IN_CLAIM_ORDER so that a record shown in two lists (posthog-2024's plugin_configs
 * lists the frontend apps) is never claimed, reordered or pruned through the other family.
 */
function claimRecords(
  input: ProjectInput,
  errors: PlanDiagnostic[],
  owner: OwnerSettings | undefined,
): Claims {
  const claims = new Map<number, Claim>();
  const byConfig = new Map<DesiredConfig, Claim>();
  const claim = (value: Claim) => {
    claims.set(value.record.id, value);
    byConfig.set(value.config, value);
  };
  const reportIn = (family: FamilyName, config: DesiredConfig, message: string) =>
    errors.push({ project: input.project, family, message, source: formatSource(config.source) });
  const describeClaim = (claim: Claim) =>
    `${formatSource(claim.config.source)} (${claim.family}, ${claim.config.id !== undefined ? `id: ${claim.config.id}` : `name "${claim.config.fields.name}"`})`;

  for (const family of FAMILIES_IN_CLAIM_ORDER) {
    const desiredFamily = input.desired.get(family);
    if (!desiredFamily) continue;
    const records = input.current.get(family)?.records ?? [];
    const byId = new Map(records.map((record) => [record.id, record]));
    const byName = groupBy(records, (record) => record.name);
    const where = `project ${input.project} ${family}`;
    // Another family's record in this list matches by name only if it runs the config's plugin (or
    // the config names none): a plugin config may share a frontend app's name and is another record.
    const otherIds = idsOfOtherFamilies(family, input.current.values());
    const mayClaim = (config: DesiredConfig, record: PluginConfigRecord) =>
      !isAnotherFamilysConfig(record, config.fields.plugin, otherIds);

    // Pinned ids first, so that a name match never steals a record someone pinned.
    for (const config of desiredFamily.configs) {
      if (config.id === undefined) continue;
      const record = byId.get(config.id);
      // A record to delete that is gone already is what `deleted: true` asks for.
      if (!record && config.fields.deleted === true) continue;
      if (!record) {
        reportIn(
          family,
          config,
          `id ${config.id} ("${config.fields.name}") is not in ${where}: it does not exist, is deleted, or belongs to the other family. Remove "id:" to create a new record, or fix the id.`,
        );
        continue;
      }
      const previous = claims.get(record.id);
      if (previous) {
        reportIn(
          family,
          config,
          `record ${record.id} is claimed twice: by ${describeClaim(previous)} and by this config. Keep one of them.`,
        );
        continue;
      }
      claim({ family, config, record });
    }

    const unmatched: DesiredConfig[] = [];
    for (const config of desiredFamily.configs) {
      if (config.id !== undefined) continue;
      const named = (byName.get(config.fields.name) ?? []).filter((record) => mayClaim(config, record));
      const free = preferOwnRecord(
        owner,
        named.filter((record) => !claims.has(record.id)),
      );
      if (free.length > 1) {
        reportIn(
          family,
          config,
          `${free.length} records in ${where} are named "${config.fields.name}" (ids ${free.map((record) => record.id).join(", ")}): pin the one to manage with "id:" (e.g. id: ${free[0]?.id}).`,
        );
        continue;
      }
      const record = free[0];
      if (record) {
        claim({ family, config, record });
        continue;
      }
      const taken = named.map((candidate) => claims.get(candidate.id)).find((claim) => claim !== undefined);
      if (taken && taken.config !== config) {
        reportIn(
          family,
          config,
          `record ${taken.record.id} ("${config.fields.name}") is claimed twice: by ${describeClaim(taken)} and by this config's name. Rename one of them, or pin this one with "id:" to another record.`,
        );
        continue;
      }
      if (!taken) unmatched.push(config);
    }
    const ownRecords = records.filter((record) => !otherIds.has(record.id));
    const report = (config: DesiredConfig, message: string) => reportIn(family, config, message);
    for (const [config, record] of claimLookAlikes(unmatched, ownRecords, claims, report, where)) {
      claim({ family, config, record });
    }
  }
  return { byRecord: claims, byConfig };
}

/**
 * A config no name matched exactly adopts a record whose name only looks the same (end white space,
 * NFC/NFD), renaming it and keeping its secrets, rather than delete and copy; two candidates are an error.
 */
function claimLookAlikes(
  configs: readonly DesiredConfig[],
  records: readonly PluginConfigRecord[],
  claims: ReadonlyMap<number, Claim>,
  report: (config: DesiredConfig, message: string) => void,
  where: string,
): Map<DesiredConfig, PluginConfigRecord> {
  const adopted = new Map<DesiredConfig, PluginConfigRecord>();
  if (configs.length === 0) return adopted;
  const free = records.filter((record) => record.name !== null && !claims.has(record.id));
  const byKey = groupBy(free, (record) => lookAlikeKey(record.name ?? ""));
  const wanted = groupBy(configs, (config) => lookAlikeKey(config.fields.name));
  for (const [key, candidates] of byKey) {
    const takers = wanted.get(key);
    const config = takers?.[0];
    if (!config || takers.length > 1) continue;
    const record = candidates[0];
    if (candidates.length === 1 && record) {
      adopted.set(config, record);
      continue;
    }
    const listed = candidates.map((candidate) => `${candidate.id} ${JSON.stringify(candidate.name)}`);
    report(
      config,
      `no record in ${where} is named "${config.fields.name}", but ${candidates.length} look like it (ids and names: ${listed.join(", ")}; they differ in white space or Unicode normalisation): pin the one to manage with "id:" (e.g. id: ${record?.id}).`,
    );
  }
  return adopted;
}

/** A rename between names a reader cannot tell apart says how they differ. */
function lookAlikeNote(from: string | null, to: string): Pick<PlannedChange, "lookAlike"> {
  if (from === null || from === to || lookAlikeKey(from) !== lookAlikeKey(to)) return {};
  return { lookAlike: describeLookAlike(from, to) };
}

function planFamily(
  part: ProjectPlan,
  input: ProjectInput,
  desiredFamily: DesiredFamily,
  claims: Claims,
  options: PlanOptions,
  owner: OwnerSettings | undefined,
): void {
  const { project, family } = desiredFamily;
  const listed = input.current.get(family)?.records ?? [];
  const familySource = formatSource(desiredFamily.source);
  // Another family's record in this list is that family's, unless a config of this family claims it.
  const otherIds = idsOfOtherFamilies(family, input.current.values());
  const owned = listed.filter((record) => {
    const claim = claims.byRecord.get(record.id);
    if (claim) return claim.family === family;
    return !otherIds.has(record.id);
  });

  const changes: PlannedChange[] = [];
  const moves: OrderMove[] = [];
  // Where each config stands once the plan is applied, to find the orders it shares (order-ties.ts).
  const placed: PlacedConfig[] = [];
  let ignored = 0;
  const claimedNames = new Map<object, string | null>();
  const refuse = (conflict: OwnerConflict, owner: OwnerSettings, source: string) => {
    const message = describeOwnerConflict(conflict, `project ${project} ${family}`, owner.name);
    part.errors.push({ project, family, message, source, refused: true });
  };

  for (const config of desiredFamily.configs) {
    const claim = claims.byConfig.get(config);
    if (claim) claimedNames.set(config, claim.record.name);
    const source = formatSource(config.source);
    const desired = managedFields(config.fields, desiredFamily.fields);
    const { name, plugin, order } = desired;
    const via = config.appliedAt === undefined ? {} : { via: formatSource(config.appliedAt) };
    if (desired.deleted === true) {
      // The config takes no place in the order; another owner's record is refused without --takeover.
      const heldBy = claim && owner ? ownerOf(claim.record) : null;
      if (claim && owner && heldBy !== null && heldBy !== owner.name && !owner.takeover) {
        refuse({ config, record: claim.record, owner: heldBy }, owner, source);
        continue;
      }
      if (claim)
        changes.push({ ...deleteChange(project, family, claim.record, source, via), explicit: true });
      continue;
    }
    if (!claim) {
      placed.push({ id: null, name, plugin, order, placed: "create", source });
      changes.push({
        action: "create",
        project,
        family,
        name,
        id: null,
        fields: createFields(desired),
        source,
        ...via,
        ...markForCreate(owner),
      });
      continue;
    }
    const { record } = claim;
    // An ignored order stays where the service has it, and its ties are found there (order-ties.ts).
    const orderIgnored = record.order !== order && isIgnored(desired, "order");
    const keepsOrder = record.order === order || orderIgnored;
    placed.push(
      orderIgnored
        ? { id: record.id, name, plugin, order: record.order, placed: "ignored", source }
        : { id: record.id, name, plugin, order, placed: keepsOrder ? "kept" : "move", source },
    );
    const diff = diffFields(desired, record);
    ignored += diff.ignored + (orderIgnored ? 1 : 0);
    const fields = diff.changes;
    // The mark keeps the description the family manages: none where ignore_fields names it.
    const { description: _ignored, ...withoutDescription } = desired;
    const managed = isIgnored(desired, "description") ? withoutDescription : desired;
    const { mark, conflict } = markForUpdate(owner, { ...config, fields: managed }, record, fields);
    if (conflict && owner) refuse(conflict, owner, source);
    if (Object.keys(fields).length > 0 || mark?.from !== undefined) {
      changes.push({
        action: "update",
        project,
        family,
        name,
        id: record.id,
        fields,
        ...lookAlikeNote(record.name, config.fields.name),
        source,
        ...via,
        ...(mark === undefined ? {} : { mark }),
      });
    }
    if (!keepsOrder)
      moves.push({ id: record.id, name, plugin: record.plugin, from: record.order, to: order });
  }

  const unclaimed = owned.filter((record) => !claims.byRecord.has(record.id));
  // With an owner, prune deletes only the records that carry its mark: the rest stay unmanaged.
  const { prunable, kept, pruneKept } = splitPrunable(owner, unclaimed);
  const prunes = desiredFamily.prune
    ? prunable.map((record) => deleteChange(project, family, record, familySource, {}))
    : [];
  appendAll(changes, prunes);
  const prunesSet = new Set(prunes);
  // With prune, every unclaimed record but other owners' is deleted: the rest is left to tie with.
  const unmanaged = desiredFamily.prune ? kept : unclaimed;
  const orderTies: OrderTie[] = findOrderTies(placed, unmanaged);

  const selected = selectTargets(changes, moves, options.targets);
  const protect = protectEntries(desiredFamily, claimedNames);
  const where = { project, family, source: familySource };
  // An owner's prune is measured against its own records, less those `deleted: true` deletes anyway.
  const keptIds = new Set(kept.map((record) => record.id));
  const ownedByThis = desiredFamily.prune ? owned.filter((record) => !keptIds.has(record.id)) : owned;
  const deleteGuard = findGuard(
    {
      ...where,
      owned: ownedForPrune(ownedByThis, selected.changes),
      creates: selected.changes.filter((change) => change.action === "create").length,
      // A set: a prune of 20,000 records would otherwise be 20,000 scans of 20,000 changes.
      deletes: selected.changes.filter((change) => prunesSet.has(change)).length,
      // With an owner, the delete guard's share is of its own records.
      ...(owner === undefined ? {} : { owner: owner.name }),
    },
    options.maxDeletePercent ?? PLAN_DEFAULTS.maxDeletePercent,
  );
  const updateGuard = findUpdateGuard(
    {
      ...where,
      owned: ownedForUpdates(owned, selected.changes),
      updates: selected.changes.filter(countsAsUpdate).length,
    },
    options.maxUpdatePercent ?? PLAN_DEFAULTS.maxUpdatePercent,
  );
  const protectedGuard = findProtectedDeletes(where, selected.changes, protect, options.allowDestroy ?? []);
  for (const guard of [protectedGuard, deleteGuard, updateGuard]) if (guard) part.guards.push(guard);
  appendAll(part.changes, selected.changes);
  if (selected.moves.length > 0)
    part.reorders.push({ project, family, moves: selected.moves, source: familySource });
  // The records a change or a move touches, as read: apply tells by them whether they changed since.
  const byId = new Map(listed.map((record) => [record.id, record]));
  for (const { id } of [...selected.changes, ...selected.moves]) {
    const record = id === null ? undefined : byId.get(id);
    if (record) part.fingerprints[recordKey(project, family, record.id)] = fingerprintRecord(record);
  }
  part.families.push({
    project,
    family,
    prune: desiredFamily.prune,
    recordCount: owned.length,
    membership: fingerprintMembership(listed),
    ...(showsOtherFamiliesOf(family, input.current.values())
      ? { ownMembership: fingerprintMembership(listed.filter((record) => !otherIds.has(record.id))) }
      : {}),
    unmanaged: unmanaged.map((record) => {
      const { id, name, plugin, order, enabled } = record;
      return { id, name, plugin, order, enabled, ...unmanagedOwner(owner, record) };
    }),
    ...(orderTies.length > 0 ? { orderTies } : {}),
    ...(desiredFamily.prune && pruneKept !== undefined ? { pruneKept } : {}),
    ...(protect.length > 0 ? { protect } : {}),
    ...(ignored > 0 ? { ignored } : {}),
    ...(selected.reorderLeftOut ? { reorderLeftOut: true as const } : {}),
  });
}

function deleteChange(
  project: string,
  family: FamilyName,
  record: PluginConfigRecord,
  source: string,
  via: { via?: string },
): PlannedChange {
  return { action: "delete", project, family, name: record.name, id: record.id, fields: {}, source, ...via };
}
