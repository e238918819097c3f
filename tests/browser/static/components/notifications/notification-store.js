// Harness stand-in for the host's notification store: the toastFrontend* functions render
// visible toasts (div.toast.<type> in #toasts, title and message) and keep a log in
// window.__toasts. Toasts last the host's display times, multiplied by ?toast_scale=N.
import { createStore } from "/js/AlpineStore.js";

const scale = Number(new URLSearchParams(location.search).get("toast_scale")) || 1;
globalThis.__toasts = [];

function container() {
  let box = document.getElementById("toasts");
  if (!box) {
    box = document.createElement("div");
    box.id = "toasts";
    document.body.appendChild(box);
  }
  return box;
}

function show(type, message, title, seconds) {
  globalThis.__toasts.push({ type, message: String(message), title: String(title) });
  const toast = document.createElement("div");
  toast.className = `toast ${type}`;
  toast.setAttribute("role", type === "error" ? "alert" : "status");
  const head = document.createElement("div");
  head.className = "toast-title";
  head.textContent = title;
  const body = document.createElement("div");
  body.className = "toast-message";
  body.textContent = message;
  toast.append(head, body);
  container().appendChild(toast);
  setTimeout(() => toast.remove(), seconds * 1000 * scale);
  return String(globalThis.__toasts.length);
}

const model = {
  async frontendError(message, title = "Connection Error", display_time = 8) {
    return show("error", message, title, display_time);
  },
  async frontendWarning(message, title = "Warning", display_time = 5) {
    return show("warning", message, title, display_time);
  },
  async frontendInfo(message, title = "Info", display_time = 3) {
    return show("info", message, title, display_time);
  },
  async frontendSuccess(message, title = "Success", display_time = 3) {
    return show("success", message, title, display_time);
  },
};

export const store = createStore("notificationStore", model);
export const toastFrontendError = model.frontendError;
export const toastFrontendWarning = model.frontendWarning;
export const toastFrontendInfo = model.frontendInfo;
export const toastFrontendSuccess = model.frontendSuccess;
