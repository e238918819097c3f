// State and actions of the Reranker settings panel (webui/config.html).
//
// Only UI state lives here (test results, status, the testing flag). The settings
// themselves stay in the host modal's `config` object, which the host's Save writes as a
// whole, so nothing in this store may ever be copied into it.
import { createStore } from "/js/AlpineStore.js";

const PLUGIN_API = "/plugins/a0_reranker";
const TOAST_TITLE = "Reranker";

// Shown instead of a stored key; sent back unchanged it means "keep the stored key".
export const API_KEY_PLACEHOLDER = "************";

// The numeric limits of helpers/settings.py LIMITS (tests/test_config_html.py keeps the
// two in step). kind "int" accepts whole numbers only; nullable accepts empty = off.
export const LIMITS = {
  rerank_timeout: { kind: "float", min: 0.5, max: 120 },
  rerank_candidates: { kind: "int", min: 1, max: 500 },
  rerank_max_doc_chars: { kind: "int", min: 100, max: 200000 },
  rerank_max_query_chars: { kind: "int", min: 50, max: 50000 },
  rerank_pool_threshold: { kind: "float", min: 0, max: 1 },
  rerank_followup_chars: { kind: "int", min: 0, max: 5000 },
  rerank_retries: { kind: "int", min: 0, max: 10 },
  rerank_batch_size: { kind: "int", min: 0, max: 10000 },
  rerank_max_concurrency: { kind: "int", min: 1, max: 64 },
  rerank_breaker_failures: { kind: "int", min: 1, max: 100 },
  rerank_breaker_cooldown: { kind: "float", min: 0, max: 3600 },
  rerank_cache_ttl: { kind: "float", min: 0, max: 86400 },
  rerank_cache_entries: { kind: "int", min: 0, max: 1000000 },
  rerank_min_score: { kind: "float", min: -1000000, max: 1000000, nullable: true },
  rerank_relative_floor: { kind: "float", min: 0, max: 1 },
  rerank_recency_weight: { kind: "float", min: 0, max: 1 },
  rerank_recency_half_life_days: { kind: "float", min: 0.01, max: 36500 },
  rerank_mmr_lambda: { kind: "float", min: 0, max: 1 },
  rerank_local_max_length: { kind: "int", min: 16, max: 8192 },
  rerank_local_batch_size: { kind: "int", min: 1, max: 1024 },
};

// One short headline per verdict of helpers/detect.py (and the API's own failures).
const HEADLINES = {
  ok: "Works",
  weak: "Works, but weakly",
  unreachable: "Cannot connect",
  auth: "API key refused",
  misranks: "Answers, but ranks wrongly",
  unsupported: "Server cannot rerank",
  not_configured: "Nothing to test",
  bad_setting: "Invalid setting",
  refused: "Refused by the privacy setting",
  error: "Not usable",
};

// What to do next, per failed verdict.
const HINTS = {
  unreachable: "Check the URL and port, and that the server is running. Inside Docker, 127.0.0.1 is the Agent Zero container itself: use host.docker.internal or the server's address.",
  auth: "Type the key the server expects into API key (or clear it if the server needs none), then test again.",
  misranks: "Check the model id, and leave Reranker API on auto: this route answers, but its scores do not rank.",
  unsupported: "llama.cpp needs a reranker model and the --reranking flag.",
  not_configured: "Enter the reranker server's base URL in Endpoint, or choose lexical or local as Reranker API.",
  bad_setting: "Fix the setting named above; the fields marked in red are out of range.",
  refused: "'Private endpoints only' is on and this endpoint is outside loopback and private networks.",
  weak: "Usable, but a stronger reranker model would separate relevant memories better.",
};

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

const model = {
  testing: false,
  test: null, // the last Test connection answer: {ok, report, unsaved, note}
  statusLoading: false,
  status: null, // the status handler's `status`
  statusError: "",
  keyStoredAtOpen: false, // the saved config held the key placeholder when the panel opened

  // --- lifecycle (x-init / x-destroy of the panel) -------------------------------------
  onOpen(config) {
    this.testing = false;
    this.test = null;
    this.keyStoredAtOpen = config?.rerank_api_key === API_KEY_PLACEHOLDER;
    this.refreshStatus();
  },

  onClose() {
    this.test = null;
  },

  // --- validation ------------------------------------------------------------------------
  // "" when `value` fits LIMITS[key], else a message saying what the field accepts.
  rangeError(key, value) {
    const limit = LIMITS[key];
    if (!limit) return "";
    const range = `${limit.kind === "int" ? "a whole number" : "a number"} from ${fmtNumber(limit.min)} to ${fmtNumber(limit.max)}`;
    if (value === null || value === undefined || value === "") {
      return limit.nullable ? "" : `Required: ${range}.`;
    }
    const n = typeof value === "number" ? value : Number(value);
    if (!Number.isFinite(n)) return `Not a number: enter ${range}.`;
    if (limit.kind === "int" && !Number.isInteger(n)) return `Must be ${range}.`;
    if (n < limit.min || n > limit.max) return `Out of range: ${range}.`;
    return "";
  },

  invalidFields(config) {
    if (!config) return [];
    return Object.keys(LIMITS).filter((key) => key in config && this.rangeError(key, config[key]));
  },

  // --- API key ---------------------------------------------------------------------------
  keyState(config) {
    const value = config?.rerank_api_key ?? "";
    if (value === API_KEY_PLACEHOLDER) return "A key is stored (hidden). Type a new key to replace it.";
    if (value) return "A new key: it is stored in usr/.env, not in config.json, when you press Save.";
    if (this.keyStoredAtOpen) return "The stored key will be removed when you press Save.";
    return "No key stored. Local servers usually need none.";
  },

  clearKey(config) {
    config.rerank_api_key = "";
  },

  keepStoredKey(config) {
    config.rerank_api_key = API_KEY_PLACEHOLDER;
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
      answer = await callApi("test_connection", { config: form });
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
    if (report.ok) {
      const what = report.route || report.detected_api || "the reranker";
      await toast("success", report.verdict === "weak" ? `${what} works, but ranks only weakly.` : `Works: ${what} ranks correctly.`);
    } else {
      await toast("error", `${this.headline(report)}: ${this.clip(report.reason || "no reason given", 200)}`);
    }
    this.refreshStatus();
  },

  headline(report) {
    return HEADLINES[report?.verdict] || (report?.ok ? "Works" : "Not usable");
  },

  hint(report) {
    if (!report) return "";
    if (report.ok) return report.verdict === "weak" ? HINTS.weak : "";
    if (HINTS[report.verdict]) return HINTS[report.verdict];
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

  yesNo(value) {
    if (value === true) return "yes";
    if (value === false) return "no";
    return "unknown";
  },

  statusEnabled(status) {
    if (!status) return "—";
    if (status.setting_enabled === false) return "no (switched off in these settings)";
    if (status.enabled_for_agent === false) return "no (plugin disabled in Agent Zero)";
    if (status.setting_enabled && status.enabled_for_agent) return "yes";
    return this.yesNo(status.setting_enabled);
  },

  statusMode(status) {
    if (!status?.mode) return "—";
    return status.mode === "apply" ? "live (agent gets reranked memories)" : "shadow (measure only)";
  },

  totalsText(status) {
    const t = status?.stats?.totals || {};
    return `${t.reranked || 0} reranked, ${t.shadow || 0} shadow, ${t.fallback || 0} fallbacks`;
  },

  latencyText(status) {
    const lat = status?.stats?.latency_ms;
    if (!lat || !lat.samples) return "no calls yet";
    return `p50 ${lat.p50} ms, p95 ${lat.p95} ms (${lat.samples} calls)`;
  },

  lastErrorText(status) {
    const err = status?.stats?.last_error;
    if (!err) return "none";
    const when = err.at ? new Date(err.at * 1000).toLocaleString() : "";
    return when ? `${err.reason} (${when})` : err.reason;
  },
};

export const store = createStore("a0Reranker", model);
