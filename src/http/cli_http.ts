/**
 * The sidecar's flags of its HTTP server: where it listens, which server
 * (`--http-server`), and its bounds on slow and idle clients, each within
 * the bounds of `HTTP_BOUNDS`. Read by `cli_args.ts` with the other flags,
 * into the server's own {@link ListenOptions}.
 *
 * @module
 */

import { checkBounded, HTTP_BOUNDS as H, type OptionBounds } from "../core/options.ts";
import type { HttpServerKind, ListenOptions } from "./http_server.ts";
import { DEFAULT_HTTP, type Flag } from "./cli_flags.ts";
import {
  durationMs,
  type Lookup,
  parseHostPort,
  UsageError,
  valueOf,
  wholeNumber,
} from "./cli_sources.ts";

/** `auto`, `native` or `node`, for `--http-server`. */
function httpServerKind(text: string): HttpServerKind | "auto" {
  if (text === "auto" || text === "native" || text === "node") return text;
  throw new Error(`expected auto, native or node, got ${JSON.stringify(text)}`);
}

/**
 * The server for `--http-server auto`: the runtime's own on a loopback
 * address, where only processes of this host connect; `node:http`, with
 * every bound on slow clients, on any other (see src/http/serve.ts).
 */
function serverFor(kind: HttpServerKind | "auto", hostname: string): HttpServerKind {
  if (kind !== "auto") return kind;
  const loopback = /^127\./.test(hostname) || hostname === "::1" || hostname === "[::1]" ||
    hostname === "localhost";
  return loopback ? "native" : "node";
}

/** The HTTP server's address and its bounds on slow and idle clients. */
export function httpFlags(get: Lookup): Required<ListenOptions> {
  const http = get("http");
  const duration = (flag: Flag, bounds: OptionBounds) => {
    const given = get(flag);
    return given === undefined ? bounds.default : valueOf(given, (t) => durationMs(t, bounds));
  };
  const headersTimeoutMs = duration("header-timeout", H.headersTimeoutMs);
  const requestTimeoutMs = duration("request-timeout", H.requestTimeoutMs);
  if (headersTimeoutMs > requestTimeoutMs) {
    throw new UsageError(
      `--header-timeout (${headersTimeoutMs}ms) must be at most --request-timeout (${requestTimeoutMs}ms)`,
    );
  }
  const count = (flag: Flag, bounds: OptionBounds, name: string) => {
    const given = get(flag);
    return given === undefined
      ? bounds.default
      : valueOf(given, (t) => checkBounded(name, bounds, wholeNumber(t, bounds)));
  };
  const { hostname, port } = http === undefined
    ? parseHostPort("--http", DEFAULT_HTTP)
    : parseHostPort(http.from, http.text);
  const server = get("http-server");
  return {
    hostname,
    port,
    server: serverFor(server === undefined ? "auto" : valueOf(server, httpServerKind), hostname),
    headersTimeoutMs,
    requestTimeoutMs,
    idleTimeoutMs: duration("idle-timeout", H.idleTimeoutMs),
    drainTimeoutMs: duration("drain-timeout", H.drainTimeoutMs),
    maxConnections: count("max-connections", H.maxConnections, "maxConnections"),
    maxConnectionsPerClient: count(
      "max-connections-per-client",
      H.maxConnectionsPerClient,
      "maxConnectionsPerClient",
    ),
  };
}
