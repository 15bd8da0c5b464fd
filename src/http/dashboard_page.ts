/**
 * The dashboard's page and script, as text: no build step, nothing to read
 * from disk, so it serves the same on Deno, Bun and Node and from a
 * published package. The script builds the page with DOM calls and
 * `textContent` only: keys are the clients' text, never markup.
 *
 * @module
 */

/** The page: markup and style; its script is {@link DASHBOARD_SCRIPT} at `dashboard/app.js`. */
export const DASHBOARD_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>rateguard: fleet dashboard</title>
<style>
:root { --fg: #1b1f23; --muted: #57606a; --bg: #fff; --panel: #f6f8fa; --line: #d0d7de;
  --admit: #1a7f37; --deny: #cf222e; --shadow: #8250df; --share: #0969da; --demand: #9a6700; }
@media (prefers-color-scheme: dark) {
  :root { --fg: #e6edf3; --muted: #9198a1; --bg: #0d1117; --panel: #161b22; --line: #30363d;
    --admit: #3fb950; --deny: #f85149; --shadow: #a371f7; --share: #4493f8; --demand: #d29922; }
}
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.45 system-ui, sans-serif; color: var(--fg); background: var(--bg); }
header { display: flex; flex-wrap: wrap; gap: .25rem 1rem; align-items: baseline; padding: .6rem 1rem;
  border-bottom: 1px solid var(--line); }
h1 { font-size: 1.2rem; margin: 0; }
h2 { font-size: 1.05rem; margin: 0 0 .5rem; }
h3 { font-size: .95rem; margin: .75rem 0 .25rem; overflow-wrap: anywhere; }
#status { margin: 0; color: var(--muted); }
main { display: grid; gap: 1rem; padding: 1rem; grid-template-columns: repeat(auto-fit, minmax(min(100%, 24rem), 1fr)); }
section { background: var(--panel); border: 1px solid var(--line); border-radius: 6px; padding: .75rem; min-width: 0; }
section.wide { grid-column: 1 / -1; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: .1rem .75rem; margin: 0 0 .5rem; }
dt { color: var(--muted); }
dd { margin: 0; font-variant-numeric: tabular-nums; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; width: 100%; font-variant-numeric: tabular-nums; }
caption { text-align: left; color: var(--muted); padding-bottom: .25rem; }
th, td { text-align: left; padding: .2rem .4rem; border-bottom: 1px solid var(--line); vertical-align: top; }
td.num, th.num { text-align: right; white-space: nowrap; }
td.key { overflow-wrap: anywhere; }
#members td:nth-child(2) { white-space: nowrap; }
.bar { display: block; height: .6rem; background: var(--line); border-radius: 3px; overflow: hidden; min-width: 4rem; }
.bar > span { display: block; height: 100%; }
.bar.share > span { background: var(--share); }
.bar.demand > span { background: var(--demand); }
svg { width: 100%; height: auto; display: block; }
.legend { display: flex; flex-wrap: wrap; gap: .25rem 1rem; color: var(--muted); }
.legend svg { width: 2rem; height: .8rem; display: inline-block; vertical-align: middle; }
.warn { color: var(--deny); font-weight: 600; }
form { padding: 1rem; max-width: 28rem; }
input { font: inherit; padding: .3rem; width: 100%; margin: .25rem 0 .5rem; }
button { font: inherit; padding: .3rem .8rem; }
.empty { color: var(--muted); font-style: italic; }
</style>
<script src="dashboard/app.js" defer></script>
</head>
<body>
<header>
<h1>rateguard fleet</h1>
<p id="status" role="status" aria-live="polite">Connecting…</p>
<button id="forget" type="button" hidden>Forget the token</button>
</header>
<form id="login" hidden>
<label for="token">This sidecar's admin token</label>
<input id="token" type="password" autocomplete="current-password" required>
<button type="submit">Show the fleet</button>
<p id="login-error" role="alert"></p>
</form>
<main id="main" hidden>
<section aria-labelledby="h-fleet">
<h2 id="h-fleet">Fleet</h2>
<dl id="fleet"></dl>
<div class="scroll"><table id="members"><caption>Members as this instance sees them</caption>
<thead><tr><th scope="col">Member</th><th scope="col">State</th><th scope="col" class="num">Incarnation</th></tr></thead>
<tbody></tbody></table></div>
</section>
<section aria-labelledby="h-gossip">
<h2 id="h-gossip">Gossip</h2>
<dl id="gossip"></dl>
</section>
<section class="wide" aria-labelledby="h-rates">
<h2 id="h-rates">Decisions per second</h2>
<dl id="rates"></dl>
<figure style="margin:0">
<svg id="chart" viewBox="0 0 600 180" role="img" aria-labelledby="chart-title"><title id="chart-title">Admitted and denied per second</title></svg>
<figcaption class="legend">
<span><svg viewBox="0 0 32 12" aria-hidden="true"><line x1="0" y1="6" x2="32" y2="6" style="stroke:var(--admit)" stroke-width="3"/></svg> admitted (solid)</span>
<span><svg viewBox="0 0 32 12" aria-hidden="true"><line x1="0" y1="6" x2="32" y2="6" style="stroke:var(--deny)" stroke-width="3" stroke-dasharray="6 4"/></svg> denied (dashed)</span>
<span><svg viewBox="0 0 32 12" aria-hidden="true"><line x1="0" y1="6" x2="32" y2="6" style="stroke:var(--shadow)" stroke-width="3" stroke-dasharray="1 4" stroke-linecap="round"/></svg> shadow-denied (dotted)</span>
</figcaption>
</figure>
</section>
<section class="wide" aria-labelledby="h-hot">
<h2 id="h-hot">Hot keys: each member's demand and share</h2>
<div id="hot"></div>
</section>
<section aria-labelledby="h-denied">
<h2 id="h-denied">Most denied keys</h2>
<div class="scroll"><table id="denied"><thead><tr><th scope="col">Key</th><th scope="col" class="num">Denied</th><th scope="col" class="num">Requests</th></tr></thead><tbody></tbody></table></div>
<h2 style="margin-top:.75rem">Most shadow-denied keys</h2>
<div class="scroll"><table id="shadow-denied"><thead><tr><th scope="col">Key</th><th scope="col" class="num">Shadow-denied</th><th scope="col" class="num">Requests</th></tr></thead><tbody></tbody></table></div>
</section>
<section aria-labelledby="h-rules">
<h2 id="h-rules">Rules in force</h2>
<dl id="mode"></dl>
<div class="scroll"><table id="classes"><caption>Classes</caption><thead><tr><th scope="col">Class</th><th scope="col" class="num">Limit</th><th scope="col" class="num">Burst</th></tr></thead><tbody></tbody></table></div>
<div class="scroll"><table id="key-limits"><caption>Key limits</caption><thead><tr><th scope="col">Class</th><th scope="col">Key</th><th scope="col" class="num">Limit</th></tr></thead><tbody></tbody></table></div>
<div class="scroll"><table id="shadows"><caption>Shadow limits</caption><thead><tr><th scope="col">Class</th><th scope="col" class="num">Limit</th><th scope="col" class="num">Burst</th></tr></thead><tbody></tbody></table></div>
</section>
</main>
</body>
</html>
`;

/** The page's script, served at `dashboard/app.js` (the page's policy allows no inline script). */
export const DASHBOARD_SCRIPT = String.raw`"use strict";
(() => {
  const TOKEN = "rateguard.adminToken";
  const PERIOD_MS = 1000;
  const $ = (id) => document.getElementById(id);
  const num = new Intl.NumberFormat("en", { maximumFractionDigits: 1 });
  const whole = new Intl.NumberFormat("en", { maximumFractionDigits: 0 });
  const perSec = (n) => (n >= 100 ? whole : num).format(n) + " req/s";
  const bytes = (n) => n >= 1e6 ? num.format(n / 1e6) + " MB/s" : n >= 1e3 ? num.format(n / 1e3) + " kB/s" : whole.format(n) + " B/s";
  const STATES = { alive: "● alive", suspect: "◐ suspect", dead: "✕ dead", left: "○ left" };
  const className = (c) => c === "" ? "default" : c;
  let failures = 0;

  function token() {
    try { return sessionStorage.getItem(TOKEN) || ""; } catch { return ""; }
  }
  function el(tag, text, attrs) {
    const e = document.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = String(text);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, String(v));
    return e;
  }
  function row(cells, attrs) {
    const tr = el("tr", null, attrs);
    for (const c of cells) {
      const td = c instanceof Node ? c : el("td", c);
      if (!(c instanceof Node) && typeof c === "string" && /^[0-9.,]+( |\/|$)/.test(c)) td.className = "num";
      tr.append(td);
    }
    return tr;
  }
  function fill(table, rows, emptyText) {
    const body = $(table).tBodies[0];
    body.replaceChildren(...rows);
    if (rows.length === 0) {
      const td = el("td", emptyText, { colspan: $(table).tHead.rows[0].cells.length, class: "empty" });
      body.append(el("tr").appendChild(td).parentNode);
    }
  }
  function pairs(id, entries) {
    const dl = $(id);
    dl.replaceChildren();
    for (const [k, v, attrs] of entries) {
      dl.append(el("dt", k), el("dd", v, attrs));
    }
  }
  function bar(kind, fraction, label) {
    const b = el("span", null, { class: "bar " + kind, role: "img", "aria-label": label });
    const f = el("span");
    f.style.width = (Math.max(0, Math.min(1, fraction)) * 100).toFixed(1) + "%";
    b.append(f);
    return b;
  }
  function memberName(m, self) {
    return (m.address || m.id) + (self ? " (this instance)" : "");
  }

  function renderFleet(d) {
    const f = d.fleet;
    const held = f.heldBecause.length ? "yes: " + f.heldBecause.join(", ") : "no";
    pairs("fleet", [
      ["Members seen", whole.format(f.clusterSize), { "data-testid": "cluster-size" }],
      ["Counted size (N)", whole.format(f.countedSize)],
      ["Suspects", whole.format(f.suspects)],
      ["Held at the floor", held, f.heldBecause.length ? { class: "warn" } : {}],
      ["Hot keys", whole.format(f.hotKeys)],
    ]);
    const rows = [];
    if (d.self.address) {
      rows.push(row([memberName(d.self, true), STATES.alive, "–"], { "data-state": "alive", "data-self": "true" }));
    } else {
      rows.push(row(["standalone (no fleet)", STATES.alive, "–"], { "data-state": "alive", "data-self": "true" }));
    }
    for (const m of d.members) {
      rows.push(row([memberName(m, false), STATES[m.state] || m.state, whole.format(m.incarnation)], { "data-state": m.state }));
    }
    fill("members", rows, "");
  }

  function renderGossip(d) {
    const g = d.gossip;
    if (!g) { pairs("gossip", [["Gossip", "none: a standalone guard"]]); return; }
    const r = g.rejected;
    const rejected = r.unsigned + r.badTag + r.malformed + r.mismatchedRecords;
    pairs("gossip", [
      ["Sent", whole.format(g.datagramsSentPerSec) + " datagrams/s, " + bytes(g.bytesSentPerSec)],
      ["Received", whole.format(g.datagramsReceivedPerSec) + " datagrams/s, " + bytes(g.bytesReceivedPerSec)],
      ["Since the last round", whole.format(g.sinceLastRoundMs) + " ms"],
      ["Rejected (total)", whole.format(rejected) + " datagrams", rejected ? { class: "warn" } : {}],
      ["… unsigned", whole.format(r.unsigned)],
      ["… bad tag", whole.format(r.badTag)],
      ["… malformed", whole.format(r.malformed)],
      ["… mismatched records", whole.format(r.mismatchedRecords)],
      ["Socket errors", whole.format(g.socketErrors)],
      ["Signing", d.gossipAuth],
    ]);
  }

  function renderChart(d) {
    const svg = $("chart");
    const s = d.series;
    const all = s.admittedPerSec.concat(s.deniedPerSec, s.shadowDeniedPerSec);
    const top = Math.max(1, ...all) * 1.1;
    // Drawn at the size it is shown, so that its labels stay readable in a narrow window.
    const W = Math.max(280, Math.round(svg.getBoundingClientRect().width) || 600), H = 180, L = 52, B = 18;
    svg.setAttribute("viewBox", "0 0 " + W + " " + H);
    const ns = "http://www.w3.org/2000/svg";
    const mk = (tag, attrs, text) => {
      const e = document.createElementNS(ns, tag);
      for (const [k, v] of Object.entries(attrs)) {
        // Custom properties reach SVG through style, not through presentation attributes.
        if (String(v).startsWith("var(")) e.style.setProperty(k, String(v));
        else e.setAttribute(k, String(v));
      }
      if (text !== undefined) e.textContent = text;
      return e;
    };
    // The window grows with the history, from a minute to the five kept.
    const n = Math.max(60, s.admittedPerSec.length);
    const span = n >= 120 ? Math.round(n / 60) + " min" : n + " s";
    const x = (i, len) => L + ((n - len + i) / (n - 1)) * (W - L - 4);
    const y = (v) => H - B - (v / top) * (H - B - 6);
    const line = (values, color, dash) => {
      const pts = values.map((v, i) => x(i, values.length).toFixed(1) + "," + y(v).toFixed(1)).join(" ");
      return mk("polyline", { points: pts, fill: "none", stroke: color, "stroke-width": 2, "stroke-dasharray": dash, "stroke-linecap": "round" });
    };
    const last = (a) => a.length ? a[a.length - 1] : 0;
    $("chart-title").textContent = "Admitted and denied per second over the last " + span + "; now " +
      perSec(last(s.admittedPerSec)) + " admitted, " + perSec(last(s.deniedPerSec)) + " denied";
    svg.replaceChildren($("chart-title"),
      mk("line", { x1: L, y1: H - B, x2: W, y2: H - B, stroke: "var(--line)" }),
      mk("line", { x1: L, y1: 6, x2: L, y2: H - B, stroke: "var(--line)" }),
      mk("text", { x: L - 4, y: 14, "text-anchor": "end", "font-size": 11, fill: "var(--muted)" }, whole.format(top)),
      mk("text", { x: L - 4, y: H - B, "text-anchor": "end", "font-size": 11, fill: "var(--muted)" }, "0"),
      mk("text", { x: 4, y: (H - B) / 2, "font-size": 11, fill: "var(--muted)" }, "req/s"),
      mk("text", { x: L, y: H - 4, "font-size": 11, fill: "var(--muted)" }, "−" + span),
      mk("text", { x: W - 4, y: H - 4, "text-anchor": "end", "font-size": 11, fill: "var(--muted)" }, "now"),
      line(s.admittedPerSec, "var(--admit)", "none"),
      line(s.deniedPerSec, "var(--deny)", "6 4"),
      line(s.shadowDeniedPerSec, "var(--shadow)", "1 4"));
    pairs("rates", [
      ["Admitted", perSec(last(s.admittedPerSec)) + " (" + whole.format(d.admitted) + " since start)"],
      ["Denied", perSec(last(s.deniedPerSec)) + " (" + whole.format(d.denied) + " since start)" + (d.dryRun ? ", would-be: dry run" : "")],
      ["Shadow-denied", perSec(last(s.shadowDeniedPerSec)) + " (" + whole.format(d.shadowDenied) + " since start)"],
      ["Keys tracked", whole.format(d.trackedKeys) + (d.overflowed ? ", " + whole.format(d.overflowed) + " checks overflowed" : "")],
    ]);
  }

  function renderHot(d) {
    const box = $("hot");
    box.replaceChildren();
    if (d.hotKeys.length === 0) { box.append(el("p", "No hot key: every key is within its cold share.", { class: "empty" })); return; }
    for (const h of d.hotKeys) {
      const art = el("article", null, { "data-key": h.key, "data-class": h.class });
      const sum = h.members.reduce((a, m) => a + m.sharePerSec, 0);
      const maxDemand = Math.max(1, ...h.members.map((m) => m.demandPerSec));
      art.append(el("h3", h.key + " (class " + className(h.class) + ")"));
      art.append(el("p", "Limit " + perSec(h.limitPerSec) + " across the fleet; the shares below sum to " + perSec(sum) + ".", { "data-sum": sum }));
      const table = el("table");
      table.append(el("caption", "Demand and share of " + h.key + " per member"));
      const head = el("tr");
      for (const t of ["Member", "Demand", "Share of the limit"]) head.append(el("th", t, { scope: "col" }));
      const thead = el("thead");
      thead.append(head);
      table.append(thead);
      const body = el("tbody");
      for (const m of h.members) {
        const pct = h.limitPerSec > 0 ? m.sharePerSec / h.limitPerSec : 0;
        const demand = el("td");
        demand.append(el("span", perSec(m.demandPerSec)), bar("demand", m.demandPerSec / maxDemand, "demand " + perSec(m.demandPerSec)));
        const share = el("td");
        share.append(el("span", perSec(m.sharePerSec) + " (" + whole.format(pct * 100) + "%)"), bar("share", pct, "share " + whole.format(pct * 100) + "% of the limit"));
        body.append(row([el("td", memberName(m, m.self)), demand, share], { "data-member": m.id, "data-share": m.sharePerSec, "data-demand": m.demandPerSec }));
      }
      table.append(body);
      const wrap = el("div", null, { class: "scroll" });
      wrap.append(table);
      art.append(wrap);
      box.append(art);
    }
  }

  function renderDenied(id, list, field) {
    fill(id, list.map((k) => row([el("td", k.key + (k.class ? " (class " + k.class + ")" : ""), { class: "key" }), perSec(k[field]), perSec(k.requestsPerSec)])), "none lately");
  }

  function renderRules(d) {
    const r = d.rules;
    const f = d.fleetRules;
    const shared = !f ? [["Fleet rules", "not shared"]] : [
      f.outOfStep
        ? ["Fleet rules", "out of step: " + f.outOfStepReason, { class: "warn", "data-testid": "rules-out-of-step", "data-digest": f.digest }]
        : ["Fleet rules", (f.learning ? "learning, " : "in step, ") + "digest " + f.digest + ", " + whole.format(f.live) + " rules", { "data-testid": "rules-in-step", "data-digest": f.digest }],
      ["… refused", whole.format(f.refusals) + " (malformed " + whole.format(f.malformed) + ")", f.refusals ? { class: "warn" } : {}],
      ["… last refusal", f.lastRefusal || "none"],
      f.tableFull
        ? ["… table", "full: " + f.tableFullReason, { class: "warn", "data-testid": "rules-table-full" }]
        : ["… table", whole.format(f.entries) + " of " + whole.format(f.bound) + " entries (" + whole.format(f.own) + " set here, " + whole.format(f.peers) + " from peers)", { "data-testid": "rules-table" }],
    ];
    pairs("mode", [["Dry run", d.dryRun ? "on: denials are only counted" : "off"], ["Gossip signing", d.gossipAuth]].concat(shared));
    fill("classes", r.classes.map((c) => row([className(c.class), c.limit, whole.format(c.burst)])), "none");
    fill("key-limits", r.keyLimits.map((k) => row([className(k.class), el("td", k.key, { class: "key" }), k.follows !== undefined ? "follows " + className(k.follows) : k.limit])), "none");
    fill("shadows", r.shadows.map((c) => row([className(c.class), c.limit, whole.format(c.burst)])), "none");
  }

  function render(d) {
    renderFleet(d);
    renderGossip(d);
    renderChart(d);
    renderHot(d);
    renderDenied("denied", d.mostDenied, "deniedPerSec");
    renderDenied("shadow-denied", d.mostShadowDenied, "shadowDeniedPerSec");
    renderRules(d);
    $("main").hidden = false;
    $("login").hidden = true;
    $("forget").hidden = token() === "";
    const at = new Date(d.atMs).toISOString().slice(11, 19);
    $("status").textContent = (d.self.address || "standalone") + (d.running ? "" : " (stopped)") + " · updated " + at + " UTC";
    document.body.dataset.updated = String(d.atMs);
  }

  function askToken(message) {
    $("main").hidden = true;
    $("login").hidden = false;
    $("login-error").textContent = message;
    $("status").textContent = "This sidecar needs its admin token.";
    $("token").focus();
  }

  async function poll() {
    const t = token();
    let data;
    try {
      const res = await fetch("v1/dashboard", { headers: t ? { authorization: "Bearer " + t } : {}, cache: "no-store" });
      if (res.status === 401) return askToken(t ? "That token was refused." : "");
      if (!res.ok) throw new Error("HTTP " + res.status);
      data = await res.json();
      failures = 0;
    } catch (e) {
      failures++;
      $("status").textContent = "Cannot reach the sidecar (" + (e && e.message || e) + "); retrying.";
    }
    try {
      if (data) render(data);
    } catch (e) {
      $("status").textContent = "This page failed to show the data: " + (e && e.message || e);
    }
    setTimeout(poll, PERIOD_MS * Math.min(5, 1 + failures));
  }

  $("login").addEventListener("submit", (ev) => {
    ev.preventDefault();
    try { sessionStorage.setItem(TOKEN, $("token").value.trim()); } catch { /* private mode: asked again next time */ }
    $("token").value = "";
    poll();
  });
  $("forget").addEventListener("click", () => {
    try { sessionStorage.removeItem(TOKEN); } catch { /* nothing kept */ }
    location.reload();
  });
  poll();
})();
`;
