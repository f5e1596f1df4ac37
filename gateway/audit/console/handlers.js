// The "Handlers" panel: per handler calls, denies, errors, timeouts and p50/p95 latency, as a small SVG chart.
"use strict";
(() => {
  const SVG = "http://www.w3.org/2000/svg";
  let api, chart, latency, body, since, latest = 0;

  function svg(tag, attrs, text) {
    const node = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
    if (text !== undefined) node.textContent = api.visible(text);
    return node;
  }

  // Horizontal grouped bars: one group per handler, one bar per series.
  // A handler id as its bar's label: at most LABEL_CHARS characters (a longer one ends in "…"; the whole
  // id is the label's tooltip and is in the table below), so it never runs under the bars.
  const LABEL_CHARS = 26;
  function labelOf(id) {
    const chars = [...api.visible(id)];
    return chars.length <= LABEL_CHARS ? chars.join("") : chars.slice(0, LABEL_CHARS - 1).join("") + "…";
  }

  function bars(target, rows, series, unit) {
    const label = 180, width = 610, bar = 10, gap = 12;
    const height = rows.length * (series.length * bar + gap) + 20;
    const max = Math.max(1, ...rows.flatMap((r) => series.map((s) => r[s.key])));
    const root = svg("svg", {width: label + width + 80, height, role: "img", "aria-label": target.dataset.title});
    rows.forEach((r, i) => {
      const y0 = 10 + i * (series.length * bar + gap);
      const name = svg("text", {x: 4, y: y0 + (series.length * bar) / 2 + 4, class: "label"}, labelOf(r.id));
      name.append(svg("title", {}, api.visible(r.id)));
      root.append(name);
      series.forEach((s, j) => {
        const w = Math.max(r[s.key] ? 1 : 0, (r[s.key] / max) * width);
        const rect = svg("rect", {x: label, y: y0 + j * bar, width: w, height: bar - 2, fill: s.color,
                                  "data-handler": r.id, "data-series": s.key, "data-value": r[s.key]});
        rect.append(svg("title", {}, `${r.id} ${s.label}: ${r[s.key]}${unit}`));
        const shown = unit ? Number(r[s.key]).toFixed(1) : String(r[s.key]);
        root.append(rect, svg("text", {x: label + w + 4, y: y0 + j * bar + bar - 2}, `${shown}${unit}`));
      });
    });
    target.replaceChildren(root);
    for (const name of root.querySelectorAll("text.label")) {  // wide glyphs (CJK) can still overrun: squeeze
      if (name.getComputedTextLength() > label - 8) {
        name.setAttribute("textLength", label - 8);
        name.setAttribute("lengthAdjust", "spacingAndGlyphs");
      }
    }
  }

  const COUNTS = [{key: "calls", label: "calls", color: "#6c7a89"}, {key: "denies", label: "denies", color: "#c0392b"},
                  {key: "errors", label: "errors", color: "#e67e22"}, {key: "timeouts", label: "timeouts", color: "#8e44ad"}];
  const LATENCY = [{key: "p50_ms", label: "p50", color: "#2457a6"}, {key: "p95_ms", label: "p95", color: "#8fb3e8"}];

  async function refresh() {
    const asked = ++latest;
    const data = await api.get("/ui/api/stats", {since: since.value});
    if (asked !== latest) return;  // a newer refresh (another "since") was asked for: draw its answer only
    const rows = data.handlers;
    body.replaceChildren(...rows.map((r) => api.el("tr", {"data-handler": r.id},
      ...[r.id, r.type || "", r.calls, r.denies, r.errors, r.timeouts, r.p50_ms, r.p95_ms]
        .map((v) => api.el("td", {text: String(v)})))));
    if (!rows.length) {
      chart.replaceChildren(api.el("p", {class: "empty", text: "No handler has run yet."}));
      latency.replaceChildren();
      return;
    }
    bars(chart, rows, COUNTS, "");
    bars(latency, rows, LATENCY, " ms");
  }

  function legend(series) {
    return api.el("div", {class: "legend"}, ...series.map((s) => {
      const swatch = api.el("i", {});
      swatch.style.background = s.color;  // CSSOM, allowed by the console's CSP (style attributes are not)
      return api.el("span", {}, swatch, s.label);
    }));
  }

  function mount(section, consoleApi) {
    api = consoleApi;
    since = api.el("select", {id: "stats-since"},
      ...[["", "any time"], ["1h", "1 hour"], ["1d", "1 day"], ["7d", "7 days"]].map(([v, t]) => api.el("option", {value: v, text: t})));
    since.addEventListener("change", () => refresh().catch((err) => api.status(err.message)));
    chart = api.el("div", {class: "chart", id: "handler-chart", "data-title": "calls, denies, errors, timeouts per handler"});
    latency = api.el("div", {class: "chart", id: "latency-chart", "data-title": "p50 and p95 latency per handler"});
    body = api.el("tbody", {id: "stats-body"});
    const table = api.el("table", {id: "stats"}, api.el("thead", {}, api.el("tr", {},
      ...["handler", "type", "calls", "denies", "errors", "timeouts", "p50 ms", "p95 ms"].map((h) => api.el("th", {text: h})))), body);
    section.append(api.el("form", {class: "filters"}, api.el("label", {}, "since", since)),
                   legend(COUNTS), chart, legend(LATENCY), latency, table);
  }

  HookgateConsole.registerPanel({id: "handlers", title: "Handlers", order: 20, mount, refresh});
})();
