// The quick-pg dashboard's script: polls /api/overview, renders the tables, runs the actions.
// Plain JavaScript, no build step. Every value from the server reaches the page through
// textContent (never innerHTML), so tenant names, errors and payloads cannot inject markup.
"use strict";

const POLL_MS = 5000;  // a refresh costs ~0.3 s of database time at a million tenants (docs/operations.md)
// A request unanswered this long is given up, and the page says so: the server answers within its
// statement_timeout plus a connect_timeout (5 s each by default), or not at all.
const REQUEST_TIMEOUT_MS = 20000;
// Characters of each dead item's payload the search asks for: a refresh does not carry 100 whole
// payloads of up to 1 MiB each; the cell shows no more than its beginning anyway.
const PAYLOAD_CHARS = 200;
const TOKEN_KEY = "quick-dashboard-token";  // sessionStorage: gone when the tab closes
let previous = null;  // the overview the rates are measured from, and when it came
let rates = {};  // job type -> {items, dead} per second
const MIN_RATE_INTERVAL_MS = 1500;  // a refresh right after an action would give noisy rates
let readOnly = true;
let shownDeadItems = null;  // the dead items the table shows, as JSON
// The dead items filter last searched: what the table shows, what the refreshes search again and
// what "Retry all matching" retries. What is typed in the fields counts once searched.
let searchedFilter = {};
// The database shown in detail; null: the server's first. Kept in the address (#database=NAME),
// so that a reload, a tab the browser loads again or a link shows the same one.
let selectedDatabase = databaseInAddress();
// Answers can come back in another order than their requests went (a poll's and an action's, or
// the last database's after another one was chosen): each request takes the next number, and an
// answer older than the one shown, or for a database no longer selected, is dropped.
let overviewAsked = 0, overviewShown = 0, deadItemsAsked = 0, deadItemsShown = 0;

// `path` for the selected database: every API route takes ?database=NAME.
function withDatabase(path) {
  if (selectedDatabase === null) return path;
  return path + (path.includes("?") ? "&" : "?") + "database=" + encodeURIComponent(selectedDatabase);
}

const $ = (id) => document.getElementById(id);

function databaseInAddress() {
  const match = /^#database=(.*)$/.exec(location.hash);
  if (!match) return null;
  try {
    return decodeURIComponent(match[1]);
  } catch (error) {
    return null;  // not percent-encoding: no name
  }
}

function element(tag, text, className) {
  const node = document.createElement(tag);
  if (text !== undefined && text !== null) node.textContent = String(text);
  if (className) node.className = className;
  return node;
}

function formatCount(value, estimated) {
  if (value === null || value === undefined) return "–";
  return (estimated ? "≈" : "") + Number(value).toLocaleString("en-US");
}

function formatSeconds(seconds) {
  if (seconds === null || seconds === undefined) return "–";
  const s = Math.max(0, Number(seconds));
  if (s < 1) return Math.round(s * 1000) + " ms";
  if (s < 120) return s.toFixed(1) + " s";
  if (s < 7200) return (s / 60).toFixed(1) + " min";
  if (s < 172800) return (s / 3600).toFixed(1) + " h";
  return (s / 86400).toFixed(1) + " d";
}

// "2026-11-25 22:58:59.891303+00" -> "2026-11-25 22:58:59+00".
function formatTime(text) {
  return text === null || text === undefined ? "" : String(text).replace(/\.\d+/, "");
}

function formatRate(rate) {
  if (rate === null) return "–";
  return (rate > 0 ? "+" : "") + rate.toFixed(2);
}

// A cell: text, or a prepared node; numbers right-aligned.
function cell(content, className) {
  const td = document.createElement("td");
  if (content instanceof Node) td.appendChild(content);
  else td.textContent = content === null || content === undefined ? "" : String(content);
  if (className) td.className = className;
  return td;
}

function fillTable(id, rows, makeCells, emptyText) {
  const body = $(id).tBodies[0];
  const fresh = document.createElement("tbody");
  if (rows.length === 0) {
    const tr = document.createElement("tr");
    const td = cell(emptyText, "empty");
    td.colSpan = $(id).tHead.rows[0].cells.length;
    tr.appendChild(td);
    fresh.appendChild(tr);
  }
  for (const row of rows) {
    const tr = document.createElement("tr");
    for (const td of makeCells(row)) tr.appendChild(td);
    fresh.appendChild(tr);
  }
  body.replaceWith(fresh);
}

// Whether an action is running: until it is done, every action button is disabled and act()
// refuses another, so that a second click cannot send it again (and report the first as failed).
let acting = false;

function setActing(value) {
  acting = value;
  document.body.classList.toggle("acting", value);
  for (const button of document.querySelectorAll("button.action, button.row-action")) button.disabled = value;
}

// A row's button; `name` is what a screen reader announces: the label and what it acts on.
function actionButton(label, className, onClick, data, name) {
  const button = element("button", label, "row-action " + className);
  button.type = "button";
  button.setAttribute("aria-label", name);
  button.disabled = acting;
  for (const [key, value] of Object.entries(data || {})) button.dataset[key] = String(value);
  button.addEventListener("click", onClick);
  return button;
}

function showMessage(text, isError) {
  const message = $("message");
  message.textContent = text;
  message.className = "message" + (isError ? " error" : "");
}

// Fetches `path` and reads its JSON answer, giving up after REQUEST_TIMEOUT_MS. Throws an Error
// with the server's message (and its whole answer as .body) for an error status.
async function requestJson(path, init) {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), REQUEST_TIMEOUT_MS);
  try {
    const response = await fetch(path, Object.assign({ cache: "no-store", signal: controller.signal }, init));
    const body = await response.json().catch((error) => {
      if (error.name === "AbortError") throw error;
      return { error: "HTTP " + response.status };
    });
    if (!response.ok) {
      const failure = new Error(body.error || "HTTP " + response.status);
      failure.body = body;  // what else the error answer says (an overview's: the other databases)
      failure.status = response.status;
      throw failure;
    }
    return body;
  } catch (error) {
    if (error.name === "AbortError") throw new Error("no answer within " + REQUEST_TIMEOUT_MS / 1000 + " s");
    throw error;
  } finally {
    clearTimeout(timer);
  }
}

function getJson(path) {
  return requestJson(path, {});
}

// POSTs an action with the admin token; shows what it did, then refreshes.
async function act(path, body) {
  if (acting) return;
  if (!sessionStorage.getItem(TOKEN_KEY)) {
    showMessage("enter the admin token first (at the top) to run actions", true);
    $("token").focus();
    return;
  }
  setActing(true);
  let outcome;
  try {
    const answer = await requestJson(withDatabase(path), {
      method: "POST",
      headers: { "Content-Type": "application/json", "Authorization": "Bearer " + (sessionStorage.getItem(TOKEN_KEY) || "") },
      body: JSON.stringify(body),
    });
    outcome = [answer.message || "done", false];
  } catch (error) {
    // Given up on, an action may still take effect: the tables will tell.
    outcome = [error.message.startsWith("no answer") ? error.message + ": it may still take effect" : error.message, true];
    if (error.status === 401) {
      // A wrong token (or one the server no longer takes): forgotten, so that the page asks again.
      sessionStorage.removeItem(TOKEN_KEY);
      outcome[0] += ": enter the admin token again";
    }
  }
  try {
    // The message comes once the tables show the change, so that what it says can be seen.
    await refresh();
    await searchDeadItems();
    showMessage(outcome[0], outcome[1]);
  } finally {
    setActing(false);
  }
}

function pauseButtons(kind, name, pausedSet) {
  const paused = pausedSet.has(kind + "\u0000" + name);
  const path = "/api/" + (kind === "tenant" ? "tenants" : "job_types") + (paused ? "/resume" : "/pause");
  const label = paused ? "Resume" : "Pause";
  return actionButton(label, paused ? "resume" : "pause", () => act(path, { [kind]: name }), { kind: kind, name: name },
                      label + (kind === "tenant" ? " tenant " : " job type ") + name);
}

function renderSummary(summary) {
  const est = summary.estimated;
  const cards = [
    ["items", "items", formatCount(summary.items, est)],
    ["vested", "vested items", formatCount(summary.vested_items, est)],
    ["leased", "leased items", formatCount(summary.leased_items, est)],
    ["delayed", "delayed items", formatCount(summary.delayed_items, est)],
    ["failing", "failing items", formatCount(summary.failing_items, est)],
    ["dead", "dead items", formatCount(summary.dead_items, est)],
    ["pointers", "zones (pointers)", formatCount(summary.pointers, est)],
    ["vested-pointers", "vested pointers", formatCount(summary.vested_pointers, est)],
    ["lag", "max pointer lag", formatSeconds(summary.max_pointer_lag_seconds)],
  ];
  const container = document.createElement("div");
  container.id = "summary";
  container.className = "cards";
  for (const [key, label, value] of cards) {
    const card = element("div", null, "card");
    const number = element("div", value, "value");
    number.id = "summary-" + key;
    card.appendChild(number);
    card.appendChild(element("div", label, "label"));
    container.appendChild(card);
  }
  $("summary").replaceWith(container);
}

// Shows another database in detail: its rates start afresh, its dead items are searched again.
// Until its answers come, the page shows none of the last database's rows: their buttons would act
// on the database now selected (a dead item id, a tenant's name, mean another item there).
function selectDatabase(name) {
  selectedDatabase = name;
  history.replaceState(null, "", location.pathname + location.search +
                       (name === null ? "" : "#database=" + encodeURIComponent(name)));
  previous = null;
  rates = {};
  shownDeadItems = null;
  $("database-name").textContent = name;
  for (const button of document.querySelectorAll("button.select-database")) {
    button.disabled = button.dataset.database === name;
    button.textContent = button.disabled ? "shown" : "Show";
    button.setAttribute("aria-label", (button.disabled ? "Shown: database " : "Show database ") + button.dataset.database);
  }
  renderSummary({});
  for (const id of ["consumers", "job-types", "deepest-zones", "lagging-zones", "paused", "dead-items"]) {
    fillTable(id, [], null, "loading…");
  }
  refresh().then(searchDeadItems);
}

// With several databases, each one's summary and a way to show it in detail.
function renderDatabases(databases, shown) {
  $("databases-section").hidden = databases.length < 2;
  fillTable("databases", databases, (d) => {
    const s = d.summary || {};
    const show = element("button", d.name === shown ? "shown" : "Show", "select-database");
    show.type = "button";
    show.disabled = d.name === shown;
    show.dataset.database = d.name;
    show.setAttribute("aria-label", (d.name === shown ? "Shown: database " : "Show database ") + d.name);
    show.addEventListener("click", () => selectDatabase(d.name));
    if (d.error) return [cell(d.name), cell("cannot read: " + d.error, "error"), cell(""), cell(""), cell(""), cell(""),
                         cell(""), cell(""), cell(show)];
    return [cell(d.name), cell(formatCount(s.items, s.estimated), "number"),
            cell(formatCount(s.vested_items, s.estimated), "number"), cell(formatCount(s.leased_items, s.estimated), "number"),
            cell(formatCount(s.failing_items, s.estimated), "number"), cell(formatCount(s.dead_items, s.estimated), "number"),
            cell(formatCount(s.pointers, s.estimated), "number"), cell(formatSeconds(s.max_pointer_lag_seconds), "number"),
            cell(show)];
  }, "");
}

function rateCell(jobType, rate) {
  const td = cell(formatRate(rate), "number");
  if (jobType.estimated) td.title = "the counts are estimates: no rate from them (the metrics endpoint counts exactly)";
  return td;
}

function render(data, jobRates) {
  readOnly = data.read_only;
  document.body.classList.toggle("read-only", readOnly);
  $("database-name").textContent = data.database;
  const hasToken = !!sessionStorage.getItem(TOKEN_KEY);
  $("mode").textContent = readOnly ? "read-only" : hasToken ? "actions enabled" : "enter the admin token for actions";
  $("mode").className = "badge" + (!readOnly && hasToken ? " writable" : "");
  $("token-form").hidden = readOnly;
  renderDatabases(data.databases, data.database);
  renderSummary(data.summary);
  const paused = new Set(data.paused.map((p) => p.kind + "\u0000" + p.name));

  fillTable("consumers", data.consumers, (c) => [
    cell(c.consumer_id), cell(c.member ? "member" : "–"), cell(c.in_order_scanner ? "in-order Scanner" : ""),
    cell(formatSeconds(c.lease_expires_in_seconds), "number"), cell(formatTime(c.member_since)),
  ], "no consumer alive");

  fillTable("job-types", data.job_types, (j) => [
    cell(j.job_type), cell(formatCount(j.items, j.estimated), "number"), cell(formatCount(j.vested, j.estimated), "number"),
    cell(formatCount(j.leased, j.estimated), "number"), cell(formatCount(j.failing, j.estimated), "number"),
    cell(formatCount(j.dead, j.estimated), "number"),
    rateCell(j, jobRates[j.job_type] ? jobRates[j.job_type].items : null),
    rateCell(j, jobRates[j.job_type] ? jobRates[j.job_type].dead : null),
    cell(formatSeconds(j.oldest_item_age_seconds), "number"), cell(pauseButtons("job_type", j.job_type, paused)),
  ], "no queued or dead items");

  // A zone's counts read at most its first 100,000 items (`capped`: it has more): then every
  // count is a lower bound, marked "+", not only the items.
  const zoneCount = (z, value) => {
    const td = cell(formatCount(value) + (z.capped ? "+" : ""), "number");
    if (z.capped) td.title = "counted among the zone's first 100,000 items: at least this many";
    return td;
  };
  // Its oldest item's age likewise comes from those rows: the oldest may be older still.
  const zoneAge = (z) => {
    const td = cell(formatSeconds(z.oldest_item_age_seconds) + (z.capped ? "+" : ""), "number");
    if (z.capped) td.title = "the oldest among the zone's first 100,000 items: at least this old";
    return td;
  };

  fillTable("deepest-zones", data.deepest_zones, (z) => [
    cell(z.tenant), zoneCount(z, z.items), zoneCount(z, z.vested), zoneCount(z, z.leased), zoneCount(z, z.failing),
    zoneAge(z), cell(formatSeconds(z.pointer_lag_seconds), "number"),
    cell(pauseButtons("tenant", z.tenant, paused)),
  ], "no queued items");

  fillTable("lagging-zones", data.lagging_zones, (z) => [
    cell(z.tenant), cell(formatSeconds(z.pointer_lag_seconds), "number"), cell(z.pointer_leased ? "yes" : "no"),
    zoneCount(z, z.items), zoneCount(z, z.vested), zoneCount(z, z.failing),
    zoneAge(z), cell(pauseButtons("tenant", z.tenant, paused)),
  ], "no vested pointer waits");

  fillTable("paused", data.paused, (p) => [
    cell(p.kind === "job_type" ? "job type" : p.kind), cell(p.name), cell(formatTime(p.paused_at)), cell(p.paused_by), cell(p.reason),
    cell(pauseButtons(p.kind, p.name, paused)),
  ], "nothing paused");
}

// Items and dead items per second for each job type, from this overview and the previous one.
// None from estimates (`estimated`: a sample of a large table, scaled up): two samples differ by
// thousands while nothing changes, which would show as thousands of items per second.
function ratesSince(data, now) {
  const measured = {};
  if (previous) {
    const seconds = (now - previous.at) / 1000;
    const before = new Map(previous.data.job_types.map((j) => [j.job_type, j]));
    const estimatedBefore = previous.data.job_types.some((j) => j.estimated);
    for (const j of data.job_types) {
      const old = before.get(j.job_type) || { items: 0, dead: 0 };
      measured[j.job_type] = j.estimated || estimatedBefore
        ? { items: null, dead: null }
        : { items: (j.items - old.items) / seconds, dead: (j.dead - old.dead) / seconds };
    }
  }
  return measured;
}

async function refresh() {
  const asked = ++overviewAsked;
  const database = selectedDatabase;
  const current = () => asked > overviewShown && database === selectedDatabase;
  try {
    const data = await getJson(withDatabase("/api/overview"));
    if (!current()) return;
    overviewShown = asked;
    const now = Date.now();
    if (!previous || now - previous.at >= MIN_RATE_INTERVAL_MS) {
      rates = ratesSince(data, now);
      previous = { data: data, at: now };
    }
    render(data, rates);
    $("status").textContent = "updated " + new Date(now).toLocaleTimeString();
    $("status").className = "status";
  } catch (error) {
    if (!current()) return;
    overviewShown = asked;
    if (error.status === 404 && database !== null) {
      // The address names a database this dashboard does not show (any more): the first one, then.
      showMessage(error.message, true);
      selectDatabase(null);
      return;
    }
    // The chosen database cannot be read: the others, so that the user can switch to one.
    const answer = error.body || {};
    if (Array.isArray(answer.databases)) {
      $("database-name").textContent = answer.database;
      renderDatabases(answer.databases, answer.database);
    }
    $("status").textContent = "cannot refresh: " + error.message;
    $("status").className = "status error";
  }
}

function deadFilter() {
  const filter = {};
  for (const [key, id] of [["tenant", "dead-tenant"], ["job_type", "dead-job-type"], ["error", "dead-error"],
                           ["older_than", "dead-older-than"]]) {
    if ($(id).value.trim() !== "") filter[key] = $(id).value.trim();
  }
  return filter;
}

async function searchDeadItems() {
  const asked = ++deadItemsAsked;
  const database = selectedDatabase;
  const current = () => asked > deadItemsShown && database === selectedDatabase;
  try {
    const query = new URLSearchParams(searchedFilter);
    query.set("payload_chars", String(PAYLOAD_CHARS));
    const data = await getJson(withDatabase("/api/dead_items?" + query.toString()));
    if (!current()) return;
    deadItemsShown = asked;
    // Unchanged since the last search: keep the rows (and whatever the user is about to click).
    const text = JSON.stringify(data.dead_items);
    if (text === shownDeadItems) return;
    shownDeadItems = text;
    const checked = new Set(selectedDeadIds());  // still checked in the new rows
    fillTable("dead-items", data.dead_items, (d) => {
      const box = element("input", null, "select-dead");
      box.type = "checkbox";
      box.dataset.id = String(d.id);
      box.checked = checked.has(box.dataset.id);
      box.setAttribute("aria-label", "Select dead item " + d.id);
      return [
        cell(box), cell(d.id, "number"), cell(d.tenant), cell(d.job_type), cell(d.error_count, "number"),
        cell(d.last_error, "error-text"), cell(d.reason), cell(formatTime(d.died_at)), payloadCell(d),
        cell(actionButton("Retry", "retry-dead", () => act("/api/dead_items/retry", { ids: [d.id] }), { id: d.id },
                          "Retry dead item " + d.id)),
      ];
    }, "no dead items match");
  } catch (error) {
    if (!current()) return;
    deadItemsShown = asked;
    showMessage("dead items: " + error.message, true);
  }
}

// A dead item's payload: the beginning of its JSON text, its whole size on hover.
function payloadCell(d) {
  const td = cell(d.payload_text + (d.payload_truncated ? "…" : ""), "payload");
  td.title = d.payload_bytes + " bytes of JSON" +
             (d.payload_truncated ? "; the first " + PAYLOAD_CHARS + " characters shown (quick dead list shows it whole)" : "");
  return td;
}

function selectedDeadIds() {
  return Array.from(document.querySelectorAll("input.select-dead:checked")).map((box) => box.dataset.id);
}

function wire() {
  window.addEventListener("hashchange", () => {
    if (databaseInAddress() !== selectedDatabase) selectDatabase(databaseInAddress());
  });
  $("token-form").addEventListener("submit", (event) => {
    event.preventDefault();
    sessionStorage.setItem(TOKEN_KEY, $("token").value);
    $("token").value = "";
    showMessage("token kept for this tab", false);
    refresh();
  });
  $("token-forget").addEventListener("click", () => {
    sessionStorage.removeItem(TOKEN_KEY);
    showMessage("token forgotten", false);
    refresh();
  });
  $("pause-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const kind = $("pause-kind").value;
    act("/api/" + (kind === "tenant" ? "tenants" : "job_types") + "/pause",
        { [kind]: $("pause-name").value.trim(), reason: $("pause-reason").value.trim() });
  });
  $("cancel-form").addEventListener("submit", (event) => {
    event.preventDefault();
    act("/api/items/cancel", { id: $("cancel-id").value.trim() });
  });
  $("dead-search").addEventListener("submit", (event) => {
    event.preventDefault();
    searchedFilter = deadFilter();
    searchDeadItems();
  });
  $("retry-selected").addEventListener("click", () => {
    const ids = selectedDeadIds();
    if (ids.length === 0) showMessage("select dead items first", true);
    else act("/api/dead_items/retry", { ids: ids });
  });
  $("retry-matching").addEventListener("click", () => {
    const filter = searchedFilter;
    const said = [];
    if (filter.tenant !== undefined) said.push("tenant " + JSON.stringify(filter.tenant));
    if (filter.job_type !== undefined) said.push("job type " + JSON.stringify(filter.job_type));
    if (filter.error !== undefined) said.push("error containing " + JSON.stringify(filter.error));
    if (filter.older_than !== undefined) said.push("dead for at least " + filter.older_than);
    if (said.length === 0) {
      showMessage("search with a filter first: Retry all matching retries what the search shows", true);
      return;
    }
    const shown = shownDeadItems === null ? 0 : JSON.parse(shownDeadItems).length;
    if (!confirm("Retry every dead item with " + said.join(", ") + "?\n\nThe table shows " + shown +
                 (shown >= 100 ? ", the newest; more may match." : "."))) return;
    const body = { tenant: filter.tenant, job_type: filter.job_type, error_contains: filter.error, older_than: filter.older_than };
    act("/api/dead_items/retry", body);
  });
}

// Refreshes, then waits POLL_MS after the answers (or their timeouts) before the next refresh, so
// that a slow or unreachable server never has more than one refresh of this page to answer.
async function poll() {
  try {
    await refresh();
    if (selectedDeadIds().length === 0) await searchDeadItems();
  } finally {
    setTimeout(poll, POLL_MS);
  }
}

wire();
searchedFilter = deadFilter();  // a reload may have kept what the fields held
poll();
