// voirdire view: keeps a page up to date while a run writes its transcript.
// The page's <main> names a version probe; when the probe's answer changes, the page is fetched again and its
// <main> content replaces the current one (HTML the server rendered and escaped), keeping open <details> open and
// the scroll at the bottom when it was there. No other script runs in the viewer.
(function () {
  "use strict";
  const main = document.getElementById("main");
  if (!main || !main.dataset.probe) return;
  const probe = main.dataset.probe;
  let version = main.dataset.version;
  let busy = false;

  async function refresh() {
    const page = await fetch(window.location.href, { cache: "no-store", credentials: "same-origin" });
    if (!page.ok) return;
    const doc = new DOMParser().parseFromString(await page.text(), "text/html");
    const fresh = doc.getElementById("main");
    if (!fresh) return;
    const open = Array.from(main.querySelectorAll("details[open][id]"), (d) => d.id);
    const atBottom = window.innerHeight + window.scrollY >= document.body.scrollHeight - 40;
    main.replaceChildren(...Array.from(fresh.childNodes)); // copied first: moving a node empties the live list
    main.dataset.version = fresh.dataset.version;
    version = fresh.dataset.version;
    for (const id of open) {
      const d = document.getElementById(id);
      if (d) d.open = true;
    }
    if (atBottom) window.scrollTo(0, document.body.scrollHeight);
  }

  async function tick() {
    if (busy || document.hidden) return;
    busy = true;
    try {
      const answer = await fetch(probe, { cache: "no-store", credentials: "same-origin" });
      if (answer.ok) {
        const data = await answer.json();
        if (data.version !== version) await refresh();
      }
    } catch (e) {
      // the viewer was stopped or the network hiccuped: try again on the next tick
    } finally {
      busy = false;
    }
  }

  window.setInterval(tick, 1500);
})();
