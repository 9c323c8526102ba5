// A record's description as every command compares and shows it: the *text* a manifest wants, without
// the owner mark, or *exactly* what was stored, mark and all (journals, writes); never the two mixed.

import { mayShowFilled, pluginDefaults } from "./filled-defaults.js";
import { quoteServerText } from "./neutralise-server-text.js";
import { readMark } from "./owner-mark.js";
import { showsText } from "./trim-as-service.js";
import type { PluginConfigRecord } from "./wire-types.js";

export { MARK_START } from "./owner-mark.js";

export interface DescriptionView {
  owner: string | null;
  text: string | null;
}

export type DescribedRecord = Pick<PluginConfigRecord, "description" | "plugin_info">;

/** Anything but text reads as none. */
export function viewDescription(stored: unknown): DescriptionView {
  return readMark(typeof stored === "string" ? stored : null);
}

export function descriptionText(stored: unknown): string | null {
  return viewDescription(stored).text;
}

export function descriptionOwner(stored: unknown): string | null {
  return viewDescription(stored).owner;
}

/** Whatever mark it carries; an empty text may show as the plugin's own (posthog-2024). */
export function holdsDescriptionText(written: string | null, record: DescribedRecord): boolean {
  const shown = descriptionText(record.description);
  if (shown === written) return true;
  if (typeof written === "string" && showsText(written, shown)) return true;
  return mayShowFilled("description", written) && record.description === pluginDefaults(record).description;
}

/**
 * Mark included (another mark, or none, is another description). An empty one may show as the
 * plugin's own text (`plugin` where the record's list leaves it out).
 */
export function storesDescription(sent: string | null, record: DescribedRecord, plugin?: string): boolean {
  const stored = record.description ?? null;
  if (stored === sent) return true;
  if (typeof sent === "string" && showsText(sent, stored)) return true;
  if (!mayShowFilled("description", sent)) return false;
  const text = plugin ?? pluginDefaults(record).description;
  return text !== undefined && stored === text;
}

/** E.g. `"Adds country" (owner mark "web")` or `null (no owner mark)`, quoted so white space shows. */
export function describeStoredDescription(stored: unknown): string {
  const view = viewDescription(stored);
  const mark = view.owner === null ? "no owner mark" : `owner mark ${quoteServerText(view.owner)}`;
  return `${view.text === null ? "null" : quoteServerText(view.text)} (${mark})`;
}
