// What a leaked key looks like: every encoded form a server may echo (hex, base64, base64url,
// alone or inside a longer encoded string at any byte alignment, URL-encoded, JSON-escaped) is
// redacted; short encoded forms are not, so that a short key does not shred ordinary output; and
// excerpts of server text are never cut inside a form.

import { describe, expect, it } from "vitest";
import { REDACTED, SecretRegistry } from "../src/redact.js";
import { fc } from "./support/fast-check.js";

const KEY = "phx_Reliability+Key/0123456789=abcdefXYZ";

function registryFor(...keys: string[]): SecretRegistry {
  const registry = new SecretRegistry();
  for (const key of keys) registry.register(key);
  return registry;
}

/**
 * What must not be left of `key` in redacted text, computed independently of the implementation:
 * 12-character pieces of it; its hex; and, for a key that starts at any byte alignment of a longer
 * base64 string, the whole 4-character groups that encode only the key's bytes (those groups are
 * the base64 of the key without its first 0, 1 or 2 characters).
 */
function leakForms(key: string): string[] {
  const forms = new Set<string>();
  for (let start = 0; start + 12 <= key.length; start += 1) forms.add(key.slice(start, start + 12));
  const hex = Buffer.from(key).toString("hex");
  forms.add(hex).add(hex.toUpperCase());
  for (let offset = 0; offset < 3; offset += 1) {
    const bytes = Buffer.from(key.slice(offset));
    const wholeGroups = Math.floor(bytes.length / 3) * 4;
    if (wholeGroups < 8) continue;
    forms.add(bytes.toString("base64").slice(0, wholeGroups));
    forms.add(bytes.toString("base64url").slice(0, wholeGroups));
  }
  return [...forms];
}

function leaksIn(text: string, key: string): string[] {
  return leakForms(key).filter((form) => text.includes(form));
}

describe("encoded echoes of the key", () => {
  const registry = registryFor(KEY);
  const bearer = `Bearer ${KEY}`;

  it.each([
    ["base64", Buffer.from(KEY).toString("base64")],
    ["base64url", Buffer.from(KEY).toString("base64url")],
    ["hex", Buffer.from(KEY).toString("hex")],
    ["HEX", Buffer.from(KEY).toString("hex").toUpperCase()],
    ["URL-encoded", encodeURIComponent(KEY)],
    ["form-encoded", new URLSearchParams({ k: KEY }).toString().slice(2)],
    [
      "URL-encoded, lower-case hex",
      encodeURIComponent(KEY).replace(/%[0-9A-F]{2}/g, (hex) => hex.toLowerCase()),
    ],
    ["JSON-escaped with \\/", JSON.stringify(KEY).slice(1, -1).replaceAll("/", "\\/")],
    ["base64 of the URL-encoded base64", encodeURIComponent(Buffer.from(KEY).toString("base64"))],
    ...[0, 1, 2].map((pad): [string, string] => [
      `base64 of "Bearer <key>" after ${pad} more bytes`,
      Buffer.from(`${"x".repeat(pad)}${bearer}; rest`).toString("base64"),
    ]),
    ...[0, 1, 2].map((pad): [string, string] => [
      `base64url of "Bearer <key>" after ${pad} more bytes`,
      Buffer.from(`${"x".repeat(pad)}${bearer}`).toString("base64url"),
    ]),
  ])("%s", (_label, echoed) => {
    const result = registry.redact(`detail: ${echoed} (end)`);
    expect(leaksIn(result.text, KEY)).toEqual([]);
    expect(result.text).toContain(REDACTED);
    expect(result.text.startsWith("detail: ")).toBe(true);
    expect(result.text.endsWith(" (end)")).toBe(true);
  });

  it("a key at any alignment inside any longer encoded string, whatever the key", () => {
    // Printable ASCII, as an Authorization header holds it.
    const keyArbitrary = fc.string({
      minLength: 7,
      maxLength: 48,
      unit: fc.constantFrom(...printableAscii()),
    });
    fc.assert(
      fc.property(
        keyArbitrary,
        fc.uint8Array({ maxLength: 8 }),
        fc.uint8Array({ maxLength: 8 }),
        fc.constantFrom<BufferEncoding>("base64", "base64url", "hex"),
        (key, before, after, encoding) => {
          const local = registryFor(key);
          const encoded = Buffer.concat([before, Buffer.from(key), after]).toString(encoding);
          const text = local.redact(`x ${encoded} y`).text;
          expect(leaksIn(text, key)).toEqual([]);
        },
      ),
      { numRuns: 300 },
    );
  });

  it("replaces the longest form whole, not a shorter one inside it", () => {
    const padded = Buffer.from(KEY).toString("base64");
    expect(padded.endsWith("=")).toBe(true);
    expect(registry.redact(`[${padded}]`).text).toBe(`[${REDACTED}]`);
  });
});

describe("a short key", () => {
  const registry = registryFor("ro");

  it("is redacted as is, wherever it appears", () => {
    expect(registry.redact("Property Filter from ro")).toEqual({
      text: `P${REDACTED}perty Filter f${REDACTED}m ${REDACTED}`,
      count: 3,
    });
  });

  it("does not turn its short encoded forms into confetti", () => {
    // hex "726f", base64 "cm8=": they occur in ordinary ids and hashes.
    const text = "id 726f, hash cm8=, 726F";
    expect(registry.redact(text)).toEqual({ text, count: 0 });
  });
});

describe("excerpts of server text", () => {
  const registry = registryFor(KEY);

  it("are never cut inside a form, so the form is still recognised", () => {
    for (let max = 1; max < 60; max += 1) {
      const text = `${"a".repeat(20)}${KEY} tail`;
      const excerpt = registry.excerpt(text, max);
      expect(leaksIn(registry.redact(excerpt).text, KEY)).toEqual([]);
      expect(excerpt.length >= Math.min(max, text.length)).toBe(true);
    }
  });
});

function printableAscii(): string[] {
  return Array.from({ length: 0x7e - 0x21 + 1 }, (_, index) => String.fromCharCode(0x21 + index));
}
