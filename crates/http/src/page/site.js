// dochub's one page script, inline in every generated HTML page and allowed by its hash in the
// Content-Security-Policy. Without it the pages follow the system's colour scheme, and code
// blocks simply have no copy button.
(() => {
  const root = document.documentElement;
  const key = "dochub-theme";
  const system = matchMedia("(prefers-color-scheme: dark)");
  let stored = null;
  try {
    stored = localStorage.getItem(key);
  } catch (e) {}
  // Before the first paint, so a remembered choice never flashes the other mode, and the
  // switch takes its place in the header from the start (showing it later would shift it).
  if (stored === "light" || stored === "dark") root.dataset.theme = stored;
  root.classList.add("scripted");
  const dark = () => (root.dataset.theme ? root.dataset.theme === "dark" : system.matches);

  addEventListener("DOMContentLoaded", () => {
    const button = document.getElementById("theme-switch");
    if (button) {
      const show = () => button.setAttribute("aria-pressed", String(dark()));
      show();
      button.addEventListener("click", () => {
        const next = dark() ? "light" : "dark";
        root.dataset.theme = next;
        try {
          localStorage.setItem(key, next);
        } catch (e) {}
        show();
      });
      system.addEventListener("change", show);
    }
    for (const pre of document.querySelectorAll(".content pre")) {
      const copy = document.createElement("button");
      copy.type = "button";
      copy.className = "copy";
      copy.textContent = "Copy";
      copy.addEventListener("click", () => {
        const code = pre.querySelector("code") || pre;
        const say = (text) => {
          copy.textContent = text;
          setTimeout(() => (copy.textContent = "Copy"), 1500);
        };
        navigator.clipboard.writeText(code.textContent).then(
          () => say("Copied"),
          () => say("Copy failed"),
        );
      });
      pre.append(copy);
    }
  });
})();
