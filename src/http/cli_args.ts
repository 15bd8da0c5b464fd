/**
 * The sidecar's command line: flags parsed with `parseArgs` from
 * `node:util`, each also readable from an environment variable
 * `RATEGUARD_<FLAG>` (a flag given on the command line wins).
 *
 * @module
 */

import { parseArgs } from "node:util";
import { Limit } from "../core/limit.ts";

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
export const DEFAULT_HTTP = "127.0.0.1:7947";

const OPTIONS = {
  limit: { type: "string" },
  burst: { type: "string" },
  class: { type: "string", multiple: true },
  http: { type: "string" },
  "dry-run": { type: "boolean" },
  "tracked-keys": { type: "string" },
  help: { type: "boolean", short: "h" },
} as const;

/** The `--help` text. */
export const HELP = `rateguard: one rate limit per key, answered over HTTP on loopback.

Usage: cli.ts --limit 1000/min [options]

  --limit <limit>        the default class's limit: 1000, 1000/s, 1000/min, 5000/h (required)
  --burst <n>            requests admitted back to back (default: a twentieth of the count)
  --class <name=limit>   a class of limits, such as free=10/s; repeatable
  --http <host:port>     where the HTTP API listens (default ${DEFAULT_HTTP})
  --dry-run              admit every request, count what would be denied
  --tracked-keys <n>     keys with state at once (default 4096)
  -h, --help             this text

Every flag can also come from the environment as RATEGUARD_<FLAG>, such as
RATEGUARD_LIMIT=1000/min or RATEGUARD_DRY_RUN=true; RATEGUARD_CLASS takes a
comma-separated list. A flag on the command line wins.

API: POST /v1/check {"key": "tenant:42", "class": "pro", "cost": 1}, GET /v1/stats, GET /healthz
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
    throw new UsageError((e as Error).message.split("\n")[0]);
  }
  if (values.help) return { kind: "help", text: HELP };
  const get = (flag: keyof typeof OPTIONS): string | undefined => {
    const v = values[flag];
    if (typeof v === "string") return v;
    return env[`RATEGUARD_${flag.toUpperCase().replaceAll("-", "_")}`];
  };
  const limitText = get("limit");
  if (limitText === undefined) {
    throw new UsageError("--limit is required (or RATEGUARD_LIMIT), such as --limit 1000/min");
  }
  let limit = flagValue("--limit", () => Limit.parse(limitText));
  const burst = get("burst");
  if (burst !== undefined) limit = flagValue("--burst", () => limit.burst(wholeNumber(burst)));
  const classTexts = values.class ??
    env.RATEGUARD_CLASS?.split(",").filter((s) => s.trim() !== "") ?? [];
  const dryRun = values["dry-run"] ??
    flagValue("RATEGUARD_DRY_RUN", () => bool(env.RATEGUARD_DRY_RUN));
  const tracked = get("tracked-keys");
  return {
    kind: "run",
    config: {
      limit,
      classes: classTexts.map(parseClass),
      http: parseHostPort("--http", get("http") ?? DEFAULT_HTTP),
      dryRun,
      trackedKeys: tracked === undefined
        ? 4_096
        : flagValue("--tracked-keys", () => wholeNumber(tracked)),
    },
  };
}

/** Reads `host:port` or `[v6]:port`. */
export function parseHostPort(flag: string, text: string): { hostname: string; port: number } {
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([^:\s]+)):(\d{1,5})$/.exec(text.trim());
  const port = m ? Number(m[3]) : NaN;
  if (!m || port > 65_535) {
    throw new UsageError(
      `${flag}: expected host:port, such as ${DEFAULT_HTTP}, got ${JSON.stringify(text)}`,
    );
  }
  return { hostname: m[1] ?? m[2], port };
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

function flagValue<T>(flag: string, read: () => T): T {
  try {
    return read();
  } catch (e) {
    throw new UsageError(`${flag}: ${(e as Error).message}`);
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
