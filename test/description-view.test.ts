// A description as compared and shown (description-view.ts): a manifest's text is held under any
// mark; a stored value is held only as stored, mark included; and what a message shows of two
// different stored values always differs (a refusal never prints two identical values).

import { describe, expect, it } from "vitest";
import {
  describeStoredDescription,
  holdsDescriptionText,
  storesDescription,
} from "../src/description-view.js";
import { OWNER_NAME_PATTERN, writeMark } from "../src/owner-mark.js";
import { trimAsService } from "../src/trim-as-service.js";
import { remoteRecord } from "./support/builders.js";
import { fc } from "./support/fast-check.js";

const owner = fc.stringMatching(OWNER_NAME_PATTERN);
const text = fc.option(fc.string({ unit: "binary", maxLength: 40 }), { nil: null });
/** A description as a service may store it: a marked one, or any text. */
const stored = fc.oneof(
  fc.tuple(text, owner).map(([words, name]) => writeMark(words, name)),
  fc.option(fc.string({ unit: "binary", maxLength: 40 }), { nil: null }),
);
const recordOf = (description: string | null) => remoteRecord({ id: 1, description });

describe("the description view", () => {
  it("holds a manifest's text under any owner's mark, and only that text", () => {
    expect(holdsDescriptionText("a", recordOf(writeMark("a ", "web")))).toBe(false);
    fc.assert(
      fc.property(text, text, owner, (wanted, other, name) => {
        const record = recordOf(writeMark(other, name));
        // As written, or as a trimming service would have stored it.
        const same = wanted === other || (wanted !== null && other === trimAsService(wanted));
        expect(holdsDescriptionText(wanted, record)).toBe(same);
      }),
    );
  });

  it("holds a stored value exactly: the same text under another mark, or none, is a difference", () => {
    fc.assert(
      fc.property(stored, stored, (sent, now) => {
        const same = now === sent || (sent !== null && now === trimAsService(sent));
        expect(storesDescription(sent, recordOf(now))).toBe(same);
      }),
    );
  });

  it("takes white space a trimming service removes for no difference", () => {
    const marked = writeMark("Adds country", "web");
    expect(storesDescription(` ${marked}\n`, recordOf(marked))).toBe(true);
    expect(storesDescription(marked, recordOf(` ${marked}\n`))).toBe(false);
  });

  it("takes the plugin's own text for an empty description, stored or written", () => {
    const record = remoteRecord({
      id: 1,
      description: "The plugin's text",
      plugin_info: { id: 1, name: "P", description: "The plugin's text" },
    });
    expect(storesDescription(null, record)).toBe(true);
    expect(storesDescription("", record)).toBe(true);
    expect(holdsDescriptionText(null, record)).toBe(true);
    expect(storesDescription(writeMark(null, "web"), record)).toBe(false);
  });

  it("shows two different stored values differently, and says which mark each carries", () => {
    fc.assert(
      fc.property(stored, stored, (a, b) => {
        expect(describeStoredDescription(a) === describeStoredDescription(b)).toBe(a === b);
      }),
    );
    expect(describeStoredDescription(writeMark("Adds country", "web"))).toBe(
      '"Adds country" (owner mark "web")',
    );
    expect(describeStoredDescription("Adds country")).toBe('"Adds country" (no owner mark)');
    expect(describeStoredDescription(null)).toBe("null (no owner mark)");
  });
});
