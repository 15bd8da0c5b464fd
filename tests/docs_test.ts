// The docs are true: every example in the README and docs/ runs and prints
// what it says, the sidecar's manual lists what the code has, the commands
// and manifests work as written, every figure names a command that exists,
// and no fact (a command block, a table row, a figure) stands in two pages.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { dirname, join, relative } from "node:path";
import { currentRuntime, start } from "./support/process.ts";
import { type Block, blocks } from "./support/markdown.ts";
import {
  envName,
  type Flag,
  isAnswer,
  OPTIONS,
  RESERVED_ENV,
  SWITCHES,
} from "../src/http/cli_flags.ts";
import { sidecarApp } from "../src/http/sidecar.ts";
import { Guard } from "../src/runtime/guard.ts";
import type { RateguardErrorCode } from "../src/core/errors.ts";

const read = (path: string) => readFileSync(path, "utf8");
/** Every page a user reads: the README and each page of docs/. */
const DOCS = [
  "README.md",
  ...readdirSync("docs").filter((f) => f.endsWith(".md")).sort().map((f) => `docs/${f}`),
];

describe("docs/sidecar.md", () => {
  const doc = read("docs/sidecar.md");
  it("lists every flag and its environment variable", () => {
    for (const flag of Object.keys(OPTIONS) as Flag[]) {
      assert.match(doc, new RegExp("`--" + flag + "[ `]"), `--${flag}`);
      if (!isAnswer(flag)) assert.ok(doc.includes(`\`${envName(flag)}\``), envName(flag));
    }
    for (const flag of SWITCHES) assert.ok(doc.includes(`\`--no-${flag}\``), `--no-${flag}`);
    for (const name of RESERVED_ENV) assert.ok(doc.includes(`\`${name}\``), name);
  });

  it("lists every route with its methods", async () => {
    const app = sidecarApp(await Guard.builder().limit(1).spawn());
    for (const { method, path } of app.routes) {
      if (method === "ALL") continue;
      const listed = doc.split("\n").some((line) =>
        line.startsWith("|") && line.includes(method) && new RegExp(`${path}[?\` ]`).test(line)
      );
      assert.ok(listed, `${method} ${path}`);
    }
  });

  it("lists every status and code of a refusal", () => {
    const table = doc.slice(doc.indexOf("## Errors"));
    for (const status of [400, 401, 404, 405, 408, 409, 413, 503, 507]) {
      assert.match(table, new RegExp(`^\\|\\s+${status} \\|`, "m"), String(status));
    }
    const codes: RateguardErrorCode[] = ["UnknownClass", "TooManyClasses", "TooManyKeyLimits"];
    for (const code of codes) assert.ok(table.includes(`\`${code}\``), code);
  });
});

describe("the docs' text", () => {
  it("runs deno and bun as npm ci installs them, not as if on the PATH", () => {
    for (const path of DOCS) {
      let fence = "";
      for (const [i, line] of read(path).split("\n").entries()) {
        if (line.startsWith("```")) fence = fence === "" ? line.slice(3) || "text" : "";
        // Inside an image (Dockerfile, the pod's manifest) bun is the image's own.
        if (fence === "dockerfile" || fence === "yaml") continue;
        const bare =
          /(^|[`(;&|]\s*|#\s+or:\s+)(deno|bun) (run|task|test|cli\.ts|src\/|bench\/|examples\/)/;
        // A run from JSR, or of the user's own app.ts, is a user's own Deno, not the checkout's.
        const own = line.replace(/\bdeno run -A (jsr:\S+|app\.ts)/g, "");
        assert.doesNotMatch(own, bare, `${path}:${i + 1}: ${line}`);
      }
    }
  });

  it("says nothing stale: the status, the module doc, the README rows cited", () => {
    const readme = read("README.md");
    const status = readme.slice(readme.indexOf("> **Status"), readme.indexOf("## Install"));
    assert.doesNotMatch(status, /\bnext\b/, "the status lists nothing that exists as next");
    assert.doesNotMatch(read("mod.ts"), /This version is the standalone guard/);
    for (const path of DOCS) {
      for (const m of read(path).matchAll(/the README's "([^"]+)" row/g)) {
        assert.ok(readme.includes(m[1]), `${path} cites a README row "${m[1]}"`);
      }
    }
  });
});

describe("docs/kubernetes.md", () => {
  const doc = read("docs/kubernetes.md");
  it("mounts the Secret so that the image's user can read it", () => {
    const user = /^USER (\w+)$/m.exec(doc)?.[1];
    assert.equal(user, "bun");
    const fsGroup = Number(/fsGroup: (\d+)/.exec(doc)?.[1]);
    const mode = parseInt(/defaultMode: (0\d+)/.exec(doc)?.[1] ?? "0", 8);
    assert.ok(fsGroup > 0, "an fsGroup, so the files belong to the user's group");
    assert.ok((mode & 0o040) !== 0, `defaultMode ${mode.toString(8)} lets the group read`);
  });

  it("counts the runtime dependencies that install", () => {
    const deps = Object.keys(JSON.parse(read("package.json")).dependencies);
    const words = ["none", "one", "two", "three", "four", "five", "six"];
    assert.match(doc, new RegExp(`the ${words[deps.length]} runtime dependencies`));
    for (const dep of deps) assert.ok(doc.includes(`\`${dep}\``), dep);
  });
});

describe("the README's sidecar command", () => {
  it("stops with the supervisor's SIGTERM, leaving nothing running", async () => {
    const readme = read("README.md");
    const line = /^npm ci && (.*cli\.ts --limit 1000\/min)$/m.exec(readme)?.[1];
    assert.ok(line, "the set-up command");
    // As a supervisor runs it: the command itself, which `exec` leaves in place of the shell.
    const [cmd, ...args] = line.replace(/^exec /, "").split(" ");
    const child = spawn(cmd, [...args, "--http", "127.0.0.1:0", "--log-format", "json"], {
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    child.stderr!.on("data", (d) => (stderr += d));
    const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()));
    try {
      const deadline = Date.now() + 30_000;
      while (!/"msg":"listening"/.test(stderr) && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const url = /"http":"([^"]+)"/.exec(stderr)?.[1];
      assert.ok(url, stderr);
      child.kill("SIGTERM");
      await exited;
      // Whatever ran the sidecar is gone, and so is the sidecar: nothing answers.
      await assert.rejects(fetch(`${url}/healthz`, { signal: AbortSignal.timeout(5_000) }));
    } finally {
      child.kill("SIGKILL");
    }
  });
});

/** The text of a page outside its fenced blocks, line by line. */
function prose(page: string): { line: string; n: number }[] {
  let fence = false;
  const out = [];
  for (const [i, line] of read(page).split("\n").entries()) {
    if (line.startsWith("```")) fence = !fence;
    else if (!fence) out.push({ line, n: i + 1 });
  }
  return out;
}

const EXPORTS = JSON.parse(read("deno.json")).exports as Record<string, string>;
const OUT = "build/docs-examples";

/** Hono's `getConnInfo` of each runtime, as the pages name them beside `hono/deno`. */
const CONN_INFO = {
  deno: "hono/deno",
  "deno-net": "hono/deno",
  bun: "hono/bun",
  node: "@hono/node-server/conninfo",
};

/**
 * The example as a file of the checkout: the package's name made the path of
 * its sources, and `hono/deno` the running runtime's `getConnInfo`.
 */
function asFile(block: Block, name: string): string {
  mkdirSync(OUT, { recursive: true });
  const file = join(OUT, `${name}.ts`);
  const code = block.text.replace(/from "hono\/deno"/g, `from "${CONN_INFO[currentRuntime]}"`)
    .replace(/from "(@rateguard\/guard(\/[a-z]+)?)"/g, (_m, _s, sub) => {
      const path = EXPORTS[`.${sub ?? ""}`];
      assert.ok(path, `${block.page}:${block.line}: no export ${sub}`);
      return `from "${relative(OUT, path).replaceAll("\\", "/").replace(/^(?!\.)/, "./")}"`;
    });
  writeFileSync(file, code);
  return file;
}

/**
 * What an example says it prints: `// prints X` on a `console.log` line is
 * the line that call writes (each call running once, in order), and a
 * `// prints:` comment followed by `// ...` lines is the whole output.
 */
function printed(text: string): { all?: string[]; calls: Map<number, string> } {
  const lines = text.split("\n");
  const at = lines.findIndex((l) => l.trim() === "// prints:");
  if (at >= 0) {
    const all = [];
    for (const l of lines.slice(at + 1)) {
      if (!l.startsWith("// ")) break;
      all.push(l.slice(3));
    }
    return { all, calls: new Map() };
  }
  const calls = new Map<number, string>();
  let call = 0;
  for (const l of lines) {
    if (!/\bconsole\.log\(/.test(l)) continue;
    const m = /\/\/ prints (.*)$/.exec(l);
    if (m) calls.set(call, m[1]);
    call++;
  }
  return { calls };
}

describe(`every example of the README and docs/, on ${currentRuntime}`, () => {
  for (const page of DOCS) {
    for (const block of blocks(page).filter((b) => b.lang === "ts")) {
      it(`${page}:${block.line} runs and prints what it says`, async () => {
        const file = asFile(block, `${page.replace(/\W/g, "_")}_${block.line}`);
        const run = start(file, []);
        try {
          const code = await run.exited(60_000);
          assert.equal(code, 0, `exit ${code}: ${run.stderr()}`);
          const out = run.stdout().replace(/\n$/, "").split("\n");
          const { all, calls } = printed(block.text);
          if (all) assert.deepEqual(out, all, `${page}:${block.line} prints`);
          for (const [call, want] of calls) {
            assert.equal(out[call], want, `${page}:${block.line}: console.log #${call + 1}`);
          }
        } finally {
          run.kill();
        }
      });
    }
  }
});

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function statusOf(url: string, deadlineMs: number): Promise<number> {
  for (;;) {
    try {
      const res = await fetch(url);
      await res.body?.cancel();
      return res.status;
    } catch (error) {
      if (Date.now() > deadlineMs) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

describe("the README's three examples", () => {
  const readme = read("README.md");
  const section = (title: string) => {
    const from = readme.indexOf(`\n## ${title}\n`);
    assert.ok(from >= 0, title);
    const to = readme.indexOf("\n## ", from + 4);
    return readme.slice(from, to < 0 ? undefined : to);
  };

  it(`the Hono app serves, denies with its 429 and prints what it says, on ${currentRuntime}`, async () => {
    const text = section("A Hono app");
    const [app, shell] = blocks("README.md").filter((b) => text.includes(b.text) && b.text !== "");
    assert.ok(app && shell, "the app and the commands that call it");
    assert.match(app.text, /^const guard = await Guard\.builder\(\)/m, "top-level await");
    assert.match(app.text, /err instanceof HTTPException\) return err\.getResponse\(\)/);
    // The app as the README says to write it on each runtime.
    const last = "Deno.serve({ port: 8000 }, app.fetch);";
    assert.ok(app.text.includes(last));
    let code = app.text;
    if (currentRuntime === "bun") {
      assert.ok(
        text.includes("`hono/bun`") &&
          text.includes("`export default { port: 8000, fetch: app.fetch }`"),
      );
      code = code.replace('"hono/deno"', '"hono/bun"').replace(
        last,
        "export default { port: 8000, fetch: app.fetch };",
      );
    } else if (currentRuntime === "node") {
      const serve = "serve({ fetch: app.fetch, port: 8000 })";
      assert.ok(text.includes("`@hono/node-server/conninfo`") && text.includes(`\`${serve}\``));
      code = `import { serve } from "@hono/node-server";\n` +
        code.replace('"hono/deno"', '"@hono/node-server/conninfo"').replace(last, `${serve};`);
    }
    const port = await freePort();
    const file = asFile({ ...app, text: code.replaceAll("8000", String(port)) }, "readme_hono_app");
    const run = start(file, []);
    try {
      const url = `http://127.0.0.1:${port}/`;
      const got = [await statusOf(url, Date.now() + 30_000)];
      for (let i = 1; i < 3; i++) got.push(await statusOf(url, 0));
      if (currentRuntime === "deno") {
        const listening = /# prints: (Listening on .*)$/m.exec(shell.text)?.[1];
        assert.ok(listening, "what deno prints");
        assert.ok(run.stderr().includes(listening.replaceAll("8000", String(port))), run.stderr());
      }
      const want = shell.text.split("\n").filter((l) => /^# \d{3}$/.test(l)).map((l) =>
        Number(l.slice(2))
      );
      assert.deepEqual(got, want, run.stderr());
    } finally {
      run.kill();
    }
  });

  it("the sidecar answers the documented check with the documented output", async () => {
    const text = section("The sidecar");
    const [shell] = blocks("README.md").filter((b) => b.lang === "sh" && text.includes(b.text));
    const flags = /node_modules\/\.bin\/rateguard (--limit .*)$/m.exec(shell.text)?.[1];
    const body = /^curl -s -X POST -d '([^']+)' http:\/\/127\.0\.0\.1:7947\/v1\/check$/m.exec(
      shell.text,
    )?.[1];
    const answer = /^# (\{"allowed".*\})$/m.exec(shell.text)?.[1];
    assert.ok(flags && body && answer, shell.text);
    for (const line of shell.text.split("\n").filter((l) => / --limit /.test(l))) {
      assert.ok(
        line.includes(` ${flags}`),
        `every runtime's command takes the same flags: ${line}`,
      );
    }
    const run = start("cli.ts", [
      ...flags.split(" "),
      "--http",
      "127.0.0.1:0",
      "--log-format",
      "json",
    ]);
    try {
      const deadline = Date.now() + 30_000;
      while (!/"msg":"listening"/.test(run.stderr()) && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const url = /"http":"([^"]+)"/.exec(run.stderr())?.[1];
      assert.ok(url, run.stderr());
      const res = await fetch(`${url}/v1/check`, { method: "POST", body });
      assert.equal(await res.text(), answer);
    } finally {
      run.kill();
    }
  });
});

describe("docs/getting-started.md's fleet of sidecars", () => {
  it(`forms, ready and of three, as the page says, on ${currentRuntime}`, async () => {
    const page = read("docs/getting-started.md");
    const from = page.indexOf("## A fleet of sidecars");
    const [shell] = blocks("docs/getting-started.md").filter((b) =>
      b.lang === "sh" && page.indexOf(b.text) > from
    );
    const common = /^rg="node_modules\/\.bin\/rateguard (.*)"$/m.exec(shell.text)?.[1];
    const members = [...shell.text.matchAll(/^\$rg (.*) &$/gm)].map((m) => m[1]);
    assert.ok(common && members.length === 3, shell.text);
    assert.match(shell.text, /curl -s http:\/\/127\.0\.0\.1:7967\/readyz\n# ready$/m);
    assert.match(shell.text, /"clusterSize":\[0-9\]\*'\n# "clusterSize":3$/m);
    // The page's ports, moved to free ones; its secret, a fresh one.
    const ports = new Map<string, string>();
    for (const [, port] of shell.text.matchAll(/127\.0\.0\.1:(\d+)/g)) {
      if (!ports.has(port)) ports.set(port, String(await freePort()));
    }
    const move = (text: string) =>
      text.replace(/127\.0\.0\.1:(\d+)/g, (_m, p) => `127.0.0.1:${ports.get(p)}`);
    mkdirSync(OUT, { recursive: true });
    const secret = join(OUT, "gossip-secret");
    writeFileSync(
      secret,
      btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(32)))) + "\n",
    );
    const runs = members.map((flags) =>
      start(
        "cli.ts",
        move(
          `${
            common.replace("--gossip-secret-file gossip-secret", `--gossip-secret-file ${secret}`)
          } ${flags}`,
        ).split(" "),
      )
    );
    try {
      const http = (port: string) => `http://127.0.0.1:${ports.get(port)}`;
      const deadline = Date.now() + 30_000;
      let ready = "";
      let size = 0;
      while ((ready !== "ready\n" || size !== 3) && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 200));
        try {
          ready = await (await fetch(`${http("7967")}/readyz`)).text();
          size = (await (await fetch(`${http("7947")}/v1/stats`)).json()).clusterSize;
        } catch { /* not listening yet */ }
      }
      assert.equal(ready, "ready\n", runs.map((r) => r.stderr()).join("\n"));
      assert.equal(size, 3);
    } finally {
      for (const run of runs) run.kill();
    }
  });
});

describe("one home for every fact", () => {
  it("no command block or code example stands in two places", () => {
    const seen = new Map<string, string>();
    for (const page of DOCS) {
      for (const b of blocks(page)) {
        const key = b.text.replace(/\s+/g, " ").trim();
        if (key === "") continue;
        const where = `${b.page}:${b.line}`;
        assert.ok(!seen.has(key), `${where} repeats the block of ${seen.get(key)}`);
        seen.set(key, where);
      }
    }
  });

  it("no table row stands in two places", () => {
    const seen = new Map<string, string>();
    for (const page of DOCS) {
      const lines = prose(page);
      for (const [i, { line, n }] of lines.entries()) {
        const rule = (l?: string) => l !== undefined && /^\|[\s:|-]+\|$/.test(l);
        // A table's header (the row above its rule) may recur; its rows may not.
        if (!line.startsWith("|") || rule(line) || rule(lines[i + 1]?.line)) continue;
        const cells = line.split("|").map((c) => c.trim()).filter((c) => c !== "");
        // A row of one short word and figures (a header, "| deno | ... |") may recur; a fact may not.
        if (cells.join(" ").length < 40) continue;
        const key = cells.join("|");
        assert.ok(!seen.has(key), `${page}:${n} repeats the row of ${seen.get(key)}: ${line}`);
        seen.set(key, `${page}:${n}`);
      }
    }
  });

  it("each of the README's figures is the one on the page it links to", () => {
    const readme = read("README.md");
    const figures = readme.slice(
      readme.indexOf("\n## Figures\n"),
      readme.indexOf("\n## Documentation\n"),
    );
    const items = figures.split("\n- ").slice(1);
    assert.ok(items.length >= 3, "the headline figures");
    for (const item of items) {
      const page = /\]\((docs\/[a-z-]+\.md)\)/.exec(item)?.[1];
      assert.ok(page, `a figure with no page: ${item}`);
      const home = read(page);
      for (
        const figure of item.replace(/\([^)]*\)/g, "").match(/\d[\d,]*\.\d+|\d{1,3}(,\d{3})+/g) ??
          []
      ) {
        assert.ok(home.includes(figure), `${figure} is not on ${page}: ${item}`);
      }
    }
  });

  it("every link between the pages reaches a page and a heading that exist", () => {
    const slug = (h: string) =>
      h.toLowerCase().replace(/[^\p{L}\p{N} _-]/gu, "").trim().replace(/ /g, "-");
    const anchors = (page: string) =>
      new Set(
        prose(page).filter((l) => /^#{1,6} /.test(l.line)).map((l) =>
          slug(l.line.replace(/^#+ /, ""))
        ),
      );
    for (const page of DOCS) {
      for (const { line, n } of prose(page)) {
        for (const [, target] of line.matchAll(/\]\(([^)\s]+)\)/g)) {
          if (/^[a-z]+:/.test(target)) continue;
          const [path, anchor] = target.split("#");
          const file = path === "" ? page : join(dirname(page), path);
          assert.ok(existsSync(file), `${page}:${n}: ${target}`);
          if (anchor && file.endsWith(".md")) {
            assert.ok(anchors(file).has(anchor), `${page}:${n}: no heading #${anchor} in ${file}`);
          }
        }
      }
    }
  });

  it("every generated table keeps the markers its command writes between, on its one page", () => {
    const markers: [string, string, string][] = [
      ["docs/accuracy.md", "<!-- accuracy:start -->", "src/sim/accuracy/cli.ts"],
      ["docs/performance.md", "<!-- bench:start -->", "scripts/bench-table.mjs"],
      ["docs/membership.md", "<!-- figures:begin", "src/sim/figures/membership.ts"],
    ];
    for (const [page, marker, writer] of markers) {
      assert.ok(existsSync(writer), writer);
      for (const other of DOCS) {
        const n = read(other).split(marker).length - 1;
        assert.equal(n, other === page ? 1 : 0, `${marker} in ${other}`);
      }
    }
    assert.match(read("scripts/bench-table.mjs"), /const page = "docs\/performance\.md"/);
    assert.match(read("src/sim/accuracy/cli.ts"), /const FILES = \["docs\/accuracy\.md"\]/);
  });

  it("every command a page gives for a figure exists: tasks, scripts, benches and tests", () => {
    const tasks = JSON.parse(read("deno.json")).tasks as Record<string, string>;
    const scripts = JSON.parse(read("package.json")).scripts as Record<string, string>;
    for (const page of DOCS) {
      const text = read(page);
      for (const [, task] of text.matchAll(/deno task ([\w:-]+)/g)) {
        assert.ok(task in tasks, `${page}: deno task ${task}`);
      }
      for (const [, script] of text.matchAll(/npm run ([\w:-]+)/g)) {
        assert.ok(script in scripts, `${page}: npm run ${script}`);
      }
      for (
        const [, path] of text.matchAll(
          /((?:tests|bench|scripts|src|examples|sdk)\/[\w./-]+\.(?:ts|mjs|sh|py|go))/g,
        )
      ) {
        assert.ok(existsSync(path), `${page}: ${path}`);
      }
    }
  });
});
