// The "Approvals" panel: pending approval requests, each with Approve and Reject buttons and an
// optional reason. Data: GET /ui/api/approvals; answers: POST /ui/api/approvals/{id} (gateway/serve/approvals.py).
"use strict";
(() => {
  let api, body, empty, readOnly;

  function when(seconds) {
    return new Date(seconds * 1000).toISOString().replace("T", " ").slice(0, 19) + " UTC";
  }

  async function answer(id, decision, row) {
    for (const button of row.querySelectorAll("button")) button.disabled = true;
    const reason = row.querySelector("input.reason").value.trim();
    try {
      const data = await api.post(`/ui/api/approvals/${encodeURIComponent(id)}`, {decision, reason: reason || null});
      api.status(`${id}: ${data.status} by ${data.decided_by}`);
    } catch (err) {
      api.status(`${id}: ${err.message}`);
    }
    await refresh();
  }

  function rowOf(r) {
    const row = api.el("tr", {"data-id": r.id});
    const reason = api.el("input", {class: "reason", type: "text", placeholder: "reason (optional)",
                                    "aria-label": `reason for ${r.id}`});
    const approve = api.el("button", {type: "button", class: "approve", text: "Approve",
                                      onclick: () => answer(r.id, "approve", row)});
    const reject = api.el("button", {type: "button", class: "reject", text: "Reject",
                                     onclick: () => answer(r.id, "reject", row)});
    row.append(...[r.id, r.tool_name || "", r.message, r.input, r.channel || "inbox", when(r.expires_at)]
                 .map((v) => api.el("td", {text: String(v)})),
               api.el("td", {}, reason), api.el("td", {class: "actions"}, approve, reject));
    return row;
  }

  async function refresh() {
    const data = await api.get("/ui/api/approvals");
    const typing = document.activeElement && body.contains(document.activeElement);
    if (typing) return;  // do not redraw under a reason being typed
    body.replaceChildren(...data.approvals.map(rowOf));
    empty.hidden = data.approvals.length > 0;
    readOnly.hidden = data.can_answer !== false;
    if (data.can_answer === false) for (const button of body.querySelectorAll("button")) button.disabled = true;
  }

  function mount(section, consoleApi) {
    api = consoleApi;
    body = api.el("tbody", {id: "approvals-body"});
    empty = api.el("p", {class: "empty", id: "approvals-empty", text: "No approval request is waiting."});
    const table = api.el("table", {id: "approvals"}, api.el("thead", {}, api.el("tr", {},
      ...["request", "tool", "message", "input", "channel", "expires", "reason", ""].map((h) => api.el("th", {text: h})))),
      body);
    readOnly = api.el("p", {class: "empty", id: "approvals-read-only", hidden: true,
      text: "This server has no token, so the console cannot answer (any process on this machine could): " +
            "start hookgate serve with HOOKGATE_TOKEN set, or answer with hookgate approvals approve|reject ID."});
    section.append(readOnly, empty, table);
  }

  HookgateConsole.registerPanel({id: "approvals", title: "Approvals", order: 30, mount, refresh});
})();
