// State and actions of the Reranker settings panel (webui/config.html).
//
// Only UI state lives here (the form, test results, status, the testing flag). The
// settings themselves stay in the host modal's `config` object, which the host's Save
// writes as a whole, so nothing in this store may ever be copied into it. The form comes
// from the settings_fields handler: the field schema (a0-reranker-fields.json) with the
// limits of helpers/settings.py, so no setting and no limit is written down here.
import { createStore } from "/js/AlpineStore.js";

const PLUGIN_API = "/plugins/a0_reranker";
const TOAST_TITLE = "Reranker";

// Shown instead of a stored key; sent back unchanged it means "keep the stored key".
export const API_KEY_PLACEHOLDER = "************";

// The words for Test connection's verdicts (a headline and what to do next) come with the
// form, from helpers/vocabulary/: the chat, the status tool and the CLI use the same.
const NO_WORDS = { verdicts: {}, modes: {} };

// What Save would refuse is asked this long after the last change to the form, not per key.
const CHECK_AFTER_MS = 300;
const NO_REFUSAL = { setting: "", error: "" };

function fmtNumber(n) {
  return Number.isInteger(n) ? String(n) : String(+n.toPrecision(6));
}

// One line of an error, bounded: a server traceback (the host's 500 text) gives its
// last line, the exception itself.
function shortError(error) {
  const lines = String(error?.message ?? error ?? "").split("\n").map((l) => l.trim()).filter(Boolean);
  const line = (/^Traceback/.test(lines[0] || "") ? lines[lines.length - 1] : lines[0]) || "unknown error";
  return line.length > 200 ? line.slice(0, 197) + "…" : line;
}

async function toast(kind, message) {
  try {
    const notifications = await import("/components/notifications/notification-store.js");
    const show = kind === "success" ? notifications.toastFrontendSuccess : notifications.toastFrontendError;
    await show(message, TOAST_TITLE);
  } catch (e) {
    console.warn("a0_reranker: could not show a notification", e);
  }
}

async function callApi(handler, data) {
  const { callJsonApi } = await import("/js/api.js");
  return await callJsonApi(`${PLUGIN_API}/${handler}`, data);
}

// scheme://host:port of a URL, as helpers/stored_key.origin writes it ("" for none): a stored
// key goes only to the server (origin) it was saved for, and Save refuses it for another.
export function origin(url) {
  try {
    const parsed = new URL(String(url ?? "").trim());
    const scheme = parsed.protocol.replace(/:$/, "").toLowerCase();
    const port = parsed.port || { http: "80", https: "443" }[scheme];
    return port && parsed.hostname ? `${scheme}://${parsed.hostname}:${port}` : "";
  } catch {
    return "";
  }
}

// --- the status view -----------------------------------------------------------------------

function yesNo(value) {
  if (value === true) return "yes";
  if (value === false) return "no";
  return "unknown";
}

function statusEnabled(status) {
  if (status.setting_enabled === false) return "no (switched off in these settings)";
  if (status.enabled_for_agent === false) return "no (plugin disabled in Agent Zero)";
  if (status.setting_enabled && status.enabled_for_agent) return "yes";
  return yesNo(status.setting_enabled);
}

// helpers/vocabulary/ says what the plugin is doing, in words; the panel shows them as they are.
function statusMode(status) {
  return status.mode_text || "—";
}

function totalsText(status) {
  const t = status.stats?.totals || {};
  const parts = [`${t.reranked || 0} reranked`, `${t.fused || 0} fused`, `${t.shadow || 0} shadow`];
  if (t.reranker_unavailable) parts.push(`${t.reranker_unavailable} with the reranker unavailable`);
  parts.push(`${t.fallback || 0} fallbacks to Agent Zero's order`);
  return parts.join(", ");
}

function latencyText(status) {
  const lat = status.stats?.latency_ms;
  if (!lat || !lat.samples) return "no calls yet";
  return `p50 ${lat.p50} ms, p95 ${lat.p95} ms (${lat.samples} calls)`;
}

function lastErrorText(status) {
  if (status.settings_error) return status.settings_error;
  const err = status.stats?.last_error;
  if (!err) return "none";
  const when = err.at ? new Date(err.at * 1000).toLocaleString() : "";
  return when ? `${err.reason} (${when})` : err.reason;
}

// The status view, a row each: label, test id (status-<id>) and the text shown for the
// status handler's answer. A new line in the view is one entry here.
const STATUS_ROWS = [
  { id: "enabled", label: "Enabled", text: statusEnabled },
  { id: "wrap", label: "Memory search wrapped", text: (status) => yesNo(status.wrap_live) },
  { id: "mode", label: "Mode", text: statusMode },
  { id: "endpoint", label: "Endpoint", text: (status) => status.endpoint || "none set" },
  { id: "route", label: "Detected route", text: (status) => status.detected?.route || "not probed yet" },
  { id: "totals", label: "Calls", text: totalsText },
  { id: "latency", label: "Latency", text: latencyText },
  { id: "error", label: "Last error", text: lastErrorText },
];

// Whether `config` meets a schema condition (shown_when, active_when): {setting: wanted},
// where wanted true means "on" (true, non-zero, non-empty) and anything else means equal.
// No condition always holds.
export function holds(condition, config) {
  return Object.entries(condition || {}).every(([key, wanted]) =>
    wanted === true ? Boolean(config?.[key]) : config?.[key] === wanted);
}

const model = {
  groups: [], // the form: the settings_fields handler's groups, each with its fields
  words: NO_WORDS, // the vocabulary, served with the form
  formError: "",
  testing: false,
  test: null, // the last Test connection answer: {ok, report, unsaved, note}
  statusLoading: false,
  status: null, // the status handler's `status`
  statusError: "",
  keyStoredAtOpen: {}, // secret key -> it held the placeholder when the panel opened
  keyServerAtOpen: {}, // secret key -> the origin of its `sent_to` field when the panel opened
  refusal: NO_REFUSAL, // what Save would refuse in the form as it stands: {setting, error}
  checked: null, // the form (as JSON) last sent to be checked
  checkTimer: null,
  checkAsked: 0, // each check's number: a late answer to an older form is dropped

  // --- lifecycle (x-init / x-destroy of the panel) -------------------------------------
  async onOpen(config) {
    this.testing = false;
    this.test = null;
    this.refusal = NO_REFUSAL;
    this.checked = null;
    this.refreshStatus();
    if (!this.groups.length) await this.loadForm(); // once per page, like the host's component cache
    const secrets = this.fields().filter((field) => field.kind === "secret");
    this.keyStoredAtOpen = Object.fromEntries(secrets.map((f) => [f.key, config?.[f.key] === API_KEY_PLACEHOLDER]));
    this.keyServerAtOpen = Object.fromEntries(secrets.map((f) => [f.key, origin(config?.[f.sent_to])]));
  },

  onClose() {
    this.test = null;
    clearTimeout(this.checkTimer);
  },

  // --- the form ---------------------------------------------------------------------------
  async loadForm() {
    try {
      const answer = await callApi("settings_fields", {});
      if (!answer?.ok || !Array.isArray(answer.groups)) {
        this.formError = answer?.error || "settings form unavailable";
      } else {
        this.groups = answer.groups;
        this.words = answer.words || NO_WORDS;
        this.formError = "";
      }
    } catch (e) {
      this.formError = `settings form unavailable: ${shortError(e)}`;
    }
    if (this.formError) await toast("error", this.formError);
  },

  fields() {
    return this.groups.flatMap((group) => group.fields);
  },

  holds,

  helpText(field, config) {
    return field.help_off && !config?.[field.key] ? field.help_off : field.help;
  },

  // --- validation ------------------------------------------------------------------------
  // "" when `value` fits the number field's limit, else a message saying what it accepts.
  rangeError(field, value) {
    const limit = field?.limit;
    if (!limit || (limit.kind !== "int" && limit.kind !== "float")) return "";
    if (value === null || value === undefined || value === "") {
      return limit.nullable ? "" : `Required: ${limit.accepts}.`;
    }
    const n = typeof value === "number" ? value : Number(value);
    if (!Number.isFinite(n)) return `Not a number: enter ${limit.accepts}.`;
    if (limit.kind === "int" && !Number.isInteger(n)) return `Must be ${limit.accepts}.`;
    if (n < limit.min || n > limit.max) return `Out of range: ${limit.accepts}.`;
    return "";
  },

  invalidFields(config) {
    if (!config) return [];
    return this.fields().filter((field) => field.key in config && this.rangeError(field, config[field.key]));
  },

  // --- what Save would refuse (api/settings_check.py) -----------------------------------
  // The browser checks number ranges itself (rangeError). A URL, a path or a key is judged
  // by the checks Save itself runs, on the server, a moment after the last change, so a
  // value Save refuses is named under its field before Save is pressed.
  checkSoon(form) {
    if (form === this.checked) return;
    this.checked = form;
    clearTimeout(this.checkTimer);
    this.checkTimer = setTimeout(() => this.checkNow(form), CHECK_AFTER_MS);
  },

  async checkNow(form) {
    const asked = ++this.checkAsked;
    let refusal = NO_REFUSAL;
    try {
      const answer = await callApi("settings_check", { config: JSON.parse(form) });
      if (answer?.ok === false && answer.error) refusal = { setting: String(answer.setting || ""), error: String(answer.error) };
    } catch (e) {
      // the check is a courtesy: Save checks everything again and says why it refuses
    }
    if (asked === this.checkAsked) this.refusal = refusal;
  },

  // The refusal, under the field it names; a number out of range already says so itself.
  refusalFor(field, config) {
    return this.refusal.setting === field.key && !this.rangeError(field, config?.[field.key]) ? this.refusal.error : "";
  },

  // The refusal beside Test connection, wherever its field is: unless the ranges already say Save refuses.
  refusalSummary(config) {
    return this.refusal.error && !this.invalidFields(config).length ? `Save will refuse this form: ${this.refusal.error}` : "";
  },

  // --- secrets (the API key): the field holds the placeholder, never the stored key -------
  keyState(config, key) {
    const value = config?.[key] ?? "";
    if (value === API_KEY_PLACEHOLDER && this.keyGoesElsewhere(config, key)) {
      const savedFor = this.keyServerAtOpen[key] || "no endpoint";
      return `A key is stored (hidden), for ${savedFor} only: the endpoint now names another server, and Save refuses the stored key there. Type this server's key, or clear the field if it needs none.`;
    }
    if (value === API_KEY_PLACEHOLDER) return "A key is stored (hidden), for the server it was saved with only. Type a new key to replace it.";
    if (value) return "A new key: it is stored in usr/.env, not in config.json, when you press Save.";
    if (this.keyStoredAtOpen[key]) return "The stored key will be removed when you press Save.";
    return "No key stored. Local servers usually need none.";
  },

  // The placeholder kept while the endpoint moved to another server: Save would refuse it
  // (helpers/config_store.py), so the form says so before Save is pressed.
  keyGoesElsewhere(config, key) {
    const field = this.fields().find((f) => f.key === key);
    return Boolean(field?.sent_to) && origin(config?.[field.sent_to]) !== this.keyServerAtOpen[key];
  },

  // "Keep stored key" undoes a typed or cleared key while the saved config still has one.
  canKeepStoredKey(config, key) {
    return Boolean(this.keyStoredAtOpen[key]) && config?.[key] !== API_KEY_PLACEHOLDER;
  },

  clearKey(config, key) {
    config[key] = "";
  },

  keepStoredKey(config, key) {
    config[key] = API_KEY_PLACEHOLDER;
  },

  // --- Test connection ------------------------------------------------------------------
  async testConnection(config) {
    if (this.testing) return;
    this.testing = true;
    this.test = null;
    // A plain copy of the form: the values shown, unsaved ones included.
    const form = JSON.parse(JSON.stringify(config || {}));
    let answer;
    try {
      // The open chat, if any: when Agent Zero's utility model judges, it is that chat's model that is tested.
      const context = globalThis.getContext?.() || "";
      answer = await callApi("test_connection", { config: form, context });
      if (!answer || typeof answer !== "object" || !answer.report) {
        throw new Error("the server sent no report");
      }
    } catch (e) {
      answer = {
        ok: false,
        report: { ok: false, verdict: "error", reason: `the test could not run: ${shortError(e)}`, attempts: [], notes: [] },
        unsaved: [],
        note: "",
      };
    }
    this.test = answer;
    this.testing = false;
    const report = answer.report;
    if (report.verdict === "fusion") {
      await toast("success", "No reranker server set: recall uses the built-in fusion of its searches.");
    } else if (report.ok) {
      const what = report.route || report.detected_api || "the reranker";
      await toast("success", report.verdict === "weak" ? `${what} works, but ranks only weakly.` : `Works: ${what} ranks correctly.`);
    } else {
      await toast("error", `${this.headline(report)}: ${this.clip(report.reason || "no reason given", 200)}`);
    }
    this.refreshStatus();
  },

  headline(report) {
    return this.words.verdicts[report?.verdict]?.headline || (report?.ok ? "Works" : "Not usable");
  },

  hint(report) {
    if (!report) return "";
    const hint = this.words.verdicts[report.verdict]?.hint;
    if (report.ok) return report.verdict === "weak" ? hint || "" : "";
    if (hint) return hint;
    return (report.attempts || []).length ? "See the routes tried below." : "Nothing reached the reranker; Agent Zero's log may say more.";
  },

  unsavedNote(test) {
    if (!test || !Array.isArray(test.unsaved) || test.unsaved.length === 0) return "";
    return test.note || "Test checks the values shown; press Save to keep them.";
  },

  templateText(report) {
    if (report?.templated === true) return "yes: the plugin renders the Qwen3 judge prompt client-side";
    if (report?.templated === false) return "no: the server applies its own template";
    return "—";
  },

  scoresText(report) {
    const rel = report?.relevant_score;
    const irr = report?.irrelevant_score;
    if (typeof rel !== "number" || typeof irr !== "number") return "—";
    let text = `relevant ${fmtNumber(rel)} vs irrelevant ${fmtNumber(irr)}`;
    if (typeof report.near_miss_score === "number") text += ` (near miss ${fmtNumber(report.near_miss_score)})`;
    return text + (report.scale ? `, ${report.scale} scale` : "");
  },

  clip(text, max = 140) {
    const value = String(text ?? "");
    return value.length > max ? value.slice(0, max - 1) + "…" : value;
  },

  ms(value) {
    return typeof value === "number" ? `${Math.round(value)} ms` : "—";
  },

  // --- status ---------------------------------------------------------------------------
  async refreshStatus() {
    this.statusLoading = true;
    try {
      const answer = await callApi("status", {});
      if (answer?.ok) {
        this.status = answer.status;
        this.statusError = "";
      } else {
        this.statusError = answer?.error || "status unavailable";
      }
    } catch (e) {
      this.statusError = `status unavailable: ${shortError(e)}`;
    }
    this.statusLoading = false;
  },

  statusRows(status) {
    return status ? STATUS_ROWS.map(({ id, label, text }) => ({ id, label, text: text(status) })) : [];
  },
};

export const store = createStore("a0Reranker", model);
