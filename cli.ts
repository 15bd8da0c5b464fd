/**
 * The rateguard sidecar: a guard with an HTTP API on loopback, for services
 * in any language. With `--bind` it joins the other sidecars of the fleet
 * over UDP gossip and shares one limit with them, signed with the fleet's
 * secret (or, said in so many words, `--gossip-auth off`); without, it
 * runs standalone.
 *
 * From JSR, with Deno (run it, or install it as a `rateguard` command):
 *
 * ```sh
 * deno run -A jsr:@rateguard/guard/cli --limit 1000/min
 * deno install -g -A -n rateguard jsr:@rateguard/guard/cli && rateguard --version
 * ```
 *
 * On Node.js and Bun, the npm package's `rateguard` command is this module,
 * compiled (the sidecar needs `hono`, and on Node `@hono/node-server`):
 *
 * ```sh
 * npm install @rateguard/guard hono @hono/node-server && npx rateguard --limit 1000/min
 * bun add @rateguard/guard hono && bunx --bun rateguard --limit 1000/min
 * ```
 *
 * From a checkout:
 *
 * ```sh
 * node_modules/.bin/deno run -A cli.ts --limit 1000/min
 * node_modules/.bin/bun cli.ts --limit 1000/min --bind 0.0.0.0:7946 --advertise 10.0.0.3:7946 --seeds 10.0.0.1:7946 \
 *   --gossip-secret-file /etc/rateguard/gossip-secret
 * node --import tsx cli.ts --config rateguard.json
 * ```
 *
 * Importing the module starts nothing: it runs as the main module only
 * (std's `@std/http/file-server` habit), and {@link main} runs it from
 * another. A bad flag, variable or config key prints one line naming it and
 * exits with status 2; `--version` prints `rateguard <version>`. Log lines
 * go to stderr, one per event, as text or JSON (`--log-format`). SIGTERM or
 * SIGINT stops accepting requests, lets those in flight finish (for
 * `--drain-timeout` at most), closes every connection, leaves the fleet,
 * and exits 0.
 *
 * @module
 */

import process from "node:process";
import { realpathSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Guard, type GuardBuilder } from "./src/runtime/guard.ts";
import { messageOf } from "./src/core/errors.ts";
import { parseSidecarArgs, type SidecarConfig, UsageError } from "./src/http/cli_args.ts";
import { lineLogger, type Logger } from "./src/http/log.ts";
import { JoinLog } from "./src/http/join_log.ts";
import { RulesWatch } from "./src/runtime/rules_watch.ts";
import { sidecarApp } from "./src/http/sidecar.ts";
import { type HttpServer, serveHttp } from "./src/http/serve.ts";
import { readSaltFile, readSecretFile, readTokenFile, watchFile } from "./src/http/secrets.ts";

/** How often the fleet rules' figures are read for the log. */
const RULES_WATCH_MS = 1_000;

/**
 * Runs the sidecar with `args` until a signal stops it, then exits the
 * process: 0 after a stop, `--help` or `--version`, 2 for a bad flag, 1
 * for anything else. The npm package's `rateguard` command calls it.
 *
 * @example Run the sidecar from a script of one's own
 * ```ts ignore
 * import { main } from "@rateguard/guard/cli";
 * await main(["--limit", "1000/min"]);
 * ```
 *
 * @param args The flags, without the runtime and script: the process's own by default.
 * @returns Once the sidecar listens, or the process has printed and is exiting.
 */
export async function main(args: readonly string[] = process.argv.slice(2)): Promise<void> {
  try {
    await serve(args);
  } catch (e) {
    fail(e);
  }
}

async function serve(args: readonly string[]): Promise<void> {
  const parsed = parseSidecarArgs(args, process.env);
  if (parsed.kind !== "run") {
    process.stdout.write(parsed.text);
    return;
  }
  const { config } = parsed;
  const log = lineLogger(config.logFormat, (line) => process.stderr.write(line));
  const tokens = { admin: undefined as string | undefined, ops: undefined as string | undefined };
  const token = (which: "admin" | "ops", path: string | undefined, flag: string) => {
    if (path === undefined) return;
    const other = which === "admin" ? "ops" : "admin";
    // Services hold the ops token: were it the admin token, they could change the rules.
    const read = (p: string) => {
      const t = readTokenFile(p);
      if (tokens[other] !== undefined && t === tokens[other]) {
        throw new RangeError(`${p} holds the ${other} token: the two must differ`);
      }
      return t;
    };
    tokens[which] = fromFile(flag, () => read(path));
    // A new token is taken as the file changes; a bad one keeps the old.
    watchFile(path, read, {
      changed: (t) => {
        tokens[which] = t;
        log.info(`${which} token reloaded`, { file: path });
      },
      failed: (e) =>
        log.warn(`${which} token file unreadable, keeping the token in use`, { error: e.message }),
    });
  };
  token("admin", config.adminTokenFile, "--admin-token-file");
  token("ops", config.opsTokenFile, "--ops-token-file");
  const guard = await spawnGuard(config);
  if (config.gossipSecretFile !== undefined) {
    const path = config.gossipSecretFile;
    // A rotation is an update of the file: taken as it comes, no restart.
    watchFile(path, readSecretFile, {
      changed: (secrets) => {
        guard.setGossipAuth(config.gossipAuth, secrets);
        log.info("gossip secrets reloaded", { file: path, secrets: secrets.length });
      },
      failed: (e) =>
        log.warn("gossip secret file unreadable, keeping the secrets in use", { error: e.message }),
    });
  }
  // Listen for signals before the port opens, so that a supervisor's
  // SIGTERM right after start-up is never the default (fatal) action.
  const running: { server?: HttpServer; stopping?: boolean } = {};
  const stop = async (signal: string) => {
    if (running.stopping) return;
    running.stopping = true;
    clearInterval(joinTimer);
    log.info("stopping", { signal });
    // The server waits --drain-timeout at most, then closes every connection.
    if (await running.server?.close() === false) {
      log.warn("requests still in flight, closed", { afterMs: config.http.drainTimeoutMs });
    }
    await guard.leave();
    log.info("stopped");
    process.exit(0);
  };
  // Refused fleet rules and a fall out of step are logged once, as they start.
  const rulesWatch = new RulesWatch(log);
  const watching = setInterval(() => {
    if (guard.isRunning()) rulesWatch.observe(guard.stats().rules);
  }, RULES_WATCH_MS);
  (watching as { unref?: () => void }).unref?.();
  // A guard held joining (a seed that never resolves) says so as it
  // starts and every minute while it lasts; the guard says what.
  const joinLog = new JoinLog();
  const joinTimer = setInterval(() => {
    const line = joinLog.observe(performance.now(), guard.joinBlocked());
    if (line) log[line.level](line.message);
  }, 1_000);
  process.on("SIGTERM", () => void stop("SIGTERM"));
  process.on("SIGINT", () => void stop("SIGINT"));

  const app = sidecarApp(guard, {
    defaultLimit: config.limit,
    ...(tokens.admin === undefined ? {} : { adminToken: () => tokens.admin }),
    ...(tokens.ops === undefined ? {} : { opsToken: () => tokens.ops }),
    opsOpen: config.opsOpen,
    log,
  });
  const server = running.server = await serveHttp(app.fetch, config.http);
  log.info("listening", {
    http: `http://${server.address}`,
    gossip: guard.address() ?? "standalone",
    limit: String(config.limit),
    classes: config.classes.map(([n, l]) => `${n}=${l}`).join(",") || undefined,
    seeds: config.seeds.join(",") || undefined,
    adminToken: tokens.admin !== undefined,
    ops: tokens.ops !== undefined
      ? "ops token"
      : tokens.admin === undefined || config.opsOpen
      ? "open"
      : "admin token",
  });
}

async function spawnGuard(config: SidecarConfig): Promise<Guard> {
  try {
    return await buildGuard(config).spawn();
  } catch (e) {
    // The flags were checked against the same bounds; what the builder
    // refuses still is a mistake in them, told in one line.
    if (e instanceof TypeError || e instanceof RangeError) throw new UsageError(e.message);
    throw e;
  }
}

function buildGuard(config: SidecarConfig): GuardBuilder {
  let builder = Guard.builder()
    .defaultLimit(config.limit)
    .dryRun(config.dryRun)
    .fleetRules(config.fleetRules)
    .hotKeys(config.hotKeys)
    .maxKeyBytes(config.maxKeyBytes)
    .trackedKeys(config.trackedKeys)
    .maxClasses(config.maxClasses)
    .maxKeyLimits(config.maxKeyLimits)
    .maxBlocks(config.maxBlocks)
    .partitionPolicy(config.partitionPolicy)
    .protocolPeriodMs(config.protocolPeriodMs)
    .maxMembers(config.maxMembers);
  // Unsaid, the burst follows the fleet's size (GuardOptions.sharedBurst).
  if (config.sharedBurst !== undefined) builder = builder.sharedBurst(config.sharedBurst);
  for (const [name, limit] of config.classes) builder = builder.class(name, limit);
  // Always said, so that a bound sidecar's mode is the one its flags chose
  // (parseSidecarArgs has refused a bound one that chose none).
  const file = config.gossipSecretFile;
  builder = builder.gossipAuth(
    config.gossipAuth,
    file === undefined ? [] : fromFile("--gossip-secret-file", () => readSecretFile(file)),
  );
  if (config.keySaltFile !== undefined) {
    const file = config.keySaltFile;
    builder = builder.keySalt(fromFile("--key-salt-file", () => readSaltFile(file)));
  }
  if (config.bind !== undefined) {
    builder = builder.bind(config.bind).seeds(config.seeds);
    if (config.advertise !== undefined) builder = builder.advertise(config.advertise);
  }
  return builder;
}

function fromFile<T>(flag: string, read: () => T): T {
  try {
    return read();
  } catch (e) {
    throw new UsageError(`${flag}: ${messageOf(e)}`);
  }
}

function fail(e: unknown): never {
  const message = messageOf(e);
  if (e instanceof UsageError) {
    // One line naming the flag, nothing else: the contract of a bad flag.
    process.stderr.write(`rateguard: ${message.split("\n")[0]}\n`);
    process.exit(2);
  }
  const log: Logger = lineLogger("text", (line) => process.stderr.write(line));
  log.warn(message.split("\n")[0]);
  process.exit(1);
}

/**
 * Whether this module is the one the runtime was started with. Node 20 has
 * no `import.meta.main`: there the script's path says it (through links, as
 * a checkout's may be).
 */
function isMainModule(): boolean {
  const main = (import.meta as { main?: boolean }).main;
  if (main !== undefined) return main;
  const script = process.argv[1];
  if (script === undefined || !import.meta.url.startsWith("file:")) return false;
  try {
    return realpathSync(script) === realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}

if (isMainModule()) void main();
