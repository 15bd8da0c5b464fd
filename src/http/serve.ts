/**
 * Serving a fetch handler on whichever runtime runs us: `Deno.serve`,
 * `Bun.serve`, or Node's http server through `@hono/node-server`, loaded
 * only on Node. Runtimes are told apart through a typed view of
 * `globalThis`, never a bare `Deno` or `Bun` identifier, so this file type
 * checks and publishes everywhere.
 *
 * @module
 */

import { formatHostPort } from "../proto/host_port.ts";
import { messageOf } from "../core/errors.ts";

/** A running HTTP server. */
export interface HttpServer {
  /** The address it listens on, as `host:port` with the real port. */
  readonly address: string;
  /** Stops accepting connections and resolves once in-flight requests finished. */
  close(): Promise<void>;
}

/** Where to listen. */
export interface ListenOptions {
  /** Host name or IP literal, such as `127.0.0.1`. */
  readonly hostname: string;
  /** Port; 0 picks a free one. */
  readonly port: number;
}

/**
 * A handler; its second argument is what the runtime's server hands it
 * (Deno.serve's info, Bun's server, @hono/node-server's bindings), which
 * Hono's `getConnInfo` reads, so it is passed on.
 */
// deno-lint-ignore no-explicit-any
type Fetch = (request: Request, info?: any) => Response | Promise<Response>;

interface DenoServer {
  readonly addr: { port: number };
  readonly finished: Promise<void>;
  shutdown(): Promise<void>;
}
interface DenoLike {
  serve(
    options: { hostname: string; port: number; onListen?: () => void },
    handler: (request: Request, info: unknown) => Promise<Response>,
  ): DenoServer;
}
interface BunServer {
  readonly port: number;
  stop(closeActiveConnections?: boolean): Promise<void> | void;
}
interface BunLike {
  serve(options: { hostname: string; port: number; fetch: Fetch }): BunServer;
}
const runtime = globalThis as unknown as { Deno?: DenoLike; Bun?: BunLike };

/**
 * Serves `fetch` at `options`. Rejects, naming the address, when it cannot
 * listen there (a port in use, an address not on this host).
 */
export async function serveHttp(fetch: Fetch, options: ListenOptions): Promise<HttpServer> {
  const where = formatHostPort(options.hostname, options.port);
  try {
    if (runtime.Deno?.serve) return serveDeno(runtime.Deno, fetch, options);
    if (runtime.Bun?.serve) return serveBun(runtime.Bun, fetch, options);
    return await serveNode(fetch, options);
  } catch (e) {
    throw new Error(`cannot listen for HTTP on ${where}: ${messageOf(e)}`, { cause: e });
  }
}

/**
 * `Deno.serve`'s `shutdown()` waits for responses in flight but cuts off
 * a request whose body is still arriving. So requests are counted, and a
 * close first turns new ones away with 503, waits for the counted ones to
 * be answered, and only then shuts down.
 */
function serveDeno(deno: DenoLike, fetch: Fetch, options: ListenOptions): HttpServer {
  let active = 0;
  let closing = false;
  let drained: (() => void) | undefined;
  const counted = async (request: Request, info: unknown): Promise<Response> => {
    if (closing) {
      return new Response("shutting down\n", { status: 503, headers: { connection: "close" } });
    }
    active++;
    try {
      return await fetch(request, info);
    } finally {
      if (--active === 0) drained?.();
    }
  };
  const server = deno.serve({ ...options, onListen: () => {} }, counted);
  return {
    address: formatHostPort(options.hostname, server.addr.port),
    close: async () => {
      closing = true;
      if (active > 0) await new Promise<void>((resolve) => (drained = resolve));
      await server.shutdown();
    },
  };
}

function serveBun(bun: BunLike, fetch: Fetch, options: ListenOptions): HttpServer {
  const server = bun.serve({ ...options, fetch });
  return {
    address: formatHostPort(options.hostname, server.port),
    close: async () => {
      await server.stop(false);
    },
  };
}

async function serveNode(fetch: Fetch, options: ListenOptions): Promise<HttpServer> {
  const { createAdaptorServer } = await import("@hono/node-server");
  const server = createAdaptorServer({ fetch });
  const port = await new Promise<number>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.hostname, () => {
      server.off("error", reject);
      const addr = server.address();
      resolve(typeof addr === "object" && addr !== null ? addr.port : options.port);
    });
  });
  return {
    address: formatHostPort(options.hostname, port),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
