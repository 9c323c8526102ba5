// The address `pcsync watch --listen` serves its endpoints on: `HOST:PORT` or `[IPv6]:PORT`.

export interface ListenAddress {
  host: string;
  port: number;
}

/** Port 0 takes any free port. */
export function parseListen(value: string): ListenAddress | undefined {
  const match = /^(?:\[([0-9a-fA-F:.]+)\]|([^:[\]\s]+)):(\d{1,5})$/.exec(value.trim());
  if (!match) return undefined;
  const port = Number(match[3]);
  if (port > 65_535) return undefined;
  return { host: match[1] ?? match[2] ?? "", port };
}

export function formatAddress(address: ListenAddress): string {
  return address.host.includes(":") ? `[${address.host}]:${address.port}` : `${address.host}:${address.port}`;
}
