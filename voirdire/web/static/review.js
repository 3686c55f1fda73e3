// voirdire view: the review panel and the labelling queue. A label is one POST to /run/<key>/label carrying the
// page's token; the reviewer's name is asked once and kept in this browser (localStorage). Keys: a agree,
// d disagree (then 1-9 for the label when more than one differs), u unsure, digits in blind review, c comment,
// n next. Text from the server is set with textContent only.
(function () {
  "use strict";
  const NAME = "voirdire.reviewer";
  const stored = () => window.localStorage.getItem(NAME) || "";
  const queue = document.getElementById("queue");

  function withName(url, name) {
    const u = new URL(url, window.location.href);
    if (name) u.searchParams.set("annotator", name); else u.searchParams.delete("annotator");
    return u.pathname + u.search;
  }

  // The queue without a name: take the stored one, or ask for it.
  const queueForm = document.getElementById("queue-name-form");
  if (queue && queueForm) {
    if (stored()) { window.location.replace(withName(queue.dataset.queue, stored())); return; }
    const input = document.getElementById("queue-name");
    input.focus();
    queueForm.addEventListener("submit", (e) => {
      e.preventDefault();
      const name = input.value.trim();
      if (!name) return;
      window.localStorage.setItem(NAME, name);
      window.location.replace(withName(queue.dataset.queue, name));
    });
    return;
  }

  const panel = document.getElementById("review");
  if (!panel || !panel.dataset.token) return;
  const status = document.getElementById("review-status");
  const comment = document.getElementById("review-comment");
  const nameForm = document.getElementById("review-name-form");
  const nameInput = document.getElementById("review-name");
  const reviewer = document.getElementById("reviewer");
  const labels = document.getElementById("review-labels");
  const blind = panel.dataset.blind === "1";
  let name = (queue && queue.dataset.annotator) || stored();
  let busy = false;
  let saved = false;

  function showName() {
    if (name) {
      document.getElementById("reviewer-name").textContent = name;
      reviewer.hidden = false;
      nameForm.hidden = true;
    } else {
      reviewer.hidden = true;
      nameForm.hidden = false;
      nameInput.focus();
    }
  }
  nameForm.addEventListener("submit", (e) => {
    e.preventDefault();
    const given = nameInput.value.trim();
    if (!given) return;
    name = given;
    window.localStorage.setItem(NAME, name);
    showName();
    nameInput.blur();
  });
  document.getElementById("review-rename").addEventListener("click", () => {
    window.localStorage.removeItem(NAME);
    name = "";
    if (queue) { window.location.replace(withName(queue.dataset.queue, "")); return; }
    showName();
  });
  if (!stored() && name) window.localStorage.setItem(NAME, name);
  showName();

  function say(text, kind) {
    status.textContent = text;
    status.className = "review-status " + kind;
  }

  function reveal(answer) {
    const box = document.getElementById("revealed");
    if (!box) return;
    const link = document.createElement("a");
    link.href = "/run/" + encodeURIComponent(panel.dataset.key) + "/session/" + encodeURIComponent(panel.dataset.session);
    link.textContent = "open the session";
    box.replaceChildren(
      document.createTextNode("The verdict was: "), Object.assign(document.createElement("b"), { textContent: answer.verdict }),
      document.createTextNode(" — you " + (answer.reading === "unsure" ? "are unsure" : answer.reading) + ". "), link);
    box.hidden = false;
  }

  async function send(reading, label) {
    if (busy) return;
    if (!name) { say("give your name first", "error"); showName(); return; }
    busy = true;
    const form = new URLSearchParams({ token: panel.dataset.token, session_id: panel.dataset.session, reading: reading,
      label: label || "", comment: comment.value, annotator: name, blind: blind ? "1" : "" });
    if (panel.dataset.sample) { form.set("sample", panel.dataset.sample); form.set("seed", panel.dataset.seed); }
    say("saving…", "");
    try {
      const answer = await fetch("/run/" + encodeURIComponent(panel.dataset.key) + "/label", {
        method: "POST", body: form, credentials: "same-origin",
        headers: { accept: "application/json", "x-voirdire-token": panel.dataset.token },
      });
      const data = await answer.json();
      if (!answer.ok || !data.saved) { say("not saved: " + (data.error || answer.status), "error"); return; }
      saved = true;
      say("saved: " + data.reading + (data.label ? " (" + data.label + ")" : "") + " as " + data.annotator +
        " in " + data.file + " — n for next", "saved");
      if (blind) reveal(data);
      if (labels) labels.hidden = true;
    } catch (e) {
      say("not saved: the viewer did not answer", "error");
    } finally {
      busy = false;
    }
  }

  function disagree() {
    const verdict = panel.dataset.verdictAccepted;
    const other = Array.from(labels.querySelectorAll("button")).filter((b) => b.dataset.accepts !== verdict);
    if (other.length === 1) { send("disagree", other[0].dataset.label); return; }
    labels.hidden = false;
    say("which label would you give? press its number", "");
  }

  function next() {
    if (panel.dataset.next) { window.location.href = queue ? withName(panel.dataset.next, name) : panel.dataset.next; return; }
    const link = document.querySelector("a[rel=next]");
    if (link) window.location.href = link.href;
  }

  panel.addEventListener("click", (e) => {
    const b = e.target.closest("button[data-reading]");
    if (!b) return;
    if (b.dataset.reading === "disagree" && !b.dataset.label) disagree();
    else send(b.dataset.reading, b.dataset.label);
  });

  document.addEventListener("keydown", (e) => {
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    const typing = /^(INPUT|TEXTAREA|SELECT)$/.test(e.target.tagName);
    if (typing) { if (e.key === "Escape") e.target.blur(); return; }
    const k = e.key.toLowerCase();
    if (k === "n") { if (saved || !panel.dataset.next) next(); else say("label this item first (or u for unsure)", ""); }
    else if (k === "c") { e.preventDefault(); comment.focus(); }
    else if (k === "u") send("unsure", "");
    else if (!blind && k === "a") send("agree", "");
    else if (!blind && k === "d") disagree();
    else if (/^[1-9]$/.test(k)) {
      const scope = blind ? panel : labels;
      if (!blind && labels.hidden) return;
      const b = scope.querySelector('button[data-label][data-key="' + k + '"]');
      if (b) send(b.dataset.reading, b.dataset.label);
    }
  });
})();
