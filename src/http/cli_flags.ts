/**
 * The sidecar's flags: their names, the options of the guard they set, the
 * environment variables they may come from, and the `--help` text.
 *
 * @module
 */

import {
  DEFAULT_PARTITION_POLICY,
  GUARD_BOUNDS as B,
  HTTP_BOUNDS as H,
  type NumericOption,
} from "../core/options.ts";
import { VERSION } from "../version.ts";

/** The default HTTP address: loopback only. */
export const DEFAULT_HTTP = "127.0.0.1:7947";

/** Every flag, as `parseArgs` reads them. */
export const OPTIONS = {
  limit: { type: "string" },
  burst: { type: "string" },
  class: { type: "string", multiple: true },
  http: { type: "string" },
  bind: { type: "string" },
  advertise: { type: "string" },
  seeds: { type: "string" },
  "partition-policy": { type: "string" },
  "protocol-period": { type: "string" },
  "hot-keys": { type: "string" },
  "tracked-keys": { type: "string" },
  "max-key-bytes": { type: "string" },
  "max-members": { type: "string" },
  "max-classes": { type: "string" },
  "max-key-limits": { type: "string" },
  "max-blocks": { type: "string" },
  "dry-run": { type: "boolean" },
  "fleet-rules": { type: "boolean" },
  "shared-burst": { type: "boolean" },
  "http-server": { type: "string" },
  "header-timeout": { type: "string" },
  "request-timeout": { type: "string" },
  "idle-timeout": { type: "string" },
  "max-connections": { type: "string" },
  "max-connections-per-client": { type: "string" },
  "drain-timeout": { type: "string" },
  "admin-token-file": { type: "string" },
  "ops-token-file": { type: "string" },
  "ops-open": { type: "boolean" },
  "log-format": { type: "string" },
  "gossip-auth": { type: "string" },
  "gossip-secret-file": { type: "string" },
  "key-salt-file": { type: "string" },
  config: { type: "string" },
  help: { type: "boolean", short: "h" },
  version: { type: "boolean" },
} as const;

/** A flag's name, without its dashes. */
export type Flag = keyof typeof OPTIONS;

/**
 * The flags that answer and exit, whatever else is given: no switch, no
 * environment variable, no `--config` key, and harmless given twice.
 */
export const ANSWERS = ["help", "version"] as const satisfies readonly Flag[];

/** A flag of {@link ANSWERS}. */
export type Answer = (typeof ANSWERS)[number];

/** Whether `flag` is one of {@link ANSWERS}. */
export function isAnswer(flag: string): flag is Answer {
  return (ANSWERS as readonly string[]).includes(flag);
}

/** The flags that set a numeric option of the guard, checked against its bounds. */
export const NUMERIC = {
  "tracked-keys": "trackedKeys",
  "hot-keys": "hotKeys",
  "max-key-bytes": "maxKeyBytes",
  "max-members": "maxMembers",
  "max-classes": "maxClasses",
  "max-key-limits": "maxKeyLimits",
  "max-blocks": "maxBlocks",
} as const satisfies Partial<Record<Flag, NumericOption>>;

/** A switch: a flag that takes no value and that `--no-<switch>` turns off. */
export type Switch = Exclude<
  { [F in Flag]: (typeof OPTIONS)[F]["type"] extends "boolean" ? F : never }[Flag],
  Answer
>;

/** The switches, in the order of {@link OPTIONS}. */
export const SWITCHES: readonly Switch[] = (Object.keys(OPTIONS) as Flag[]).filter(
  (f): f is Switch => OPTIONS[f].type === "boolean" && !isAnswer(f),
);

/**
 * What `parseArgs` reads: every flag, and each switch's `--no-` form, so
 * that a switch the file or the environment turns on a flag turns off.
 */
export const ARGV_OPTIONS = {
  ...OPTIONS,
  ...Object.fromEntries(SWITCHES.map((s) => [`no-${s}`, { type: "boolean" }])),
} as typeof OPTIONS & { readonly [S in Switch as `no-${S}`]: { readonly type: "boolean" } };

/** Every environment variable the sidecar reads: one per flag but `--help` and `--version`. */
export const ENV_NAMES: readonly string[] = (Object.keys(OPTIONS) as Flag[])
  .filter((f) => !isAnswer(f)).map(envName);

/**
 * Variables named like the sidecar's that the sidecar does not read: the
 * project's test tooling sets them in CI (`.ci/run`, `scripts/postgres-*.sh`,
 * `scripts/go-test.sh`) and the clients read `RATEGUARD_URL`. Sidecars the
 * tests start inherit that environment, so these are let through; any
 * other unknown `RATEGUARD_` name is refused, a typo most likely.
 */
export const RESERVED_ENV: readonly string[] = [
  "RATEGUARD_PG_URL",
  "RATEGUARD_PG_INSTALL",
  "RATEGUARD_PG_REQUIRED",
  "RATEGUARD_PG_DIR",
  "RATEGUARD_BROWSER_REQUIRED",
  "RATEGUARD_RUNTIME",
  "RATEGUARD_URL",
];

/** `10000` ms as `10s`. */
function seconds(ms: number): string {
  return `${ms / 1_000}s`;
}

/** `lead`, then names, comma-separated, in lines of at most 80 characters. */
function wrap(lead: string, names: readonly string[]): string {
  const lines = [lead.trimEnd()];
  names.forEach((name, i) => {
    const word = `${name}${i === names.length - 1 ? "." : ","}`;
    const last = lines.length - 1;
    if (lines[last].length + 1 + word.length > 80) lines.push(`  ${word}`);
    else lines[last] += ` ${word}`;
  });
  return lines.join("\n");
}

/** The `--help` text. */
export const HELP =
  `rateguard: one rate limit per key across a fleet, answered over HTTP on loopback.

Usage: rateguard --limit 1000/min [options]
       (from a checkout: deno run -A cli.ts, bun cli.ts or node --import tsx cli.ts)

Limits
  --limit <limit>              the default class's limit: 1000, 1000/s, 1000/min, 5000/h, 10000/d, 100/15min (required)
  --burst <n>                  requests admitted back to back (default: a twentieth of the count)
  --class <name=limit>         a class of limits, such as free=10/s or free=10/s,burst=20; repeatable
  --dry-run                    admit every request, count what would be denied
  --tracked-keys <n>           keys with state at once, --hot-keys to ${B.trackedKeys.max} (default ${B.trackedKeys.default})
  --hot-keys <n>               keys coordinated with the peers at once, ${B.hotKeys.min} to ${B.hotKeys.max} (default ${B.hotKeys.default})
  --max-key-bytes <n>          the longest key or class, in UTF-8 bytes, ${B.maxKeyBytes.min} to ${B.maxKeyBytes.max} (default ${B.maxKeyBytes.default})
  --max-classes <n>            named classes kept at most, ${B.maxClasses.min} to ${B.maxClasses.max} (default ${B.maxClasses.default})
  --max-key-limits <n>         key limits kept at most, ${B.maxKeyLimits.min} to ${B.maxKeyLimits.max} (default ${B.maxKeyLimits.default})
  --max-blocks <n>             keys blocked at once, apart from --tracked-keys' table; a full set
                               ends the block nearest its end, ${B.maxBlocks.min} to ${B.maxBlocks.max} (default ${B.maxBlocks.default})

Fleet (leave out --bind to run standalone)
  --bind <ip:port>             the UDP address to gossip on, such as 0.0.0.0:7946
  --advertise <ip:port>        where the other sidecars reach this one (the pod IP)
  --seeds <a:7946,b:7946>      peers to join through, ip:port or host:port
  --partition-policy <p>       optimistic, ${DEFAULT_PARTITION_POLICY} (default) or quorum
  --protocol-period <d>        how often members gossip, ${B.protocolPeriodMs.min}ms to ${B.protocolPeriodMs.max}ms (default ${B.protocolPeriodMs.default}ms)
  --max-members <n>            members tracked at most, ${B.maxMembers.min} to ${B.maxMembers.max} (default ${B.maxMembers.default})
  --fleet-rules                classes, key limits, shadows and dry run set through the admin
                               routes apply on every sidecar with this flag (default off)
  --shared-burst               each sidecar's burst follows its share of the limit, so the
                               fleet admits the limit plus one burst, not one per sidecar (default:
                               shared once the sidecars' bursts would add up to more than half the
                               limit's second; with --no-shared-burst, a burst on each sidecar)
  --gossip-auth <mode>         off, transitional or required: signed gossip (default: required
                               with a secret file, off standalone); with --bind, give a secret
                               file or say --gossip-auth off (a trusted network), or it exits 2
  --gossip-secret-file <path>  one base64 secret per line, at most two; re-read when it changes
  --key-salt-file <path>       the key salt, 16 raw bytes or more, the same on every sidecar

HTTP
  --http <host:port>           where the HTTP API listens (default ${DEFAULT_HTTP})
  --http-server <s>            native (Deno.serve, Bun.serve: faster, fewer bounds on slow
                               clients), node (node:http, every bound below; Node's only
                               server) or auto (default): native on a loopback address
  --header-timeout <d>         a client's time to send its headers, then 408 (default ${
    seconds(H.headersTimeoutMs.default)
  })
  --request-timeout <d>        a client's time to send its whole request (default ${
    seconds(H.requestTimeoutMs.default)
  })
  --idle-timeout <d>           a kept-alive connection's time between requests (default ${
    seconds(H.idleTimeoutMs.default)
  })
  --max-connections <n>        connections open at once, ${H.maxConnections.min} to ${H.maxConnections.max} (default ${H.maxConnections.default}); when
                               full, a new one takes the place of the longest waiting with no
                               request in flight
  --max-connections-per-client <n>
                               connections open at once from one address, held the same way,
                               ${H.maxConnectionsPerClient.min} to ${H.maxConnectionsPerClient.max} (default ${H.maxConnectionsPerClient.default})
  --drain-timeout <d>          on SIGTERM, the wait for requests in flight before their
                               connections are closed (default ${seconds(H.drainTimeoutMs.default)})
  --admin-token-file <path>    the admin routes need "Authorization: Bearer <the file's token>";
                               so do refund, reset and block, unless one of the next two says
  --ops-token-file <path>      refund, reset and block need this file's token (the services')
                               or the admin token; needs --admin-token-file
  --ops-open                   with only --admin-token-file, refund, reset and block need no token
                               A block made with the admin token is the operator's: only a reset
                               with the admin token lifts it. Token files are re-read as they change.
  --log-format <text|json>     one line per event on stderr (default text)
  --config <file.json>         a JSON object of flags by name, such as {"limit": "1000/min", "hot-keys": 32}
  -h, --help                   this text
  --version                    the release this is: rateguard ${VERSION}

Each switch has a --no- form, which turns it off whatever the environment or the
${wrap("file says: ", SWITCHES.map((s) => `--no-${s}`))}
A flag given twice is refused: only --class is repeatable.

Every flag can also come from the environment as RATEGUARD_<FLAG>, such as
RATEGUARD_LIMIT=1000/min or RATEGUARD_DRY_RUN=true; RATEGUARD_CLASS takes
classes separated by ";" (free=10/s,burst=20;pro=100/s), RATEGUARD_SEEDS a
comma-separated list, and an empty variable is unset. A flag wins over the
environment, which wins over the --config file.
${wrap("The variables: ", ENV_NAMES)}
Any other RATEGUARD_ variable is refused, save those the project's test tooling
${wrap("and clients set: ", RESERVED_ENV)}

API: POST /v1/check {"key": "tenant:42", "class": "pro", "cost": 1}, POST /v1/check-all,
GET /v1/peek?class=&key=, GET /healthz, GET /readyz (no token);
ops (a token when the operator sets one, as above): POST /v1/refund, POST /v1/reset,
POST /v1/block {"key": "ip:203.0.113.7", "ms": 60000};
admin (the admin token): GET /v1/stats, GET /v1/keys?class=&key=,
GET /metrics (Prometheus), GET/PUT/DELETE /v1/classes, /v1/key-limits, /v1/shadows, /v1/dry-run;
GET /dashboard, a live page of the fleet (its data: the admin route GET /v1/dashboard).
`;

/** `RATEGUARD_<FLAG>`: `--dry-run` is `RATEGUARD_DRY_RUN`. */
export function envName(flag: string): string {
  return `RATEGUARD_${flag.toUpperCase().replaceAll("-", "_")}`;
}
