// https through a proxy, as behind a corporate one: the built CLI reaches the emulator (behind a
// TLS terminator with a private CA) through a CONNECT proxy on loopback. The key reaches the
// service inside the tunnel and never the proxy; a private CA is trusted with NODE_EXTRA_CA_CERTS;
// and the wrong scheme for a port gets one clear line instead of OpenSSL's text.

import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { connect, type Server as NetServer } from "node:net";
import { join } from "node:path";
import { createServer as createTlsServer, type Server as TlsServer } from "node:tls";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ApiClient, listProjects, type ServiceError } from "../../src/api/index.js";
import { type ConnectProxy, startConnectProxy } from "../support/connect-proxy.js";
import { API_KEY, startServer, type TestServer } from "../support/test-server.js";
import { temporaryDirectory } from "../support/work-dir.js";

let server: TestServer;
let terminator: TlsServer;
let tlsPort: number;
let proxy: ConnectProxy;
let work: Awaited<ReturnType<typeof temporaryDirectory>>;
let caFile: string;
/** What reached the service through the TLS terminator, decrypted. */
const served: Buffer[] = [];

beforeAll(async () => {
  work = await temporaryDirectory();
  caFile = join(work.path, "ca.pem");
  const keyFile = join(work.path, "key.pem");
  // A self-signed certificate for the test host name: the private CA a company would have.
  execFileSync(
    "openssl",
    [
      "req",
      "-x509",
      "-newkey",
      "ec",
      "-pkeyopt",
      "ec_paramgen_curve:prime256v1",
      "-nodes",
      "-keyout",
      keyFile,
      "-out",
      caFile,
      "-days",
      "2",
      "-subj",
      "/CN=service.test",
      "-addext",
      "subjectAltName=DNS:service.test",
    ],
    { stdio: "ignore" },
  );
  server = await startServer("seed");
  const emulatorPort = Number(new URL(server.emulator.url).port);
  terminator = createTlsServer({ key: readFileSync(keyFile), cert: readFileSync(caFile) }, (socket) => {
    const upstream = connect(emulatorPort, "127.0.0.1");
    socket.on("data", (chunk: Buffer) => served.push(chunk));
    socket.pipe(upstream).pipe(socket);
    socket.on("error", () => upstream.destroy());
    upstream.on("error", () => socket.destroy());
  });
  await new Promise<void>((resolve) => terminator.listen(0, "127.0.0.1", resolve));
  tlsPort = (terminator.address() as { port: number }).port;
  proxy = await startConnectProxy({ credentials: "corp-user:corp-Pa55word" });
});
afterAll(async () => {
  await proxy.close();
  await new Promise<void>((resolve) => (terminator as unknown as NetServer).close(() => resolve()));
  await server.close();
  await work.remove();
});

describe("through an https proxy tunnel", () => {
  it("reaches the service with the key, trusting the private CA; the proxy never sees the key", async () => {
    const connectsBefore = proxy.connects.length;
    const run = await server.runBuilt(
      ["export", "--project", "1", "--family", "plugin_configs", "--verbose"],
      {
        env: {
          PCSYNC_BASE_URL: `https://service.test:${tlsPort}`,
          HTTPS_PROXY: `http://corp-user:corp-Pa55word@127.0.0.1:${proxy.port}`,
          NODE_EXTRA_CA_CERTS: caFile,
        },
      },
    );
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain("name: GeoIP");
    // --verbose says where requests go, without the proxy's password.
    expect(run.stderr).toContain(
      `proxy: service.test:${tlsPort} through the proxy http://127.0.0.1:${proxy.port} (from HTTPS_PROXY)`,
    );
    expect(run.stderr).not.toContain("corp-Pa55word");
    const connects = proxy.connects.slice(connectsBefore);
    // Two families read at once: one tunnel each, both to the service.
    expect(connects.length).toBeGreaterThan(0);
    for (const seen of connects) expect(seen.target).toBe(`service.test:${tlsPort}`);
    for (const seen of connects) {
      expect(seen.headers.authorization).toBeUndefined();
      expect(JSON.stringify(seen.headers)).not.toContain(API_KEY);
    }
    expect(proxy.forwarded).toEqual([]);
    // The tunnel carried TLS: the key is in what the service got, never in what the proxy saw.
    expect(Buffer.concat(served).toString("latin1")).toContain(`authorization: Bearer ${API_KEY}`);
    expect(proxy.tunnelled().length).toBeGreaterThan(0);
    expect(proxy.tunnelled().toString("latin1")).not.toContain(API_KEY);
  });

  it("names NODE_EXTRA_CA_CERTS when the certificate is not trusted", async () => {
    const run = await server.runBuilt(["export", "--project", "1"], {
      env: {
        PCSYNC_BASE_URL: `https://service.test:${tlsPort}`,
        HTTPS_PROXY: `http://corp-user:corp-Pa55word@127.0.0.1:${proxy.port}`,
      },
    });
    expect(run).toMatchObject({ code: 1, stdout: "" });
    expect(run.stderr).toMatch(
      new RegExp(
        `^pcsync: GET /api/projects/1/\\w+/: the TLS certificate of https://service.test:${tlsPort} \\(through the proxy http://127.0.0.1:${proxy.port}\\) is not trusted \\(DEPTH_ZERO_SELF_SIGNED_CERT: self-signed certificate\\): .*set NODE_EXTRA_CA_CERTS to a PEM file`,
      ),
    );
    expect(run.stderr.trim().split("\n")).toHaveLength(1);
  });
});

describe("the wrong scheme for the port", () => {
  it("https to a plain-http server: one line that suggests http://", async () => {
    const port = new URL(server.emulator.url).port;
    const run = await server.runBuilt(["export", "--project", "1"], {
      env: { PCSYNC_BASE_URL: `https://127.0.0.1:${port}` },
    });
    expect(run).toMatchObject({
      code: 1,
      stdout: "",
      stderr: expect.stringMatching(
        new RegExp(
          `^pcsync: GET /api/projects/1/\\w+/: the server at https://127.0.0.1:${port} does not speak TLS: is the base URL http://127.0.0.1:${port}\\?\\n$`,
        ),
      ),
    });
  });

  it("http to a TLS port: a hint that the base URL should be https://", async () => {
    const client = new ApiClient({
      baseUrl: `http://127.0.0.1:${tlsPort}`,
      apiKey: API_KEY,
      retry: { retries: 0 },
    });
    const error = await listProjects(client).catch((caught: unknown) => caught);
    await client.close();
    expect(error).toMatchObject({ code: "network_error" });
    expect((error as ServiceError).hint).toBe(
      `if the server at 127.0.0.1:${tlsPort} speaks https, the base URL should be https://127.0.0.1:${tlsPort}`,
    );
  });
});
