// Shoal studio: progressive enhancement. Pages read without this file;
// with it, times show in the viewer's time zone, states update live
// (Server-Sent Events), logs stream, and forms and buttons call Shoal's
// JSON API with the session cookie and the CSRF header.
"use strict";
(function () {
  const meta = (n) => (document.querySelector('meta[name="' + n + '"]') || {}).content || "";
  const ws = meta("workspace");
  const computePath = (name) => "/api/v1/workspaces/" + encodeURIComponent(ws) + "/computes/" + encodeURIComponent(name);
  document.documentElement.classList.add("js");

  // Times in the viewer's zone.
  function localTimes(root) {
    root.querySelectorAll("time[datetime]").forEach((el) => {
      const d = new Date(el.getAttribute("datetime"));
      if (!isNaN(d)) { el.textContent = d.toLocaleString(); el.title = el.getAttribute("datetime"); }
    });
    root.querySelectorAll("tspan[data-time]").forEach((el) => {
      const d = new Date(el.dataset.time);
      const opts = el.dataset.seconds ? { hour: "2-digit", minute: "2-digit", second: "2-digit" } : { hour: "2-digit", minute: "2-digit" };
      if (!isNaN(d)) el.textContent = d.toLocaleTimeString([], opts);
    });
  }
  localTimes(document);

  // The API, as the CLI calls it; errors come back as {error: {code, message, target}}.
  async function api(method, path, body, headers) {
    const h = Object.assign({ "X-CSRF-Token": csrf() }, headers || {});
    if (body !== undefined) h["Content-Type"] = "application/json";
    const resp = await fetch(path, { method, headers: h, body: body === undefined ? undefined : JSON.stringify(body), credentials: "same-origin" });
    let data = null;
    try { data = await resp.json(); } catch (e) { /* no body */ }
    if (!resp.ok) {
      const err = (data && data.error) || { message: resp.status + " " + resp.statusText };
      err.status = resp.status;
      throw err;
    }
    return data;
  }
  function csrf() {
    const m = document.cookie.match(/(?:^|; )shoal_csrf=([^;]*)/);
    return m ? decodeURIComponent(m[1]) : meta("csrf-token");
  }

  // Show an API error next to the field it names (the longest
  // data-error-for that prefixes its target), else at the form's top.
  function showError(form, err) {
    form.querySelectorAll("[data-error-for]").forEach((el) => { el.textContent = ""; if (el.dataset.errorFor === "") el.hidden = true; });
    form.querySelectorAll("[aria-invalid]").forEach((el) => el.removeAttribute("aria-invalid"));
    const target = (err.target || "").replace(/\[(\d+)\]/g, ".$1");
    let best = null;
    form.querySelectorAll("[data-error-for]").forEach((el) => {
      const f = el.dataset.errorFor;
      if (f && (target === f || target.startsWith(f + ".") || target.startsWith(f + "[")) && (!best || f.length > best.dataset.errorFor.length)) best = el;
    });
    if (!best) { best = form.querySelector('[data-error-for=""]'); if (best) best.hidden = false; }
    if (best) {
      best.textContent = err.message;
      const input = form.querySelector('[name="' + best.dataset.errorFor + '"], [name^="' + best.dataset.errorFor + '."]');
      if (input) { input.setAttribute("aria-invalid", "true"); input.focus(); }
    } else {
      alert(err.message);
    }
  }

  // A form's named fields as JSON: "a.0.b" makes nested objects and lists;
  // data-type converts; empty fields are left out.
  function formJSON(form) {
    const out = {};
    form.querySelectorAll("[name]").forEach((el) => {
      if (el.disabled || el.closest("[data-skip]")) return;
      let v;
      if (el.type === "checkbox") { if (el.dataset.type !== "bool") return; v = el.checked; }
      else { v = el.value.trim(); if (v === "") return; }
      if (el.dataset.type === "int") { const n = Number(v); v = Number.isInteger(n) ? n : v; }
      const parts = el.name.split(".");
      let o = out;
      parts.forEach((p, i) => {
        const key = /^\d+$/.test(p) ? Number(p) : p;
        if (i === parts.length - 1) { o[key] = v; return; }
        if (o[key] === undefined) o[key] = /^\d+$/.test(parts[i + 1]) ? [] : {};
        o = o[key];
      });
    });
    return out;
  }

  const computeForm = document.getElementById("compute-form");
  if (computeForm) {
    computeForm.addEventListener("submit", async (ev) => {
      ev.preventDefault();
      const body = formJSON(computeForm);
      const create = computeForm.dataset.create === "true";
      const name = create ? (body.name || "") : computeForm.dataset.name;
      if (create && !name) { showError(computeForm, { target: "name", message: "name: is required" }); return; }
      try {
        if (create) await api("PUT", computePath(name), body, { "If-None-Match": "*" });
        else await api("PATCH", computePath(name), body, { "If-Match": computeForm.dataset.etag });
        location.href = "/computes/" + encodeURIComponent(name);
      } catch (err) { showError(computeForm, err); }
    });
  }

  function opError(err) {
    const el = document.getElementById("op-error");
    if (el) { el.textContent = err.message; el.hidden = false; } else alert(err.message);
  }
  document.querySelectorAll("[data-delete]").forEach((b) => b.addEventListener("click", async () => {
    if (!confirm("Delete " + b.dataset.delete + "? Its nodes are released; this cannot be undone.")) return;
    try { await api("DELETE", computePath(b.dataset.delete)); location.href = b.dataset.then; } catch (err) { opError(err); }
  }));
  document.querySelectorAll("[data-op]").forEach((b) => b.addEventListener("click", async () => {
    b.disabled = true;
    try { await api("POST", computePath(b.dataset.name) + "/" + b.dataset.op); } catch (err) { opError(err); }
    b.disabled = false;
  }));
  document.querySelectorAll("[data-cancel]").forEach((b) => b.addEventListener("click", async () => {
    if (!confirm("Cancel job " + b.dataset.cancel + "?")) return;
    try { await api("POST", "/api/v1/workspaces/" + encodeURIComponent(ws) + "/jobs/" + encodeURIComponent(b.dataset.cancel) + "/cancel"); } catch (err) { opError(err); }
  }));

  const idleForm = document.getElementById("idle-form");
  if (idleForm) idleForm.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const name = document.querySelector("[data-op]") ? document.querySelector("[data-op]").dataset.name : location.pathname.split("/").pop();
    try { await api("PATCH", computePath(decodeURIComponent(name)), formJSON(idleForm)); location.reload(); } catch (err) { showError(idleForm, err); }
  });

  const schedForm = document.getElementById("schedules-form");
  if (schedForm) schedForm.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const list = [];
    schedForm.querySelectorAll("tr.schedule").forEach((row) => {
      const f = (n) => row.querySelector('[name="' + n + '"]');
      const action = f("action").value;
      if (!action) return;
      const trigger = { type: f("type").value, time_zone: f("time_zone").value };
      if (trigger.type === "Cron") trigger.expression = f("expression").value.trim();
      else {
        trigger.frequency = f("frequency").value;
        trigger.interval = 1;
        const at = (f("at").value.trim() || "0:00").split(":");
        const pattern = { hours: [Number(at[0])], minutes: [Number(at[1] || 0)] };
        const days = [...row.querySelectorAll('[name="week_days"]:checked')].map((c) => c.value);
        if (days.length) pattern.week_days = days;
        trigger.schedule = pattern;
      }
      list.push({ action, state: f("enabled").checked ? "enabled" : "disabled", trigger });
    });
    const name = location.pathname.split("/").pop();
    try { await api("POST", computePath(decodeURIComponent(name)) + "/updateSchedules", { schedules: { compute_start_stop: list } }); location.reload(); }
    catch (err) { showError(schedForm, Object.assign({}, err, { target: "schedules" })); }
  });

  // Live state.
  document.querySelectorAll("[data-live]").forEach((badge) => {
    const es = new EventSource(badge.dataset.live);
    let first = true;
    es.onmessage = (m) => {
      const v = JSON.parse(m.data);
      const st = v.state || v.status;
      if (st) { badge.textContent = st; badge.className = "badge " + stateClass(st); }
      const reason = document.getElementById("status-reason");
      if (reason && v.status_reason !== undefined) reason.textContent = v.status_reason;
      if (v.last_operation) {
        const lo = document.getElementById("last-op");
        if (lo) lo.textContent = v.last_operation.operation_name + " " + v.last_operation.operation_status + " (" + v.last_operation.operation_trigger + ")";
      }
      if (!first && v.nodes !== undefined && document.getElementById("nodes")) scheduleReload();
      first = false;
    };
    es.addEventListener("end", () => { es.close(); setTimeout(() => { if (!document.getElementById("log") || logDone) location.reload(); else reloadWhenLogEnds = true; }, 300); });
  });
  let reloadTimer = null;
  function scheduleReload() { if (!reloadTimer) reloadTimer = setTimeout(() => location.reload(), 3000); }
  function stateClass(s) {
    s = s.toLowerCase();
    if (["running", "succeeded", "completed", "steady", "idle", "ready"].includes(s)) return "ok";
    if (["failed", "unusable", "setupfailed", "createfailed", "preempted", "canceled"].includes(s)) return "bad";
    return "busy";
  }

  // The log, streamed (follow=true until the job ends), per rank.
  let logDone = false, reloadWhenLogEnds = false, logAbort = null;
  const log = document.getElementById("log");
  async function streamLog() {
    if (!log) return;
    if (logAbort) logAbort.abort();
    logAbort = new AbortController();
    const rank = (document.getElementById("rank") || { value: "0" }).value;
    log.textContent = "";
    logDone = false;
    try {
      const resp = await fetch(log.dataset.log + "?follow=true&rank=" + rank, { signal: logAbort.signal, credentials: "same-origin" });
      const reader = resp.body.getReader();
      const dec = new TextDecoder();
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        log.textContent += dec.decode(value, { stream: true });
        log.scrollTop = log.scrollHeight;
      }
      logDone = true;
      log.dataset.done = "true";
      if (reloadWhenLogEnds) location.reload();
    } catch (e) { /* aborted or gone */ }
  }
  const rankSel = document.getElementById("rank");
  if (rankSel) rankSel.addEventListener("change", streamLog);
  streamLog();
})();
