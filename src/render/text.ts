// Renders a plan as text for a terminal or a log: per project and family, `+ create`, `~ update`,
// `- delete` and `↕ reorder` lines with their manifest source, then a one-line summary.

import type { Writable } from "node:stream";
import { TIE_EFFECT } from "../plan/order-ties.js";
import type { Plan } from "../plan/types.js";
import { plural } from "../plural.js";
import { createPaint, type Paint, type Style } from "./colour.js";
import {
  describeGuardOverride,
  describeOrderTie,
  describePartial,
  describePlan,
  describePlanTotals,
  describeRollout,
  describeTieCount,
  describeUnmanaged,
  type FamilySection,
  type ItemKind,
  MARKERS,
} from "./describe-plan.js";
import { escapeControl, type Span, type ValueOptions } from "./format-value.js";
import { describeGuard } from "./guard-message.js";

export interface TextOptions {
  colour: boolean;
  /** The plan is applied with --force: its guards are overridden, not refusals to come. */
  forced?: boolean;
  /** Each order tie in full under its family; else one warning of at most two lines for them all. */
  verbose?: boolean;
}

const KIND_STYLE: Record<ItemKind, Style> = {
  create: "green",
  update: "yellow",
  delete: "red",
  reorder: "cyan",
};

/** A terminal shows whole values: a long string is word-diffed, never cut. */
const TEXT_VALUES: ValueOptions = { maxValueChars: Number.POSITIVE_INFINITY };

export function renderText(plan: Plan, out: Writable, options: TextOptions): void {
  const paint = createPaint(options.colour);
  for (const section of describePlan(plan, TEXT_VALUES)) {
    out.write(
      `${renderSection(section, paint, options.verbose === true, options.forced === true).join("\n")}\n\n`,
    );
  }

  out.write(`${paint("bold", describePlanTotals(plan))}\n`);
  const partial = describePartial(plan);
  if (partial) out.write(`${paint("yellow", partial)}\n`);
  const rollout = describeRollout(plan);
  if (rollout) {
    out.write(`${paint("bold", rollout.heading)}\n`);
    for (const wave of rollout.waves) out.write(`  ${paint("cyan", wave.label)}: ${wave.projects}\n`);
  }
  if (plan.guards.length > 0) {
    const guards = plural(plan.guards.length, "safety guard");
    out.write(
      `${paint("yellow", `Warning: ${guards} above: ${describeGuardOverride(plan, options.forced === true)}`)}\n`,
    );
  }
  const ties = describeTieCount(plan);
  if (ties && options.verbose)
    out.write(`${paint("yellow", `Warning: ${ties} above (marked "! order tie").`)}\n`);
  else if (ties) {
    out.write(
      `${paint("yellow", `Warning: ${ties}: ${TIE_EFFECT}.`)}\n${paint("yellow", "  Run with --verbose for each tie and how to settle it.")}\n`,
    );
  }
}

/** Runs of one style are painted once, so the output carries no redundant codes. */
function paintSpans(paint: Paint, spans: readonly Span[], base: Style): string {
  const runs: { style: Style; text: string }[] = [];
  for (const span of spans) {
    const style = span.style === "added" ? "green" : span.style === "removed" ? "red" : base;
    const last = runs[runs.length - 1];
    if (last && last.style === style) last.text += span.text;
    else runs.push({ style, text: span.text });
  }
  return runs.map((run) => paint(run.style, run.text)).join("");
}

function renderSection(section: FamilySection, paint: Paint, verbose: boolean, forced: boolean): string[] {
  const lines = [paint("bold", `project ${escapeControl(section.project)} / ${section.family}`)];
  for (const item of section.items) {
    const style = KIND_STYLE[item.kind];
    lines.push(
      `  ${paint(style, `${MARKERS[item.kind]} ${item.head}`)}  ${paint("dim", `# ${item.source}`)}`,
    );
    for (const field of item.fields) lines.push(`      ${paintSpans(paint, field, style)}`);
  }
  const unmanaged = describeUnmanaged(section.unmanaged, TEXT_VALUES, section.pruneKept);
  if (unmanaged) lines.push(`  ${paint("dim", unmanaged)}`);
  for (const tie of verbose ? section.ties : []) {
    lines.push(`  ${paint("yellow", `! order tie: ${describeOrderTie(tie, TEXT_VALUES)}`)}`);
  }
  for (const note of section.notes) lines.push(`  ${paint("dim", note)}`);
  for (const guard of section.guards) {
    lines.push(`  ${paint("yellow", `! warning: ${escapeControl(describeGuard(guard, { forced }))}`)}`);
  }
  return lines;
}
