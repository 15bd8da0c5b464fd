/**
 * The sidecar's command line: flags parsed with `parseArgs` from
 * `node:util`, each also readable from an environment variable
 * `RATEGUARD_<FLAG>` (a flag given on the command line wins).
 *
 * @module
 */

import { parseArgs } from "node:util";
import { Limit } from "../core/limit.ts";
import { PartitionPolicy } from "../core/partition.ts";
import { DEFAULT_PARTITION_POLICY, GUARD_BOUNDS as B } from "../core/options.ts";
import { type GossipAuthMode, parseGossipAuth } from "../core/auth.ts";
import { messageOf } from "../core/errors.ts";
import { parseDurationMs } from "../core/duration.ts";
import { splitHostPort } from "../proto/host_port.ts";
import { checkHotKeys } from "../core/allocation/report.ts";
import { checkMaxKeyBytes } from "../core/rules.ts";

/** How the sidecar writes its log lines on stderr. */
export type LogFormat = "text" | "json";

/** What the command line asked for. */
export interface SidecarConfig {
  /** The default class's limit, with its burst applied. */
  readonly limit: Limit;
  /** Named classes. */
  readonly classes: ReadonlyArray<readonly [string, Limit]>;
  /** Where the HTTP API listens. */
  readonly http: { readonly hostname: string; readonly port: number };
  /** Admit everything, counting would-be denials. */
  readonly dryRun: boolean;
  /** Keys with state at once. */
  readonly trackedKeys: number;
  /** Keys coordinated with the peers at once. */
  readonly hotKeys: number;
  /** The longest key or class name, in bytes of UTF-8. */
  readonly maxKeyBytes: number;
  /** The UDP address to gossip on; none for a standalone sidecar. */
  readonly bind?: string;
  /** Where the other sidecars reach this one. */
  readonly advertise?: string;
  /** Peers to join through. */
  readonly seeds: readonly string[];
  /** What to do when the cluster may be split. */
  readonly partitionPolicy: PartitionPolicy;
  /** How often members exchange membership and demand, ms. */
  readonly protocolPeriodMs: number;
  /** Members tracked at most. */
  readonly maxMembers: number;
  /** A file holding the bearer token the admin routes require, if any. */
  readonly adminTokenFile?: string;
  /** How log lines are written. */
  readonly logFormat: LogFormat;
  /** How gossip is signed. */
  readonly gossipAuth: GossipAuthMode;
  /** The file of gossip secrets, one base64 secret per line. */
  readonly gossipSecretFile?: string;
  /** The file of the key salt, raw bytes. */
  readonly keySaltFile?: string;
}

/** The outcome of reading the command line. */
export type ParsedArgs =
  | { readonly kind: "run"; readonly config: SidecarConfig }
  | { readonly kind: "help"; readonly text: string };

/** A bad flag or value; the CLI prints the message on one line and exits 2. */
export class UsageError extends Error {
  /** A usage error with a one-line message. */
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}

/** The default HTTP address: loopback only. */
const DEFAULT_HTTP = "127.0.0.1:7947";

const OPTIONS = {
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
  "dry-run": { type: "boolean" },
  "admin-token-file": { type: "string" },
  "log-format": { type: "string" },
  "gossip-auth": { type: "string" },
  "gossip-secret-file": { type: "string" },
  "key-salt-file": { type: "string" },
  help: { type: "boolean", short: "h" },
} as const;

type Flag = keyof typeof OPTIONS;

/** The `--help` text. */
export const HELP =
  `rateguard: one rate limit per key across a fleet, answered over HTTP on loopback.

Usage: cli.ts --limit 1000/min [options]

Limits
  --limit <limit>              the default class's limit: 1000, 1000/s, 1000/min, 5000/h (required)
  --burst <n>                  requests admitted back to back (default: a twentieth of the count)
  --class <name=limit>         a class of limits, such as free=10/s; repeatable
  --dry-run                    admit every request, count what would be denied
  --tracked-keys <n>           keys with state at once (default ${B.trackedKeys.default})
  --hot-keys <n>               keys coordinated with the peers at once, ${B.hotKeys.min} to ${B.hotKeys.max} (default ${B.hotKeys.default})
  --max-key-bytes <n>          the longest key or class, in UTF-8 bytes, ${B.maxKeyBytes.min} to ${B.maxKeyBytes.max} (default ${B.maxKeyBytes.default})

Fleet (leave out --bind to run standalone)
  --bind <ip:port>             the UDP address to gossip on, such as 0.0.0.0:7946
  --advertise <ip:port>        where the other sidecars reach this one (the pod IP)
  --seeds <a:7946,b:7946>      peers to join through, ip:port or host:port
  --partition-policy <p>       optimistic, ${DEFAULT_PARTITION_POLICY} (default) or quorum
  --protocol-period <d>        how often members gossip: ${B.protocolPeriodMs.default}ms (default), 1s
  --max-members <n>            members tracked at most (default ${B.maxMembers.default})
  --gossip-auth <mode>         off (default), transitional or required: signed gossip
  --gossip-secret-file <path>  one base64 secret per line, at most two; re-read when it changes
  --key-salt-file <path>       the key salt, 16 raw bytes or more, the same on every sidecar

HTTP
  --http <host:port>           where the HTTP API listens (default ${DEFAULT_HTTP})
  --admin-token-file <path>    admin routes then need "Authorization: Bearer <the file's token>"
  --log-format <text|json>     one line per event on stderr (default text)
  -h, --help                   this text

Every flag can also come from the environment as RATEGUARD_<FLAG>, such as
RATEGUARD_LIMIT=1000/min or RATEGUARD_DRY_RUN=true; RATEGUARD_CLASS takes a
comma-separated list. A flag on the command line wins.

API: POST /v1/check {"key": "tenant:42", "class": "pro", "cost": 1}, POST /v1/check-all,
GET /v1/peek?class=&key=, GET /healthz, GET /readyz; admin: GET /v1/stats, GET /v1/keys?class=&key=,
GET /metrics (Prometheus), GET/PUT/DELETE /v1/classes, /v1/key-limits, /v1/shadows, /v1/dry-run;
GET /dashboard, a live page of the fleet (its data: the admin route GET /v1/dashboard).
`;

/** Reads `argv` (without the runtime and script) and `env` into a config. */
export function parseSidecarArgs(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): ParsedArgs {
  let values;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      options: OPTIONS,
      strict: true,
      allowPositionals: false,
    }));
  } catch (e) {
    throw new UsageError(messageOf(e).split("\n")[0]);
  }
  if (values.help) return { kind: "help", text: HELP };
  const get = (flag: Flag): string | undefined => {
    const v = values[flag];
    if (typeof v === "string") return v;
    return env[envName(flag)];
  };
  const whole = (flag: Flag, fallback: number): number => {
    const text = get(flag);
    return text === undefined ? fallback : flagValue(`--${flag}`, () => wholeNumber(text));
  };
  // A whole number the option's own validator bounds; its message, which
  // names the option, is told under the flag's name instead.
  const bounded = (flag: Flag, fallback: number, check: (n: number) => number): number =>
    flagValue(`--${flag}`, () => {
      try {
        return check(whole(flag, fallback));
      } catch (e) {
        if (e instanceof UsageError) throw e;
        throw new RangeError((e as Error).message.replace(/^\w+: /, ""));
      }
    });
  const limitText = get("limit");
  if (limitText === undefined) {
    throw new UsageError("--limit is required (or RATEGUARD_LIMIT), such as --limit 1000/min");
  }
  let limit = flagValue("--limit", () => Limit.parse(limitText));
  const burst = get("burst");
  if (burst !== undefined) limit = flagValue("--burst", () => limit.burst(wholeNumber(burst)));
  const classTexts = values.class ?? list(env.RATEGUARD_CLASS);
  const dryRun = values["dry-run"] ??
    flagValue("RATEGUARD_DRY_RUN", () => bool(env.RATEGUARD_DRY_RUN));
  const adminTokenFile = get("admin-token-file");
  return {
    kind: "run",
    config: {
      limit,
      classes: classTexts.map(parseClass),
      http: parseHostPort("--http", get("http") ?? DEFAULT_HTTP),
      dryRun,
      trackedKeys: whole("tracked-keys", B.trackedKeys.default),
      hotKeys: bounded("hot-keys", B.hotKeys.default, checkHotKeys),
      maxKeyBytes: bounded("max-key-bytes", B.maxKeyBytes.default, checkMaxKeyBytes),
      maxMembers: whole("max-members", B.maxMembers.default),
      ...fleetFlags(get),
      ...(adminTokenFile === undefined ? {} : { adminTokenFile }),
      logFormat: logFormat(get("log-format") ?? "text"),
      ...authFlags(get),
    },
  };
}

type AuthFlags = Pick<SidecarConfig, "gossipAuth" | "gossipSecretFile" | "keySaltFile">;

/** Signing needs a secret to sign with; a secret without signing is a mistake too. */
function authFlags(get: (flag: Flag) => string | undefined): AuthFlags {
  const modeText = get("gossip-auth");
  const gossipAuth = modeText === undefined
    ? "off"
    : flagValue("--gossip-auth", () => parseGossipAuth(modeText));
  const gossipSecretFile = get("gossip-secret-file");
  const keySaltFile = get("key-salt-file");
  if (gossipAuth !== "off" && gossipSecretFile === undefined) {
    throw new UsageError(
      `--gossip-auth ${gossipAuth} needs --gossip-secret-file, the secret to sign with`,
    );
  }
  return {
    gossipAuth,
    ...(gossipSecretFile === undefined ? {} : { gossipSecretFile }),
    ...(keySaltFile === undefined ? {} : { keySaltFile }),
  };
}

type FleetFlags = Pick<
  SidecarConfig,
  "bind" | "advertise" | "seeds" | "partitionPolicy" | "protocolPeriodMs"
>;

/** The flags of gossip; without `--bind`, `--advertise` and `--seeds` make no sense. */
function fleetFlags(get: (flag: Flag) => string | undefined): FleetFlags {
  const bind = get("bind");
  const advertise = get("advertise");
  if (bind !== undefined) parseHostPort("--bind", bind);
  if (advertise !== undefined) parseHostPort("--advertise", advertise);
  const seeds = list(get("seeds"));
  for (const seed of seeds) parseHostPort("--seeds", seed);
  if (bind === undefined && (advertise !== undefined || seeds.length > 0)) {
    throw new UsageError("--advertise and --seeds need --bind, the UDP address to gossip on");
  }
  const policyText = get("partition-policy");
  const periodText = get("protocol-period");
  return {
    ...(bind === undefined ? {} : { bind }),
    ...(advertise === undefined ? {} : { advertise }),
    seeds,
    partitionPolicy: policyText === undefined
      ? DEFAULT_PARTITION_POLICY
      : flagValue("--partition-policy", () => PartitionPolicy.parse(policyText)),
    protocolPeriodMs: periodText === undefined
      ? B.protocolPeriodMs.default
      : flagValue("--protocol-period", () => durationMs(periodText)),
  };
}

/** `RATEGUARD_<FLAG>`: `--dry-run` is `RATEGUARD_DRY_RUN`. */
function envName(flag: string): string {
  return `RATEGUARD_${flag.toUpperCase().replaceAll("-", "_")}`;
}

/** Reads `host:port` or `[v6]:port`, with the one parser of `src/proto/host_port.ts`. */
function parseHostPort(flag: string, text: string): { hostname: string; port: number } {
  const split = splitHostPort(text.trim());
  if (split === undefined) {
    throw new UsageError(
      `${flag}: expected host:port, such as ${DEFAULT_HTTP}, got ${JSON.stringify(text)}`,
    );
  }
  return { hostname: split.host, port: split.port };
}

/** Reads a duration: `200ms`, `1s`, `2m`, or a bare number of milliseconds. */
function durationMs(text: string): number {
  const ms = parseDurationMs(text);
  if (ms === undefined) {
    throw new TypeError(`expected a duration such as 200ms or 1s, got ${JSON.stringify(text)}`);
  }
  return Math.round(ms);
}

function parseClass(text: string): readonly [string, Limit] {
  const eq = text.indexOf("=");
  const name = text.slice(0, eq).trim();
  if (eq < 1 || name === "") {
    throw new UsageError(
      `--class: expected name=limit, such as free=10/s, got ${JSON.stringify(text)}`,
    );
  }
  return [name, flagValue(`--class ${name}`, () => Limit.parse(text.slice(eq + 1)))];
}

function logFormat(text: string): LogFormat {
  if (text === "text" || text === "json") return text;
  throw new UsageError(`--log-format: expected text or json, got ${JSON.stringify(text)}`);
}

function list(text: string | undefined): string[] {
  return (text ?? "").split(",").map((s) => s.trim()).filter((s) => s !== "");
}

function flagValue<T>(flag: string, read: () => T): T {
  try {
    return read();
  } catch (e) {
    if (e instanceof UsageError) throw e;
    throw new UsageError(`${flag}: ${messageOf(e)}`);
  }
}

function wholeNumber(text: string): number {
  if (!/^\s*\d+\s*$/.test(text)) {
    throw new RangeError(`expected a whole number, got ${JSON.stringify(text)}`);
  }
  return Number(text);
}

function bool(text: string | undefined): boolean {
  if (text === undefined || text === "") return false;
  if (/^(1|true|yes|on)$/i.test(text)) return true;
  if (/^(0|false|no|off)$/i.test(text)) return false;
  throw new RangeError(`expected true or false, got ${JSON.stringify(text)}`);
}
