// The `owner:` an exported manifest carries: the owner whose mark every exported record carries,
// so that the manifest, applied back, plans no changes and keeps the marks. Records with different
// marks (or some with none) get no `owner:` and a warning that names the owners and the records.

import type { ExportResult } from "./build-manifest.js";

export interface ExportOwner {
  /** The owner to write as `owner:`; undefined when the records do not share one. */
  owner?: string;
  /** Why there is no `owner:` although records carry marks; undefined when nothing needs saying. */
  warning?: string;
}

/** At most this many records are named per owner in the warning. */
const NAMED_RECORDS = 10;

function listRecords(records: readonly string[]): string {
  const named = records.slice(0, NAMED_RECORDS).join(", ");
  const more = records.length - NAMED_RECORDS;
  return more > 0 ? `${named} and ${more} more` : named;
}

export function exportOwner(results: readonly ExportResult[]): ExportOwner {
  const byOwner = new Map<string | null, string[]>();
  for (const { owner, record } of results.flatMap((result) => result.marks))
    byOwner.set(owner, [...(byOwner.get(owner) ?? []), record]);
  const owners = [...byOwner.keys()].filter((owner): owner is string => owner !== null);
  if (owners.length === 0) return {};
  const [only] = owners;
  if (owners.length === 1 && only !== undefined && !byOwner.has(null)) return { owner: only };
  const groups = [...owners.sort(), null].flatMap((owner) => {
    const records = byOwner.get(owner);
    if (records === undefined) return [];
    const who = owner === null ? "no owner mark" : `owner ${JSON.stringify(owner)}`;
    return [`${who}: ${listRecords(records)}`];
  });
  return {
    warning: `the exported records carry different owner marks (${groups.join("; ")}): the manifest is written without \`owner:\` (as it is, it plans no changes; a description it changes later loses its mark). To keep the marks, split it into one manifest per owner, each with its \`owner:\``,
  };
}
