// The data-file reader at scale: a fleet of 200,000 records loads, and ids keep counting above it.

import { describe, expect, it } from "vitest";
import { parseEmulatorData } from "../../src/emulator/data-file.js";
import { exampleData } from "../../src/emulator/index.js";
import { storedRecord } from "../support/emulator-data.js";

describe("data file of 200,000 records", () => {
  it("loads, and the next id is above the highest one even when the counter lags", () => {
    const data = exampleData();
    data.records = Array.from({ length: 200_000 }, (_, index) =>
      storedRecord({
        id: 1_000 + index,
        project: 1,
        family: "plugin_configs",
        plugin: 1,
        order: index,
        name: null,
      }),
    );
    // A hand-edited file may add records without bumping the counter.
    data.nextIds.record = 10;
    const parsed = parseEmulatorData(data);
    expect(parsed.records).toHaveLength(200_000);
    expect(parsed.nextIds.record).toBe(201_000);
  });
});
