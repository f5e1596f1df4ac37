// The sign-in form: POST /ui/session {"token"} -> an HttpOnly, SameSite=Strict session cookie for /ui.
"use strict";
document.getElementById("login").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const error = document.getElementById("login-error");
  error.textContent = "";
  const response = await fetch("/ui/session", {
    method: "POST", credentials: "same-origin", headers: {"Content-Type": "application/json"},
    body: JSON.stringify({token: document.getElementById("token").value}),
  });
  if (response.ok) {
    window.location.assign("/ui");
  } else {
    error.textContent = response.status === 401 ? "Wrong token." : `Sign-in failed (HTTP ${response.status}).`;
  }
});
