// Hosts that never leave this machine: plain http to them exposes nothing (the base URL, a webhook,
// Prometheus may use it), and no proxy can reach them.

import { isIP } from "node:net";

export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/^\[|\]$/g, "");
  if (host === "localhost" || host.endsWith(".localhost")) return true;
  if (isIP(host) === 4) return host.startsWith("127.");
  if (isIP(host) === 6) return host === "::1" || /^::ffff:127\./.test(host);
  return false;
}
