// Harness stand-in for the host's /js/api.js: JSON calls to /api/<path> with the CSRF
// token fetched from /api/csrf_token and sent as X-CSRF-Token (retried once after a 403).
let csrfToken = null;

function apiUrl(url) {
  const path = url.replace(/^\/+/, "");
  return path.startsWith("api/") ? `/${path}` : `/api/${path}`;
}

export async function getCsrfToken() {
  if (csrfToken) return csrfToken;
  const response = await fetch("/api/csrf_token", { credentials: "same-origin" });
  const json = await response.json();
  if (!json.ok) throw new Error(json.error || "Failed to get CSRF token");
  csrfToken = json.token;
  return csrfToken;
}

export async function fetchApi(url, request = {}) {
  for (const retry of [true, false]) {
    request.headers = { ...(request.headers || {}), "X-CSRF-Token": await getCsrfToken() };
    const response = await fetch(apiUrl(url), request);
    if (response.status === 403 && retry) {
      csrfToken = null;
      continue;
    }
    return response;
  }
}

export async function callJsonApi(endpoint, data) {
  const response = await fetchApi(endpoint, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    credentials: "same-origin",
    body: JSON.stringify(data),
  });
  if (!response.ok) throw new Error(await response.text());
  return await response.json();
}

globalThis.fetchApi = fetchApi;
