// The sign-in form: POST /ui/session {"token"} -> an HttpOnly, SameSite=Strict session cookie for /ui.
"use strict";
document.getElementById("login").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const error = document.getElementById("login-error");
  error.textContent = "";
  let response;
  try {
    response = await fetch("/ui/session", {
      method: "POST", credentials: "same-origin", headers: {"Content-Type": "application/json"},
      body: JSON.stringify({token: document.getElementById("token").value}),
    });
  } catch (err) {  // the server is down or restarting: say so, never nothing
    error.textContent = `Cannot reach hookgate serve at ${window.location.host} (${err.message}).`;
    return;
  }
  if (response.ok) {
    window.location.assign("/ui");
    return;
  }
  let why = "";
  try {
    why = (await response.json()).error || "";
  } catch {
    why = response.statusText;
  }
  error.textContent = response.status === 401 ? "Wrong token." : `Sign-in failed (HTTP ${response.status}${why ? `: ${why}` : ""}).`;
});
