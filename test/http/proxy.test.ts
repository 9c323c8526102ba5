// Proxies: which requests go through HTTPS_PROXY/HTTP_PROXY (NO_PROXY, loopback), that the key
// goes only through the tunnel to the service, and the errors of a proxy that is down, slow or
// refuses. The client runs in-process against a scripted service and a CONNECT proxy on loopback.

import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type ApiClient, listProjects, type ServiceError } from "../../src/api/index.js";
import { matchNoProxy, resolveProxy } from "../../src/http/proxy.js";
import { createRecord } from "../support/builders.js";
import { type ConnectProxy, type ConnectProxyOptions, startConnectProxy } from "../support/connect-proxy.js";
import {
  record,
  type ScriptedServer,
  sendJson,
  startScriptedServer,
  TEST_KEY,
  testClient,
} from "../support/scripted-server.js";

describe("NO_PROXY", () => {
  it.each([
    ["*", "api.example.com", 443, true],
    ["example.com", "example.com", 443, true],
    ["example.com", "api.example.com", 443, true],
    [".example.com", "api.example.com", 443, true],
    ["*.example.com", "api.example.com", 443, true],
    [".example.com", "example.com", 443, true],
    ["example.com", "badexample.com", 443, false],
    ["example.com", "example.com.evil.net", 443, false],
    ["other.org, example.com", "api.example.com", 443, true],
    ["other.org example.com", "api.example.com", 443, true],
    ["EXAMPLE.com", "api.Example.COM", 443, true],
    ["example.com:8443", "api.example.com", 8443, true],
    ["example.com:8443", "api.example.com", 443, false],
    ["10.1.2.3", "10.1.2.3", 443, true],
    ["10.1.2.3", "10.1.2.4", 443, false],
    ["10.0.0.0/8", "10.200.3.4", 443, true],
    ["10.0.0.0/8", "11.0.0.1", 443, false],
    ["10.0.0.0/8", "ten.example.com", 443, false],
    ["[2001:db8::1]:8443", "[2001:db8::1]", 8443, true],
    ["2001:db8::1", "[2001:db8:0::1]", 443, true],
    ["2001:db8::/32", "[2001:db8::7]", 443, true],
    ["", "api.example.com", 443, false],
    [" , ", "api.example.com", 443, false],
  ] as const)("%j for %s:%d: bypass %s", (noProxy, host, port, bypass) => {
    expect(matchNoProxy(host, port, noProxy) !== undefined).toBe(bypass);
  });
});

describe("choosing the proxy", () => {
  it("takes the variable of the base URL's scheme, lower case first, and never for loopback", () => {
    const env = {
      HTTPS_PROXY: "http://upper:1",
      https_proxy: "http://lower:2",
      HTTP_PROXY: "http://plain:3",
    };
    expect(resolveProxy("https://api.example.com", env).route?.display).toBe("http://lower:2");
    expect(resolveProxy("http://api.example.com", env).route?.display).toBe("http://plain:3");
    expect(resolveProxy("https://api.example.com", { HTTP_PROXY: "http://plain:3" }).route).toBeUndefined();
    expect(resolveProxy("https://api.example.com", { HTTPS_PROXY: "" }).route).toBeUndefined();
    for (const origin of ["http://localhost:8000", "http://127.0.0.1:8000", "http://[::1]:8000"]) {
      expect(resolveProxy(origin, { HTTP_PROXY: "http://proxy:3" }).route).toBeUndefined();
    }
  });

  it("reads a proxy without a scheme as http://, and refuses others without quoting the value", () => {
    expect(resolveProxy("https://a.example", { HTTPS_PROXY: "proxy.corp:3128" }).route?.display).toBe(
      "http://proxy.corp:3128",
    );
    const secret = "s3cr3t-proxy-pass";
    for (const value of [`socks5://u:${secret}@proxy:1080`, `http://u:${secret}@[bad`]) {
      let error: unknown;
      try {
        resolveProxy("https://a.example", { HTTPS_PROXY: value });
      } catch (caught) {
        error = caught;
      }
      expect(error).toMatchObject({ code: "invalid_proxy" });
      expect((error as Error).message).toMatch(/^The proxy in HTTPS_PROXY cannot be used: /);
      expect((error as Error).message).not.toContain(secret);
    }
  });
});

describe("requests through a proxy", () => {
  let service: ScriptedServer;
  const opened: Array<{ close(): Promise<void> }> = [];

  beforeEach(async () => {
    service = await startScriptedServer((_request, response) =>
      sendJson(response, 200, { count: 1, next: null, previous: null, results: [{ id: 1, name: "P" }] }),
    );
  });
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((item) => item.close()));
    await service.close();
  });

  async function proxy(options: ConnectProxyOptions = {}): Promise<ConnectProxy> {
    const started = await startConnectProxy(options);
    opened.push(started);
    return started;
  }

  function client(baseUrl: string, env: Record<string, string>, timeoutMs = 2_000, retries = 1): ApiClient {
    const made = testClient(baseUrl, {
      allowInsecureHttp: true,
      proxyEnvironment: env,
      requestTimeoutMs: timeoutMs,
      retry: { retries },
    }).client;
    opened.push(made);
    return made;
  }

  const port = () => new URL(service.url).port;

  it("tunnels to the service: the key reaches it, the proxy's own request never carries it", async () => {
    const seen = await proxy({ credentials: "pxuser:px pass" });
    const proxyUrl = `http://pxuser:px%20pass@127.0.0.1:${seen.port}`;
    const projects = await listProjects(client(`http://service.test:${port()}`, { HTTP_PROXY: proxyUrl }));
    expect(projects).toEqual([{ id: 1, name: "P" }]);
    expect(seen.forwarded).toEqual([]);
    expect(seen.connects.map((connect) => connect.target)).toEqual([`service.test:${port()}`]);
    const [connect] = seen.connects;
    expect(connect?.headers.authorization).toBeUndefined();
    expect(JSON.stringify(connect?.headers)).not.toContain(TEST_KEY);
    expect(connect?.headers["proxy-authorization"]).toBe(
      `Basic ${Buffer.from("pxuser:px pass").toString("base64")}`,
    );
    // The service got the key, and not the proxy's credentials.
    const [request] = service.requests;
    expect(request?.headers.authorization).toBe(`Bearer ${TEST_KEY}`);
    expect(request?.headers["proxy-authorization"]).toBeUndefined();
    expect(request?.headers.host).toBe(`service.test:${port()}`);
  });

  it("keeps the connection limit through the tunnel", async () => {
    const seen = await proxy();
    const made = testClient(`http://service.test:${port()}`, {
      allowInsecureHttp: true,
      proxyEnvironment: { http_proxy: seen.url },
      concurrency: 2,
    }).client;
    opened.push(made);
    service.setHandler((_request, response) => {
      setTimeout(() => sendJson(response, 200, { count: 0, next: null, previous: null, results: [] }), 30);
    });
    await Promise.all(Array.from({ length: 6 }, () => listProjects(made)));
    expect(service.requests).toHaveLength(6);
    expect(seen.connects.length).toBeLessThanOrEqual(2);
  });

  it("bypasses the proxy for NO_PROXY hosts and loopback", async () => {
    const seen = await proxy();
    // 0.0.0.0 reaches this machine without being a loopback name: only NO_PROXY keeps it direct.
    await listProjects(client(`http://0.0.0.0:${port()}`, { HTTP_PROXY: seen.url, NO_PROXY: "0.0.0.0" }));
    await listProjects(client(`http://0.0.0.0:${port()}`, { HTTP_PROXY: seen.url, no_proxy: "*" }));
    await listProjects(client(`http://127.0.0.1:${port()}`, { HTTP_PROXY: seen.url }));
    expect(seen.connects).toEqual([]);
    await listProjects(
      client(`http://0.0.0.0:${port()}`, { HTTP_PROXY: seen.url, NO_PROXY: `0.0.0.0:${Number(port()) + 1}` }),
    );
    expect(seen.connects.map((connect) => connect.target)).toEqual([`0.0.0.0:${port()}`]);
    expect(service.requests).toHaveLength(4);
  });

  it("says that the proxy is unreachable, naming it without its password", async () => {
    const down = await proxy();
    await down.close();
    const error = await listProjects(
      client(`http://service.test:${port()}`, { HTTP_PROXY: `http://me:hunter2pw@127.0.0.1:${down.port}` }),
    ).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: "network_error" });
    expect((error as Error).message).toBe(
      `GET /api/projects/: could not reach the proxy http://127.0.0.1:${down.port} (from HTTP_PROXY): connect ECONNREFUSED 127.0.0.1:${down.port}, after 2 attempts; check HTTP_PROXY, or list service.test:${port()} in NO_PROXY if the service is reachable without the proxy`,
    );
    expect(service.requests).toEqual([]);
  });

  it.each([
    [407, {}, /asks for credentials: put them in HTTP_PROXY as http:\/\/USER:PASSWORD@HOST:PORT/, 1],
    [407, { user: "me:wrong" }, /refused the user name and password in HTTP_PROXY/, 1],
    [403, {}, /refused to open a tunnel to service\.test:\d+ \(403 Forbidden\): ask its administrators/, 1],
    [502, {}, /could not connect to service\.test:\d+ \(502 Bad Gateway\), after 2 attempts/, 2],
  ] as const)("explains a proxy that answers CONNECT with %d", async (status, how, message, connects) => {
    const seen = await proxy(status === 407 ? { credentials: "me:right" } : { refuseWith: status });
    const userInfo = "user" in how ? `${how.user}@` : "";
    const made = client(`http://service.test:${port()}`, {
      HTTP_PROXY: `http://${userInfo}127.0.0.1:${seen.port}`,
    });
    // A POST: the refusal proves that nothing reached the service, so the outcome is known.
    const error = await createRecord(made, "1", "plugin_configs", { name: "x", plugin: 1 }).catch(
      (caught: unknown) => caught,
    );
    expect(error).toMatchObject({ code: "network_error" });
    expect((error as Error).message).toMatch(message);
    expect((error as Error).message).not.toContain("wrong");
    expect((error as ServiceError).outcomeUnknown).toBe(false);
    expect(seen.connects).toHaveLength(connects);
    expect(service.requests).toEqual([]);
  });

  it("gives up on a proxy that never answers CONNECT within the timeout", async () => {
    const seen = await proxy({ hang: true });
    const started = Date.now();
    const error = await listProjects(
      client(`http://service.test:${port()}`, { HTTP_PROXY: seen.url }, 300, 0),
    ).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: "network_error" });
    expect((error as Error).message).toMatch(
      /could not reach the proxy .*: no answer within 300 ms, after 1 attempt;/,
    );
    // undici checks this bound about once a second.
    expect(Date.now() - started).toBeLessThan(3_000);
  });

  it("sends a record written through the tunnel as it was", async () => {
    const seen = await proxy();
    service.setHandler((request, response) =>
      request.method === "POST"
        ? sendJson(response, 201, record(9, JSON.parse(request.body)))
        : sendJson(response, 200, { count: 0, next: null, previous: null, results: [] }),
    );
    const made = client(`http://service.test:${port()}`, { HTTP_PROXY: seen.url });
    const created = await createRecord(made, "1", "plugin_configs", { name: "Via proxy", plugin: 3 });
    expect(created).toMatchObject({ id: 9, name: "Via proxy", plugin: 3 });
    expect(seen.tunnelled().toString("latin1")).toContain("POST /api/projects/1/plugin_configs/ HTTP/1.1");
  });
});
