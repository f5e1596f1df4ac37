// The "Decisions" panel: the latest records with filters; a click shows the full record.
"use strict";
(() => {
  const LIMIT = 200;  // rows listed
  let api, body, detail, form, note, selected = null, shownKey = "", latest = 0;

  function filters() {
    const data = new FormData(form);
    return Object.fromEntries([...data.entries()].filter(([, v]) => v !== ""));
  }

  // A record's fields as text: a record edited in the store may hold a number, an object or nothing
  // where a string belongs, and one such row must not keep the others from being listed.
  const text = (value) => (value === null || value === undefined ? "" : typeof value === "string" ? value : JSON.stringify(value));

  function row(rec) {
    const handlers = (Array.isArray(rec.handlers) ? rec.handlers : [])
      .map((h) => `${text(h.id)}=${text(h.status === "ok" || h.status === "cached" ? h.verdict : h.status)}`);
    const reason = text(rec.reason) || text(rec.unreadable);
    // a row opens with a click, or from the keyboard (Tab to it, Enter or Space)
    const tr = api.el("tr", {class: "record", "data-id": text(rec.id), tabindex: "0", onclick: () => pick(rec.id, tr),
                             onkeydown: (ev) => {
                               if (ev.key === "Enter" || ev.key === " ") { ev.preventDefault(); pick(rec.id, tr); }
                             }},
      api.el("td", {text: text(rec.time).replace("T", " ").replace("Z", "")}),
      api.el("td", {text: text(rec.event)}),
      api.el("td", {text: text(rec.tool_name) || "-"}),
      api.el("td", {class: "input", text: text(rec.input), title: text(rec.input)}),
      api.el("td", {}, api.el("span", {class: `badge ${text(rec.decision).replace(/\s/g, "")}`, text: text(rec.decision)})),
      api.el("td", {text: handlers.join(" ") || "-"}),
      api.el("td", {class: "reason", text: reason, title: reason}));
    if (rec.id === selected) tr.classList.add("selected");
    return tr;
  }

  function pick(id, tr) {
    open(id, tr).catch((err) => api.status(err.message));  // a record gone meanwhile: one line, no page error
  }

  async function open(id, tr) {
    selected = id;
    for (const other of body.querySelectorAll("tr.selected")) other.classList.remove("selected");
    if (tr) tr.classList.add("selected");
    const data = await api.get(`/ui/api/records/${encodeURIComponent(id)}`);
    if (selected !== id) return;  // another row was clicked meanwhile: its record is the one to show
    detail.textContent = api.visible(JSON.stringify({...data.record, _chain: data.chain}, null, 2));
  }

  async function refresh() {
    const asked = ++latest;
    const wanted = filters();
    const data = await api.get("/ui/api/records", {...wanted, limit: LIMIT + 1});  // one more: are there more?
    // Answers can come back out of order (one request per keystroke in a filter): only the answer to
    // the latest request is drawn, so the list always fits the filters shown above it.
    if (asked !== latest) return;
    const more = data.records.length > LIMIT;
    if (more) data.records = data.records.slice(0, LIMIT);
    const key = JSON.stringify([wanted, data.records.map((r) => r.id)]);
    note.textContent = api.visible(data.note ? `Note: ${data.note}.` : "");
    note.hidden = !data.note;
    const shown = more ? `the latest ${LIMIT} records (more match: the filters narrow them)` : `${data.records.length} record(s)`;
    api.status(`${shown}, updated ${new Date().toLocaleTimeString()}`);
    if (key === shownKey) return;
    shownKey = key;
    body.replaceChildren(...data.records.map(row));
    if (!data.records.length) {
      const filtered = Object.keys(wanted).length > 0;
      const text = filtered ? "No record matches these filters." : "No records yet.";
      body.append(api.el("tr", {}, api.el("td", {class: "empty", colspan: "7", text})));
    }
  }

  function mount(section, consoleApi) {
    api = consoleApi;
    const input = (name, label, placeholder) => api.el("label", {}, label,
      api.el("input", {name, id: `f-${name}`, placeholder: placeholder || "", autocomplete: "off"}));
    const decision = api.el("select", {name: "decision", id: "f-decision"},
      ...["", "allow", "deny", "ask", "defer", "block", "stop", "none"].map((d) => api.el("option", {value: d, text: d || "any"})));
    const since = api.el("select", {name: "since", id: "f-since"},
      ...[["", "any time"], ["15m", "15 minutes"], ["1h", "1 hour"], ["1d", "1 day"], ["7d", "7 days"]]
        .map(([v, t]) => api.el("option", {value: v, text: t})));
    form = api.el("form", {class: "filters", id: "filters"},
      input("session", "session", "session_id"), input("tool", "tool", "Bash"), input("handler", "handler", "handler id"),
      input("event", "event", "PreToolUse"), api.el("label", {}, "decision", decision), api.el("label", {}, "since", since));
    form.addEventListener("input", () => refresh().catch((err) => api.status(err.message)));
    form.addEventListener("submit", (ev) => ev.preventDefault());
    body = api.el("tbody", {id: "records-body"});
    const table = api.el("table", {id: "records"},
      api.el("thead", {}, api.el("tr", {}, ...["time (UTC)", "event", "tool", "input", "decision", "handlers", "reason"]
        .map((h) => api.el("th", {text: h})))), body);
    detail = api.el("pre", {id: "record-detail", text: "Click a record to see all of it."});
    note = api.el("p", {class: "empty", id: "records-note", hidden: true});
    section.append(form, note, api.el("div", {class: "split"}, api.el("div", {class: "table-wrap"}, table), detail));
  }

  HookgateConsole.registerPanel({id: "decisions", title: "Decisions", order: 10, mount, refresh});
})();
