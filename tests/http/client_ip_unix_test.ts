// The client-address keys behind a real proxy, on a Unix socket and on TCP,
// on every server each runtime has: node:http (Express, @hono/node-server)
// everywhere, and Deno.serve on Deno, Bun.serve on Bun (the fetch adapter
// and Hono). The proxy is a few lines of node:net that appends the address
// it saw the client at to X-Forwarded-For, as nginx does; the clients come
// from different loopback addresses (127.0.0.2, 127.0.0.3), so only the
// forwarded address tells them apart. Before trustUnixSocket, every client
// behind the Unix socket was the one key "unknown", and one client's burst
// denied everybody.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import net from "node:net";
import http from "node:http";
import { rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Context, Hono } from "hono";
import express from "express";
import { Guard } from "../../mod.ts";
import { clientIp, rateLimit } from "../../src/http/hono.ts";
import { expressClientIp, expressRateLimit } from "../../src/http/express.ts";
import { fetchClientIp, withRateLimit } from "../../src/http/fetch.ts";
import type { ClientIpKey, ClientKeyOptions } from "../../src/http/client_ip.ts";

type Fetch = (request: Request, info: unknown) => Response | Promise<Response>;
/** Where the app listens: a Unix socket's path, or a TCP port on 127.0.0.1. */
type Where = { readonly path: string } | { readonly port: number };
interface Served {
  readonly where: Where;
  close(): Promise<void>;
}
/** A way to serve an app, and what its key function needs to know about the server. */
interface ServerKind {
  readonly name: string;
  serve(
    unix: boolean,
    options: ClientKeyOptions<never>,
    hold?: Hold,
  ): Promise<Served & { key: ClientIpKey<never> }>;
}
/**
 * Holds a request before its key is found until its connection is gone
 * (`gone` resolves then), and is told the key found.
 */
interface Hold {
  arrived(): void;
  found(key: unknown): void;
}

/** A key function that, given a hold, first waits for the connection to go. */
function held<A extends unknown[]>(
  key: (...args: A) => unknown,
  gone: (...args: A) => Promise<unknown>,
  hold?: Hold,
): (...args: A) => Promise<never> {
  return (async (...args: A) => {
    if (hold) {
      const going = gone(...args);
      hold.arrived();
      await going;
    }
    const found = key(...args);
    hold?.found(found);
    return found;
  }) as (...args: A) => Promise<never>;
}
/** `promise`, or a rejection naming `what` after 10 s. */
function within<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout>;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: nothing in 10 s`)), 10_000);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}
const closed = (socket: net.Socket) =>
  new Promise((resolve) => socket.destroyed ? resolve(0) : socket.once("close", resolve));
const aborted = (request: Request) =>
  new Promise((resolve) =>
    request.signal.aborted ? resolve(0) : request.signal.addEventListener("abort", resolve)
  );

const native = globalThis as unknown as {
  Deno?: {
    serve(
      options: { path: string; onListen?: () => void } | {
        hostname: string;
        port: number;
        onListen?: () => void;
      },
      handler: Fetch,
    ): { addr: { port?: number }; shutdown(): Promise<void> };
  };
  Bun?: {
    serve(
      options: { unix: string; fetch: Fetch } | {
        hostname: string;
        port: number;
        fetch: Fetch;
      },
    ): { port?: number; stop(force?: boolean): void | Promise<void> };
  };
};

let sockets = 0;
const socketPath = () => join(tmpdir(), `rg-unixip-${process.pid}-${++sockets}.sock`);

/** Listens with a node:http server, on a fresh Unix socket or a free port. */
async function listenNode(server: http.Server, unix: boolean): Promise<Served> {
  const path = unix ? socketPath() : undefined;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    if (path) server.listen(path, resolve);
    else server.listen(0, "127.0.0.1", resolve);
  });
  const address = server.address();
  return {
    where: path ? { path } : { port: (address as net.AddressInfo).port },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => {
          if (path) rmSync(path, { force: true });
          resolve();
        });
      }),
  };
}

/**
 * @hono/node-server, once loaded in this process, puts its own Response over
 * the global one; Deno.serve and Bun.serve take only the runtime's own.
 */
async function ownResponse(res: Response): Promise<Response> {
  const own = Object.getPrototypeOf(Response) as typeof Response;
  return own === (Function.prototype as unknown) ? res : new own(await res.text(), res);
}

/** Serves a fetch handler on the runtime's own server. */
function serveNative(fetch: Fetch, unix: boolean): Served {
  const path = unix ? socketPath() : undefined;
  const handler: Fetch = async (r, info) => ownResponse(await fetch(r, info));
  const cleanup = () => path && rmSync(path, { force: true });
  if (native.Deno) {
    const where = path ? { path } : { hostname: "127.0.0.1", port: 0 };
    const server = native.Deno.serve({ ...where, onListen: () => {} }, handler);
    return {
      where: path ? { path } : { port: server.addr.port! },
      close: async () => {
        await server.shutdown();
        cleanup();
      },
    };
  }
  const where = path ? { unix: path } : { hostname: "127.0.0.1", port: 0 };
  const server = native.Bun!.serve({ ...where, fetch: handler });
  return {
    where: path ? { path } : { port: server.port! },
    close: async () => {
      await server.stop(true);
      cleanup();
    },
  };
}

/** A Hono app that answers with the key it was limited by. */
function honoApp(
  guard: Guard,
  key: (c: Context) => ReturnType<ClientIpKey<[Context]>> | Promise<never>,
): Hono {
  const app = new Hono();
  app.use(rateLimit({ guard, key }));
  app.get("/", (c) => c.text(String((c.get as (k: string) => { key: string })("rateLimit")?.key)));
  return app;
}

const limited = () => Guard.builder().limit(1).burst(1).spawn();

const kinds: ServerKind[] = [
  {
    name: "Express on node:http",
    async serve(unix, options, hold) {
      const guard = await limited();
      const key = expressClientIp(options as ClientKeyOptions<[express.Request]>);
      const app = express();
      const gone = (req: express.Request) => closed(req.socket);
      app.use(expressRateLimit({ guard, key: held(key, gone, hold) }));
      app.get("/", (_req, res) => void res.send(String(res.locals.rateLimit?.key)));
      const served = await listenNode(http.createServer(app), unix);
      return { ...served, key: key as ClientIpKey<never> };
    },
  },
  {
    name: "Hono on @hono/node-server",
    async serve(unix, options, hold) {
      const { getConnInfo } = await import("@hono/node-server/conninfo");
      const { getRequestListener } = await import("@hono/node-server");
      const key = clientIp({ ...options as ClientKeyOptions<[Context]>, getConnInfo });
      const gone = (c: Context) =>
        closed((c.env as { incoming: { socket: net.Socket } }).incoming.socket);
      const app = honoApp(await limited(), held(key, gone, hold));
      const served = await listenNode(http.createServer(getRequestListener(app.fetch)), unix);
      return { ...served, key: key as ClientIpKey<never> };
    },
  },
];
if (native.Deno || native.Bun) {
  const own = native.Deno ? "Deno.serve" : "Bun.serve";
  kinds.push({
    name: `Hono on ${own}`,
    async serve(unix, options, hold) {
      const { getConnInfo } = native.Deno ? await import("hono/deno") : await import("hono/bun");
      const key = clientIp({ ...options as ClientKeyOptions<[Context]>, getConnInfo });
      const app = honoApp(await limited(), held(key, (c: Context) => aborted(c.req.raw), hold));
      return {
        ...serveNative((r, info) => app.fetch(r, info), unix),
        key: key as ClientIpKey<never>,
      };
    },
  }, {
    name: `withRateLimit on ${own}`,
    async serve(unix, options, hold) {
      const key = fetchClientIp(options as ClientKeyOptions<[Request, unknown]>);
      const handler = withRateLimit(
        { guard: await limited(), key: held(key, aborted, hold) },
        (_r, _i, info) => new Response(String(info?.key)),
      );
      return { ...serveNative(handler, unix), key: key as ClientIpKey<never> };
    },
  });
}

/** A proxy on 127.0.0.1 that appends the client's address to X-Forwarded-For, as nginx does. */
async function proxy(to: Where): Promise<{ port: number; close(): Promise<void> }> {
  const open = new Set<net.Socket>();
  const server = net.createServer((client) => {
    open.add(client);
    let head = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf("\r\n\r\n");
      if (end < 0) return;
      client.off("data", onData);
      const text = head.subarray(0, end).toString("latin1");
      const line = text.indexOf("\r\n");
      const forwarded = `${text.slice(0, line)}\r\nX-Forwarded-For: ${client.remoteAddress}` +
        text.slice(line);
      const upstream = "path" in to ? net.connect(to.path) : net.connect(to.port, "127.0.0.1");
      open.add(upstream);
      upstream.write(Buffer.concat([Buffer.from(forwarded, "latin1"), head.subarray(end)]));
      client.pipe(upstream).on("error", () => client.destroy());
      upstream.pipe(client).on("error", () => upstream.destroy());
      upstream.on("close", () => open.delete(upstream));
    };
    client.on("data", onData);
    client.on("error", () => {});
    client.on("close", () => open.delete(client));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of open) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** One request, on a connection of its own, from `from`: its status and body. */
function ask(to: Where, from?: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = "path" in to
      ? net.connect(to.path)
      : net.connect({ host: "127.0.0.1", port: to.port, localAddress: from });
    const timer = setTimeout(() => socket.destroy(new Error("no answer in 10 s")), 10_000);
    let out = "";
    socket.setEncoding("latin1");
    socket.on("data", (d) => out += d);
    socket.on("error", (e) => (clearTimeout(timer), reject(e)));
    socket.on("end", () => {
      clearTimeout(timer);
      const [head, ...body] = out.split("\r\n\r\n");
      const status = Number(head.split(" ")[1]);
      const text = body.join("\r\n\r\n");
      // A chunked body: its one chunk's text is what the app wrote.
      const chunked = /transfer-encoding: chunked/i.test(head);
      resolve({ status, body: chunked ? text.split("\r\n")[1] ?? "" : text });
    });
    socket.write("GET / HTTP/1.1\r\nHost: app\r\nConnection: close\r\n\r\n");
  });
}

describe("client addresses behind a proxy, on a Unix socket and on TCP", () => {
  for (const kind of kinds) {
    for (const unix of [true, false]) {
      const over = unix ? "a Unix socket" : "TCP";
      it(`${kind.name}, over ${over}: each client its own key, through the proxy`, async () => {
        const trust = unix ? { trustUnixSocket: true } : { trustProxy: ["127.0.0.1"] };
        const app = await kind.serve(unix, trust);
        const front = await proxy(app.where);
        try {
          const via = { port: front.port };
          assert.deepEqual(await ask(via, "127.0.0.2"), { status: 200, body: "127.0.0.2" });
          assert.deepEqual(await ask(via, "127.0.0.3"), { status: 200, body: "127.0.0.3" });
          // One client's burst is spent; the other's is not.
          assert.equal((await ask(via, "127.0.0.2")).status, 429);
          assert.equal(app.key.unknownClients, 0);
        } finally {
          await front.close();
          await app.close();
        }
      });
    }
    it(`${kind.name}, over a Unix socket not trusted: denied and counted, never a 500`, async () => {
      const app = await kind.serve(true, {});
      const front = await proxy(app.where);
      try {
        assert.equal((await ask({ port: front.port }, "127.0.0.2")).status, 429);
        assert.equal((await ask({ port: front.port }, "127.0.0.3")).status, 429);
        // Trusted, but with nothing forwarded: still no address to key by.
        assert.equal((await ask(app.where)).status, 429);
        assert.equal(app.key.unknownClients, 3);
      } finally {
        await front.close();
        await app.close();
      }
    });
    it(`${kind.name}: a TCP peer gone before its key is found is no trusted Unix socket`, async () => {
      // node:http and Bun.serve no longer tell the address of a peer that
      // reset; what it forwarded must not become the key.
      let arrived!: () => void, found!: (key: unknown) => void;
      const arrival = new Promise<void>((resolve) => (arrived = resolve));
      const key = new Promise<unknown>((resolve) => (found = resolve));
      const app = await kind.serve(false, { trustUnixSocket: true }, { arrived, found });
      try {
        assert("port" in app.where);
        const socket = net.connect(app.where.port, "127.0.0.1");
        socket.on("error", () => {});
        socket.write("GET / HTTP/1.1\r\nHost: app\r\nX-Forwarded-For: 198.51.100.9\r\n\r\n");
        await within(arrival, "the request");
        socket.resetAndDestroy();
        assert.notEqual(await within(key, "the key"), "198.51.100.9");
      } finally {
        await app.close();
      }
    });
    it(`${kind.name}: what the operator chose for a request with no address`, async () => {
      const allowed = await kind.serve(true, { trustUnixSocket: true, unknownClient: "allow" });
      try {
        assert.deepEqual(await ask(allowed.where), { status: 200, body: "undefined" });
        assert.deepEqual(await ask(allowed.where), { status: 200, body: "undefined" });
        assert.equal(allowed.key.unknownClients, 2);
      } finally {
        await allowed.close();
      }
      const keyed = await kind.serve(true, { unknownClient: () => "local" });
      try {
        assert.deepEqual(await ask(keyed.where), { status: 200, body: "local" });
        assert.equal((await ask(keyed.where)).status, 429);
        assert.equal(keyed.key.unknownClients, 2);
      } finally {
        await keyed.close();
      }
    });
  }
});
