// Regenerates docs/dashboard.png, the dashboard's picture in docs/sidecar.md:
// three sidecars on loopback with a hot key over its limit and a shadow under
// it, Debian's Chromium headless, after half a minute of traffic so the chart
// has a shape.
//
//   node --import tsx scripts/dashboard-screenshot.ts [out.png]
import process from "node:process";
import { launchBrowser, openDashboard, startFleet, TOKEN } from "../tests/browser/fleet.ts";

const out = process.argv[2] ?? "docs/dashboard.png";
const fleet = await startFleet([10, 20, 40]);
try {
  const browser = await launchBrowser();
  if (browser === undefined) throw new Error("no Chromium: apt-get install chromium");
  try {
    const headers = { authorization: `Bearer ${TOKEN}` };
    for (const s of fleet.sidecars) {
      const put = (path: string, body: unknown) =>
        fetch(`${s.url}${path}`, { method: "PUT", headers, body: JSON.stringify(body) });
      await put("/v1/classes?class=free", { limit: "10/s" });
      await put("/v1/shadows?class=", { limit: "40/s" });
    }
    const page = await openDashboard(browser, fleet.sidecars[0], 960);
    await new Promise((resolve) => setTimeout(resolve, 30_000));
    await page.screenshot({ path: out, fullPage: true });
    console.log(`wrote ${out}`);
  } finally {
    await browser.close();
  }
} finally {
  await fleet.stop();
}
