// yard's rm web UI: one page with eight views (overview, nodes, one node, applications, one
// application, one attempt, one container, one log file), drawn from the rm's own REST API and
// redrawn every few seconds (the applications table a page at a time, filtered, sorted and
// paged by the rm). No library,
// no build step, nothing fetched from anywhere but this rm. Every value from the API goes
// into the page as text (textContent), never as markup.
//
// Authentication: the API's bearer token, pasted once into the form or given in the URL as
// `#token=…` (the fragment never reaches a server), kept in this tab's sessionStorage and
// sent as `Authorization: Bearer` to this rm only.
"use strict";

(() => {
  // Every route this page calls (all GET); a test checks each one is a route of the rm.
  const API = {
    info: "/ws/v1/cluster/info",
    metrics: "/ws/v1/cluster/metrics",
    scheduler: "/ws/v1/cluster/scheduler",
    nodes: "/ws/v1/cluster/nodes",
    node: "/ws/v1/cluster/nodes/{id}",
    apps: "/ws/v1/cluster/apps",
    appStatistics: "/ws/v1/cluster/appstatistics",
    app: "/ws/v1/cluster/apps/{id}",
    attempts: "/ws/v1/cluster/apps/{id}/appattempts",
    attempt: "/ws/v1/cluster/apps/{id}/appattempts/{attempt}",
    attemptContainers: "/ws/v1/cluster/apps/{id}/appattempts/{attempt}/containers",
    attemptContainer: "/ws/v1/cluster/apps/{id}/appattempts/{attempt}/containers/{container}",
    jobs: "/ws/v1/yard/mapreduce/jobs",
    job: "/ws/v1/yard/mapreduce/jobs/{id}",
    whoami: "/ws/v1/yard/auth/whoami",
    history: "/ws/v1/yard/history",
    logs: "/ws/v1/yard/apps/{id}/logs",
    logFile: "/ws/v1/yard/apps/{id}/logs/{container}/{file}",
  };
  // A log file's page shows its last bytes (`?start=-N`), as `yarn logs -size -N` would.
  const LOG_TAIL_BYTES = 65536;
  const REFRESH_MS = 3000;
  // The applications table is filtered, sorted and paged on the rm: the page passes these
  // `/apps` parameters on as the fragment gives them (`#/apps?states=RUNNING&sort=name`).
  const APP_FILTERS = ["states", "queue", "user", "applicationTypes", "outcome", "search"];
  const APP_PAGING = ["sort", "offset", "limit"];
  const PAGE_SIZE = 25;
  const DEFAULT_SORT = "-startedTime";
  const APP_STATES = ["NEW", "NEW_SAVING", "SUBMITTED", "ACCEPTED", "RUNNING", "FINISHED", "FAILED", "KILLED"];
  const TOKEN_KEY = "yard.rm.token";
  const SVG = "http://www.w3.org/2000/svg";

  // ---- the token --------------------------------------------------------------------

  let memoryToken = null; // where the token lives when sessionStorage is unavailable

  function token() {
    try {
      return sessionStorage.getItem(TOKEN_KEY) || memoryToken;
    } catch (_) {
      return memoryToken;
    }
  }

  function setToken(t) {
    memoryToken = t;
    try {
      if (t) sessionStorage.setItem(TOKEN_KEY, t);
      else sessionStorage.removeItem(TOKEN_KEY);
    } catch (_) {
      // Storage refused (a private window, a policy): the token lasts as long as the page.
    }
  }

  // The fragment: `#/view[?k=v&…]`, or `#k=v&…` alone.
  function parseHash() {
    const h = location.hash.replace(/^#/, "");
    let route = h;
    let query = "";
    const q = h.indexOf("?");
    if (q >= 0) {
      route = h.slice(0, q);
      query = h.slice(q + 1);
    } else if (!h.startsWith("/")) {
      route = "";
      query = h;
    }
    const params = {};
    for (const kv of query.split("&")) {
      if (!kv) continue;
      const i = kv.indexOf("=");
      try {
        params[decodeURIComponent(i < 0 ? kv : kv.slice(0, i))] =
          decodeURIComponent(i < 0 ? "" : kv.slice(i + 1));
      } catch (_) {
        // A malformed escape: the pair is ignored.
      }
    }
    return { route, params };
  }

  // A `token=` in the fragment is taken and removed from the address bar and history.
  function takeTokenFromHash() {
    const { route, params } = parseHash();
    if (params.token) {
      setToken(params.token.trim());
      // The view's other parameters (the applications' filters) stay.
      const rest = Object.entries(params)
        .filter(([k]) => k !== "token")
        .map(([k, v]) => encodeURIComponent(k) + "=" + encodeURIComponent(v));
      const query = rest.length && route ? "?" + rest.join("&") : "";
      history.replaceState(null, "", location.pathname + location.search + "#" + (route || "/overview") + query);
    }
  }

  function decoded(p) {
    try {
      return p === undefined ? p : decodeURIComponent(p);
    } catch (_) {
      return p; // shown as written
    }
  }

  function currentView() {
    const parts = parseHash().route.split("/").filter(Boolean);
    if (parts[0] === "nodes" && parts[1]) return { name: "node", id: decoded(parts[1]) };
    if (parts[0] === "nodes") return { name: "nodes" };
    if (parts[0] === "apps" && parts[1]) {
      const [id, container, file] = [parts[1], parts[3], parts[4]].map(decoded);
      if (parts[2] === "logs" && container && file) return { name: "log", id, container, file };
      if (parts[2] === "attempts" && parts[3]) {
        const attempt = decoded(parts[3]);
        if (parts[4] === "containers" && parts[5]) return { name: "container", id, attempt, container: decoded(parts[5]) };
        return { name: "attempt", id, attempt };
      }
      return { name: "app", id };
    }
    if (parts[0] === "apps") return { name: "apps", params: parseHash().params };
    return { name: "overview" };
  }

  // ---- the API ----------------------------------------------------------------------

  class ApiError extends Error {
    constructor(status, message) {
      super(message);
      this.status = status;
    }
  }

  async function api(template, vars, query, asText) {
    let path = template.replace(/\{(\w+)\}/g, (_, k) => encodeURIComponent(vars[k]));
    if (query) path += "?" + query;
    const headers = { Accept: asText ? "text/plain" : "application/json" };
    const t = token();
    if (t) headers.Authorization = "Bearer " + t;
    let r;
    try {
      r = await fetch(path, { headers, cache: "no-store", credentials: "omit" });
    } catch (e) {
      throw new ApiError(0, "the rm does not answer (" + e.message + ")");
    }
    if (asText && r.ok) return r.text();
    let body = null;
    try {
      body = await r.json();
    } catch (_) {
      body = null;
    }
    if (!r.ok) {
      const why =
        (body && (body.error || (body.RemoteException && body.RemoteException.message))) ||
        r.statusText;
      throw new ApiError(r.status, r.status + " " + why);
    }
    return body;
  }

  // ---- formatting -------------------------------------------------------------------

  const DASH = "—";

  function num(x, digits) {
    if (x === null || x === undefined || typeof x !== "number" || !isFinite(x)) return DASH;
    if (Number.isInteger(x)) return String(x);
    return x.toFixed(digits === undefined ? 1 : digits);
  }

  function pct(fraction) {
    if (typeof fraction !== "number" || !isFinite(fraction)) return DASH;
    return (fraction * 100).toFixed(1) + " %";
  }

  function bytes(b) {
    if (typeof b !== "number" || !isFinite(b)) return DASH;
    const units = ["B", "KiB", "MiB", "GiB", "TiB"];
    let i = 0;
    while (Math.abs(b) >= 1024 && i < units.length - 1) {
      b /= 1024;
      i++;
    }
    return (i === 0 ? String(Math.round(b)) : b.toFixed(1)) + " " + units[i];
  }

  function duration(ms) {
    if (typeof ms !== "number" || !isFinite(ms)) return DASH;
    let s = Math.round(Math.abs(ms) / 1000);
    const parts = [];
    for (const [unit, size] of [["d", 86400], ["h", 3600], ["m", 60]]) {
      if (s >= size) {
        parts.push(Math.floor(s / size) + unit);
        s %= size;
      }
    }
    if (s || !parts.length) parts.push(s + "s");
    return parts.slice(0, 2).join(" ");
  }

  function utc(ms) {
    return new Date(ms).toISOString().replace("T", " ").slice(0, 19) + " UTC";
  }

  // A moment as `<time>`: UTC, and how far from now.
  function moment(ms, now) {
    if (typeof ms !== "number" || ms <= 0) return text(DASH);
    const rel = ms - now;
    const node = h("time", { datetime: new Date(ms).toISOString(), title: String(ms) }, utc(ms));
    return h("span", {}, node, " ", h("span", { class: "muted" }, rel >= 0 ? "(in " + duration(rel) + ")" : "(" + duration(rel) + " ago)"));
  }

  // ---- the DOM ----------------------------------------------------------------------

  function text(s) {
    return document.createTextNode(s === null || s === undefined ? "" : String(s));
  }

  function h(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v !== null && v !== undefined && v !== false) e.setAttribute(k, v === true ? "" : String(v));
    }
    append(e, children);
    return e;
  }

  function append(e, children) {
    for (const c of children) {
      if (c === null || c === undefined || c === false) continue;
      if (Array.isArray(c)) append(e, c);
      else e.appendChild(c instanceof Node ? c : text(c));
    }
    return e;
  }

  function s(tag, attrs, ...children) {
    const e = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, String(v));
    append(e, children);
    return e;
  }

  function table(headers, rows, empty) {
    if (!rows.length) return h("p", { class: "empty" }, empty);
    return h(
      "table",
      {},
      h("thead", {}, h("tr", {}, headers.map((x) => h("th", {}, x)))),
      h("tbody", {}, rows)
    );
  }

  function card(label, value, detail) {
    return h("div", { class: "card" }, h("div", { class: "label" }, label), h("div", { class: "value" }, value), detail ? h("div", { class: "muted" }, detail) : null);
  }

  function bar(fraction) {
    const f = typeof fraction === "number" && isFinite(fraction) ? Math.max(0, Math.min(1, fraction)) : 0;
    const fill = h("span", { class: "fill" });
    fill.style.width = (f * 100).toFixed(1) + "%";
    return h("span", { class: "bar", title: pct(f) }, fill);
  }

  // YARN's state and final status; an application that missed its deadline (or answered it
  // from no input) is not drawn green, whatever YARN says.
  function stateBadge(state, finalStatus, outcome) {
    const s = String(state || "UNKNOWN");
    const label = finalStatus && finalStatus !== "UNDEFINED" ? s + " / " + finalStatus : s;
    const unmet = outcome === "missed" || outcome === "empty";
    return h("span", { class: "state state-" + s.toLowerCase() + (unmet ? " state-unmet" : "") }, label);
  }

  // The rm's `deadlineOutcome` beside the state: met, empty, missed or pending (none: no
  // deadline).
  const OUTCOMES = {
    met: ["deadline met", "answered by the deadline from some input"],
    empty: ["empty answer", "answered by the deadline from no input: not a met deadline"],
    missed: ["deadline missed", "answered after the deadline, or never by it"],
    pending: ["deadline pending", "not answered yet; the deadline is still ahead"],
  };

  function outcomeBadge(outcome) {
    const o = OUTCOMES[outcome];
    if (!o) return null;
    return h("span", { class: "outcome outcome-" + outcome, title: o[1] }, o[0]);
  }

  function kv(pairs) {
    return h("dl", { class: "kv" }, pairs.filter(Boolean).map(([k, v]) => [h("dt", {}, k), h("dd", {}, v)]));
  }

  function appLink(id) {
    return h("a", { href: "#/apps/" + encodeURIComponent(id) }, id);
  }

  function nodeLink(id) {
    return h("a", { href: "#/nodes/" + encodeURIComponent(id) }, id);
  }

  function logHref(id, container, file) {
    return "#/apps/" + [id, "logs", container, file].map(encodeURIComponent).join("/");
  }

  // The attempt a container belongs to: YARN's `container_[e<epoch>_]<ts>_<app>_<attempt>_<n>`.
  function attemptOf(container) {
    const parts = String(container).split("_");
    return parts.length >= 4 ? parseInt(parts[parts.length - 2], 10) : NaN;
  }

  function attemptHref(id, attempt) {
    return "#/apps/" + encodeURIComponent(id) + "/attempts/" + encodeURIComponent(attempt);
  }

  function containerHref(id, container) {
    return attemptHref(id, attemptOf(container)) + "/containers/" + encodeURIComponent(container);
  }

  function containerLink(id, container) {
    return isFinite(attemptOf(container)) ? h("a", { href: containerHref(id, container) }, container) : text(container);
  }

  // stdout and stderr of a container, linked to their pages.
  function logLinks(id, container) {
    return ["stdout", "stderr"].map((f) => [h("a", { href: logHref(id, container, f) }, f), " "]);
  }

  function list(obj, key, inner) {
    const v = obj && obj[key];
    const l = v && v[inner];
    return Array.isArray(l) ? l : [];
  }

  // ---- views --------------------------------------------------------------------------

  async function overview() {
    // Counts, not every application: by state from YARN's statistics, by deadline outcome
    // from each outcome's `total` (one application fetched each).
    const outcomeNames = Object.keys(OUTCOMES);
    const [m, sch, stats, nodes, hist, ...byOutcome] = await Promise.all([
      api(API.metrics),
      api(API.scheduler),
      api(API.appStatistics),
      api(API.nodes),
      api(API.history),
      ...outcomeNames.map((o) => api(API.apps, {}, "outcome=" + o + "&limit=1")),
    ]);
    const cm = m.clusterMetrics || {};
    const si = (sch.scheduler && sch.scheduler.schedulerInfo) || {};
    const nodeList = list(nodes, "nodes", "node");
    const byState = {};
    let appCount = 0;
    for (const st of list(stats, "appStatInfo", "statItem")) {
      if (st.count > 0) byState[st.state] = st.count;
      appCount += st.count || 0;
    }
    const verdicts = {};
    for (const n of nodeList) {
      const v = (n.overload && n.overload.verdict) || "unknown";
      verdicts[v] = (verdicts[v] || 0) + 1;
    }
    const outcomes = {};
    outcomeNames.forEach((o, i) => {
      outcomes[o] = (byOutcome[i].apps && byOutcome[i].apps.total) || 0;
    });
    const withDeadline = outcomeNames.reduce((sum, o) => sum + outcomes[o], 0);
    const oc = si.overloadClassifier;
    const queues = list(si, "queues", "queue");
    return [
      h("h1", {}, "Cluster"),
      h(
        "div",
        { class: "cards" },
        card("Nodes", num(cm.activeNodes) + " running", num(cm.lostNodes) + " lost of " + num(cm.totalNodes)),
        card("Applications", num(cm.appsRunning) + " running", num(cm.appsPending) + " pending · " + num(cm.appsSubmitted) + " submitted"),
        card("Ended", num(cm.appsCompleted) + " completed", num(cm.appsFailed) + " failed · " + num(cm.appsKilled) + " killed"),
        card("Memory", num(cm.allocatedMB) + " / " + num(cm.totalMB) + " MB", bar(cm.totalMB ? cm.allocatedMB / cm.totalMB : 0)),
        card("vcores", num(cm.allocatedVirtualCores) + " / " + num(cm.totalVirtualCores), bar(cm.totalVirtualCores ? cm.allocatedVirtualCores / cm.totalVirtualCores : 0)),
        card("Containers", num(cm.containersAllocated), "allocated")
      ),
      h("h2", {}, "The last hour"),
      historyCharts((hist && hist.history) || {}),
      h("h2", {}, "Scheduler"),
      kv([
        ["policy", h("strong", { id: "policy" }, si.policy || DASH)],
        ["YARN type", si.type || DASH],
        ["master share", num(si.masterShare, 2)],
        ["masters use", si.mastersUsed ? num(si.mastersUsed.memory) + " MB, " + num(si.mastersUsed.vCores) + " vcores" : DASH],
        ["spare allocations / kills", num(si.spareAllocations) + " / " + num(si.spareKills)],
        ["spare map allocations / kills", num(si.spareMapAllocations) + " / " + num(si.spareMapKills)],
        [
          "overload classifier",
          oc ? "on: " + oc.rule + " (" + oc.utility + "), labelled " + num(oc.good) + " good, " + num(oc.bad) + " bad, needs " + num(oc.minSamples) : "off",
        ],
        ["node verdicts", Object.keys(verdicts).length ? Object.entries(verdicts).map(([k, v]) => k + " " + v).join(" · ") : "no nodes"],
      ]),
      h("h2", {}, "Applications by state"),
      appCount
        ? h(
            "div",
            { class: "cards" },
            Object.entries(byState).map(([k, v]) => card(h("a", { href: appsHash({ states: k }) }, k), String(v))),
            card("with a deadline", String(withDeadline), outcomeNames.map((o) => [h("a", { href: appsHash({ outcome: o }) }, o), " " + outcomes[o] + " "]))
          )
        : h("p", { class: "empty" }, "No applications yet."),
      h("h2", {}, "Queues"),
      table(
        ["queue", "apps", "used memory", "used capacity"],
        queues.map((q) =>
          h("tr", {}, h("td", {}, q.queueName), h("td", {}, num(q.numApplications)), h("td", {}, num(q.resourcesUsed && q.resourcesUsed.memory) + " MB"), h("td", {}, num(q.usedCapacity) + " %"))
        ),
        "No queues."
      ),
    ];
  }

  // The rm's own history of the cluster (`API.history`): allocated capacity as a
  // share of the running nodes', and running and pending applications, over the last hour.
  function historyCharts(hist) {
    const points = Array.isArray(hist.points) ? hist.points : [];
    if (points.length < 2) {
      return h("p", { class: "empty", id: "history-empty" }, "No history yet: the rm samples the cluster every " + duration(hist.stepMs || 10000) + " and draws it once it has two samples.");
    }
    const share = (used, total) => (total > 0 ? (100 * used) / total : 0);
    // At least 5, so the axis counts in whole applications.
    const maxApps = Math.max(5, ...points.map((p) => Math.max(p.appsRunning, p.appsPending)));
    return h(
      "div",
      { class: "charts" },
      lineChart("history-capacity", hist, "allocated (% of running nodes')", 100, (v) => num(Math.round(v)) + " %", [
        { name: "memory", cls: "series-a", value: (p) => share(p.allocatedMB, p.totalMB) },
        { name: "vcores", cls: "series-b", value: (p) => share(p.allocatedVirtualCores, p.totalVirtualCores) },
      ]),
      lineChart("history-apps", hist, "applications", maxApps, (v) => num(Math.round(v)), [
        { name: "running", cls: "series-a", value: (p) => p.appsRunning },
        { name: "pending", cls: "series-b", value: (p) => p.appsPending },
      ])
    );
  }

  // A small line chart of `series` over the history's span, ending at its last point; a gap
  // of more than two steps (the rm was down) breaks the lines.
  function lineChart(id, hist, label, ymax, fmt, series) {
    const points = hist.points;
    const W = 520, H = 200, L = 48, R = 12, T = 12, B = 36;
    const end = points[points.length - 1].atMs;
    const span = hist.spanMs || 3600000;
    const X = (t) => L + ((t - (end - span)) / span) * (W - L - R);
    const Y = (v) => H - B - (Math.min(v, ymax) / ymax) * (H - T - B);
    const g = [];
    for (const t of ticks(ymax)) {
      g.push(s("line", { x1: L, x2: W - R, y1: Y(t), y2: Y(t), class: "grid" }));
      g.push(s("text", { x: L - 6, y: Y(t) + 4, "text-anchor": "end", class: "tick" }, fmt(t)));
    }
    for (let m = 0; m <= span / 60000; m += 10) {
      const x = X(end - m * 60000);
      g.push(s("line", { x1: x, x2: x, y1: T, y2: H - B, class: "grid" }));
      g.push(s("text", { x, y: H - B + 16, "text-anchor": "middle", class: "tick" }, m ? "−" + m + " min" : "now"));
    }
    g.push(s("text", { x: (L + W - R) / 2, y: H - 4, "text-anchor": "middle", class: "axis" }, "as sampled by the rm, up to " + utc(end)));
    const gap = 2 * (hist.stepMs || 10000);
    for (const sr of series) {
      let run = [];
      const flush = () => {
        if (run.length) g.push(s("polyline", { points: run.join(" "), class: "line " + sr.cls, "data-series": sr.name }));
        run = [];
      };
      points.forEach((p, i) => {
        if (i > 0 && p.atMs - points[i - 1].atMs > gap) flush();
        run.push(X(p.atMs).toFixed(1) + "," + Y(sr.value(p)).toFixed(1));
      });
      flush();
    }
    const last = points[points.length - 1];
    return h(
      "figure",
      { class: "chart", id },
      s("svg", { viewBox: "0 0 " + W + " " + H, width: W, height: H, role: "img", "aria-label": label + " over the last hour" }, g),
      h(
        "figcaption",
        { class: "legend" },
        h("strong", {}, label),
        series.map((sr) => h("span", { class: "key key-" + sr.cls }, sr.name + " " + fmt(sr.value(last))))
      )
    );
  }

  function verdictCell(o) {
    const v = (o && o.verdict) || "unknown";
    if (!o || o.classifier === "off") return h("td", {}, h("span", { class: "verdict verdict-unknown" }, "classifier off"));
    const counts = "good " + num(o.labelledGood) + " · bad " + num(o.labelledBad) + " · pending " + num(o.pending) + " · probes " + num(o.probes);
    const features = Array.isArray(o.features) ? o.features.map((f) => f.name + "=" + f.level + " [" + f.good + "/" + f.bad + "]").join(", ") : "";
    return h(
      "td",
      { title: features },
      h("span", { class: "verdict verdict-" + v }, v),
      " P(good) " + num(o.pGood, 2),
      o.overloaded === true ? h("span", { class: "warn" }, " rule: overloaded") : null,
      h("div", { class: "muted small" }, counts)
    );
  }

  async function nodesView() {
    const nodes = list(await api(API.nodes), "nodes", "node");
    const rows = nodes.map((n) => {
      const l = n.yardLoad || null;
      const total = n.totalResource || {};
      return h(
        "tr",
        { "data-node": n.id },
        h("td", {}, h("strong", {}, nodeLink(n.id)), h("div", { class: "muted small" }, n.rack)),
        h("td", {}, stateBadge(n.state), h("div", { class: "muted small" }, n.healthReport || n.healthStatus)),
        h("td", {}, num(n.numContainers)),
        h("td", {}, num(n.usedMemoryMB) + " / " + num(total.memory) + " MB", bar(total.memory ? n.usedMemoryMB / total.memory : 0)),
        h("td", {}, num(n.usedVirtualCores) + " / " + num(total.vCores)),
        h("td", { class: "load" }, l ? num(l.loadPerCore, 2) : DASH, l ? h("div", { class: "muted small" }, "1m " + num(l.load1m, 2) + " on " + num(l.cores) + " cores") : null),
        h("td", {}, l ? num(l.cpuPercent) + " %" : DASH),
        h("td", {}, l ? pct(l.memoryUsedFraction) : DASH),
        h("td", {}, l ? bytes(l.diskReadBytesPerS) + "/s r · " + bytes(l.diskWriteBytesPerS) + "/s w" : DASH, l && l.diskIoRateBytesPerS ? h("div", { class: "muted small" }, "rate " + bytes(l.diskIoRateBytesPerS) + "/s") : null),
        verdictCell(n.overload),
        h("td", { class: "muted small" }, l && l.sampledAt ? moment(l.sampledAt, Date.now()) : "no sample yet")
      );
    });
    return [
      h("h1", {}, "Nodes"),
      table(
        ["node", "state", "containers", "memory", "vcores", "load / core", "CPU", "memory in use", "disk", "overload verdict", "last sample"],
        rows,
        "No nodes have registered with this rm yet."
      ),
    ];
  }

  // One node: what the nodes table shows, its recent load samples, and the containers the rm
  // placed on it, each with its application and its logs (read from this node while it runs).
  async function nodeView(view) {
    const n = (await api(API.node, { id: view.id })).node || {};
    const l = n.yardLoad || null;
    const total = n.totalResource || {};
    const now = Date.now();
    const containers = (n.yardContainers || []).map((c) =>
      h(
        "tr",
        { "data-container": c.containerId },
        h("td", {}, c.containerId),
        h("td", {}, appLink(c.applicationId)),
        h("td", {}, num(c.allocatedMB) + " MB · " + num(c.allocatedVCores) + " vcores"),
        h("td", {}, moment(c.startedTime, now)),
        h("td", {}, ["stdout", "stderr"].map((f) => [h("a", { href: logHref(c.applicationId, c.containerId, f) }, f), " "]))
      )
    );
    const samples = (n.yardLoadHistory || []).slice(-10).reverse().map((p) =>
      h(
        "tr",
        {},
        h("td", {}, moment(p.time, now)),
        h("td", {}, num(p.load1m, 2)),
        h("td", {}, num(p.cpuPercent) + " %"),
        h("td", {}, pct(p.memoryUsedFraction)),
        h("td", {}, bytes(p.diskReadBytesPerS) + "/s r · " + bytes(p.diskWriteBytesPerS) + "/s w")
      )
    );
    return [
      h("p", {}, h("a", { href: "#/nodes" }, "← nodes")),
      h("h1", {}, "Node ", n.id || view.id, " ", stateBadge(n.state)),
      kv([
        ["rack", n.rack],
        ["health", n.healthReport || n.healthStatus],
        ["last heartbeat", moment(n.lastHealthUpdate, now)],
        ["memory", [num(n.usedMemoryMB) + " / " + num(total.memory) + " MB ", bar(total.memory ? n.usedMemoryMB / total.memory : 0)]],
        ["vcores", num(n.usedVirtualCores) + " / " + num(total.vCores)],
        ["load / core", l ? num(l.loadPerCore, 2) + " (1m " + num(l.load1m, 2) + " on " + num(l.cores) + " cores)" : "no sample yet"],
        ["overload verdict", Array.from(verdictCell(n.overload).childNodes)],
      ]),
      h("h2", {}, "Containers"),
      table(["container", "application", "resources", "started", "logs"], containers, "No containers on this node."),
      h("h2", {}, "Recent load"),
      table(["sampled", "load 1m", "CPU", "memory in use", "disk"], samples, "No load sample yet."),
    ];
  }

  // An application that has ended (its master reports no more).
  function hasEnded(a) {
    return ["FINISHED", "FAILED", "KILLED"].includes(a.state);
  }

  // The job's figures beside the app's, when the app is a MapReduce job. The estimate against
  // the deadline is the running job's; once the app has ended its outcome says how it went
  // (a killed job's last estimate read "9m 49s early").
  function jobFigures(job, ended) {
    const p = (job && job.progress) || null;
    const live = p && !ended && typeof p.slackMs === "number";
    return {
      maps: p ? num(p.mapsDone) + " / " + num(p.mapsLaunched) + " of " + num(p.maps) : DASH,
      slack: live ? (p.slackMs >= 0 ? duration(p.slackMs) + " early" : duration(p.slackMs) + " late") : DASH,
      processed: job && typeof job.processedFraction === "number" ? pct(job.processedFraction) : DASH,
    };
  }

  // `#/apps` with these parameters (the empty ones left out).
  function appsHash(params) {
    // Escaped as parseHash unescapes (a space as %20: it reads no `+` as one).
    const pairs = [];
    for (const k of APP_FILTERS.concat(APP_PAGING)) {
      const v = params[k];
      if (v !== undefined && v !== null && String(v) !== "") pairs.push(k + "=" + encodeURIComponent(String(v)));
    }
    return "#/apps" + (pairs.length ? "?" + pairs.join("&") : "");
  }

  // The filter controls: each is an `/apps` parameter; a new filter starts at the first page.
  function appFilters(p, stateKey) {
    const field = (name, label, control) => h("label", { class: "filter" }, h("span", { class: "muted small" }, label), control);
    // A value the list lacks (`states=RUNNING,ACCEPTED` from an address) is kept as one more.
    const select = (name, options) => {
      const given = p[name] || "";
      const all = options.some(([v]) => v === given) ? options : options.concat([[given, given]]);
      return h("select", { name }, all.map(([v, label]) => h("option", { value: v, selected: given === v }, label)));
    };
    const input = (name, placeholder, type) => h("input", { name, type: type || "text", value: p[name] || "", placeholder, size: 12 });
    const form = h(
      "form",
      { id: "app-filters", class: "filters", "data-keep": "app-filters", "data-state": stateKey },
      field("states", "state", select("states", [["", "any state"]].concat(APP_STATES.map((st) => [st, st])))),
      field("outcome", "deadline outcome", select("outcome", [["", "any"], ["met", "met"], ["empty", "empty"], ["missed", "missed"], ["pending", "pending"], ["none", "no deadline"]])),
      field("queue", "queue", input("queue", "any queue")),
      field("user", "user", input("user", "any user")),
      field("applicationTypes", "type", input("applicationTypes", "any type")),
      field("search", "id or name contains", input("search", "search", "search")),
      h("button", { type: "submit" }, "Filter"),
      h("a", { href: "#/apps", class: "clear" }, "clear")
    );
    form.addEventListener("submit", (ev) => {
      ev.preventDefault();
      const next = { sort: p.sort, limit: p.limit };
      for (const k of APP_FILTERS) next[k] = (form.elements[k].value || "").trim();
      location.hash = appsHash(next);
    });
    for (const sel of form.querySelectorAll("select")) sel.addEventListener("change", () => form.requestSubmit());
    return form;
  }

  // A column header that sorts the list on the rm by `key` (again: the other way).
  function sortHeader(p, label, key) {
    const sort = p.sort || DEFAULT_SORT;
    const here = sort.replace(/^-/, "") === key;
    const descending = sort.startsWith("-");
    const next = here && !descending ? "-" + key : key;
    return h(
      "a",
      { href: appsHash(Object.assign({}, p, { sort: next, offset: "" })), class: "sort" + (here ? " sorted" : ""), "data-sort": key },
      label,
      here ? (descending ? " ▼" : " ▲") : null
    );
  }

  // Where this page is among the matching applications, and the pages either side.
  function pager(p, offset, limit, shown, total) {
    const to = (o) => appsHash(Object.assign({}, p, { offset: o > 0 ? o : "" }));
    const range = shown ? offset + 1 + "–" + (offset + shown) + " of " + total : total ? "none here of " + total : "none";
    return h(
      "nav",
      { id: "pager", class: "pager" },
      offset > 0 ? h("a", { href: to(Math.max(0, Math.min(offset - limit, total - limit))), rel: "prev" }, "← previous") : h("span", { class: "muted" }, "← previous"),
      h("span", { class: "page-range" }, range),
      offset + shown < total ? h("a", { href: to(offset + limit), rel: "next" }, "next →") : h("span", { class: "muted" }, "next →")
    );
  }

  async function appsView(view) {
    const p = view.params || {};
    const limit = Math.max(1, parseInt(p.limit, 10) || PAGE_SIZE);
    const offset = Math.max(0, parseInt(p.offset, 10) || 0);
    const q = new URLSearchParams();
    for (const k of APP_FILTERS) if (p[k]) q.set(k, p[k]);
    q.set("sort", p.sort || DEFAULT_SORT);
    q.set("offset", String(offset));
    q.set("limit", String(limit));
    const filtered = APP_FILTERS.some((k) => p[k]);
    const controls = [h("h1", {}, "Applications"), appFilters(p, q.toString())];
    const keep = h("div", { "data-keep": "apps-head", "data-state": q.toString() }, controls);
    let apps;
    try {
      apps = await api(API.apps, {}, q.toString());
    } catch (e) {
      // A filter the rm refuses: say why under the controls, to be mended there.
      if (e.status !== 400) throw e;
      return { keep, body: h("p", { class: "error", id: "apps-error" }, e.message) };
    }
    const appList = list(apps, "apps", "app");
    const total = apps.apps && typeof apps.apps.total === "number" ? apps.apps.total : appList.length;
    // The MapReduce jobs among this page's applications, for their maps and answers.
    const byId = {};
    if (appList.length) {
      const jobs = await api(API.jobs, {}, "show=all&ids=" + encodeURIComponent(appList.map((a) => a.id).join(",")));
      for (const j of (jobs && jobs.jobs) || []) byId[j.id] = j;
    }
    const now = Date.now();
    const rows = appList.map((a) => {
      const f = jobFigures(byId[a.id], hasEnded(a));
      return h(
        "tr",
        { "data-app": a.id },
        h("td", {}, appLink(a.id)),
        h("td", {}, a.name, h("div", { class: "muted small" }, a.user + " · " + a.queue)),
        h("td", {}, a.applicationType),
        h("td", {}, stateBadge(a.state, a.finalStatus, a.deadlineOutcome)),
        h("td", { class: "outcome-cell" }, outcomeBadge(a.deadlineOutcome) || DASH),
        h("td", { class: "started" }, moment(a.startedTime, now)),
        h("td", { class: "deadline" }, typeof a.deadlineMs === "number" ? moment(a.deadlineMs, now) : "no deadline"),
        h("td", {}, a.quota === null || a.quota === undefined ? DASH : num(a.quota)),
        h("td", {}, bar((a.progress || 0) / 100), " " + num(a.progress) + " %"),
        h("td", {}, f.maps),
        h("td", {}, f.slack),
        h("td", { class: "processed" }, f.processed)
      );
    });
    const headers = [
      sortHeader(p, "id", "id"),
      sortHeader(p, "name", "name"),
      sortHeader(p, "type", "applicationType"),
      sortHeader(p, "state", "state"),
      "deadline outcome",
      sortHeader(p, "started", "startedTime"),
      sortHeader(p, "deadline", "deadlineMs"),
      "quota",
      sortHeader(p, "progress", "progress"),
      "maps done / launched",
      "estimate vs deadline",
      "processed fraction",
    ];
    return {
      keep,
      body: [
        table(headers, rows, filtered ? "No application matches these filters." : total ? "No applications on this page." : "No applications yet."),
        pager(p, offset, limit, appList.length, total),
      ],
    };
  }

  // Nice tick steps for an axis from 0 to `max`.
  function ticks(max) {
    if (!(max > 0)) return [0];
    const raw = max / 5;
    const mag = Math.pow(10, Math.floor(Math.log10(raw)));
    const step = [1, 2, 5, 10].map((m) => m * mag).find((st) => st >= raw);
    const out = [];
    for (let t = 0; t <= max + 1e-9; t += step) out.push(t);
    return out;
  }

  // The estimate of the job's end, as the master made it over time, against the deadline:
  // both axes in seconds after submission.
  function chart(app, job) {
    const t0 = job.submittedMs || app.startedTime || 0;
    const points = (job.estimates || [])
      .filter((e) => typeof e.atMs === "number" && typeof e.estimatedEndMs === "number")
      .map((e) => ({ x: (e.atMs - t0) / 1000, y: (e.estimatedEndMs - t0) / 1000, at: e.atMs, end: e.estimatedEndMs }));
    const deadline = typeof job.deadlineMs === "number" ? (job.deadlineMs - t0) / 1000 : null;
    const finished = app.finishedTime > 0 ? (app.finishedTime - t0) / 1000 : null;
    if (!points.length) {
      return h("p", { class: "empty" }, "No estimate yet: the master reports one once its job runs." + (deadline === null ? " This application has no deadline." : ""));
    }
    const W = 720, H = 280, L = 60, R = 20, T = 16, B = 44;
    const xmax = Math.max(1, ...points.map((p) => p.x), finished || 0) * 1.05;
    const ydata = Math.max(1, ...points.map((p) => p.y), finished || 0);
    // A deadline far above every estimate would flatten them: it is drawn at the top edge.
    const above = deadline !== null && deadline > 4 * ydata;
    const ymax = (above ? ydata : Math.max(ydata, deadline || 0)) * 1.1;
    const X = (x) => L + (x / xmax) * (W - L - R);
    const Y = (y) => H - B - (y / ymax) * (H - T - B);
    const g = [];
    for (const t of ticks(ymax)) {
      g.push(s("line", { x1: L, x2: W - R, y1: Y(t), y2: Y(t), class: "grid" }));
      g.push(s("text", { x: L - 6, y: Y(t) + 4, "text-anchor": "end", class: "tick" }, num(t)));
    }
    for (const t of ticks(xmax)) {
      g.push(s("line", { x1: X(t), x2: X(t), y1: T, y2: H - B, class: "grid" }));
      g.push(s("text", { x: X(t), y: H - B + 16, "text-anchor": "middle", class: "tick" }, num(t)));
    }
    g.push(s("text", { x: (L + W - R) / 2, y: H - 6, "text-anchor": "middle", class: "axis" }, "when estimated (s after submission)"));
    g.push(s("text", { x: 14, y: (T + H - B) / 2, "text-anchor": "middle", class: "axis", transform: "rotate(-90 14 " + (T + H - B) / 2 + ")" }, "estimated end (s)"));
    // Where an estimate would say "now": no estimate can honestly fall below it.
    const diag = Math.min(xmax, ymax);
    g.push(s("line", { x1: X(0), y1: Y(0), x2: X(diag), y2: Y(diag), class: "now" }));
    if (deadline !== null) {
      const y = above ? T : Y(deadline);
      g.push(s("line", { x1: L, x2: W - R, y1: y, y2: y, class: "deadline" }));
      g.push(
        s("text", { x: W - R - 4, y: above ? y + 14 : y - 5, "text-anchor": "end", class: "deadline-label" },
          // To a tenth of a second: the rm's submission and deadline clocks may part by a ms.
          "deadline " + num(Math.round(deadline * 10) / 10) + " s" + (above ? " (↑ far above: not to scale)" : ""))
      );
    }
    if (finished !== null) {
      g.push(s("circle", { cx: X(finished), cy: Y(finished), r: 5, class: "finished" }, s("title", {}, "finished at " + num(finished) + " s")));
    }
    g.push(s("polyline", { points: points.map((p) => X(p.x).toFixed(1) + "," + Y(p.y).toFixed(1)).join(" "), class: "estimate" }));
    for (const p of points) {
      g.push(
        s("circle", { cx: X(p.x), cy: Y(p.y), r: 3, class: "estimate-point" },
          s("title", {}, "at " + utc(p.at) + ": end " + utc(p.end) + (deadline !== null ? " (" + num((job.deadlineMs - p.end) / 1000) + " s before the deadline)" : "")))
      );
    }
    return h(
      "figure",
      { class: "chart" },
      s("svg", { viewBox: "0 0 " + W + " " + H, width: W, height: H, role: "img", "aria-label": "estimated end against the deadline" }, g),
      h(
        "figcaption",
        { class: "legend" },
        h("span", { class: "key key-estimate" }, "estimated end"),
        deadline !== null ? h("span", { class: "key key-deadline" }, "deadline") : h("span", { class: "muted" }, "no deadline"),
        h("span", { class: "key key-now" }, "now (estimate = time of estimate)"),
        finished !== null ? h("span", { class: "key key-finished" }, "finished") : null
      )
    );
  }

  function isEstimate(v) {
    return v && typeof v === "object" && !Array.isArray(v) && "estimate" in v && "low" in v && "high" in v;
  }

  function interval(e) {
    return "[" + num(e.low) + ", " + (e.high === null ? "∞" : num(e.high)) + "]";
  }

  // An answer: its counts with their 95 % intervals, its top lists, its notes.
  function answerView(job) {
    const a = job.answer;
    if (a === null || a === undefined) {
      return h("p", { class: "empty" }, "No answer yet: it comes when the job finishes.");
    }
    if (typeof a !== "object") return h("pre", {}, JSON.stringify(a));
    const totals = [];
    const tops = [];
    const facts = [];
    for (const [k, v] of Object.entries(a)) {
      if (isEstimate(v)) totals.push([k, v]);
      else if (Array.isArray(v) && v.length && isEstimate(v[0])) tops.push([k, v]);
      else if (v === null || typeof v !== "object") facts.push([k, typeof v === "number" ? num(v, 3) : String(v)]);
    }
    const jobFacts = a.job && typeof a.job === "object" ? Object.entries(a.job).map(([k, v]) => [k, typeof v === "object" ? JSON.stringify(v) : String(v)]) : [];
    const estimateRow = (name, e, key) =>
      h(
        "tr",
        { "data-key": key },
        h("td", {}, name),
        h("td", { class: "estimate" }, num(e.estimate)),
        h("td", { class: "interval" }, interval(e)),
        h("td", {}, num(e.observed)),
        h("td", {}, num(e.stdError, 2))
      );
    return [
      h(
        "div",
        { class: "cards" },
        card("processed fraction", h("span", { id: "processed-fraction" }, pct(job.processedFraction)), a.exact === true ? "exact: every map read" : "estimated from what was read"),
        card("maps read", num(a.mapsRead) + " / " + num(a.maps)),
        card("bytes read", bytes(a.bytesRead) + " / " + bytes(a.bytes))
      ),
      h("h3", {}, "Counts with 95 % intervals"),
      table(["count", "estimate", "95 % interval", "observed", "std. error"], totals.map(([k, v]) => estimateRow(k, v, k)), "This answer has no estimated counts."),
      tops.map(([k, rows]) => [
        h("h3", {}, k + " (first " + Math.min(rows.length, 10) + " of " + rows.length + ")"),
        table(
          ["key", "estimate", "95 % interval", "observed", "std. error"],
          rows.slice(0, 10).map((r) => {
            const key = Object.entries(r).find(([kk, vv]) => typeof vv === "string" && !["estimate", "low", "high"].includes(kk));
            return estimateRow(key ? key[1] : "?", r, k);
          }),
          ""
        ),
      ]),
      Array.isArray(a.notes) && a.notes.length ? [h("h3", {}, "Notes"), h("ul", { class: "notes" }, a.notes.map((n) => h("li", {}, String(n))))] : null,
      facts.length || jobFacts.length ? [h("h3", {}, "About the answer"), kv(facts.concat(jobFacts))] : null,
    ];
  }

  async function appView(view) {
    const a = (await api(API.app, { id: view.id })).app || {};
    let job = null;
    try {
      job = (await api(API.job, { id: view.id })).job || null;
    } catch (e) {
      if (e.status !== 404) throw e; // 404: not a MapReduce job
    }
    const now = Date.now();
    const deadlineMs = typeof a.deadlineMs === "number" ? a.deadlineMs : null;
    const p = (job && job.progress) || null;
    // The master's last report may say "running" after the app ended (it reports no more).
    const ended = hasEnded(a);
    const f = jobFigures(job, ended);
    const phase = p ? (ended && p.phase === "running" ? "ended" : p.phase) : null;
    const [logs, attempts] = await Promise.all([appLogs(view.id), api(API.attempts, { id: view.id })]);
    return [
      h("p", {}, h("a", { href: "#/apps" }, "← Applications")),
      h("h1", { class: "app-id" }, a.id || view.id, " ", stateBadge(a.state, a.finalStatus, a.deadlineOutcome), " ", outcomeBadge(a.deadlineOutcome)),
      h(
        "div",
        { class: "columns" },
        kv([
          ["name", a.name],
          ["type", a.applicationType],
          ["user · queue", a.user + " · " + a.queue],
          ["started", moment(a.startedTime, now)],
          ["finished", a.finishedTime > 0 ? moment(a.finishedTime, now) : "not yet"],
          ["elapsed", duration(a.elapsedTime)],
          ["containers", num(a.runningContainers) + " (" + num(a.allocatedMB) + " MB, " + num(a.allocatedVCores) + " vcores)"],
          ["progress", [bar((a.progress || 0) / 100), " " + num(a.progress) + " %"]],
        ]),
        kv([
          ["deadline", h("span", { class: "deadline" }, deadlineMs !== null ? moment(deadlineMs, now) : "no deadline")],
          deadlineMs !== null ? ["deadline outcome", outcomeBadge(a.deadlineOutcome) || DASH] : null,
          ["quota", a.quota === null || a.quota === undefined ? DASH : num(a.quota)],
          job ? ["task policy", p ? p.policy : (job.spec && job.spec.policy) || DASH] : null,
          job ? ["phase", p ? phase + (p.guarded ? " (deadline guard fired)" : "") + (p.mapPhaseClosed && !ended ? ", map phase closed" : "") : "not started"] : null,
          job ? ["maps done / launched", h("span", { id: "maps" }, f.maps)] : null,
          job && p ? ["k (maps that count)", num(p.k)] : null,
          job && p ? ["reduces done", num(p.reducesDone) + " / " + num(p.reduces)] : null,
          job && p ? ["input processed", bytes(p.processedBytes) + " / " + bytes(p.inputBytes)] : null,
          job && p ? ["estimated end", typeof p.estimatedEndMs === "number" ? moment(p.estimatedEndMs, now) : DASH] : null,
          job ? ["estimate vs deadline", f.slack] : null,
          job ? ["processed fraction", f.processed] : null,
        ])
      ),
      job ? [h("h2", {}, "Estimated end against the deadline"), chart(a, job)] : null,
      job ? [h("h2", {}, "Answer"), h("section", { id: "answer" }, answerView(job))] : h("p", { class: "muted" }, "Not a MapReduce job: no estimate or answer to show."),
      h("h2", {}, "Diagnostics"),
      a.diagnostics ? h("pre", { class: "diagnostics" }, a.diagnostics) : h("p", { class: "empty" }, "None."),
      h("h2", {}, "Attempts"),
      attemptsTable(view.id, list(attempts, "appAttempts", "appAttempt"), now),
      h("h2", {}, "Logs"),
      h("section", { id: "logs" }, logsView(view.id, logs)),
    ];
  }

  // The application's containers' logs, or why they cannot be listed.
  async function appLogs(id) {
    try {
      return (await api(API.logs, { id })).appLogs || null;
    } catch (e) {
      if (e.status === 401) throw e;
      return { error: e.message };
    }
  }

  // Each master attempt: its page, state, node, times and its master's logs.
  function attemptsTable(id, attempts, now) {
    const rows = attempts.map((t) =>
      h(
        "tr",
        { "data-attempt": t.id },
        h("td", {}, h("a", { href: attemptHref(id, t.id) }, t.appAttemptId)),
        h("td", {}, stateBadge(t.appAttemptState)),
        h("td", {}, t.nodeId ? nodeLink(t.nodeId) : DASH),
        h("td", {}, moment(t.startTime, now)),
        h("td", {}, t.finishedTime > 0 ? moment(t.finishedTime, now) : "running"),
        h("td", {}, t.containerId ? [containerLink(id, t.containerId), h("div", { class: "small" }, logLinks(id, t.containerId))] : DASH)
      )
    );
    return table(["attempt", "state", "node", "started", "finished", "master's container"], rows, "No attempt yet: its master has not been placed.");
  }

  // One master attempt: what the rm knows of it, its running containers, and the logs of
  // every container it ran (aggregated at the rm once each ended).
  async function attemptView(view) {
    const [t, containers, logs] = await Promise.all([
      api(API.attempt, view).then((r) => r.appAttempt || {}),
      api(API.attemptContainers, view).then((r) => list(r, "containers", "container")),
      appLogs(view.id),
    ]);
    const now = Date.now();
    const rows = containers.map((c) =>
      h(
        "tr",
        { "data-container": c.containerId },
        h("td", {}, containerLink(view.id, c.containerId), c.containerId === t.containerId ? h("span", { class: "muted small" }, " (master)") : null),
        h("td", {}, nodeLink(c.nodeId)),
        h("td", {}, num(c.allocatedMB) + " MB · " + num(c.allocatedVCores) + " vcores"),
        h("td", {}, stateBadge(c.containerState)),
        h("td", {}, moment(c.startedTime, now)),
        h("td", {}, logLinks(view.id, c.containerId))
      )
    );
    const mine = logs && !logs.error ? Object.assign({}, logs, { files: (logs.files || []).filter((f) => attemptOf(f.containerId) === t.id), missing: (logs.missing || []).filter((m) => attemptOf(m.containerId) === t.id) }) : logs;
    return [
      h("p", {}, h("a", { href: "#/apps/" + encodeURIComponent(view.id) }, "← " + view.id)),
      h("h1", { class: "attempt-id" }, t.appAttemptId || view.attempt, " ", stateBadge(t.appAttemptState)),
      kv([
        ["application", appLink(view.id)],
        ["master's container", t.containerId ? containerLink(view.id, t.containerId) : DASH],
        ["node", t.nodeId ? nodeLink(t.nodeId) : DASH],
        ["started", moment(t.startTime, now)],
        ["finished", t.finishedTime > 0 ? moment(t.finishedTime, now) : "not yet"],
        ["master's logs", t.containerId ? logLinks(view.id, t.containerId) : DASH],
        ["diagnostics", t.diagnosticsInfo || DASH],
      ]),
      h("h2", {}, "Running containers"),
      table(["container", "node", "resources", "state", "started", "logs"], rows, "None running: the rm keeps running containers only; the logs below are every container's."),
      h("h2", {}, "Logs"),
      h("section", { id: "logs" }, logsView(view.id, mine)),
    ];
  }

  // One container: the rm's record while it runs (ended ones are not kept, as in YARN's rm),
  // and its log files.
  async function containerView(view) {
    let c = null;
    try {
      c = (await api(API.attemptContainer, view)).container || null;
    } catch (e) {
      if (e.status !== 404) throw e; // 404: it ended (or never was); its logs say which
    }
    const logs = await appLogs(view.id);
    const files = logs && !logs.error ? (logs.files || []).filter((f) => f.containerId === view.container) : [];
    const missing = logs && !logs.error ? (logs.missing || []).filter((m) => m.containerId === view.container) : [];
    const now = Date.now();
    return [
      h("p", {}, h("a", { href: attemptHref(view.id, view.attempt) }, "← attempt " + view.attempt + " of " + view.id)),
      h("h1", { class: "container-id" }, view.container, " ", c ? stateBadge(c.containerState) : h("span", { class: "state" }, "ENDED")),
      c
        ? kv([
            ["application", appLink(view.id)],
            ["node", nodeLink(c.nodeId)],
            ["resources", num(c.allocatedMB) + " MB · " + num(c.allocatedVCores) + " vcores"],
            ["priority", num(c.priority)],
            ["started", moment(c.startedTime, now)],
            ["elapsed", duration(c.elapsedTime)],
            ["diagnostics", c.diagnosticsInfo || DASH],
          ])
        : h("p", { class: "muted" }, "Not running: the rm keeps no record of an ended container, only its logs."),
      h("h2", {}, "Logs"),
      logs && logs.error ? h("p", { class: "error" }, "The logs cannot be listed: " + logs.error) : null,
      table(
        ["file", "bytes", "node", "from"],
        files.map((l) =>
          h(
            "tr",
            { "data-log": l.containerId + "/" + l.file },
            h("td", {}, h("a", { href: logHref(view.id, l.containerId, l.file) }, l.file)),
            h("td", {}, bytes(l.bytes), l.cut ? h("span", { class: "muted small" }, " (cut at the cap)") : null),
            h("td", {}, nodeLink(l.nodeId)),
            h("td", { class: "muted" }, l.source)
          )
        ),
        "No log file of this container yet."
      ),
      missing.length ? h("ul", { class: "missing" }, missing.map((m) => h("li", {}, m.containerId + " on " + m.nodeId + ": " + m.reason))) : null,
    ];
  }

  // Every container's stdout and stderr (`yard logs APP`): aggregated at the rm once the
  // container ended, from its nodemanager while it runs; a lost node's, missing with why.
  function logsView(id, logs) {
    if (!logs) return h("p", { class: "empty" }, "No logs.");
    if (logs.error) return h("p", { class: "error" }, "The logs cannot be listed: " + logs.error);
    const files = Array.isArray(logs.files) ? logs.files : [];
    const missing = Array.isArray(logs.missing) ? logs.missing : [];
    const rows = files.map((l) =>
      h(
        "tr",
        { "data-log": l.containerId + "/" + l.file },
        h("td", {}, containerLink(id, l.containerId), l.master ? h("span", { class: "muted small" }, " (master)") : null),
        h("td", {}, l.nodeId),
        h("td", {}, h("a", { href: logHref(id, l.containerId, l.file) }, l.file)),
        h("td", {}, bytes(l.bytes), l.cut ? h("span", { class: "muted small" }, " (cut at the cap)") : null),
        h("td", { class: "muted" }, l.source)
      )
    );
    return [
      table(["container", "node", "file", "bytes", "from"], rows, "No container has written a log yet."),
      missing.length
        ? h("ul", { class: "missing" }, missing.map((m) => h("li", {}, m.containerId + " on " + m.nodeId + ": " + m.reason)))
        : null,
    ];
  }

  async function logView(view) {
    const body = await api(API.logFile, view, "start=-" + LOG_TAIL_BYTES, true);
    return [
      h("p", {}, h("a", { href: "#/apps/" + encodeURIComponent(view.id) }, "← " + view.id)),
      h("h1", {}, view.container + " · " + view.file),
      h("p", { class: "muted" }, "Its last " + bytes(LOG_TAIL_BYTES) + " at most; `yard logs " + view.id + " --container " + view.container + "` prints it all."),
      body ? h("pre", { id: "log-text", class: "log" }, body) : h("p", { class: "empty" }, "Empty."),
    ];
  }

  const VIEWS = { overview, nodes: nodesView, node: nodeView, apps: appsView, app: appView, attempt: attemptView, container: containerView, log: logView };

  // ---- the loop -----------------------------------------------------------------------

  let timer = null;
  let generation = 0;

  function setStatus(msg, error) {
    const el = document.getElementById("status");
    el.textContent = msg;
    el.className = error ? "error" : "muted";
  }

  function showLogin(why) {
    document.getElementById("login").hidden = false;
    document.getElementById("forget").hidden = true;
    document.getElementById("login-why").textContent = why || "";
    const v = document.getElementById("view");
    v.replaceChildren(h("p", { class: "muted" }, "Sign in with a token to see the cluster."));
    setStatus("", false);
  }

  // A view's content into `main`. A view may return `{keep, body}`: its `keep` part (the
  // filter controls) stays the same DOM while its `data-state` does, so a redraw every few
  // seconds neither loses what is being typed there nor its focus; only `body` is redrawn.
  function draw(main, content) {
    if (!content || !content.keep) {
      main.replaceChildren(append(document.createDocumentFragment(), [content]));
      return;
    }
    const old = main.firstElementChild;
    const same = old && old.dataset.keep === content.keep.dataset.keep && old.dataset.state === content.keep.dataset.state;
    const body = append(document.createDocumentFragment(), [content.body]);
    if (same) {
      while (old.nextSibling) old.nextSibling.remove();
      main.appendChild(body);
    } else {
      main.replaceChildren(content.keep, body);
    }
  }

  async function refresh() {
    clearTimeout(timer);
    const gen = ++generation;
    const view = currentView();
    for (const a of document.querySelectorAll("nav a")) {
      const section = { app: "apps", attempt: "apps", container: "apps", log: "apps", node: "nodes" }[view.name] || view.name;
      a.classList.toggle("active", a.dataset.view === section);
    }
    if (!token()) {
      showLogin("");
      return;
    }
    document.getElementById("login").hidden = true;
    document.getElementById("forget").hidden = false;
    try {
      const content = await VIEWS[view.name](view);
      if (gen !== generation) return;
      draw(document.getElementById("view"), content);
      document.title = "yard rm · " + (view.file ? view.container + " " + view.file : view.container || (view.attempt ? view.id + " attempt " + view.attempt : view.id || view.name));
      setStatus("updated " + new Date().toISOString().slice(11, 19) + " UTC · every " + REFRESH_MS / 1000 + " s", false);
    } catch (e) {
      if (gen !== generation) return;
      if (e.status === 401) {
        setToken(null);
        showLogin("The rm refused the token: " + e.message);
        return;
      }
      if (e.status === 404 && ["app", "attempt", "log", "node"].includes(view.name)) {
        const what = { log: "No log " + view.file + " of " + view.container + " in ", app: "No application ", attempt: "No attempt " + view.attempt + " of ", node: "No node " }[view.name];
        document.getElementById("view").replaceChildren(h("p", { class: "error" }, what + view.id + " (" + e.message + ")."));
      }
      setStatus(e.message, true);
    }
    timer = setTimeout(refresh, REFRESH_MS);
  }

  async function clusterLine() {
    try {
      const i = (await api(API.info)).clusterInfo || {};
      const line = ["rm " + (i.resourceManagerVersion || "?"), "up since " + (i.startedOn ? utc(i.startedOn) : "?")];
      if (token()) {
        try {
          const p = (await api(API.whoami)).principal || {};
          line.push("as " + (p.user ? p.user + " (" + p.kind + ")" : p.kind + (p.app ? " of " + p.app : "")));
        } catch (_) {
          // Shown by the view's own refusal.
        }
      }
      document.getElementById("cluster").textContent = line.join(" · ");
    } catch (e) {
      document.getElementById("cluster").textContent = e.message;
    }
  }

  function start() {
    takeTokenFromHash();
    document.getElementById("login").addEventListener("submit", (ev) => {
      ev.preventDefault();
      const input = document.getElementById("token");
      const t = input.value.trim();
      input.value = "";
      if (!t) return;
      setToken(t);
      clusterLine();
      refresh();
    });
    document.getElementById("forget").addEventListener("click", () => {
      setToken(null);
      clusterLine();
      refresh();
    });
    window.addEventListener("hashchange", () => {
      const hadToken = parseHash().params.token;
      takeTokenFromHash();
      if (hadToken) clusterLine();
      refresh();
    });
    clusterLine();
    refresh();
  }

  start();
})();
