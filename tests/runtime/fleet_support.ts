// Test support: fleets of real processes on 127.0.0.1, each a
// tests/support/fleet_member.ts, with their per-second reports.
import { type RuntimeName, start, type Started } from "../support/process.ts";

export interface Report {
  atMs: number;
  /** The time this report's counts cover, ending at `atMs`. */
  spanMs: number;
  traffic: {
    datagramsSent: number;
    bytesSent: number;
    datagramsReceived: number;
    socketErrors: number;
    unsigned: number;
    badTag: number;
  };
  cpuMicros: number;
  admitted: number;
  denied: number;
  clusterSize: number;
  countedSize: number;
  share: number;
  running: boolean;
}

export interface Member {
  readonly process: Started;
  readonly address: string;
  reports(): Report[];
}

/** How a member process is started. */
export interface MemberOptions {
  seeds?: string;
  /** The address to bind, `127.0.0.1:0` (a free port) by default. */
  bind?: string;
  rate: number;
  limit: number;
  runtime?: RuntimeName;
  policy?: string;
  periodMs?: number;
  auth?: [mode: string, base64Secret?: string];
}

export async function startMember(options: MemberOptions): Promise<Member> {
  const p = start("tests/support/fleet_member.ts", memberArgs(options), {
    runtime: options.runtime,
  });
  return await ready(p);
}

/**
 * A member process loaded but not yet bound: `start()` binds and joins at
 * once, so that a restart takes milliseconds rather than a runtime's start.
 */
export async function standbyMember(
  options: MemberOptions,
): Promise<{ readonly process: Started; start(): Promise<Member> }> {
  const args = ["--standby", ...memberArgs(options)];
  const p = start("tests/support/fleet_member.ts", args, { runtime: options.runtime });
  try {
    await p.waitFor(/"standby":true/, 30_000);
  } catch (e) {
    p.kill();
    throw e;
  }
  return {
    process: p,
    start: () => {
      p.send("start");
      return ready(p);
    },
  };
}

function memberArgs(options: MemberOptions): string[] {
  const args = ["--limit", String(options.limit), "--rate", String(options.rate)];
  if (options.bind) args.push("--bind", options.bind);
  if (options.auth) {
    args.push("--auth", options.auth[0], ...(options.auth[1] ? ["--secret", options.auth[1]] : []));
  }
  if (options.periodMs) args.push("--period", String(options.periodMs));
  if (options.seeds) args.push("--seeds", options.seeds);
  if (options.policy) args.push("--policy", options.policy);
  return args;
}

/** The member `p` once it says it is ready; killed if it never does. */
async function ready(p: Started): Promise<Member> {
  try {
    const [, address] = await p.waitFor(/"ready":"([^"]+)"/, 30_000);
    return {
      process: p,
      address,
      reports: () =>
        p.stdout().split("\n").filter((l) => l.startsWith('{"atMs"')).map((l) =>
          JSON.parse(l) as Report
        ),
    };
  } catch (e) {
    p.kill();
    throw e;
  }
}

/** Starts a fleet: the first member is everyone's seed. */
export async function startFleet(
  rates: readonly number[],
  options: {
    limit: number;
    runtimes?: readonly RuntimeName[];
    policy?: string;
    periodMs?: number;
    auth?: [mode: string, base64Secret?: string];
  },
): Promise<Member[]> {
  const members: Member[] = [];
  try {
    for (let i = 0; i < rates.length; i++) {
      members.push(
        await startMember({
          seeds: i === 0 ? undefined : members[0].address,
          rate: rates[i],
          limit: options.limit,
          runtime: options.runtimes?.[i],
          policy: options.policy,
          periodMs: options.periodMs,
          auth: options.auth,
        }),
      );
    }
    return members;
  } catch (e) {
    for (const m of members) m.process.kill();
    throw e;
  }
}

export function stopAll(members: readonly Member[]): void {
  for (const m of members) m.process.kill();
}

export const sleep = (ms: number): Promise<void> =>
  new Promise((resolve) => setTimeout(resolve, ms));

/** A member's reports made in [fromMs, toMs). */
function reportsIn(m: Member, fromMs: number, toMs: number): Report[] {
  return m.reports().filter((r) => r.atMs >= fromMs && r.atMs < toMs);
}

/**
 * The fleet's admission rate per second over the reports made in
 * [fromMs, toMs): each member's admitted count over the time its reports
 * cover, summed over members. Dividing by the window instead would count a
 * member whose report fell a few milliseconds past the end as a third short.
 */
function fleetRate(members: readonly Member[], fromMs: number, toMs: number): number {
  let rate = 0;
  for (const m of members) {
    const reports = reportsIn(m, fromMs, toMs);
    const spanMs = reports.reduce((sum, r) => sum + r.spanMs, 0);
    if (spanMs > 0) rate += (reports.reduce((sum, r) => sum + r.admitted, 0) * 1000) / spanMs;
  }
  return rate;
}

/** How many the fleet admitted in the reports made in [fromMs, toMs). */
export function fleetAdmitted(members: readonly Member[], fromMs: number, toMs: number): number {
  return members.reduce(
    (sum, m) => sum + reportsIn(m, fromMs, toMs).reduce((n, r) => n + r.admitted, 0),
    0,
  );
}

/** Lets the fleet settle for `settleMs`, then measures its rate over the next `measureMs`. */
export async function settledRate(
  members: readonly Member[],
  settleMs: number,
  measureMs: number,
): Promise<number> {
  await sleep(settleMs);
  const fromMs = Date.now();
  await sleep(measureMs);
  return fleetRate(members, fromMs, Date.now());
}

/** The most recent report of a member. */
export function latest(m: Member): Report | undefined {
  const all = m.reports();
  return all[all.length - 1];
}

/** Waits until every member reports `clusterSize` members. */
export async function waitForSize(
  members: readonly Member[],
  size: number,
  timeoutMs = 20_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (members.every((m) => latest(m)?.clusterSize === size)) return;
    await sleep(200);
  }
  throw new Error(
    `cluster did not reach ${size}: ${members.map((m) => latest(m)?.clusterSize).join(",")}`,
  );
}
