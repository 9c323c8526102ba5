// A small HTTP proxy on loopback for tests: it opens CONNECT tunnels (mapping test host names to
// 127.0.0.1), can refuse them or ask for credentials, and records what it saw, so tests can check
// that the API key never reached it.

import { createServer, type IncomingHttpHeaders } from "node:http";
import { type AddressInfo, connect, type Socket } from "node:net";

export interface SeenConnect {
  /** `host:port` as asked. */
  target: string;
  headers: IncomingHttpHeaders;
}

export interface SeenRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
}

export interface ConnectProxyOptions {
  /** Answer every CONNECT with this status instead of opening the tunnel. */
  refuseWith?: number;
  /** `user:password` the proxy requires (407 without it). */
  credentials?: string;
  /** Accept the connection, then never answer. */
  hang?: boolean;
}

export interface ConnectProxy {
  /** `http://127.0.0.1:PORT` */
  url: string;
  port: number;
  connects: SeenConnect[];
  /** Requests sent to the proxy as a forwarding proxy (never expected: pcsync always tunnels). */
  forwarded: SeenRequest[];
  /** Every byte that went from the client through the tunnels. */
  tunnelled(): Buffer;
  close(): Promise<void>;
}

/** Test host names the proxy resolves itself (the machine's DNS does not know them). */
const TEST_HOSTS = /^(?:[a-z0-9-]+\.)*test$/;

export async function startConnectProxy(options: ConnectProxyOptions = {}): Promise<ConnectProxy> {
  const connects: SeenConnect[] = [];
  const forwarded: SeenRequest[] = [];
  const chunks: Buffer[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((request, response) => {
    forwarded.push({ method: request.method ?? "", url: request.url ?? "", headers: request.headers });
    response.writeHead(502, { "content-type": "text/plain" }).end("this test proxy only tunnels");
  });
  server.on("connection", (socket: Socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  server.on("connect", (request, client: Socket, head: Buffer) => {
    const target = request.url ?? "";
    connects.push({ target, headers: request.headers });
    client.on("error", () => undefined);
    if (options.hang) return;
    const expected =
      options.credentials === undefined
        ? undefined
        : `Basic ${Buffer.from(options.credentials).toString("base64")}`;
    if (expected !== undefined && request.headers["proxy-authorization"] !== expected) {
      client.end("HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic\r\n\r\n");
      return;
    }
    if (options.refuseWith !== undefined) {
      client.end(`HTTP/1.1 ${options.refuseWith} Refused\r\nContent-Length: 0\r\n\r\n`);
      return;
    }
    const [host = "", port = "443"] = splitTarget(target);
    const upstream = connect(Number(port), TEST_HOSTS.test(host) ? "127.0.0.1" : host, () => {
      client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      if (head.length > 0) upstream.write(head);
      client.on("data", (chunk: Buffer) => chunks.push(chunk));
      client.pipe(upstream);
      upstream.pipe(client);
    });
    upstream.on("error", () => client.end("HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n"));
    sockets.add(upstream);
    upstream.on("close", () => sockets.delete(upstream));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    connects,
    forwarded,
    tunnelled: () => Buffer.concat(chunks),
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

function splitTarget(target: string): [string, string] {
  const bracketed = /^\[([^\]]+)\]:(\d+)$/.exec(target);
  if (bracketed) return [bracketed[1] ?? "", bracketed[2] ?? ""];
  const index = target.lastIndexOf(":");
  return [target.slice(0, index), target.slice(index + 1)];
}
