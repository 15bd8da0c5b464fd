// The dashboard in a real browser: Debian's Chromium, headless, against
// three sidecars with a hot key. Run once, on Node (scripts/test-all.sh
// counts its JUnit report with the suite's); a screenshot goes to
// .test-results/dashboard.png.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import process from "node:process";
import type { Browser, Page } from "playwright-core";
import {
  chromiumPath,
  hotShares,
  launchBrowser,
  LIMIT_PER_SEC,
  memberStates,
  openDashboard,
  startFleet,
  type TestFleet,
  until,
} from "./fleet.ts";

// CI (.ci/run) installs Chromium and sets RATEGUARD_BROWSER_REQUIRED=1: there
// a missing browser fails; elsewhere the test is skipped, and counted so.
const required = process.env.RATEGUARD_BROWSER_REQUIRED === "1";
const skip = chromiumPath() || required ? false : "no Chromium (apt-get install chromium)";

const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
const near = (x: number, y: number) => Math.abs(x - y) <= y * 0.01;

describe("the dashboard in Chromium", { skip }, () => {
  let fleet: TestFleet;
  let browser: Browser;
  let page: Page;
  before(async () => {
    fleet = await startFleet([10, 20, 40]);
    const launched = await launchBrowser();
    assert.ok(launched, "RATEGUARD_BROWSER_REQUIRED=1 but no Chromium: apt-get install chromium");
    browser = launched;
  });
  after(async () => {
    await browser?.close();
    await fleet?.stop();
  });

  it("asks for the token once, then shows three members and the hot key's three shares summing to the limit", async () => {
    page = await openDashboard(browser, fleet.sidecars[0]);
    await until(
      async () => (await memberStates(page)).join() === "alive,alive,alive",
      "three alive members",
    );
    await until(async () => {
      const shares = await hotShares(page);
      return shares.length === 3 && near(sum(shares), LIMIT_PER_SEC);
    }, "three shares summing to the limit");
    const shares = await hotShares(page);
    assert.equal(shares.length, 3);
    assert.ok(near(sum(shares), LIMIT_PER_SEC), `shares ${shares} sum to the limit`);
    const text = await page.textContent("#members");
    assert.match(text ?? "", /this instance/);
    assert.match(await page.textContent("#hot") ?? "", /req\/s/, "numbers with units");
    // Reloading keeps the token for the tab: no form again.
    await page.reload();
    await page.locator("#main").waitFor({ state: "visible" });
    assert.equal(await page.isVisible("#login"), false);
    mkdirSync(".test-results", { recursive: true });
    await page.screenshot({ path: ".test-results/dashboard.png", fullPage: true });
  });

  it("shows a killed member go, and the shares of the two left summing to the limit", async () => {
    const before = Number(await page.getAttribute("body", "data-updated"));
    fleet.kill(2);
    await until(
      async () => (await memberStates(page)).slice(1).some((s) => s !== "alive"),
      "the killed member not alive",
      40_000,
    );
    await until(
      async () => {
        const shares = await hotShares(page);
        return shares.length === 2 && near(sum(shares), LIMIT_PER_SEC);
      },
      "two shares summing to the limit",
      40_000,
    );
    assert.ok(Number(await page.getAttribute("body", "data-updated")) > before, "the page updated");
    await page.screenshot({ path: ".test-results/dashboard-after-kill.png", fullPage: true });
  });

  it("stays legible in a narrow window: nothing wider than the viewport", async () => {
    const narrow = await openDashboard(browser, fleet.sidecars[0], 360);
    try {
      await until(async () => (await hotShares(narrow)).length > 0, "a hot key");
      // A string, evaluated in the page: this file is type checked without the DOM's types.
      const overflow = await narrow.evaluate<number>(
        "document.documentElement.scrollWidth - innerWidth",
      );
      assert.ok(overflow <= 0, `the page is ${overflow}px wider than a 360px window`);
      await narrow.screenshot({ path: ".test-results/dashboard-narrow.png", fullPage: true });
    } finally {
      await narrow.close();
    }
  });
});
