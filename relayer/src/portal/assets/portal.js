// The portal's only script (everything works without it, except the copy buttons): copy to the
// clipboard, confirmation of destructive forms, the "All events" checkbox, and refreshing the delivery
// log while deliveries are on their way.
"use strict";

document.addEventListener("click", async (event) => {
  const button = event.target.closest("[data-copy]");
  if (!button) return;
  const input = document.querySelector(button.getAttribute("data-copy"));
  if (!input) return;
  const value = input.value;
  try {
    await navigator.clipboard.writeText(value);
  } catch {
    input.select();
    document.execCommand("copy");
  }
  const label = button.textContent;
  button.textContent = "Copied";
  button.classList.add("is-done");
  setTimeout(() => {
    button.textContent = label;
    button.classList.remove("is-done");
  }, 2000);
});

document.addEventListener("submit", (event) => {
  const form = event.target;
  const question = form.getAttribute("data-confirm");
  if (question && !window.confirm(question)) event.preventDefault();
});

for (const all of document.querySelectorAll("[data-all-events]")) {
  const groups = all.closest("fieldset").querySelector(".event-groups");
  const sync = () => {
    groups.classList.toggle("is-disabled", all.checked);
    for (const box of groups.querySelectorAll("input[type=checkbox]")) box.disabled = all.checked;
  };
  all.addEventListener("change", sync);
  sync();
}

for (const input of document.querySelectorAll("input.secret")) {
  input.addEventListener("focus", () => input.select());
}

if (document.body.dataset.autorefresh) {
  const key = `autorefresh:${location.pathname}`;
  const count = Number(sessionStorage.getItem(key) || "0");
  if (count < 30) {
    sessionStorage.setItem(key, String(count + 1));
    setTimeout(() => {
      const url = new URL(location.href);
      url.searchParams.delete("notice");
      location.replace(url.toString());
    }, 1500);
  } else {
    sessionStorage.removeItem(key);
  }
} else {
  sessionStorage.removeItem(`autorefresh:${location.pathname}`);
}
