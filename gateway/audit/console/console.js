// The hookgate console: a tab bar and panels. Panels plug in with HookgateConsole.registerPanel
// (see gateway/serve/ui.py for the contract); the built-in ones are decisions.js and handlers.js.
"use strict";
window.HookgateConsole = (() => {
  const panels = [];
  let active = null;

  // Characters that are not printable (Python's str.isprintable(), as `hookgate audit tail` and
  // `hookgate approvals list` escape them): controls, the bidirectional overrides and isolates (U+202E
  // would show `git push \u202eevil` as "git push live"), zero-width and format characters, separators
  // other than the space, lone surrogates, unassigned code points.
  const HIDDEN = /[\p{C}\p{Z}]/gu;

  /** text with every character that is not printable written as an escape (\x1b, \u202e, \U000e0041);
   * the characters in keep (default: newline and tab) and the space stay as they are. */
  function visible(text, keep = "\n\t") {
    if (text === undefined || text === null) return "";
    return String(text).replace(HIDDEN, (c) => {
      if (c === " " || keep.includes(c)) return c;
      const code = c.codePointAt(0);
      if (code <= 0xff) return `\\x${code.toString(16).padStart(2, "0")}`;
      if (code <= 0xffff) return `\\u${code.toString(16).padStart(4, "0")}`;
      return `\\U${code.toString(16).padStart(8, "0")}`;
    });
  }

  async function request(method, path, params, body) {
    const url = new URL(path, window.location.origin);
    for (const [key, value] of Object.entries(params || {})) {
      if (value !== undefined && value !== null && value !== "") url.searchParams.set(key, value);
    }
    const init = {method, credentials: "same-origin", headers: {"Accept": "application/json"}};
    if (body !== undefined) {
      init.headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    let response;
    try {
      response = await fetch(url, init);
    } catch (err) {  // the server is down or restarting: one line in the status, the next refresh retries
      throw new Error(`cannot reach hookgate serve at ${window.location.host} (${err.message})`);
    }
    if (response.status === 401) {
      window.location.assign("/ui/login");
      throw new Error("signed out");
    }
    let data = null;
    try {
      data = await response.json();
    } catch {  // not JSON (a proxy's error page): the status line says what answered, in one line
      throw new Error(`${path}: HTTP ${response.status} ${response.statusText}`.trim());
    }
    if (!response.ok) throw new Error((data && data.error) || `HTTP ${response.status}`);
    return data;
  }

  /** What a panel gets: JSON helpers for same-origin calls (GET and POST), DOM helpers, a status line. */
  const api = {
    get: (path, params) => request("GET", path, params),
    post: (path, body) => request("POST", path, undefined, body),
    visible,
    el(tag, attrs, ...children) {
      const node = document.createElement(tag);
      for (const [key, value] of Object.entries(attrs || {})) {
        if (key === "class") node.className = value;
        else if (key === "text") node.textContent = visible(value);
        else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
        else node.setAttribute(key, key === "title" ? visible(value) : value);
      }
      // strings become text nodes (never HTML), with what is not printable escaped
      for (const child of children) node.append(typeof child === "string" ? visible(child) : child);
      return node;
    },
    status(text) { document.getElementById("status").textContent = text; },
  };

  function registerPanel(panel) {
    if (!panel || !panel.id || !panel.title || typeof panel.mount !== "function") {
      throw new Error("registerPanel needs {id, title, mount(element, api)}");
    }
    panels.push(panel);
  }

  function show(panel) {
    active = panel;
    for (const p of panels) {
      const selected = p === panel;
      p.tab.setAttribute("aria-selected", String(selected));
      p.section.hidden = !selected;
    }
    if (panel.refresh) panel.refresh().catch((err) => api.status(err.message));
    if (window.location.hash !== `#${panel.id}`) history.replaceState(null, "", `#${panel.id}`);
  }

  function start() {
    const tabs = document.getElementById("tabs");
    const main = document.getElementById("panels");
    panels.sort((a, b) => (a.order ?? 100) - (b.order ?? 100));
    for (const panel of panels) {
      panel.section = api.el("section", {id: `panel-${panel.id}`, role: "tabpanel", "aria-label": panel.title});
      panel.tab = api.el("button", {id: `tab-${panel.id}`, role: "tab", type: "button", text: panel.title,
                                    onclick: () => show(panel)});
      tabs.append(panel.tab);
      main.append(panel.section);
      panel.mount(panel.section, api);
    }
    const wanted = panels.find((p) => `#${p.id}` === window.location.hash) || panels[0];
    if (wanted) show(wanted);
    // the address bar (a pasted /ui#approvals, Back and Forward) picks the panel too, not only the tabs
    window.addEventListener("hashchange", () => {
      const panel = panels.find((p) => `#${p.id}` === window.location.hash);
      if (panel && panel !== active) show(panel);
    });
    let running = null;  // the timer's refresh still under way: the next tick waits for it (a slow store
                         // must not pile up requests, one every 2 s, each reading it again)
    setInterval(() => {
      if (running || !active || !active.refresh || document.hidden) return;
      running = active.refresh().catch((err) => api.status(err.message)).finally(() => { running = null; });
    }, 2000);
  }

  document.addEventListener("DOMContentLoaded", start);
  return {registerPanel, api};
})();
