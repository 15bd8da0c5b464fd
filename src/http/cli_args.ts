/**
 * The sidecar's command line: flags parsed with `parseArgs` from
 * `node:util`, each also readable from an environment variable
 * `RATEGUARD_<FLAG>` and from a JSON file (`--config`) whose keys are the
 * flags' names. A flag wins over the environment, which wins over the
 * file; an empty variable counts as unset, and `--no-<switch>` turns off
 * a switch the others turn on. Every value is checked here, against the
 * bounds of `GUARD_BOUNDS`, so that a mistake is one line naming where it
 * came from, before anything starts; a typo too (an unknown variable, a
 * flag given twice, an unknown field of a class) is a mistake, never a
 * setting silently left out. The flags are listed in `cli_flags.ts`; where
 * a value comes from and how it is read is `cli_sources.ts`'s; the HTTP
 * server's flags are read in `cli_http.ts`, the others here.
 *
 * @module
 */

import { readFileSync } from "node:fs";
import { Limit } from "../core/limit.ts";
import { PartitionPolicy } from "../core/partition.ts";
import {
  checkOption,
  DEFAULT_PARTITION_POLICY,
  GUARD_BOUNDS as B,
  type NumericOption,
} from "../core/options.ts";
import {
  checkAddress,
  checkAdvertise,
  isUnspecified,
  type ResolvedGuardOptions,
} from "../core/option_checks.ts";
import { type GossipAuthMode, parseGossipAuth } from "../core/auth.ts";
import type { ListenOptions } from "./http_server.ts";
import { VERSION } from "../version.ts";
import { envName, type Flag, HELP, NUMERIC, type Switch } from "./cli_flags.ts";
import { httpFlags } from "./cli_http.ts";
import {
  bool,
  checkEnv,
  classTexts,
  durationMs,
  type Env,
  fromConfig,
  type Given,
  type Lookup,
  parseClasses,
  parseHostPort,
  readArgv,
  readConfig,
  set,
  UsageError,
  valueOf,
  wholeNumber,
} from "./cli_sources.ts";

export { HELP, UsageError };

/** How the sidecar writes its log lines on stderr. */
export type LogFormat = "text" | "json";

/**
 * The guard's options the command line sets, as the builder resolves them:
 * their meaning and documentation are {@link ResolvedGuardOptions}'s.
 */
type GuardFlags = Pick<
  ResolvedGuardOptions,
  | "limit"
  | "dryRun"
  | "fleetRules"
  | "sharedBurst"
  | NumericField
  | "seeds"
  | "partitionPolicy"
  | "protocolPeriodMs"
>;

/** The options the numeric flags set, read off {@link NUMERIC}: listed once, there. */
type NumericField = (typeof NUMERIC)[keyof typeof NUMERIC];

/** What the command line asked for. */
export interface SidecarConfig extends GuardFlags {
  /** Named classes. */
  readonly classes: ReadonlyArray<readonly [string, Limit]>;
  /** Where the HTTP API listens, and its bounds on slow and idle clients. */
  readonly http: Required<ListenOptions>;
  /** The UDP address to gossip on, as given; none for a standalone sidecar. */
  readonly bind?: string;
  /** Where the other sidecars reach this one, as given. */
  readonly advertise?: string;
  /** A file holding the bearer token the admin routes require, if any. */
  readonly adminTokenFile?: string;
  /** A file holding the bearer token refund, reset and block require (or the admin token). */
  readonly opsTokenFile?: string;
  /** With only the admin token, whether refund, reset and block take calls with no token. */
  readonly opsOpen: boolean;
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
  | { readonly kind: "help" | "version"; readonly text: string };

/**
 * Reads `argv` (without the runtime and script), `env` and the `--config`
 * file, if any, into a config.
 *
 * @param argv The arguments.
 * @param env The environment.
 * @param readFile Reads the `--config` file as text; the file system by default.
 * @returns What to run, or the help or version text to print.
 * @throws {UsageError} naming the flag, variable or key at fault.
 */
export function parseSidecarArgs(
  argv: readonly string[],
  env: Env,
  readFile: (path: string) => string = (path) => readFileSync(path, "utf8"),
): ParsedArgs {
  const values = readArgv(argv);
  if (values.help) return { kind: "help", text: HELP };
  if (values.version) return { kind: "version", text: `rateguard ${VERSION}\n` };
  checkEnv(env);
  const configPath = typeof values.config === "string" ? values.config : set(env.RATEGUARD_CONFIG);
  const file = configPath === undefined
    ? new Map()
    : readConfig(configPath, fromConfig(configPath, readFile));
  const get: Lookup = (flag) => {
    const v = values[flag];
    if (typeof v === "string") return { text: v, from: `--${flag}` };
    const e = set(env[envName(flag)]);
    if (e !== undefined) return { text: e, from: envName(flag) };
    const f = file.get(flag);
    return f === undefined ? undefined : { text: String(f), from: `${configPath}: ${flag}` };
  };
  const limitGiven = get("limit");
  if (limitGiven === undefined) {
    throw new UsageError("--limit is required (or RATEGUARD_LIMIT), such as --limit 1000/min");
  }
  let limit = valueOf(limitGiven, (text) => Limit.parse(text));
  const burst = get("burst");
  if (burst !== undefined) limit = valueOf(burst, (text) => limit.burst(wholeNumber(text)));
  const numbers = numericFlags(get);
  const classes = parseClasses(classTexts(values.class, env, file.get("class"), configPath));
  if (classes.length > numbers.maxClasses) {
    throw new UsageError(
      `--class: ${classes.length} ${
        classes.length === 1 ? "class" : "classes"
      }, more than --max-classes (${numbers.maxClasses})`,
    );
  }
  // A switch given on the command line, on or off, is that; else the environment or the file says.
  const said = (flag: Switch): boolean | undefined => {
    if (values[flag] === true) return true;
    if (values[`no-${flag}`] === true) return false;
    const given = get(flag);
    return given === undefined ? undefined : valueOf(given, bool);
  };
  const on = (flag: Switch) => said(flag) ?? false;
  const fleetRules = on("fleet-rules");
  if (fleetRules && get("bind") === undefined) {
    throw new UsageError("--fleet-rules shares rules by gossip: it needs --bind");
  }
  return {
    kind: "run",
    config: {
      limit,
      classes,
      http: httpFlags(get),
      dryRun: on("dry-run"),
      fleetRules,
      // Unsaid, the burst follows the fleet's size (GuardOptions.sharedBurst).
      sharedBurst: said("shared-burst"),
      ...numbers,
      ...fleetFlags(get),
      ...tokenFlags(get, on("ops-open")),
      logFormat: logFormat(get("log-format")),
      ...authFlags(get),
    },
  };
}

type TokenFlags = Pick<SidecarConfig, "adminTokenFile" | "opsTokenFile" | "opsOpen">;

/**
 * The tokens' files, and whether the operations are open. What would leave
 * a door open by mistake is refused: an ops token with the admin routes
 * open (whoever lacks it changes the rules instead), or with `--ops-open`
 * (which of the two was meant?).
 */
function tokenFlags(get: Lookup, opsOpen: boolean): TokenFlags {
  const adminTokenFile = get("admin-token-file")?.text;
  const opsTokenFile = get("ops-token-file");
  if (opsTokenFile !== undefined && adminTokenFile === undefined) {
    throw new UsageError(
      `${opsTokenFile.from} guards refund, reset and block while the admin routes stay open: ` +
        "set --admin-token-file too",
    );
  }
  if (opsTokenFile !== undefined && opsOpen) {
    throw new UsageError(
      `${opsTokenFile.from} and --ops-open: the ops routes need the token, or are open, not both`,
    );
  }
  return {
    ...(adminTokenFile === undefined ? {} : { adminTokenFile }),
    ...(opsTokenFile === undefined ? {} : { opsTokenFile: opsTokenFile.text }),
    opsOpen,
  };
}

type NumericFlags = Pick<SidecarConfig, NumericField>;

/** Each numeric flag within its option's bounds, and the tracked keys no fewer than the hot. */
function numericFlags(get: Lookup): NumericFlags {
  const out = {} as Record<NumericOption, number>;
  for (const [flag, option] of Object.entries(NUMERIC) as [Flag, NumericOption][]) {
    const given = get(flag);
    out[option] = given === undefined
      ? B[option].default
      : valueOf(given, (text) => checkOption(option, wholeNumber(text, B[option])));
  }
  if (out.trackedKeys < out.hotKeys) {
    throw new UsageError(
      `--tracked-keys (${out.trackedKeys}) must be at least --hot-keys (${out.hotKeys})`,
    );
  }
  return out as NumericFlags;
}

type AuthFlags = Pick<SidecarConfig, "gossipAuth" | "gossipSecretFile" | "keySaltFile">;

/**
 * Signing needs a secret to sign with. A sidecar that binds gossip, the
 * first of a fleet too, signs unless told otherwise: a secret file alone
 * means `required`, and unsigned gossip takes `--gossip-auth off` said.
 */
function authFlags(get: Lookup): AuthFlags {
  const mode = get("gossip-auth");
  const gossipSecretFile = get("gossip-secret-file")?.text;
  const keySaltFile = get("key-salt-file")?.text;
  const bind = get("bind");
  if (bind !== undefined && mode === undefined && gossipSecretFile === undefined) {
    throw new UsageError(
      `${bind.from}: gossip is signed unless you say otherwise: give --gossip-secret-file <path> ` +
        "to sign it, or --gossip-auth off to say the network is trusted",
    );
  }
  const gossipAuth = mode !== undefined
    ? valueOf(mode, parseGossipAuth)
    : gossipSecretFile !== undefined
    ? "required"
    : "off";
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
function fleetFlags(get: Lookup): FleetFlags {
  const bind = get("bind");
  const advertise = get("advertise");
  if (advertise !== undefined) valueOf(advertise, checkAdvertise);
  if (bind !== undefined && isUnspecified(valueOf(bind, (t) => checkAddress(t, "bind")))) {
    if (advertise === undefined) {
      throw new UsageError(
        `${bind.from} ${bind.text} listens on every address: set --advertise <ip:port>, ` +
          "where the other sidecars reach this one",
      );
    }
  }
  const seedsGiven = get("seeds");
  const seeds = list(seedsGiven?.text);
  for (const seed of seeds) parseHostPort(seedsGiven!.from, seed);
  if (bind === undefined && (advertise !== undefined || seeds.length > 0)) {
    throw new UsageError("--advertise and --seeds need --bind, the UDP address to gossip on");
  }
  const policy = get("partition-policy");
  const period = get("protocol-period");
  return {
    ...(bind === undefined ? {} : { bind: bind.text }),
    ...(advertise === undefined ? {} : { advertise: advertise.text }),
    seeds,
    partitionPolicy: policy === undefined
      ? DEFAULT_PARTITION_POLICY
      : valueOf(policy, (t) => PartitionPolicy.parse(t)),
    protocolPeriodMs: period === undefined
      ? B.protocolPeriodMs.default
      : valueOf(period, (t) => durationMs(t, B.protocolPeriodMs)),
  };
}

function logFormat(given: Given | undefined): LogFormat {
  if (given === undefined || given.text === "text" || given.text === "json") {
    return (given?.text ?? "text") as LogFormat;
  }
  throw new UsageError(`${given.from}: expected text or json, got ${JSON.stringify(given.text)}`);
}

function list(text: string | undefined): string[] {
  return (text ?? "").split(",").map((s) => s.trim()).filter((s) => s !== "");
}
