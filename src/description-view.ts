// A record's description as pcsync compares and shows it, in one place: the user's text without the
// owner mark (owner-mark.ts), as the service trims it (trim-as-service.ts), and shown by posthog-2024
// as the plugin's own where it is empty (filled-defaults.ts). Every command reads descriptions here.
//
// Two questions, never mixed: does a record hold the *text* a manifest wants (plan, watch, export:
// the mark is the owner's business, compared apart), and does it store *exactly* a description
// as written, mark and all (a journal's before and after images, a write sent as it is: rollback,
// resume, the check after a write). Comparing a stored value with a text is the bug this prevents.

import { mayShowFilled, pluginDefaults } from "./filled-defaults.js";
import { quoteServerText } from "./neutralise-server-text.js";
import { readMark } from "./owner-mark.js";
import { showsText } from "./trim-as-service.js";
import type { PluginConfigRecord } from "./wire-types.js";

export { MARK_START } from "./owner-mark.js";

/** A description split into the user's text and the owner whose mark it carries (null: none). */
export interface DescriptionView {
  owner: string | null;
  text: string | null;
}

/** The parts of a record a description's view needs: what it stores and the plugin it belongs to. */
export type DescribedRecord = Pick<PluginConfigRecord, "description" | "plugin_info">;

/** The view of a description as the service stores it (anything but text reads as none). */
export function viewDescription(stored: unknown): DescriptionView {
  return readMark(typeof stored === "string" ? stored : null);
}

/** The user's text of a stored description, without its mark: what plan shows and export writes. */
export function descriptionText(stored: unknown): string | null {
  return viewDescription(stored).text;
}

/** The owner whose mark a stored description carries; null when it carries none. */
export function descriptionOwner(stored: unknown): string | null {
  return viewDescription(stored).owner;
}

/**
 * Whether the record holds the user's text `written`, whatever mark it carries: as written, as a
 * trimming service stores it, or, for an empty one, as the plugin's own text (posthog-2024).
 */
export function holdsDescriptionText(written: string | null, record: DescribedRecord): boolean {
  const shown = descriptionText(record.description);
  if (shown === written) return true;
  if (typeof written === "string" && showsText(written, shown)) return true;
  return mayShowFilled("description", written) && record.description === pluginDefaults(record).description;
}

/**
 * Whether the record stores the description `sent` exactly, mark included (a different mark, or
 * none where one was sent, is a different description): as sent, as a trimming service stores it,
 * or, for an empty one, as the plugin's own text (`plugin` where the record's list leaves it out).
 */
export function storesDescription(sent: string | null, record: DescribedRecord, plugin?: string): boolean {
  const stored = record.description ?? null;
  if (stored === sent) return true;
  if (typeof sent === "string" && showsText(sent, stored)) return true;
  if (!mayShowFilled("description", sent)) return false;
  const text = plugin ?? pluginDefaults(record).description;
  return text !== undefined && stored === text;
}

/**
 * A stored description for a message, as a user reads it: its text (quoted, so white space and
 * control characters show) and its mark, e.g. `"Adds country" (owner mark "web")` or `null (no owner mark)`.
 */
export function describeStoredDescription(stored: unknown): string {
  const view = viewDescription(stored);
  const mark = view.owner === null ? "no owner mark" : `owner mark ${quoteServerText(view.owner)}`;
  return `${view.text === null ? "null" : quoteServerText(view.text)} (${mark})`;
}
