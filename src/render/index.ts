// The renderers of a plan. JSON is the saved plan's own document (plan-file.ts), so that scripts
// and `apply --plan` read one format.

import type { Writable } from "node:stream";
import { serializePlan } from "../plan/plan-file.js";
import type { Plan } from "../plan/types.js";
import { type MarkdownOptions, renderMarkdown } from "./markdown.js";
import { renderText, type TextOptions } from "./text.js";

export { serializePlan as renderJson } from "../plan/plan-file.js";
export { PLAN_COMMENT_MARKER, type PlanNotice, renderMarkdown } from "./markdown.js";
export { renderText } from "./text.js";

export type PlanFormat = "text" | "json" | "markdown";

export type RenderOptions = TextOptions & Pick<MarkdownOptions, "title" | "notices">;

export function renderPlan(plan: Plan, format: PlanFormat, out: Writable, options: RenderOptions): void {
  switch (format) {
    case "text":
      renderText(plan, out, options);
      return;
    case "json":
      out.write(serializePlan(plan));
      return;
    case "markdown":
      out.write(renderMarkdown(plan, options));
      return;
  }
}
