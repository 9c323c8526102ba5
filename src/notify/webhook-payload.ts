// The body of a webhook POST: the event as JSON, or a readable message for a Slack incoming
// webhook; and its signature, as GitHub signs its webhooks. The API key is never in either.

import { createHmac } from "node:crypto";
import type { PlannedChange } from "../plan/types.js";
import type { SecretRegistry } from "../redact.js";
import { MARKERS } from "../render/describe-plan.js";
import { formatFieldChange, formatName, type ValueOptions } from "../render/format-value.js";
import { EVENT_HEADLINES, type PcsyncEvent } from "./event.js";

export type WebhookFormat = "json" | "slack";

export const WEBHOOK_FORMATS = ["json", "slack"] as const satisfies readonly WebhookFormat[];

/** A message is read, not parsed. */
const SLACK_CHANGE_LINES = 10;

const SLACK_VALUES: ValueOptions = { maxValueChars: 80 };

/** `~ update "GeoIP" (id 12): enabled: true → false` */
export function describeChange(change: PlannedChange): string {
  const id = change.id === null ? "" : ` (id ${change.id})`;
  const fields =
    change.action === "update"
      ? `: ${Object.entries(change.fields)
          .map(([field, value]) =>
            value === undefined
              ? ""
              : formatFieldChange(field, value, SLACK_VALUES)
                  .map((span) => span.text)
                  .join(""),
          )
          .join("; ")}`
      : "";
  return `${MARKERS[change.action]} ${change.action} ${formatName(change.name, SLACK_VALUES)}${id}${fields}`;
}

const SUMMARY_WORDS = {
  pending: { create: "to create", update: "to update", delete: "to delete", reorder: "to move" },
  done: { create: "created", update: "updated", delete: "deleted", reorder: "moved" },
} as const;

/** `1 to create, 2 to update` (for healed: `1 created, 2 updated`). */
function describeSummary(event: PcsyncEvent): string {
  const words = SUMMARY_WORDS[event.event === "healed" ? "done" : "pending"];
  return (["create", "update", "delete", "reorder"] as const)
    .filter((action) => event.summary[action] > 0)
    .map((action) => `${event.summary[action]} ${words[action]}`)
    .join(", ");
}

/**
 * Slack reads `<...>` as a control sequence (`<!channel>` pings everyone, `<url|label>` is a link) and
 * `&` as an entity: a record's name could ping or plant a link. Slack asks for exactly these three.
 */
function escapeSlack(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

/** Slack's mrkdwn (*bold*, `code`), every part escaped. */
export function renderSlackText(event: PcsyncEvent): string {
  const headline = EVENT_HEADLINES[event.event];
  const where = event.project === null ? "" : ` in project ${event.project} \`${event.family}\``;
  const summary = describeSummary(event);
  const lines = [
    `${headline.icon} *pcsync*: ${headline.text}${where}${summary === "" ? "" : `: ${summary}`}`,
  ];
  if (event.message !== undefined) lines.push(event.message);
  if (event.journal !== undefined) lines.push(`undo: \`pcsync rollback --journal ${event.journal}\``);
  for (const change of event.changes.slice(0, SLACK_CHANGE_LINES)) lines.push(`• ${describeChange(change)}`);
  const total = event.summary.create + event.summary.update + event.summary.delete;
  if (total > SLACK_CHANGE_LINES)
    lines.push(`…and ${total - Math.min(SLACK_CHANGE_LINES, event.changes.length)} more`);
  return escapeSlack(lines.join("\n"));
}

/** Redacted: records may hold any text (JSON stays valid: the key's JSON forms are replaced in place). */
export function renderWebhookBody(
  event: PcsyncEvent,
  format: WebhookFormat,
  secrets: SecretRegistry,
): string {
  const body = format === "slack" ? JSON.stringify({ text: renderSlackText(event) }) : JSON.stringify(event);
  return secrets.redact(body).text;
}

/** `sha256=<hex HMAC-SHA256 of the body>`, the value of X-Pcsync-Signature. */
export function signBody(body: string, secret: string): string {
  return `sha256=${createHmac("sha256", secret).update(body, "utf8").digest("hex")}`;
}
