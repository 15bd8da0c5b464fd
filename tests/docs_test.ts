// The docs are true: the sidecar's manual lists what the code has, and the
// commands and manifests in the docs work as written.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
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
const DOCS = [
  "README.md",
  "docs/sidecar.md",
  "docs/kubernetes.md",
  "docs/membership.md",
  "docs/accuracy.md",
  "docs/fleet-rules.md",
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
    const table = doc.slice(doc.indexOf("### Errors"));
    for (const status of [400, 401, 404, 405, 408, 409, 413, 503]) {
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
        // A run from JSR is a user's own Deno, not the checkout's.
        const own = line.replace(/\bdeno run -A jsr:\S+/g, "");
        assert.doesNotMatch(own, bare, `${path}:${i + 1}: ${line}`);
      }
    }
  });

  it("says nothing stale: the status, the module doc, the README rows cited", () => {
    const readme = read("README.md");
    const status = readme.slice(readme.indexOf("> **Status"), readme.indexOf("## Set up"));
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
