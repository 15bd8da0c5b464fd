// Browser test support: a fleet of three sidecars on loopback with a hot key
// under load, and the system's Chromium (Debian's package) driven headless
// by playwright-core, which never downloads a browser of its own.
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { type Browser, chromium, type Page } from "playwright-core";
import { eventually, type Sidecar, startSidecar } from "../http/support.ts";

/** The hot key every sidecar is asked about. */
export const HOT_KEY = "tenant:42";
/** The fleet-wide limit of the default class, requests a second. */
export const LIMIT_PER_SEC = 60;
/** The admin token every sidecar wants. */
export const TOKEN = "dashboard-test-token";

/** Where Debian's package puts Chromium; `CHROMIUM` overrides. */
export function chromiumPath(): string | undefined {
  const candidates = [process.env.CHROMIUM, "/usr/bin/chromium", "/usr/bin/chromium-browser"];
  return candidates.find((p): p is string => p !== undefined && p !== "" && existsSync(p));
}

/** Three sidecars and the load on their hot key; `stop()` ends all. */
export interface TestFleet {
  readonly sidecars: Sidecar[];
  /** Stops offering load to sidecar `i` and kills it. */
  kill(i: number): void;
  stop(): Promise<void>;
}

/**
 * Starts three sidecars joined through the first, each asked about
 * {@link HOT_KEY} `demandPerSec[i]` times a second until stopped.
 */
export async function startFleet(demandPerSec: readonly number[]): Promise<TestFleet> {
  const dir = mkdtempSync(join(tmpdir(), "rateguard-dash-"));
  const tokenFile = join(dir, "token");
  writeFileSync(tokenFile, `${TOKEN}\n`);
  const args = ["--limit", `${LIMIT_PER_SEC}/s`, "--admin-token-file", tokenFile];
  const sidecars: Sidecar[] = [];
  const timers: (ReturnType<typeof setInterval> | undefined)[] = [];
  const stop = async () => {
    for (const t of timers) clearInterval(t);
    for (const s of sidecars) s.process.kill();
    await Promise.all(sidecars.map((s) => s.process.exited().catch(() => null)));
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    sidecars.push(await startSidecar(args, { fleet: true, runtime: "node" }));
    for (let i = 1; i < 3; i++) {
      const seeded = [...args, "--seeds", sidecars[0].gossip];
      sidecars.push(await startSidecar(seeded, { fleet: true, runtime: "node" }));
    }
    const auth = { authorization: `Bearer ${TOKEN}` };
    await eventually(async () => {
      const sizes = await Promise.all(
        sidecars.map(async (s) =>
          (await (await fetch(`${s.url}/v1/stats`, { headers: auth })).json()).clusterSize
        ),
      );
      return sizes.every((n) => n === 3);
    }, "three members");
    // Ten batches a second, each of a tenth of the sidecar's demand.
    const body = JSON.stringify({ key: HOT_KEY });
    for (const [i, s] of sidecars.entries()) {
      const batch = Math.max(1, Math.round(demandPerSec[i] / 10));
      timers.push(setInterval(() => {
        for (let j = 0; j < batch; j++) {
          fetch(`${s.url}/v1/check`, { method: "POST", body }).then(
            (r) => r.body?.cancel(),
            () => {},
          );
        }
      }, 100));
    }
  } catch (e) {
    await stop();
    throw e;
  }
  return {
    sidecars,
    kill: (i) => {
      clearInterval(timers[i]);
      timers[i] = undefined;
      sidecars[i].process.kill();
    },
    stop,
  };
}

/** A headless Chromium; `undefined` when none is installed. */
export async function launchBrowser(): Promise<Browser | undefined> {
  const executablePath = chromiumPath();
  if (executablePath === undefined) return undefined;
  return await chromium.launch({ executablePath, headless: true, args: ["--no-sandbox"] });
}

/** What the page shows of the hot key: one share per member, in req/s. */
export async function hotShares(page: Page, key = HOT_KEY): Promise<number[]> {
  return await page.$$eval(
    `article[data-key="${key}"] tr[data-share]`,
    (rows) => rows.map((r) => Number(r.getAttribute("data-share"))),
  );
}

/** The states of the members listed, this instance first. */
export async function memberStates(page: Page): Promise<string[]> {
  return await page.$$eval(
    "#members tr[data-state]",
    (rows) => rows.map((r) => r.getAttribute("data-state") ?? ""),
  );
}

/** Opens the dashboard of `sidecar`, typing the token when asked. */
export async function openDashboard(
  browser: Browser,
  sidecar: Sidecar,
  width = 1100,
): Promise<Page> {
  const page = await browser.newPage({ viewport: { width, height: 900 } });
  await page.goto(`${sidecar.url}/dashboard`);
  await page.locator("#token").waitFor({ state: "visible" });
  await page.fill("#token", TOKEN);
  await page.click("#login button[type=submit]");
  await page.locator("#main").waitFor({ state: "visible" });
  return page;
}

/** Polls `probe` in the page's terms until it holds, at most `timeoutMs`. */
export async function until(probe: () => Promise<boolean>, what: string, timeoutMs = 30_000) {
  await eventually(probe, what, timeoutMs);
}
