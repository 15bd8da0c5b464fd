import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Hono } from "hono";
import {
  addresslessPeer,
  clientIpResolver,
  clientKeyFunction,
  type ClientKeyOptions,
  UNKNOWN_ADDRESS,
  UNKNOWN_CLIENT,
} from "../../src/http/client_ip.ts";
import { clientIp } from "../../src/http/hono.ts";
import { serveHttp } from "../../src/http/serve.ts";
import { currentRuntime } from "../support/process.ts";

const headers = (h: Record<string, string>) => (name: string) => h[name];

describe("the client's address", () => {
  it("is the peer, whatever a client writes, unless proxies are trusted", () => {
    const resolve = clientIpResolver();
    assert.equal(resolve("203.0.113.7", headers({ "x-forwarded-for": "1.2.3.4" })), "203.0.113.7");
    assert.equal(resolve("::ffff:203.0.113.7", headers({})), "203.0.113.7", "IPv4-mapped is IPv4");
    // Behind a NAT64 translator every IPv4 client is in 64:ff9b::/96: each is its own IPv4 key,
    // not one /56 for all of them.
    assert.equal(resolve("64:ff9b::203.0.113.7", headers({})), "203.0.113.7", "NAT64 is IPv4");
    assert.equal(resolve("[64:ff9b::cb00:7108]:443", headers({})), "203.0.113.8");
    assert.equal(resolve("64:ff9b:1::cb00:7108", headers({})), "64:ff9b:1::/56", "not the /96");
    const behind = clientIpResolver({ trustProxy: ["203.0.113.0/24"] });
    const forwarded = headers({ "x-forwarded-for": "64:ff9b::198.51.100.9" });
    assert.equal(behind("64:ff9b::203.0.113.1", forwarded), "198.51.100.9");
    assert.equal(resolve(undefined, headers({})), UNKNOWN_ADDRESS);
    assert.equal(resolve("not an address", headers({})), UNKNOWN_ADDRESS);
  });

  it("takes a dotted IPv4 hop as its own text, and parses any other", () => {
    const direct = clientIpResolver(), one = clientIpResolver({ trustProxy: 1 });
    const listed = clientIpResolver({ trustProxy: ["10.0.0.0/8"] });
    const xff = (v: string) => headers({ "x-forwarded-for": v });
    assert.equal(direct("1.2.3.4", headers({})), "1.2.3.4");
    assert.equal(direct("01.2.3.4", headers({})), UNKNOWN_ADDRESS, "a leading zero: no address");
    assert.equal(direct(" 1.2.3.4", headers({})), "1.2.3.4", "parsed, as before");
    assert.equal(direct("1.2.3.4:80", headers({})), "1.2.3.4");
    assert.equal(one("10.0.0.2", xff("unknown, 203.0.113.7")), "203.0.113.7");
    assert.equal(one("10.0.0.2", xff("203.0.113.7:443")), "203.0.113.7");
    assert.equal(one("10.0.0.2", xff("256.1.1.1")), "10.0.0.2", "no address: the proxy stands in");
    assert.equal(listed("10.0.0.2", xff("203.0.113.7, 10.0.0.9")), "203.0.113.7");
    assert.equal(
      listed("10.0.0.2", xff("10.1.1.1, 10.0.0.9")),
      "10.1.1.1",
      "all trusted: the first",
    );
    assert.equal(listed("10.0.0.2", xff("::ffff:203.0.113.7, 10.0.0.9")), "203.0.113.7");
  });

  it("counts trusted hops from the right, so what a client prepends is never read", () => {
    const resolve = clientIpResolver({ trustProxy: 1 });
    // The proxy appends the client it saw; the client forged the rest.
    const forged = headers({ "x-forwarded-for": "6.6.6.6, 5.5.5.5, 198.51.100.4" });
    assert.equal(resolve("10.0.0.2", forged), "198.51.100.4");
    assert.equal(clientIpResolver({ trustProxy: 2 })("10.0.0.2", forged), "5.5.5.5");
    // A proxy that wrote no address: the proxy stands for the client, never the text.
    assert.equal(resolve("10.0.0.2", headers({ "x-forwarded-for": "unknown" })), "10.0.0.2");
  });

  it("walks past trusted addresses only", () => {
    const resolve = clientIpResolver({ trustProxy: ["10.0.0.0/8", "2001:db8:ffff::1"] });
    const chain = headers({ "x-forwarded-for": "6.6.6.6, 198.51.100.4, 10.1.2.3" });
    assert.equal(resolve("2001:db8:ffff::1", chain), "198.51.100.4");
    // A peer that is no trusted proxy: its headers are the client's own words.
    assert.equal(resolve("192.0.2.1", chain), "192.0.2.1");
    // All trusted: the farthest hop.
    assert.equal(resolve("10.0.0.1", headers({ "x-forwarded-for": "10.9.9.9" })), "10.9.9.9");
  });

  it("reads Forwarded when told to, and only then", () => {
    const resolve = clientIpResolver({ trustProxy: 1, header: "forwarded" });
    const h = headers({
      forwarded: 'for=6.6.6.6, for="[2001:db8:cafe::17]:4711";proto=https',
      "x-forwarded-for": "5.5.5.5",
    });
    assert.equal(resolve("10.0.0.2", h), "2001:db8:cafe::/56");
    assert.equal(resolve("10.0.0.2", headers({ forwarded: "for=192.0.2.60:8080" })), "192.0.2.60");
  });

  it("groups IPv6 by its /56, so rotating within an allocation is one key", () => {
    const resolve = clientIpResolver();
    const keys = new Set(
      [
        "2001:db8:1:100::1",
        "2001:db8:1:1ff:abcd::9",
        "2001:0db8:0001:01ab::",
        "[2001:db8:1:100::5]:443",
      ]
        .map((a) => resolve(a, headers({}))),
    );
    assert.deepEqual([...keys], ["2001:db8:1:100::/56"]);
    assert.equal(resolve("2001:db8:1:200::1", headers({})), "2001:db8:1:200::/56");
    assert.equal(
      clientIpResolver({ ipv6Prefix: 64 })("2001:db8:1:1ff:abcd::9", headers({})),
      "2001:db8:1:1ff::/64",
    );
    assert.equal(clientIpResolver({ ipv6Prefix: 128 })("fe80::1%eth0", headers({})), "fe80::1");
  });

  it("trusts a Unix socket, which has no address, only when told to", () => {
    const chain = headers({ "x-forwarded-for": "6.6.6.6, 198.51.100.4, 10.1.2.3" });
    // A Unix socket's peer is undefined; "" is a peer whose address is lost.
    assert.equal(clientIpResolver()(undefined, chain), UNKNOWN_ADDRESS);
    assert.equal(clientIpResolver({ trustProxy: 1 })(undefined, chain), UNKNOWN_ADDRESS);
    const unix = clientIpResolver({ trustUnixSocket: true });
    assert.equal(unix(undefined, chain), "10.1.2.3", "the hop the socket's proxy appended");
    assert.equal(unix("", chain), UNKNOWN_ADDRESS, "a lost address is no Unix socket");
    assert.equal(unix("192.0.2.1", chain), "192.0.2.1", "a TCP peer's headers are its own words");
    assert.equal(unix(undefined, headers({})), UNKNOWN_ADDRESS, "nothing forwarded");
    assert.equal(unix(undefined, headers({ "x-forwarded-for": "unknown" })), UNKNOWN_ADDRESS);
    // With a count, the socket is the nearest of the hops counted.
    const two = clientIpResolver({ trustUnixSocket: true, trustProxy: 2 });
    assert.equal(two(undefined, chain), "198.51.100.4");
    assert.equal(two("10.0.0.2", chain), "198.51.100.4", "TCP peers as before");
    // With a list, walked past from the hop the socket names.
    const listed = clientIpResolver({ trustUnixSocket: true, trustProxy: ["10.0.0.0/8"] });
    assert.equal(listed(undefined, chain), "198.51.100.4");
    const forwarded = clientIpResolver({ trustUnixSocket: true, header: "forwarded" });
    assert.equal(
      forwarded(undefined, headers({ forwarded: 'for="[2001:db8::1]:80"' })),
      "2001:db8::/56",
    );
  });

  it("gives a request with no address what the operator chose, and counts it", () => {
    const of = (options: ClientKeyOptions<[string | undefined]>) =>
      clientKeyFunction<[string | undefined]>(
        options,
        "test",
        (find) => (peer) => find(peer, headers({})),
      );
    const denied = of({});
    assert.equal(denied("192.0.2.1"), "192.0.2.1");
    assert.equal(denied.unknownClients, 0);
    assert.equal(denied(undefined), UNKNOWN_CLIENT, "denied by default");
    assert.equal(denied(""), UNKNOWN_CLIENT);
    assert.equal(denied.unknownClients, 2);
    const allowed = of({ unknownClient: "allow" });
    assert.equal(allowed(undefined), undefined, "passed unlimited");
    assert.equal(allowed.unknownClients, 1);
    const keyed = of({ unknownClient: (peer) => `anonymous:${peer ?? "unix"}` });
    assert.equal(keyed(undefined), "anonymous:unix");
    assert.equal(keyed.unknownClients, 1);
    assert.throws(() => of({ unknownClient: "share" as "deny" }), /unknownClient/);
  });

  it("tells a Unix socket from a connection whose address is gone", () => {
    // Deno.serve's info, Bun.serve's server, node:http sockets (bare, in
    // @hono/node-server's bindings, or in Hono's environment).
    assert.equal(addresslessPeer({ remoteAddr: { transport: "unix", path: "" } }), undefined);
    assert.equal(addresslessPeer({ remoteAddr: { transport: "tcp" } }), "");
    const bun = (url: string) => ({ requestIP: () => null, url: new URL(url) });
    assert.equal(addresslessPeer(bun("unix:///run/app.sock")), undefined);
    assert.equal(addresslessPeer(bun("http://127.0.0.1:8080/")), "", "a TCP peer that reset");
    assert.equal(addresslessPeer({ server: bun("unix:///run/app.sock") }), undefined);
    const socket = (address: unknown) => ({ server: { address: () => address } });
    assert.equal(addresslessPeer(socket("/run/app.sock")), undefined);
    assert.equal(addresslessPeer(socket({ address: "127.0.0.1", port: 80 })), "");
    assert.equal(addresslessPeer(socket(null)), "");
    assert.equal(addresslessPeer({ incoming: { socket: socket("/run/app.sock") } }), undefined);
    for (const nothing of [undefined, null, {}, "x", { server: {} }]) {
      assert.equal(addresslessPeer(nothing), "");
    }
  });

  it("refuses bad options by name", () => {
    assert.throws(
      () => clientIpResolver({ ipv6Prefix: 0 }),
      (e) => e instanceof RangeError && /ipv6Prefix/.test(e.message),
    );
    assert.throws(
      () => clientIpResolver({ trustProxy: -1 }),
      (e) => e instanceof RangeError && /trustProxy/.test(e.message),
    );
    assert.throws(() => clientIpResolver({ trustProxy: ["10.0.0.0/33"] }), /trustProxy/);
    assert.throws(() => clientIpResolver({ trustProxy: ["proxy.local"] }), /trustProxy/);
    assert.throws(() => clientIpResolver({ header: "x-real-ip" as "forwarded" }), /header/);
    assert.throws(
      () => clientIpResolver({ trustUnixSocket: "yes" as unknown as boolean }),
      (e) => e instanceof TypeError && /trustUnixSocket/.test(e.message),
    );
    assert.throws(() => clientIp({} as Parameters<typeof clientIp>[0]), /getConnInfo/);
  });

  /** What the app says of a request from 127.0.0.1 that names an IPv6 client. */
  function app(getConnInfo: Parameters<typeof clientIp>[0]["getConnInfo"]) {
    const app = new Hono();
    const direct = clientIp({ getConnInfo });
    const proxied = clientIp({ getConnInfo, trustProxy: ["127.0.0.1"] });
    app.get("/", (c) => c.text(`${direct(c)} ${proxied(c)}`));
    return app;
  }
  /**
   * @hono/node-server, once loaded in this process (serveHttp on node:http, above), puts
   * its own Response class over the global one; Deno.serve and Bun.serve take
   * only the runtime's own, which that class extends.
   */
  async function ownResponse(res: Response): Promise<Response> {
    const own = Object.getPrototypeOf(Response) as typeof Response;
    return own === (Function.prototype as unknown) ? res : new own(await res.text(), res);
  }
  const ask = async (url: string) =>
    await (await fetch(url, { headers: { "x-forwarded-for": "2001:db8:1:1ff::7" } })).text();

  it("works with @hono/node-server's getConnInfo, over a real socket (serveHttp)", async () => {
    const { getConnInfo } = await import("@hono/node-server/conninfo");
    const server = await serveHttp(app(getConnInfo).fetch, {
      hostname: "127.0.0.1",
      port: 0,
      server: "node",
    });
    try {
      assert.equal(await ask(`http://${server.address}/`), "127.0.0.1 2001:db8:1:100::/56");
    } finally {
      await server.close();
    }
  });

  // On Node an app's own server is @hono/node-server's serve(), as Hono's
  // docs write it (the test above serves through the sidecar's serveHttp).
  it(`works with the getConnInfo of ${currentRuntime}'s own server`, async () => {
    const native = globalThis as unknown as {
      Deno?: {
        serve(
          o: { hostname: string; port: number; onListen?: () => void },
          h: (r: Request, info: unknown) => Response | Promise<Response>,
        ): { addr: { port: number }; shutdown(): Promise<void> };
      };
      Bun?: {
        serve(o: {
          hostname: string;
          port: number;
          fetch: (r: Request, server: unknown) => Response | Promise<Response>;
        }): { port: number; stop(force?: boolean): void | Promise<void> };
      };
    };
    if (native.Deno) {
      const { getConnInfo } = await import("hono/deno");
      const hono = app(getConnInfo);
      const server = native.Deno.serve(
        { hostname: "127.0.0.1", port: 0, onListen: () => {} },
        async (r, info) => ownResponse(await hono.fetch(r, info)),
      );
      try {
        assert.equal(
          await ask(`http://127.0.0.1:${server.addr.port}/`),
          "127.0.0.1 2001:db8:1:100::/56",
        );
      } finally {
        await server.shutdown();
      }
    } else if (native.Bun) {
      const { getConnInfo } = await import("hono/bun");
      const hono = app(getConnInfo);
      const server = native.Bun.serve({
        hostname: "127.0.0.1",
        port: 0,
        fetch: async (r, s) => ownResponse(await hono.fetch(r, s)),
      });
      try {
        assert.equal(
          await ask(`http://127.0.0.1:${server.port}/`),
          "127.0.0.1 2001:db8:1:100::/56",
        );
      } finally {
        await server.stop(true);
      }
    } else {
      const { serve } = await import("@hono/node-server");
      const { getConnInfo } = await import("@hono/node-server/conninfo");
      const server = serve({ fetch: app(getConnInfo).fetch, hostname: "127.0.0.1", port: 0 });
      try {
        await new Promise((resolve) => server.once("listening", resolve));
        const { port } = server.address() as { port: number };
        assert.equal(await ask(`http://127.0.0.1:${port}/`), "127.0.0.1 2001:db8:1:100::/56");
      } finally {
        await new Promise((resolve) => server.close(resolve));
      }
    }
  });
});
