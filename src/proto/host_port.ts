/**
 * `host:port` text, read and written in one place: the builder's addresses,
 * the seeds, the sidecar's flags and the gossip task's sends all go
 * through it. An IPv6 literal is written in brackets (`[::1]:7946`); a host
 * is an IP literal or a name, which only the runtime resolves.
 *
 * @module
 */

/** A `host:port` split in two. */
export interface HostPort {
  /** The host: an IP literal (without brackets) or a name. */
  readonly host: string;
  /** The port, 0 to 65535. */
  readonly port: number;
  /** Whether the host was written in brackets, as an IPv6 literal must be. */
  readonly bracketed: boolean;
}

const HOST_PORT = /^(?:\[([^\]\s]+)\]|([^:\s[\]]+)):(\d{1,5})$/;

/**
 * Splits `host:port` or `[v6]:port`; checks the port, not the host.
 *
 * @param text The text.
 * @returns The host and the port, or `undefined` when `text` is not of that form.
 */
export function splitHostPort(text: string): HostPort | undefined {
  const m = typeof text === "string" ? HOST_PORT.exec(text) : null;
  if (m === null) return undefined;
  const port = Number(m[3]);
  if (port > 65_535) return undefined;
  return { host: m[1] ?? m[2], port, bracketed: m[1] !== undefined };
}

/**
 * Writes `host:port`, with brackets around an IPv6 literal.
 *
 * @param host An IP literal (without brackets) or a name.
 * @param port The port.
 * @returns The text {@link splitHostPort} reads back.
 */
export function formatHostPort(host: string, port: number): string {
  return host.includes(":") ? `[${host}]:${port}` : `${host}:${port}`;
}
