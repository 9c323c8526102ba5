// Renders a plan as GitHub markdown for a PR comment or a job summary: a summary table and one
// collapsed diff per project and family, always shorter than the comment size limit.

import type { Plan, PlanSummary } from "../plan/types.js";
import { plural } from "../plural.js";
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
  hasPlannedChanges,
  MARKERS,
  type PlanItem,
  type RolloutDescription,
} from "./describe-plan.js";
import { escapeControl, truncateCodePoints, type ValueOptions } from "./format-value.js";
import { describeGuard } from "./guard-message.js";

/** What a plan's reader must know that the plan does not show (a halted rollout's refusal to come). */
export interface PlanNotice {
  level: "note" | "warning";
  text: string;
}

export interface MarkdownOptions {
  title?: string;
  notices?: readonly PlanNotice[];
  /** The plan is applied with --force: its guards are overridden, not refusals to come. */
  forced?: boolean;
  /** The result is always shorter (default 60,000, under GitHub's 65,536 comment limit). */
  maxChars?: number;
}

/** Hidden first line by which a CI job finds its previous comment and updates it. */
export const PLAN_COMMENT_MARKER = "<!-- pcsync-plan -->";

const DEFAULT_TITLE = "pcsync plan";
const DEFAULT_MAX_CHARS = 60_000;
const MIN_MAX_CHARS = 2_000;
const FULL_PLAN_HINT = "run `pcsync plan` locally for the full plan";

/** A comment is read, not searched: long values are cut, and no line runs on forever. */
const MARKDOWN_VALUES: ValueOptions = { maxValueChars: 200 };
const MAX_LINE_CHARS = 600;
const MAX_TITLE_CHARS = 100;
const MAX_CELL_CHARS = 60;
const MAX_WARNING_CHARS = 600;
/** A notice names journals and commands to run: room for a few of them. */
const MAX_NOTICE_CHARS = 1_500;

// Markdown and HTML syntax, and what GitHub links: `@user` (a mention) and `#123` (an issue).
const TEXT_SPECIALS = /[&<>`*_[\]|\\~$@]|#(?=\d)/g;
const TEXT_SPECIALS_BUT_ISSUES = /[&<>`*_[\]|\\~$@]/g;

export function renderMarkdown(plan: Plan, options: MarkdownOptions = {}): string {
  const maxChars = options.maxChars ?? DEFAULT_MAX_CHARS;
  if (!(maxChars >= MIN_MAX_CHARS)) throw new RangeError(`maxChars must be at least ${MIN_MAX_CHARS}`);
  // The title is the caller's ("Plan for PR #12"): its issue links are meant.
  const title = `### ${escapeText(truncateCodePoints(options.title ?? DEFAULT_TITLE, MAX_TITLE_CHARS), { issueLinks: true })}`;
  const summary = `**${describePlanTotals(plan)}**`;
  const sections = describePlan(plan, MARKDOWN_VALUES);

  const top = [PLAN_COMMENT_MARKER, title, summary];
  const partial = describePartial(plan);
  if (partial) top.push(`> [!NOTE]\n> ${escapeText(partial)}`);
  for (const notice of options.notices ?? [])
    top.push(
      `> [!${notice.level === "warning" ? "WARNING" : "NOTE"}]\n> ${escapeText(truncateCodePoints(notice.text, MAX_NOTICE_CHARS))}`,
    );
  const rollout = describeRollout(plan);
  if (rollout) top.push(renderRollout(rollout));
  const forced = options.forced === true;
  const guards = renderWarning(
    `Safety guards: ${describeGuardOverride(plan, forced)}`,
    plan.guards.map((guard) => describeGuard(guard, { forced })),
    Math.floor(maxChars / 10),
  );
  if (guards) top.push(guards);
  const ties = renderTies(plan, sections, Math.floor(maxChars / 10));
  if (ties) top.push(ties);
  if (hasPlannedChanges(plan)) top.push(renderTable(sections, Math.floor(maxChars / 4)));
  const head = `${top.join("\n\n")}\n\n`;

  const blocks = sections
    .filter((section) => section.items.length > 0 || section.unmanaged.length > 0 || section.notes.length > 0)
    .map(buildBlock);
  const reserve = renderOmittedNote(9_999_999, 9_999_999).length;
  const fitted = fitBlocks(blocks, maxChars - 1 - head.length - reserve);
  const omitted = blocks.filter((_, index) => fitted[index] === undefined);
  const changesOmitted = omitted.reduce((total, block) => total + block.changeCount, 0);
  const note = omitted.length > 0 ? renderOmittedNote(omitted.length, changesOmitted) : "";
  const markdown = `${head}${fitted.filter((text) => text !== undefined).join("")}${note}`.trimEnd();
  if (markdown.length < maxChars) return `${markdown}\n`;
  // Unreachable by construction; kept so the limit holds even if the arithmetic above is wrong.
  return `${[PLAN_COMMENT_MARKER, title, summary, `_Details not shown; ${FULL_PLAN_HINT}._`].join("\n\n")}\n`;
}

/** Outside code blocks: nobody mentioned, no issue linked (unless `issueLinks`: the caller's title). */
export function escapeText(text: string, options: { issueLinks?: boolean } = {}): string {
  const specials = options.issueLinks ? TEXT_SPECIALS_BUT_ISSUES : TEXT_SPECIALS;
  return escapeControl(text).replace(specials, (character) =>
    character === "@" || character === "#" ? `${character}&#8203;` : `&#${character.charCodeAt(0)};`,
  );
}

/** Values are JSON literals, where `\u0060` and `\u003c` mean the same: no fence closed, no tag opened. */
function escapeCodeLine(line: string): string {
  const cut = line.length > MAX_LINE_CHARS ? `${truncateCodePoints(line, MAX_LINE_CHARS)}…` : line;
  return cut.replace(/`/g, "\\u0060").replace(/</g, "\\u003c");
}

function renderRollout(rollout: RolloutDescription): string {
  const rows = rollout.waves.map(
    (wave) =>
      `| ${escapeText(truncateCodePoints(wave.label, MAX_CELL_CHARS))} | ${escapeText(wave.projects)} |`,
  );
  return [escapeText(rollout.heading), "", "| Wave | Projects |", "|---|---|", ...rows].join("\n");
}

function renderTies(plan: Plan, sections: readonly FamilySection[], budget: number): string | undefined {
  const count = describeTieCount(plan);
  if (count === undefined) return undefined;
  const messages = sections.flatMap((section) =>
    section.ties.map(
      (tie) => `project ${section.project} / ${section.family}: ${describeOrderTie(tie, MARKDOWN_VALUES)}`,
    ),
  );
  return renderWarning(
    escapeText(`${count[0]?.toUpperCase()}${count.slice(1)}; apply is not refused.`),
    messages,
    budget,
  );
}

/** A `> [!WARNING]` block with as many of the messages as fit in `budget` characters. */
function renderWarning(heading: string, messages: readonly string[], budget: number): string | undefined {
  if (messages.length === 0) return undefined;
  const lines = ["> [!WARNING]", `> ${heading}`];
  const shown = pushWhileFits(
    lines,
    messages.map((message) => `> - ${escapeText(truncateCodePoints(message, MAX_WARNING_CHARS))}`),
    budget,
  );
  if (shown < messages.length) lines.push(`> - … and ${messages.length - shown} more`);
  return lines.join("\n");
}

/** Returns how many of `more` were added. */
function pushWhileFits(lines: string[], more: readonly string[], budget: number): number {
  const before = lines.length;
  let length = lines.join("\n").length;
  for (const line of more) {
    length += line.length + 1;
    if (length > budget) break;
    lines.push(line);
  }
  return lines.length - before;
}

function renderTable(sections: readonly FamilySection[], budget: number): string {
  const lines = [
    "| Project | Family | Create | Update | Delete | Reorder |",
    "| --- | --- | ---: | ---: | ---: | ---: |",
  ];
  const counted = sections.filter((section) => ACTIONS.some((action) => section.counts[action] > 0));
  const rows = counted.map(
    ({ project, family, counts }) =>
      `| ${escapeText(truncateCodePoints(project, MAX_CELL_CHARS))} | ${family} | ${ACTIONS.map((action) => counts[action]).join(" | ")} |`,
  );
  const shown = pushWhileFits(lines, rows, budget);
  if (shown < counted.length) lines.push(sumRow(`… ${counted.length - shown} more`, counted.slice(shown)));
  lines.push(sumRow("**Total**", counted, "**"));
  return lines.join("\n");
}

function sumRow(label: string, sections: readonly FamilySection[], mark = ""): string {
  const sums = ACTIONS.map((action) => sections.reduce((sum, section) => sum + section.counts[action], 0));
  return `| ${label} | | ${sums.map((sum) => `${mark}${sum}${mark}`).join(" | ")} |`;
}

const ACTIONS = ["create", "update", "delete", "reorder"] as const satisfies readonly (keyof PlanSummary)[];

/** One family's collapsed diff, kept as separate items so it can be cut between items only. */
interface Block {
  open: string;
  /** Changes and moves first, then notes (unmanaged records, ties). */
  items: string[];
  /** How many of the items are changes or moves. */
  changeCount: number;
  full: string;
}

function buildBlock(section: FamilySection): Block {
  const unmanaged = describeUnmanaged(section.unmanaged, MARKDOWN_VALUES, section.pruneKept);
  const items = [
    ...section.items.map(renderItem),
    ...(unmanaged === undefined ? [] : [escapeCodeLine(`  ${unmanaged}`)]),
    ...section.ties.map((tie) => escapeCodeLine(`! order tie: ${describeOrderTie(tie, MARKDOWN_VALUES)}`)),
    ...section.notes.map((note) => escapeCodeLine(`  ${note}`)),
  ];
  const open = `<details><summary>${describeSection(section)}</summary>\n\n`;
  const block = { open, items, changeCount: section.items.length, full: "" };
  block.full = renderBlock(block, items.length);
  return block;
}

function describeSection(section: FamilySection): string {
  const { counts } = section;
  const parts = ACTIONS.filter((action) => counts[action] > 0).map(
    (action) => `${counts[action]} to ${action}`,
  );
  if (section.unmanaged.length > 0) parts.push(`${section.unmanaged.length} unmanaged`);
  const project = escapeText(truncateCodePoints(section.project, MAX_CELL_CHARS));
  return `project ${project} / ${section.family}: ${parts.length > 0 ? parts.join(", ") : "no changes"}`;
}

function renderItem(item: PlanItem): string {
  const marker = MARKERS[item.kind];
  const lines = [`${marker} ${item.head}  # ${item.source}`];
  for (const field of item.fields) lines.push(`${marker}     ${field.map((span) => span.text).join("")}`);
  return lines.map(escapeCodeLine).join("\n");
}

function renderBlock(block: Block, shown: number): string {
  const body = `\`\`\`diff\n${block.items.slice(0, shown).join("\n")}\n\`\`\`\n\n`;
  return `${block.open}${body}${renderCutNote(block, shown)}</details>\n\n`;
}

function renderCutNote(block: Block, shown: number): string {
  if (shown >= block.items.length) return "";
  const hidden = Math.max(0, block.changeCount - shown);
  const what =
    hidden === 0
      ? "The notes on unmanaged records are"
      : hidden === 1
        ? "1 more change is"
        : `${hidden} more changes are`;
  return `_… ${what} not shown; ${FULL_PLAN_HINT}._\n\n`;
}

function renderOmittedNote(sections: number, changes: number): string {
  const what = sections === 1 ? "1 more project/family is" : `${sections} more projects/families are`;
  return `_… ${what} not shown (${plural(changes, "change")}); ${FULL_PLAN_HINT}._\n`;
}

/**
 * The smallest blocks that fit with one item each are chosen, then each gets an equal share of what
 * is left, smallest first: small families show whole, the largest are cut or left out (undefined).
 */
function fitBlocks(blocks: readonly Block[], budget: number): Array<string | undefined> {
  const total = blocks.reduce((sum, block) => sum + block.full.length, 0);
  if (total <= budget) return blocks.map((block) => block.full);
  const fitted: Array<string | undefined> = blocks.map(() => undefined);
  const minimums = blocks.map((block) => renderBlock(block, 1).length);
  const bySize = blocks
    .map((block, index) => ({ block, index, minimum: minimums[index] ?? 0 }))
    .sort((a, b) => a.block.full.length - b.block.full.length || a.index - b.index);
  const chosen: typeof bySize = [];
  let used = 0;
  for (const entry of bySize) {
    if (used + entry.minimum > budget) break;
    used += entry.minimum;
    chosen.push(entry);
  }
  let extra = budget - used;
  let left = chosen.length;
  for (const { block, index, minimum } of chosen) {
    const share = minimum + Math.floor(extra / left);
    left -= 1;
    const text = block.full.length <= share ? block.full : cutBlock(block, share);
    if (text === undefined) continue;
    fitted[index] = text;
    extra -= text.length - minimum;
  }
  return fitted;
}

function cutBlock(block: Block, share: number): string | undefined {
  let low = 0;
  let high = block.items.length - 1;
  // The longest prefix that fits; lengths grow with the prefix, so search it.
  while (low < high) {
    const middle = Math.ceil((low + high) / 2);
    if (renderBlock(block, middle).length <= share) low = middle;
    else high = middle - 1;
  }
  if (low === 0) return undefined;
  const text = renderBlock(block, low);
  return text.length <= share ? text : undefined;
}
