/**
 * A Hono app limited per tenant with rateguard, served on Deno, Bun or Node:
 *
 * ```sh
 * deno run -A examples/hono_app.ts     # or: bun examples/hono_app.ts, npx tsx examples/hono_app.ts
 * curl -i -H 'x-tenant: 42' http://127.0.0.1:8000/
 * ```
 *
 * Set `PORT` to listen elsewhere (0 picks a free port), and `BIND` plus
 * `SEEDS` to share the limit with other instances over gossip, signed with
 * the secrets of `GOSSIP_SECRET_FILE` (one base64 secret per line, as the
 * sidecar's `--gossip-secret-file`):
 *
 * ```sh
 * openssl rand -base64 32 > gossip-secret   # the same file on every instance
 * BIND=127.0.0.1:7946 GOSSIP_SECRET_FILE=gossip-secret deno run -A examples/hono_app.ts
 * ```
 *
 * On a network trusted as it is, `GOSSIP_AUTH=off` instead; with neither,
 * `spawn()` refuses to gossip.
 *
 * @module
 */

import process from "node:process";
import { Hono } from "hono";
import { GossipAuth, Guard, Limit } from "../mod.ts";
import { rateLimit } from "../src/http/hono.ts";
import { readSecretFile } from "../src/http/secrets.ts";
import { serveHttp } from "../src/http/serve.ts";

// Per tenant, across every instance: the default class and the pro plan.
const limits: Record<string, Limit> = {
  "": Limit.perMinute(60).burst(5),
  pro: Limit.perSecond(100),
};
let builder = Guard.builder().defaultLimit(limits[""]).class("pro", limits.pro);
if (process.env.BIND) {
  builder = builder.bind(process.env.BIND).seeds(process.env.SEEDS?.split(",") ?? []);
  if (process.env.GOSSIP_SECRET_FILE) {
    builder = builder.gossipAuth(
      GossipAuth.Required,
      readSecretFile(process.env.GOSSIP_SECRET_FILE),
    );
  } else if (process.env.GOSSIP_AUTH === "off") {
    builder = builder.gossipAuth(GossipAuth.Off);
  }
}
const guard = await builder.spawn();

const app = new Hono();
app.use(
  "/*",
  rateLimit({
    guard,
    // A tenant on the pro plan is checked in its class; a request with no
    // tenant is limited as one "anonymous" tenant.
    key: (c) => {
      const tenant = c.req.header("x-tenant") ?? "anonymous";
      return c.req.header("x-plan") === "pro" ? { key: tenant, class: "pro" } : tenant;
    },
    // The limit each class's RateLimit-Policy field tells.
    limit: (_key, { class: cls }) => limits[cls],
    headers: "both",
  }),
);
app.get("/", (c) => c.json({ served: true }));

const server = await serveHttp(app.fetch, {
  hostname: "127.0.0.1",
  port: Number(process.env.PORT ?? 8000),
});
console.log(`listening on http://${server.address}`);

const stop = async () => {
  await server.close();
  await guard.leave();
  process.exit(0);
};
process.on("SIGTERM", () => void stop());
process.on("SIGINT", () => void stop());
