// The harness's settings modal: the contract a plugin's config.html sees in the host.
// An outer Alpine scope holds `context` (an instance of the pluginSettingsPrototype store,
// whose `settings` is the live, unsaved config) and a `config` getter returning
// context.settings; the plugin's config.html is injected through x-html as an
// <x-component>, so its own x-data inherits both. Save writes the whole `config`.
import { createStore } from "/js/AlpineStore.js";
import { callJsonApi, fetchApi } from "/js/api.js";
import { toastFrontendSuccess } from "/components/notifications/notification-store.js";
import "/js/components.js";

const params = new URLSearchParams(location.search);
const PLUGIN = params.get("plugin") || "a0_reranker";
document.body.classList.add(params.get("theme") === "light" ? "light-mode" : "dark-mode");

function firstLine(error) {
  return String(error?.message ?? error).split("\n").find((l) => l.trim()) || "error";
}

createStore("pluginSettingsPrototype", {
  pluginName: PLUGIN,
  settings: null,
  isLoading: true,
  isSaving: false,
  error: "",
  loadedPath: "",
  settingsComponentHtml: "",

  async load() {
    this.isLoading = true;
    this.error = "";
    try {
      const res = await callJsonApi("plugins", { action: "get_config", plugin_name: this.pluginName });
      this.settings = res.data || {};
      this.loadedPath = res.loaded_path || "";
      this.settingsComponentHtml = `<x-component path="/plugins/${this.pluginName}/webui/config.html"></x-component>`;
    } catch (e) {
      this.error = firstLine(e);
    }
    this.isLoading = false;
  },

  // As the host's plugin-settings-store.js save(): the answer read as JSON or {}, and a
  // failed Save shows its `error`, else only "Save failed" (a 500's text is never read).
  // Unlike the host, whose modal closes on success, the harness stays open, reloads and
  // toasts, so a test can read what was saved.
  async save() {
    this.isSaving = true;
    this.error = "";
    try {
      const response = await fetchApi("/plugins", {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ action: "save_config", plugin_name: this.pluginName, settings: this.settings }),
      });
      const result = await response.json().catch(() => ({}));
      if (!result.ok) {
        this.error = result.error || "Save failed";
      } else {
        const res = await callJsonApi("plugins", { action: "get_config", plugin_name: this.pluginName });
        this.settings = res.data || {};
        toastFrontendSuccess("Settings saved.", "Plugin settings");
      }
    } catch (e) {
      this.error = e?.message || "Save failed";
    }
    this.isSaving = false;
  },

  async resetToDefault() {
    const res = await callJsonApi("plugins", { action: "get_default_config", plugin_name: this.pluginName });
    this.settings = res.data || {};
    toastFrontendSuccess("Settings reset to default.", "Plugin settings");
  },

  cleanup() {},
});

document.addEventListener("alpine:init", () => {
  const Alpine = globalThis.Alpine;
  Alpine.directive("destroy", (_el, { expression }, { evaluateLater, cleanup }) => {
    const run = evaluateLater(expression);
    cleanup(() => run());
  });
  Alpine.directive("create", (_el, { expression }, { evaluateLater }) => {
    evaluateLater(expression)();
  });
  // A per-modal copy of a store: functions and accessors shared, data copied one level deep.
  Alpine.magic("instantiate", () => (source) => {
    const copy = {};
    for (const [key, desc] of Object.entries(Object.getOwnPropertyDescriptors(source))) {
      if (!("value" in desc) || typeof desc.value === "function") {
        Object.defineProperty(copy, key, desc);
        continue;
      }
      let value = desc.value;
      if (Array.isArray(value)) value = value.map((v) => (v && typeof v === "object" ? { ...v } : v));
      else if (value && typeof value === "object") value = { ...value };
      Object.defineProperty(copy, key, { ...desc, value });
    }
    return copy;
  });
});

document.addEventListener("alpine:initialized", () => {
  globalThis.__harnessReady = true;
});

await import("/vendor/alpine/alpine.min.js");
