// Events on a change of state only: what a receiver paging someone relies on.

import { describe, expect, it } from "vitest";
import { MAX_EVENT_CHANGES } from "../../src/notify/event.js";
import { renderSlackText, renderWebhookBody, signBody } from "../../src/notify/webhook-payload.js";
import type { PlannedChange } from "../../src/plan/types.js";
import { SecretRegistry } from "../../src/redact.js";
import type { FamilyFinding } from "../../src/watch/cycle-log.js";
import { EventTracker } from "../../src/watch/watch-events.js";

function update(id: number, name = `Config ${id}`): PlannedChange {
  return {
    action: "update",
    project: "1",
    family: "plugin_configs",
    name,
    id,
    fields: { enabled: { from: false, to: true } },
    source: "pcsync.yaml:7",
  };
}

function finding(changes: PlannedChange[], extra: Partial<FamilyFinding> = {}): FamilyFinding {
  return { project: "1", family: "plugin_configs", changes, reorder: undefined, ...extra };
}

const names = (events: { event: string }[]) => events.map((event) => event.event);

describe("EventTracker", () => {
  it("opens drift once while it lasts, tells when the drifted records change, and when it is resolved", () => {
    const tracker = new EventTracker();
    expect(names(tracker.observeCycle([finding([])], "t0"))).toEqual([]);
    expect(names(tracker.observeCycle([finding([update(1)])], "t1"))).toEqual(["drift_opened"]);
    expect(names(tracker.observeCycle([finding([update(1)])], "t2"))).toEqual([]);
    // The same record edited further is the same drift.
    const further = {
      ...update(1),
      fields: { enabled: { from: false, to: true }, description: { from: "a", to: "b" } },
    };
    expect(names(tracker.observeCycle([finding([further])], "t3"))).toEqual([]);
    expect(names(tracker.observeCycle([finding([update(1), update(2)])], "t4"))).toEqual(["drift_changed"]);
    expect(names(tracker.observeCycle([finding([])], "t5"))).toEqual(["drift_resolved"]);
    expect(names(tracker.observeCycle([finding([])], "t6"))).toEqual([]);
  });

  it("sends a failure once per stretch of failed cycles, and a broken manifest once per broken version", () => {
    const tracker = new EventTracker();
    expect(names(tracker.observeFailure("503", "t0"))).toEqual(["cycle_failed"]);
    expect(names(tracker.observeFailure("503 again", "t1"))).toEqual([]);
    expect(names(tracker.observeInvalid(["a.yaml:3:1: bad"], "t2"))).toEqual(["manifest_invalid"]);
    expect(names(tracker.observeInvalid(["a.yaml:3:1: bad"], "t3"))).toEqual([]);
    expect(names(tracker.observeInvalid(["a.yaml:4:1: other"], "t4"))).toEqual(["manifest_invalid"]);
    expect(names(tracker.observeCycle([], "t5"))).toEqual([]);
    expect(names(tracker.observeFailure("down", "t6"))).toEqual(["cycle_failed"]);
  });

  it("says what heal did, and a guard's refusal once while it holds", () => {
    const tracker = new EventTracker();
    const healed = tracker.observeCycle(
      [finding([], { healed: { changes: [update(1)], reorder: undefined } })],
      "t0",
    );
    expect(healed).toMatchObject([{ event: "healed", summary: { update: 1 }, changes: [{ id: 1 }] }]);
    const refused = finding([update(2)], { refused: ["refusing to prune 1 family to empty"] });
    expect(names(tracker.observeCycle([refused], "t1"))).toEqual(["guard_refused", "drift_opened"]);
    expect(names(tracker.observeCycle([refused], "t2"))).toEqual([]);
    expect(names(tracker.observeCycle([finding([])], "t3"))).toEqual(["drift_resolved"]);
  });

  it("resolves the drift of a family dropped from the manifest", () => {
    const tracker = new EventTracker();
    tracker.observeCycle([finding([update(1)])], "t0");
    const events = tracker.observeCycle([], "t1");
    expect(events).toMatchObject([
      { event: "drift_resolved", project: "1", message: expect.stringContaining("no longer") },
    ]);
  });

  it("carries at most 50 changes, and the summary counts them all", () => {
    const tracker = new EventTracker();
    const changes = Array.from({ length: 120 }, (_, index) => update(index + 1));
    const [event] = tracker.observeCycle([finding(changes)], "t0");
    expect(event?.changes).toHaveLength(MAX_EVENT_CHANGES);
    expect(event?.summary.update).toBe(120);
  });
});

describe("webhook bodies", () => {
  it("never carry the key, in JSON or Slack text, and are signed as GitHub signs", () => {
    const registry = new SecretRegistry();
    const key = "phx_webhook_test_key_0123456789abcdef";
    registry.register(key);
    const leaky = { ...update(3, `name with ${key}`) };
    const [event] = new EventTracker().observeCycle([finding([leaky])], "2026-01-01T00:00:00.000Z");
    if (event === undefined) throw new Error("no event");
    for (const format of ["json", "slack"] as const) {
      const body = renderWebhookBody(event, format, registry);
      expect(body).not.toContain(key);
      expect(() => JSON.parse(body)).not.toThrow();
    }
    // The signature of "hello" with "secret", as any HMAC-SHA256 implementation computes it.
    expect(signBody("hello", "secret")).toBe(
      "sha256=88aab3ede8d3adf94d26ab90d3bafd4a2083070c3bcce9c014ee04a443847c0b",
    );
  });

  it("in Slack, shows a record's name and the service's text and never acts on them", () => {
    // Slack reads <!channel> as a ping to everyone and <url|label> as a link under any label.
    const hostile = "<!channel> <https://evil.example/login|Click to re-auth> & <@U123>";
    const [event] = new EventTracker().observeCycle([finding([update(1, hostile)])], "t0");
    if (event === undefined) throw new Error("no event");
    const text = renderSlackText({ ...event, message: `the service said: ${hostile}` });
    expect(text).not.toMatch(/[<>]/);
    expect(text).not.toMatch(/&(?!amp;|lt;|gt;)/);
    expect(text).toContain(
      "&lt;!channel&gt; &lt;https://evil.example/login|Click to re-auth&gt; &amp; &lt;@U123&gt;",
    );
    // Through the body that is POSTed, too.
    const body = JSON.parse(renderWebhookBody(event, "slack", new SecretRegistry())) as { text: string };
    expect(body.text).not.toContain("<!channel>");
  });

  it("reads well in Slack: what happened, where, and the changes", () => {
    const [event] = new EventTracker().observeCycle([finding([update(1, "GeoIP")])], "t0");
    if (event === undefined) throw new Error("no event");
    expect(renderSlackText(event)).toBe(
      ':warning: *pcsync*: drift found in project 1 `plugin_configs`: 1 to update\n• ~ update "GeoIP" (id 1): enabled: false → true',
    );
  });
});
