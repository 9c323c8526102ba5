// Emulator data for a test: the example data plus the records the test needs.

import { type EmulatorData, exampleData, type StoredRecord } from "../../src/emulator/index.js";
import { loadDataFile } from "../../src/emulator/persistence.js";

const STAMP = "2024-06-01T00:00:00.000Z";

/** The example data plus the given records (ids from 100 up unless given). */
export function dataWith(
  records: (Pick<StoredRecord, "project" | "family" | "plugin" | "order" | "name"> &
    Partial<Pick<StoredRecord, "id" | "enabled" | "description">>)[],
): EmulatorData {
  const data = exampleData();
  let next = 100;
  for (const record of records) {
    const id = record.id ?? next++;
    data.records.push(storedRecord({ ...record, id }));
    next = Math.max(next, id + 1);
  }
  data.nextIds.record = next;
  return data;
}

/** A stored record with the service's defaults for every field not given. */
export function storedRecord(
  fields: Pick<StoredRecord, "id" | "project" | "family" | "plugin" | "order" | "name"> &
    Partial<StoredRecord>,
): StoredRecord {
  return {
    enabled: true,
    description: null,
    deleted: false,
    match_action: null,
    config: "{}",
    error: null,
    delivery_rate_24h: null,
    created_at: STAMP,
    updated_at: STAMP,
    ...fields,
  };
}

/** The state a data file holds as the emulator would load it: the snapshot with its journal replayed. */
export async function durableState(file: string): Promise<EmulatorData> {
  const loaded = await loadDataFile(file);
  if (!loaded) throw new Error(`${file} does not exist`);
  return loaded.data;
}
