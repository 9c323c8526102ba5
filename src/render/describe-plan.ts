// Turns a Plan into what every human-readable renderer shows: one section per project and family
// holding its items (creates, updates, deletes, then moves) as lines of styled spans.

import { appendAll } from "../append-all.js";
import { MARK_START, viewDescription } from "../description-view.js";
import { formatDuration } from "../duration.js";
import { type FamilyName, familyKey } from "../families.js";
import { TIE_EFFECT } from "../plan/order-ties.js";
import { hasChanges } from "../plan/plan-file.js";
import type {
  FamilyReport,
  FieldChange,
  FieldValue,
  GuardViolation,
  OrderMove,
  OrderTie,
  Plan,
  PlannedChange,
  PlanSummary,
  UnmanagedRecord,
} from "../plan/types.js";
import { plural } from "../plural.js";
import {
  escapeControl,
  formatFieldChange,
  formatName,
  formatValue,
  type Span,
  type ValueOptions,
} from "./format-value.js";

export type ItemKind = "create" | "update" | "delete" | "reorder";

export interface PlanItem {
  kind: ItemKind;
  head: string;
  source: string;
  fields: Span[][];
}

export interface FamilySection {
  project: string;
  family: FamilyName;
  counts: PlanSummary;
  items: PlanItem[];
  unmanaged: UnmanagedRecord[];
  ties: OrderTie[];
  guards: GuardViolation[];
  /** What the plan left alone on purpose: ignored differences, a reorder left out of a partial plan. */
  notes: string[];
  pruneKept?: PruneKept;
}

export type PruneKept = NonNullable<FamilyReport["pruneKept"]> & { owner: string };

export const MARKERS: Record<ItemKind, string> = {
  create: "+",
  update: "~",
  delete: "-",
  reorder: "↕",
};

const ACTION_ORDER: Record<PlannedChange["action"], number> = { create: 0, update: 1, delete: 2 };

const UNMANAGED_NAMED = 5;

/** In the order the plan read the families, then any only the changes mention (a hand-made plan). */
export function describePlan(plan: Plan, options: ValueOptions): FamilySection[] {
  const sections = new Map<string, FamilySection>();
  const sectionFor = (project: string, family: FamilyName): FamilySection => {
    const key = familyKey(project, family);
    const section = sections.get(key) ?? {
      project,
      family,
      counts: { create: 0, update: 0, delete: 0, reorder: 0 },
      items: [],
      unmanaged: [],
      ties: [],
      guards: [],
      notes: [],
    };
    sections.set(key, section);
    return section;
  };

  for (const report of plan.families) {
    const section = sectionFor(report.project, report.family);
    appendAll(section.unmanaged, report.unmanaged);
    appendAll(section.ties, report.orderTies ?? []);
    if (report.ignored !== undefined) {
      const count = plural(report.ignored, "difference");
      section.notes.push(`ignored: ${count} in fields that ignore_fields names, left as they are`);
    }
    if (report.reorderLeftOut === true)
      section.notes.push(
        "reorder left out: it moves records that --target/--exclude leave out; a full plan shows it",
      );
    if (report.pruneKept !== undefined && plan.owner !== undefined)
      section.pruneKept = { owner: plan.owner, ...report.pruneKept };
  }
  // Creates, updates, deletes, then moves: the order in which apply performs them.
  const changes = plan.changes
    .map((change, index) => ({ change, index }))
    .sort((a, b) => ACTION_ORDER[a.change.action] - ACTION_ORDER[b.change.action] || a.index - b.index);
  for (const { change } of changes) {
    const section = sectionFor(change.project, change.family);
    section.counts[change.action] += 1;
    section.items.push(describeChange(change, options));
  }
  for (const reorder of plan.reorders) {
    const section = sectionFor(reorder.project, reorder.family);
    section.counts.reorder += reorder.moves.length;
    for (const move of reorder.moves) section.items.push(describeMove(move, reorder.source, options));
  }
  for (const guard of plan.guards) sectionFor(guard.project, guard.family).guards.push(guard);

  return [...sections.values()].filter(({ items, unmanaged, ties, guards, notes }) =>
    [items, unmanaged, ties, guards, notes].some((list) => list.length > 0),
  );
}

export function describePartial(plan: Plan): string | undefined {
  if (plan.partial !== true) return undefined;
  const flags = [
    ...(plan.targets?.target ?? []).map((name) => `--target ${JSON.stringify(name)}`),
    ...(plan.targets?.exclude ?? []).map((name) => `--exclude ${JSON.stringify(name)}`),
  ];
  return `Partial plan (${escapeControl(flags.join(" "))}): only the changes of the targeted records; a full plan shows the rest.`;
}

/** --force overrides the guards, except protection, which only --allow-destroy lifts. */
export function describeGuardOverride(plan: Plan, forced: boolean): string {
  const guarded = plan.guards.some((guard) => guard.rule === "protected");
  const forceable = plan.guards.some((guard) => guard.rule !== "protected");
  if (!guarded) return forced ? "overridden by --force." : "apply will refuse this plan unless --force.";
  if (forced)
    return "apply will refuse this plan unless --allow-destroy names each protected record (--force does not lift protection).";
  return forceable
    ? "apply will refuse this plan: --allow-destroy NAME lifts protection, --force the other guards."
    : "apply will refuse this plan unless --allow-destroy names each protected record.";
}

function describeChange(change: PlannedChange, options: ValueOptions): PlanItem {
  const name = formatName(change.name, options);
  const id = change.id === null ? "" : ` (id ${change.id})`;
  // Two names a reader cannot tell apart: say what the rename changes.
  const lookAlike =
    change.lookAlike === undefined
      ? ""
      : `, renamed from a look-alike name (they differ only in ${change.lookAlike === "white space" ? "white space at the ends" : "Unicode normalisation, NFC against NFD"})`;
  return {
    kind: change.action,
    head: `${describeAction(change)} ${name}${id}${lookAlike}`,
    // A templated config: the template's line, then where it was applied to this project.
    source: escapeControl(change.via === undefined ? change.source : `${change.source} via ${change.via}`),
    fields: describeFields(change, options),
  };
}

/** The service's documented default for a field the manifest leaves out of a create. */
const CREATE_DEFAULTS: Readonly<Record<string, FieldValue>> = { enabled: false };

/** An update that takes a record for an owner says so. */
function describeAction(change: PlannedChange): string {
  const from = change.mark?.from;
  if (change.action !== "update" || from === undefined) return change.action;
  return from === null ? "adopt" : "take over";
}

function describeOwnerChange(change: PlannedChange, options: ValueOptions): Span[] | undefined {
  const mark = change.mark;
  if (mark?.from === undefined) return undefined;
  const from = mark.from === null ? "(no mark)" : formatValue(mark.from, options);
  return [{ text: `owner: ${from} → ${formatValue(mark.owner, options)}` }];
}

/**
 * A description a rollback puts back as stored, with an owner mark on either side: its text and its
 * mark on lines of their own (description-view.ts), never the mark's raw form.
 */
function describeMarkedDescription(change: FieldChange, options: ValueOptions): Span[][] | undefined {
  // Cheap first: a plan of thousands of changes pays a substring search, not a parse, per value.
  const mayBeMarked = (value: unknown) => typeof value === "string" && value.includes(MARK_START);
  if (!mayBeMarked(change.from) && !mayBeMarked(change.to)) return undefined;
  const from = change.from === undefined ? undefined : viewDescription(change.from);
  const to = viewDescription(change.to);
  if (to.owner === null && (from === undefined || from.owner === null)) return undefined;
  const owner = (name: string | null) => (name === null ? "(no mark)" : formatValue(name, options));
  if (from === undefined)
    return [
      [{ text: `description: ${formatValue(to.text, options)}` }],
      [{ text: `owner: ${owner(to.owner)}` }],
    ];
  const lines: Span[][] = [];
  if (from.text !== to.text)
    lines.push(formatFieldChange("description", { from: from.text, to: to.text }, options));
  if (from.owner !== to.owner) lines.push([{ text: `owner: ${owner(from.owner)} → ${owner(to.owner)}` }]);
  return lines;
}

function describeFields(change: PlannedChange, options: ValueOptions): Span[][] {
  const lines: Span[][] = [];
  const owner = describeOwnerChange(change, options);
  if (owner) lines.push(owner);
  // The plan's field order is meaningful (a create lists plugin first, order last): keep it.
  for (const [field, fieldChange] of Object.entries(change.fields)) {
    // With an owner mark on the change, the description's values are the text under it, as the
    // manifest writes it: text that only looks like a mark is text, not the record's owner.
    const marked =
      field === "description" && change.mark === undefined
        ? describeMarkedDescription(fieldChange, options)
        : undefined;
    if (marked) {
      appendAll(lines, marked);
      continue;
    }
    if (change.action === "create") {
      // The head already shows the name a create gives.
      if (field === "name" && fieldChange.to === change.name) continue;
      lines.push([{ text: `${field}: ${formatValue(fieldChange.to, options)}` }]);
    } else {
      lines.push(formatFieldChange(field, fieldChange, options));
    }
  }
  // A field left out is not managed, but a create still sets it: say to what, as Terraform does.
  if (change.action === "create") {
    for (const [field, value] of Object.entries(CREATE_DEFAULTS)) {
      if (!(field in change.fields))
        lines.push([{ text: `${field}: ${formatValue(value, options)} (default)` }]);
    }
  }
  return lines;
}

function describeMove(move: OrderMove, source: string, options: ValueOptions): PlanItem {
  return {
    kind: "reorder",
    head: `reorder: ${formatName(move.name, options)} (id ${move.id}) ${move.from} → ${move.to}`,
    source: escapeControl(source),
    fields: [],
  };
}

/** `unmanaged: 2 records left alone: "A" (id 7), "B" (id 9, owner "x")`, naming only the first few. */
export function describeUnmanaged(
  records: readonly UnmanagedRecord[],
  options: ValueOptions,
  pruneKept?: PruneKept,
): string | undefined {
  if (records.length === 0) return undefined;
  const count = plural(records.length, "record");
  const named = records
    .slice(0, UNMANAGED_NAMED)
    .map(
      (record) =>
        `${formatName(record.name, options)} (id ${record.id}${record.owner === undefined ? "" : `, owner ${formatValue(record.owner, options)}`})`,
    )
    .join(", ");
  const rest = records.length > UNMANAGED_NAMED ? ` and ${records.length - UNMANAGED_NAMED} more` : "";
  const why = pruneKept === undefined ? "" : ` by prune (${describePruneKept(pruneKept, options)})`;
  return `unmanaged: ${count} left alone${why}: ${named}${rest}`;
}

function describePruneKept(kept: PruneKept, options: ValueOptions): string {
  const parts: string[] = [];
  if (kept.unmarked > 0) parts.push(`${kept.unmarked} with no owner mark`);
  if (kept.otherOwners > 0) parts.push(plural(kept.otherOwners, "of another owner", "of other owners"));
  return `${parts.join(", ")}; prune deletes only records marked by owner ${formatValue(kept.owner, options)}`;
}

const PLACED: Record<OrderTie["managed"][number]["placed"], string> = {
  create: "to create, ",
  move: "moved here, ",
  kept: "",
  ignored: "left here by ignore_fields, ",
};

/**
 * The tie, what it means, and the ways out. A tie of configs only is one that `ignore_fields:
 * [order]` left: the way out is an order on the service, or the field managed.
 */
export function describeOrderTie(tie: OrderTie, options: ValueOptions): string {
  const configs = tie.managed.map(({ id, name, placed }) => {
    const details = `${PLACED[placed]}${id === null ? "" : `id ${id}`}`.replace(/, $/, "");
    return `${formatName(name, options)} (${details})`;
  });
  const plans = tie.managed.some(({ placed }) => placed === "create" || placed === "move");
  const share = plans ? "would share" : configs.length === 1 ? "shares" : "share";
  const left = tie.managed
    .filter(({ placed }) => placed === "ignored")
    .map(({ name }) => formatName(name, options));
  const ignored =
    left.length === 0
      ? ""
      : `ignore_fields: [order] leaves ${left.join(", ")} at the service's order: give ${left.length === 1 ? "it" : "them"} a distinct order on the service, or drop order from ${left.length === 1 ? "its" : "their"} ignore_fields`;
  if (tie.unmanaged.length === 0)
    return `${configs.join(" and ")} ${share} order ${tie.order}: ${TIE_EFFECT}; ${ignored}`;
  const records = tie.unmanaged.map(({ id, name }) => `${formatName(name, options)} (id ${id})`);
  const them = tie.unmanaged.length === 1 ? "the record" : "the records";
  const ids = tie.unmanaged.map(({ id }) => `id: ${id}`).join(", ");
  const ways =
    left.length === tie.managed.length
      ? `${ignored}, or manage ${them} in the manifest (${ids})`
      : `give the config an order no unmanaged record has (order: on every config of the family), or manage ${them} in the manifest (${ids})${left.length === 0 ? "" : `; ${ignored}`}`;
  return `${configs.join(" and ")} ${share} order ${tie.order} with unmanaged ${records.join(", ")}: ${TIE_EFFECT}; ${ways}`;
}

export function describeTieCount(plan: Plan): string | undefined {
  const ties = plan.families.flatMap((report) => report.orderTies ?? []);
  if (ties.length === 0) return undefined;
  const count = plural(ties.length, "order tie");
  return ties.every((tie) => tie.unmanaged.length > 0)
    ? `${count} with records the manifest does not manage`
    : ties.every((tie) => tie.unmanaged.length === 0)
      ? `${count} that ignore_fields: [order] leaves between configs of the manifest`
      : `${count} with records the manifest does not manage, or that ignore_fields: [order] leaves`;
}

/** A partial plan saw only the targeted records: it cannot say the rest matches the manifest. */
export function describePlanTotals(plan: Plan): string {
  const { create, update, delete: deletes, reorder } = plan.summary;
  if (hasPlannedChanges(plan))
    return `Plan: ${create} to create, ${update} to update, ${deletes} to delete, ${reorder} to reorder.`;
  return plan.partial === true
    ? "No changes in the targeted records."
    : "No changes. The remote state matches the manifest.";
}

/** Whether the plan has changes, counting the ones its summary counts but does not list. */
export function hasPlannedChanges(plan: Plan): boolean {
  const { create, update, delete: deletes, reorder } = plan.summary;
  return create + update + deletes + reorder > 0 || hasChanges(plan);
}

export interface RolloutDescription {
  heading: string;
  waves: { label: string; projects: string }[];
}

const MAX_WAVE_PROJECTS = 20;

export function describeRollout(plan: Plan): RolloutDescription | undefined {
  const rollout = plan.rollout;
  // A plan with nothing to write has no wave to tell of.
  if (rollout === undefined || rollout.waves.every((wave) => wave.projects.length === 0)) return undefined;
  const { logs, prometheus } = rollout.health;
  const subjects: string[] = [];
  const details: string[] = [];
  if (logs !== undefined) {
    subjects.push("its plugin configs' logs");
    details.push(
      `at most ${Number((logs.maxErrorRatio * 100).toFixed(2))}% ERROR, over at least ${plural(logs.minEntries, "entry", "entries")}${logs.allowUnknown ? ", fewer passes" : ""}`,
    );
  }
  if (prometheus !== undefined) {
    const auth = prometheus.auth;
    const credentials =
      auth === undefined
        ? ""
        : auth.kind === "bearer"
          ? ` (a bearer token from $${auth.tokenEnv})`
          : ` (as ${escapeControl(auth.username)}, the password from $${auth.passwordEnv})`;
    subjects.push(`a Prometheus query at ${escapeControl(prometheus.url)}${credentials}`);
    details.push(
      `its value at most ${prometheus.max} per project${prometheus.allowUnknown ? ", no value passes" : ""}`,
    );
  }
  const budget =
    rollout.failureBudget === 0
      ? "no failing project allowed"
      : `${plural(rollout.failureBudget, "failing project")} allowed per wave`;
  const heading = `Rollout in ${plural(rollout.waves.length, "wave")}, each baked ${formatDuration(rollout.bakeSeconds * 1000)} then judged on ${subjects.join(" and ")} (${details.join("; ")}; ${budget}; on failure: ${rollout.onFailure === "rollback" ? "roll back every wave applied" : "halt"}):`;
  const waves = rollout.waves.map((wave, index) => {
    const shown = wave.projects.slice(0, MAX_WAVE_PROJECTS).map(escapeControl);
    const more = wave.projects.length - shown.length;
    const list =
      wave.projects.length === 0
        ? "no project"
        : `${wave.projects.length === 1 ? "project" : `${wave.projects.length} projects:`} ${shown.join(", ")}${more > 0 ? ` and ${more} more` : ""}`;
    return { label: `${index + 1}. ${escapeControl(wave.name)}`, projects: list };
  });
  return { heading, waves };
}
