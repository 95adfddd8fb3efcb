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
  // The session's CSRF token comes in the page (no cookie script reads).
  function csrf() { return meta("csrf-token"); }

  // Show an API error next to the field it names (the longest visible
  // data-error-for that prefixes its target), else at the form's top.
  function showError(form, err) {
    form.querySelectorAll("[data-error-for]").forEach((el) => { el.textContent = ""; if (el.dataset.errorFor === "") el.hidden = true; });
    form.querySelectorAll("[aria-invalid]").forEach((el) => el.removeAttribute("aria-invalid"));
    const target = (err.target || "").replace(/\[(\d+)\]/g, ".$1");
    let best = null;
    form.querySelectorAll("[data-error-for]").forEach((el) => {
      const f = el.dataset.errorFor;
      // Not next to a field hidden for now (a key when a password was
      // chosen): the error goes to the part around it instead.
      if (f && !(el.parentElement && el.parentElement.closest("[hidden]")) && (target === f || target.startsWith(f + ".") || target.startsWith(f + "[")) && (!best || f.length > best.dataset.errorFor.length)) best = el;
    });
    if (!best) { best = form.querySelector('[data-error-for=""]'); if (best) best.hidden = false; }
    if (best) {
      best.textContent = err.message;
      best.hidden = false;
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
      // A list of identities, as the API takes them: [{resource_id}].
      if (el.dataset.type === "resource-ids") v = v.split(/[\s,]+/).filter((x) => x !== "").map((x) => ({ resource_id: x }));
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

  // Parts of a form that apply only with another field's value
  // (data-when="id", a checked box; "id=value"; "id*=part", a value
  // containing part) are hidden and left out of the body otherwise, so
  // that, say, an admin username typed before SSH was turned off is not
  // sent.
  function applyWhen(form) {
    form.querySelectorAll("[data-when]").forEach((el) => {
      const m = el.dataset.when.match(/^([^=*]+)(\*?=)?(.*)$/);
      const ctl = document.getElementById(m[1]);
      let on = false;
      if (ctl && !m[2]) on = ctl.checked;
      else if (ctl && m[2] === "=") on = ctl.value === m[3];
      else if (ctl) on = ctl.value.includes(m[3]);
      el.hidden = !on;
      if (on) delete el.dataset.skip; else el.dataset.skip = "true";
    });
  }

  // The create form's schedules: each row with an action is a weekly (or,
  // without days, daily) recurrence at its time in its zone.
  function newSchedules(form) {
    const list = [];
    form.querySelectorAll(".new-schedule").forEach((row) => {
      const f = (n) => row.querySelector('[data-s="' + n + '"]');
      const action = f("action").value;
      if (!action) return;
      const tm = f("time").value.match(/^(\d{1,2}):(\d{2})/);
      if (!tm) throw { target: "schedules", message: "schedule " + (Number(row.dataset.row) + 1) + ": give the time (hh:mm)" };
      const days = [...row.querySelectorAll('[data-s="day"]:checked')].map((c) => c.value);
      const pattern = { hours: [Number(tm[1])], minutes: [Number(tm[2])] };
      if (days.length) pattern.week_days = days;
      list.push({ action, state: "enabled", trigger: { type: "Recurrence", frequency: days.length ? "Week" : "Day", interval: 1, time_zone: f("tz").value, schedule: pattern } });
    });
    return list;
  }

  const computeForm = document.getElementById("compute-form");
  if (computeForm) {
    applyWhen(computeForm);
    computeForm.addEventListener("change", () => applyWhen(computeForm));
    const addSchedule = document.getElementById("add-schedule");
    if (addSchedule) addSchedule.addEventListener("click", () => {
      const next = computeForm.querySelector(".new-schedule[hidden]");
      if (next) { next.hidden = false; next.querySelector("select").focus(); }
      if (!computeForm.querySelector(".new-schedule[hidden]")) addSchedule.hidden = true;
    });
    computeForm.addEventListener("submit", async (ev) => {
      ev.preventDefault();
      const body = formJSON(computeForm);
      if (computeForm.querySelector(".new-schedule")) {
        try {
          const list = newSchedules(computeForm);
          if (list.length) body.schedules = { compute_start_stop: list };
        } catch (err) { showError(computeForm, err); return; }
      }
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

  // A batch endpoint's invoke form: the API's invoke route starts the
  // job; its page is where the viewer goes next.
  const invokeForm = document.getElementById("invoke-form");
  if (invokeForm) {
    invokeForm.addEventListener("submit", async (ev) => {
      ev.preventDefault();
      const path = "/api/v1/workspaces/" + encodeURIComponent(ws) + "/batch-endpoints/" + encodeURIComponent(invokeForm.dataset.endpoint) + "/invoke";
      try {
        const j = await api("POST", path, formJSON(invokeForm));
        location.href = "/jobs/" + encodeURIComponent(j.name);
      } catch (err) { showError(invokeForm, err); }
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
  // Delegated, so that buttons in a part the page refreshes keep working.
  document.addEventListener("click", async (ev) => {
    const b = ev.target.closest("button[data-op]");
    if (!b) return;
    b.disabled = true;
    try {
      await api("POST", computePath(b.dataset.name) + "/" + b.dataset.op);
      if (b.dataset.reload) { location.reload(); return; }
    } catch (err) { opError(err); }
    b.disabled = false;
  });
  // A schedule's buttons: enable, disable or run now through the API's
  // schedule routes; run now goes to the job it submitted.
  document.querySelectorAll("button[data-schedule-op]").forEach((b) => b.addEventListener("click", async () => {
    b.disabled = true;
    try {
      const r = await api("POST", "/api/v1/workspaces/" + encodeURIComponent(ws) + "/schedules/" + encodeURIComponent(b.dataset.name) + "/" + b.dataset.scheduleOp);
      if (b.dataset.scheduleOp === "trigger") location.href = "/jobs/" + encodeURIComponent(r.name); else location.reload();
    } catch (err) { opError(err); b.disabled = false; }
  }));
  document.querySelectorAll("[data-cancel]").forEach((b) => b.addEventListener("click", async () => {
    if (!confirm("Cancel job " + b.dataset.cancel + "?")) return;
    try { await api("POST", "/api/v1/workspaces/" + encodeURIComponent(ws) + "/jobs/" + encodeURIComponent(b.dataset.cancel) + "/cancel"); } catch (err) { opError(err); }
  }));

  const idleForm = document.getElementById("idle-form");
  if (idleForm) idleForm.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    try { await api("PATCH", computePath(idleForm.dataset.name), formJSON(idleForm)); location.reload(); } catch (err) { showError(idleForm, err); }
  });

  // The schedules editor. A row the viewer did not touch goes back as it
  // was stored (its data-original), so saving one row leaves the others
  // exactly as they were; an edited row is built from its fields, which
  // hold every field of a schedule.
  const schedForm = document.getElementById("schedules-form");
  function intList(row, name, label) {
    const v = row.querySelector('[name="' + name + '"]').value.trim();
    if (v === "") return undefined;
    const parts = v.split(/[\s,]+/).filter((x) => x !== "");
    if (!parts.every((x) => /^\d+$/.test(x))) throw { target: "schedules", message: label + ": whole numbers separated by commas, got \"" + v + "\"" };
    return parts.map(Number);
  }
  function scheduleOf(row) {
    const f = (n) => row.querySelector('[name="' + n + '"]');
    const action = f("action").value;
    if (!action) return null;
    const trigger = { type: f("type").value };
    const tz = f("time_zone").value;
    if (tz) trigger.time_zone = tz;
    const start = f("start_time").value.trim(), end = f("end_time").value.trim();
    if (start) trigger.start_time = start;
    if (end) trigger.end_time = end;
    if (trigger.type === "Cron") trigger.expression = f("expression").value.trim();
    else {
      trigger.frequency = f("frequency").value;
      const iv = f("interval").value.trim();
      if (iv !== "") {
        if (!/^\d+$/.test(iv)) throw { target: "schedules", message: "every: a whole number, got \"" + iv + "\"" };
        trigger.interval = Number(iv);
      }
      const pattern = {};
      const hours = intList(row, "hours", "hours"), minutes = intList(row, "minutes", "minutes"), mdays = intList(row, "month_days", "month days");
      if (hours) pattern.hours = hours;
      if (minutes) pattern.minutes = minutes;
      const days = [...row.querySelectorAll('[name="week_days"]:checked')].map((c) => c.value);
      if (days.length) pattern.week_days = days;
      if (mdays) pattern.month_days = mdays;
      if (Object.keys(pattern).length) trigger.schedule = pattern;
    }
    return { action, state: f("enabled").checked ? "enabled" : "disabled", trigger };
  }
  if (schedForm) {
    // What each row's fields held when the page came: a row whose fields
    // still hold that is unchanged, however its values were set.
    const rowState = (row) => JSON.stringify([...row.querySelectorAll("[name]")].map((el) => el.type === "checkbox" ? el.checked : el.value));
    schedForm.querySelectorAll("tr.schedule").forEach((row) => { row.dataset.initial = rowState(row); });
    schedForm.addEventListener("submit", async (ev) => {
      ev.preventDefault();
      const list = [];
      try {
        schedForm.querySelectorAll("tr.schedule").forEach((row) => {
          if (row.dataset.original && rowState(row) === row.dataset.initial) { list.push(JSON.parse(row.dataset.original)); return; }
          const sc = scheduleOf(row);
          if (sc) list.push(sc);
        });
        await api("POST", computePath(schedForm.dataset.name) + "/updateSchedules", { schedules: { compute_start_stop: list } });
        location.reload();
      } catch (err) { showError(schedForm, Object.assign({}, err, { target: "schedules" })); }
    });
  }

  // The instance page's live parts (SSH, applications, idle clock, setup
  // log): when the live state changes, the page is read again and the
  // parts marked data-refresh are swapped in place — no navigation, so a
  // half-edited form keeps what the viewer typed.
  let refreshTimer = null;
  function refreshParts() {
    if (refreshTimer) return;
    refreshTimer = setTimeout(async () => {
      refreshTimer = null;
      try {
        const resp = await fetch(location.href, { credentials: "same-origin" });
        if (!resp.ok) return;
        const doc = new DOMParser().parseFromString(await resp.text(), "text/html");
        document.querySelectorAll("[data-refresh][id]").forEach((el) => {
          const fresh = doc.getElementById(el.id);
          if (fresh) { el.innerHTML = fresh.innerHTML; localTimes(el); }
        });
        document.documentElement.dataset.refreshed = String(Number(document.documentElement.dataset.refreshed || 0) + 1);
      } catch (e) { /* the next change tries again */ }
    }, 300);
  }

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
      // The first message too: the state may have moved since the page
      // was rendered.
      if (document.querySelector("[data-refresh]")) refreshParts();
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

  // The log, streamed (follow=true until the job ends), for the page's
  // rank. The server rendered the log's tail into the <pre> (so it reads
  // without this script); the stream replaces it from the start once the
  // first bytes come.
  let logDone = false, reloadWhenLogEnds = false;
  const log = document.getElementById("log");
  async function streamLog() {
    if (!log) return;
    logDone = false;
    try {
      const resp = await fetch(log.dataset.log + "?follow=true&rank=" + encodeURIComponent(log.dataset.rank || "0"), { credentials: "same-origin" });
      const reader = resp.body.getReader();
      const dec = new TextDecoder();
      let first = true;
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        const text = dec.decode(value, { stream: true });
        if (first && text) { log.textContent = ""; first = false; }
        log.textContent += text;
        log.scrollTop = log.scrollHeight;
      }
      logDone = true;
      log.dataset.done = "true";
      if (reloadWhenLogEnds) location.reload();
    } catch (e) { /* gone */ }
  }
  // Another rank is another page (?rank=N): its log, its outputs link.
  const rankSel = document.getElementById("rank");
  if (rankSel) rankSel.addEventListener("change", () => {
    const u = new URL(location.href);
    u.searchParams.set("rank", rankSel.value);
    location.href = u.toString();
  });
  streamLog();
})();
