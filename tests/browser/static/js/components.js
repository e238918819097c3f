// Harness stand-in for the host's <x-component path="..."> loader: fetch the HTML, run its
// module scripts (inline ones once per page load, like the host's component cache), add
// its styles, then append its body so Alpine initialises it inside the parent's scope.
const modules = new Map();

function runModule(key, loader) {
  if (!modules.has(key)) modules.set(key, loader());
  return modules.get(key);
}

function absoluteImports(code) {
  return code.replace(/(import\s+[^'"]*?from\s+|import\s*\(\s*|import\s+)(["'])(\/[^"']*)\2/g,
    (_m, head, quote, path) => `${head}${quote}${new URL(path, location.origin).href}${quote}`);
}

export async function loadComponent(el) {
  const path = el.getAttribute("path");
  if (!path || el.dataset.loaded) return;
  el.dataset.loaded = "1";
  const response = await fetch(path);
  if (!response.ok) throw new Error(`component ${path}: HTTP ${response.status}`);
  const doc = new DOMParser().parseFromString(await response.text(), "text/html");

  const pending = [];
  let n = 0;
  for (const script of doc.querySelectorAll("script")) {
    if (script.type !== "module") continue;
    if (script.src) {
      const url = new URL(script.getAttribute("src"), location.origin).href;
      pending.push(runModule(url, () => import(url)));
    } else {
      const key = `${path}#${++n}`;
      pending.push(runModule(key, () => {
        const blob = new Blob([absoluteImports(script.textContent)], { type: "text/javascript" });
        const url = URL.createObjectURL(blob);
        return import(url).finally(() => URL.revokeObjectURL(url));
      }));
    }
  }
  for (const style of doc.querySelectorAll("style")) el.appendChild(style.cloneNode(true));
  await Promise.all(pending);
  for (const node of [...doc.body.childNodes]) {
    if (node.nodeName === "SCRIPT" || node.nodeName === "STYLE") continue;
    el.appendChild(document.importNode(node, true));
  }
}

function scan(root) {
  const found = root.matches?.("x-component") ? [root] : [...(root.querySelectorAll?.("x-component") || [])];
  for (const el of found) {
    loadComponent(el).catch((e) => {
      console.error(e);
      el.textContent = String(e);
    });
  }
}

new MutationObserver((mutations) => {
  for (const m of mutations) for (const node of m.addedNodes) if (node.nodeType === 1) scan(node);
}).observe(document.documentElement, { childList: true, subtree: true });
