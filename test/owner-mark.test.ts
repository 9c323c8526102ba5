// The owner mark's form: any text, written under a mark and stored by a service that trims white
// space as Django REST framework does, reads back byte for byte with its owner; a description
// pcsync did not write that way reads as unowned text.

import { describe, expect, it } from "vitest";
import { DESCRIPTION_MAX_LENGTH, looksMarked, markedLength, readMark, writeMark } from "../src/owner-mark.js";
import { fc } from "./support/fast-check.js";

/** Python's str.strip(): what `CharField(trim_whitespace=True)` does to a stored text. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: U+001C to U+001F are white space to Python.
const PYTHON_SPACE = /^[\s\u001c-\u001f\u0085]+|[\s\u001c-\u001f\u0085]+$/gu;
const pythonStrip = (text: string) => text.replace(PYTHON_SPACE, "");

const owner = fc.stringMatching(/^[A-Za-z0-9_.-]{1,40}$/);
// Texts that stress the form: white space at either end, quotes, marks of their own, JSON.
const piece = fc.constantFrom(
  " ",
  "\t",
  "\n",
  "\n\n",
  "\u00a0",
  "\u001c",
  "\u0085",
  "\u2028",
  "\ufeff",
  '"',
  "\\",
  "[pcsync owner=team-b]",
  "[pcsync owner=",
  "]",
  "x",
  "Adds country",
  "é",
  "\ud83d\ude00",
);
const text = fc.oneof(
  fc.string({ unit: "grapheme", maxLength: 30 }),
  fc.array(piece, { maxLength: 8 }).map((pieces) => pieces.join("")),
);

describe("the owner mark", () => {
  it("gives back any text, null and empty included, and its owner, after the service trims it", () => {
    fc.assert(
      fc.property(fc.option(text, { nil: null }), owner, (written, name) => {
        const stored = pythonStrip(writeMark(written, name));
        expect(stored).toBe(writeMark(written, name));
        expect(readMark(stored)).toEqual({ owner: name, text: written });
      }),
      { numRuns: 2000 },
    );
  });

  it("has the documented form", () => {
    expect(writeMark(null, "team-a")).toBe("[pcsync owner=team-a]");
    expect(writeMark("Adds country ", "team-a")).toBe("Adds country \n\n[pcsync owner=team-a]");
    expect(writeMark("", "team-a")).toBe('""\n\n[pcsync owner=team-a]');
    expect(writeMark("  indented", "t")).toBe('"  indented"\n\n[pcsync owner=t]');
    expect(writeMark('"quoted"', "t")).toBe('"\\"quoted\\""\n\n[pcsync owner=t]');
    // Only the last mark is the record's: a text that ends in a mark comes back as written.
    expect(readMark("a\n\n[pcsync owner=b]\n\n[pcsync owner=a]")).toEqual({
      owner: "a",
      text: "a\n\n[pcsync owner=b]",
    });
  });

  it("reads what pcsync did not write that way as unowned text", () => {
    for (const description of [
      "plain text",
      "[pcsync owner=team-a] and more",
      "text [pcsync owner=team-a]", // no blank line before it
      "\n\n[pcsync owner=team-a]", // an empty text is written quoted
      " x\n\n[pcsync owner=team-a]", // a text starting with white space is written quoted
      '"unterminated\n\n[pcsync owner=team-a]',
      '"x"\n\n[pcsync owner=team-a]', // quoted although it needed no quotes
      '"a" "b"\n\n[pcsync owner=team-a]',
      "[pcsync owner=]",
      `[pcsync owner=${"a".repeat(41)}]`,
      "[pcsync owner=team a]",
      "[PCSYNC owner=team-a]",
      "",
    ]) {
      expect(readMark(description), JSON.stringify(description)).toEqual({ owner: null, text: description });
    }
    expect(readMark(null)).toEqual({ owner: null, text: null });
    expect(readMark(undefined).text).toBeNull();
  });

  it("counts length as the service does (code points), the mark included", () => {
    const name = "o".repeat(40);
    const overhead = markedLength("", name) - 2;
    expect(markedLength(null, name)).toBe(`[pcsync owner=${name}]`.length);
    expect(markedLength("\ud83d\ude00", name)).toBe(1 + overhead);
    expect(markedLength("x".repeat(DESCRIPTION_MAX_LENGTH - overhead), name)).toBe(DESCRIPTION_MAX_LENGTH);
  });

  it("tells a text that would read as marked", () => {
    expect(looksMarked("Drops internal events\n\n[pcsync owner=ops]")).toBe(true);
    expect(looksMarked("See [pcsync owner=ops] for who runs it")).toBe(false);
  });
});
