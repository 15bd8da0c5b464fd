/**
 * Serving a fetch handler on whichever runtime runs us: on `Deno.serve` and
 * `Bun.serve` (the runtime's own server, about twice the throughput of its
 * `node:http`), and through `node:http` and `@hono/node-server` on Node, or
 * on any runtime when asked (`server: "node"`).
 *
 * The bounds on slow clients differ by server, as each offers them:
 *
 * | bound | `node:http` | `Bun.serve` | `Deno.serve` |
 * | --- | --- | --- | --- |
 * | headers | `headersTimeoutMs` | about 10 s, fixed by the server (uWS), whatever the option | none |
 * | body (408) | `requestTimeoutMs`, closed | `requestTimeoutMs` from the headers, ours; closed | ours, answered 408, but the connection stays until the client ends its body or hangs up |
 * | idle kept-alive | `idleTimeoutMs` | `idleTimeoutMs` in whole seconds, checked every 4 s | none |
 * | connections, per client | `maxConnections`, `maxConnectionsPerClient` | none | none |
 *
 * Neither native server tells of a connection before its request's headers
 * have come, nor lets a handler close one: what a bound needs at the
 * connection is out of reach there. A server that clients it does not
 * trust can reach serves with `server: "node"`: the sidecar does so on any
 * address but loopback (`--http-server auto`, its default).
 *
 * @module
 */

import { formatHostPort } from "../proto/host_port.ts";
import { messageOf } from "../core/errors.ts";
import type { Fetch, HttpServer, ListenOptions } from "./http_server.ts";
import { serveNative } from "./serve_native.ts";
import { serveNodeHttp } from "./serve_node.ts";

export type { HttpServer, HttpServerKind, ListenOptions } from "./http_server.ts";

/**
 * Serves `fetch` at `options`. Rejects, naming the address, when it cannot
 * listen there (a port in use, an address not on this host).
 */
export async function serveHttp(fetch: Fetch, options: ListenOptions): Promise<HttpServer> {
  const where = formatHostPort(options.hostname, options.port);
  try {
    const native = options.server === "node" ? undefined : serveNative(fetch, options);
    return native ?? await serveNodeHttp(fetch, options);
  } catch (e) {
    throw new Error(`cannot listen for HTTP on ${where}: ${messageOf(e)}`, { cause: e });
  }
}
