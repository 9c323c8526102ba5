// The base URL: transport safety and path prefixes.

import { describe, expect, it } from "vitest";
import { ApiClient, SecretRegistry } from "../../src/api/index.js";

function clientFor(baseUrl: string, allowInsecureHttp = false): ApiClient {
  return new ApiClient({ baseUrl, apiKey: "phx_key", allowInsecureHttp });
}

describe("base URL", () => {
  it("refuses plain http to a host that is not this machine unless allowed", async () => {
    expect(() => clientFor("http://app.example.com")).toThrow(
      expect.objectContaining({ code: "insecure_http" }),
    );
    expect(() => clientFor("http://app.example.com")).toThrow(
      /use an https:\/\/ base URL, or pass --insecure-http/,
    );
    for (const local of [
      "http://localhost:8000",
      "http://127.0.0.1:1",
      "http://[::1]:8000",
      "http://api.localhost",
    ]) {
      await clientFor(local).close();
    }
    await clientFor("http://app.example.com", true).close();
    await clientFor("https://app.example.com").close();
  });

  it("keeps a path prefix and builds API paths under it", async () => {
    const client = clientFor("https://app.example.com/posthog/");
    expect(client.url("/api/projects/", { limit: 5, type_filter: ["A", "B"] }).href).toBe(
      "https://app.example.com/posthog/api/projects/?limit=5&type_filter=A&type_filter=B",
    );
    expect(client.isUnderBase(new URL("https://app.example.com/posthog/api/x/"))).toBe(true);
    expect(client.isUnderBase(new URL("https://app.example.com/posthogx/api/x/"))).toBe(false);
    expect(client.isUnderBase(new URL("https://app.example.com:444/posthog/api/x/"))).toBe(false);
    await client.close();
  });

  it("refuses URLs that are not http(s), carry credentials or a query", () => {
    for (const bad of [
      "app.example.com",
      "ftp://app.example.com",
      "https://u:p@app.example.com",
      "https://a.b/?x=1",
    ]) {
      expect(() => clientFor(bad)).toThrow(expect.objectContaining({ code: "invalid_base_url" }));
    }
    expect(() => clientFor("https://u:hunter2@app.example.com")).not.toThrow(/hunter2/);
  });
});

describe("redact", () => {
  it("replaces the key in plain, URL-encoded and JSON-escaped forms", () => {
    const key = 'k+y/"1';
    const text = `a ${key} b ${encodeURIComponent(key)} c ${JSON.stringify(key)}`;
    expect(SecretRegistry.of([key]).redact(text).text).toBe('a [REDACTED] b [REDACTED] c "[REDACTED]"');
    expect(SecretRegistry.of([""]).redact("nothing").text).toBe("nothing");
  });
});
