// The renderers of a plan, and `renderPlan` to write one in the format the user chose. JSON is the
// saved plan's own document (plan-file.ts), so that scripts and `apply --plan` read one format.

import type { Writable } from "node:stream";
import { serializePlan } from "../plan/plan-file.js";
import type { Plan } from "../plan/types.js";
import { renderMarkdown } from "./markdown.js";
import { renderText } from "./text.js";

export { serializePlan as renderJson } from "../plan/plan-file.js";
export { PLAN_COMMENT_MARKER, renderMarkdown } from "./markdown.js";
export { renderText } from "./text.js";

export type PlanFormat = "text" | "json" | "markdown";

export interface RenderOptions {
  /** ANSI colours in text output; ignored by json and markdown. */
  colour: boolean;
  /** Markdown heading. */
  title?: string;
  /** The plan is applied with --force: its guards are shown as overridden, not as refusals. */
  forced?: boolean;
  /** Text: each order tie in full, not one short warning for them all. */
  verbose?: boolean;
}

export function renderPlan(plan: Plan, format: PlanFormat, out: Writable, options: RenderOptions): void {
  switch (format) {
    case "text":
      renderText(plan, out, {
        colour: options.colour,
        forced: options.forced === true,
        verbose: options.verbose === true,
      });
      return;
    case "json":
      out.write(serializePlan(plan));
      return;
    case "markdown":
      out.write(
        renderMarkdown(plan, {
          ...(options.title === undefined ? {} : { title: options.title }),
          forced: options.forced === true,
        }),
      );
      return;
  }
}
