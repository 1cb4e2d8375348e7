// metronome's in-page helper for k6/browser: the selector engine behind
// locators and the collector of web vitals. It is added to every document
// of a browser VU's pages before the page's own scripts run, and reached
// as globalThis.__metronome. Its vitals go to the binding
// __metronomeVital, which Chromium turns into Runtime.bindingCalled.
(() => {
  if (globalThis.__metronome) return;
  const norm = (s) => (s || "").replace(/\s+/g, " ").trim();

  // match compares text as k6's text selectors do: exact, or a
  // case-insensitive substring after collapsing white space.
  const match = (text, want, exact) => {
    const t = norm(text);
    return exact ? t === want : t.toLowerCase().includes(want.toLowerCase());
  };

  const implicitRole = (el) => {
    const tag = el.localName;
    switch (tag) {
      case "a": case "area": return el.hasAttribute("href") ? "link" : "";
      case "button": return "button";
      case "input": {
        const t = (el.getAttribute("type") || "text").toLowerCase();
        if (t === "checkbox") return "checkbox";
        if (t === "radio") return "radio";
        if (["button", "submit", "reset", "image"].includes(t)) return "button";
        if (t === "range") return "slider";
        if (t === "number") return "spinbutton";
        if (t === "search") return "searchbox";
        if (t === "hidden") return "";
        return "textbox";
      }
      case "textarea": return "textbox";
      case "select": return el.multiple || el.size > 1 ? "listbox" : "combobox";
      case "option": return "option";
      case "h1": case "h2": case "h3": case "h4": case "h5": case "h6": return "heading";
      case "img": return el.getAttribute("alt") === "" ? "presentation" : "img";
      case "ul": case "ol": return "list";
      case "li": return "listitem";
      case "nav": return "navigation";
      case "main": return "main";
      case "header": return "banner";
      case "footer": return "contentinfo";
      case "aside": return "complementary";
      case "form": return "form";
      case "table": return "table";
      case "tr": return "row";
      case "td": return "cell";
      case "th": return "columnheader";
      case "dialog": return "dialog";
      case "p": return "paragraph";
      case "article": return "article";
      case "section": return el.hasAttribute("aria-label") || el.hasAttribute("aria-labelledby") ? "region" : "";
    }
    return "";
  };
  const role = (el) => (el.getAttribute("role") || "").split(" ")[0] || implicitRole(el);

  const labelText = (el) => {
    const by = el.getAttribute("aria-labelledby");
    if (by) {
      return by.split(/\s+/).map((id) => { const e = document.getElementById(id); return e ? e.textContent : ""; }).join(" ");
    }
    const parts = [];
    if (el.labels) for (const l of el.labels) parts.push(l.textContent);
    return parts.join(" ");
  };
  // accessibleName is a plain approximation of the accessible name:
  // aria-label, aria-labelledby, a label, alt, title, then the text.
  const accessibleName = (el) => {
    const a = el.getAttribute("aria-label");
    if (a) return norm(a);
    const l = labelText(el);
    if (l) return norm(l);
    if (el.localName === "input" && ["button", "submit", "reset"].includes(el.type)) return norm(el.value);
    const alt = el.getAttribute("alt");
    if (alt) return norm(alt);
    if (!["input", "textarea", "select"].includes(el.localName)) {
      const t = norm(el.textContent);
      if (t) return t;
    }
    return norm(el.getAttribute("title") || el.getAttribute("placeholder") || "");
  };

  const descendants = (root) => Array.from(root.querySelectorAll("*"));

  // textMatches finds the smallest elements whose text matches: those
  // that match while none of their children do.
  const byText = (root, want, exact) => {
    const out = [];
    for (const el of descendants(root)) {
      if (["script", "style", "head", "title", "noscript"].includes(el.localName)) continue;
      if (!match(el.textContent, want, exact)) continue;
      let child = false;
      for (const c of el.children) if (match(c.textContent, want, exact)) { child = true; break; }
      if (!child) out.push(el);
    }
    return out;
  };

  const step = (roots, p) => {
    const out = [];
    const add = (els) => { for (const e of els) if (!out.includes(e)) out.push(e); };
    for (const root of roots) {
      switch (p.kind) {
        case "css": add(root.querySelectorAll(p.value)); break;
        case "xpath": {
          const r = document.evaluate(p.value, root, null, XPathResult.ORDERED_NODE_SNAPSHOT_TYPE, null);
          const els = [];
          for (let i = 0; i < r.snapshotLength; i++) { const n = r.snapshotItem(i); if (n.nodeType === 1) els.push(n); }
          add(els);
          break;
        }
        case "text": add(byText(root, p.value, p.exact)); break;
        case "role": add(descendants(root).filter((el) => role(el) === p.value &&
          (p.name === undefined || match(accessibleName(el), p.name, p.exact)) &&
          (p.checked === undefined || !!el.checked === p.checked) &&
          (p.level === undefined || el.localName === "h" + p.level))); break;
        case "label": add(descendants(root).filter((el) => {
          const l = el.getAttribute("aria-label") || labelText(el);
          return l && match(l, p.value, p.exact);
        })); break;
        case "attr": add(descendants(root).filter((el) => el.hasAttribute(p.name) && match(el.getAttribute(p.name), p.value, p.exact))); break;
        default: throw new Error("unknown selector kind " + p.kind);
      }
    }
    return out;
  };

  // all resolves a locator's chain of parts from root, the document by
  // default.
  const all = (parts, root) => {
    root = root || document;
    let els = [root];
    for (const p of parts) {
      if (p.kind === "nth") {
        const i = p.value < 0 ? els.length + p.value : p.value;
        els = i >= 0 && i < els.length ? [els[i]] : [];
        continue;
      }
      els = step(els, p);
    }
    return els.filter((e) => e !== root);
  };

  const visible = (el) => {
    if (!el.isConnected) return false;
    const s = getComputedStyle(el);
    if (s.visibility !== "visible") return false;
    const r = el.getBoundingClientRect();
    return r.width > 0 && r.height > 0;
  };

  // --- web vitals -------------------------------------------------------
  const thresholds = { LCP: [2500, 4000], FCP: [1800, 3000], CLS: [0.1, 0.25], INP: [200, 500], TTFB: [800, 1800] };
  const rating = (name, v) => v <= thresholds[name][0] ? "good" : v <= thresholds[name][1] ? "needs-improvement" : "poor";
  const sent = {};
  const send = (name, value) => {
    // Once per document, and never for the blank page a tab starts on.
    if (sent[name] || location.protocol === "about:" || typeof globalThis.__metronomeVital !== "function") return;
    sent[name] = true;
    globalThis.__metronomeVital(JSON.stringify({ name, value, rating: rating(name, value), url: location.href }));
  };
  let lcp = -1, cls = 0, clsWindow = 0, clsWindowStart = 0, clsLast = 0, inp = -1, reported = false;
  const observers = [];
  const observe = (type, cb, opts) => {
    try {
      const o = new PerformanceObserver((l) => l.getEntries().forEach(cb));
      o.observe(Object.assign({ type, buffered: true }, opts || {}));
      observers.push([o, cb]);
    } catch (e) { /* unsupported */ }
  };
  const navStart = () => { const n = performance.getEntriesByType("navigation")[0]; return n ? n.activationStart || 0 : 0; };
  observe("paint", (e) => { if (e.name === "first-contentful-paint") send("FCP", Math.max(e.startTime - navStart(), 0)); });
  observe("navigation", (e) => { if (e.responseStart > 0) send("TTFB", Math.max(e.responseStart - (e.activationStart || 0), 0)); });
  observe("largest-contentful-paint", (e) => { lcp = Math.max(e.startTime - navStart(), 0); });
  observe("layout-shift", (e) => {
    if (e.hadRecentInput) return;
    // Session windows: shifts less than 1 s apart and within 5 s.
    if (clsWindow && e.startTime - clsLast < 1000 && e.startTime - clsWindowStart < 5000) clsWindow += e.value;
    else { clsWindow = e.value; clsWindowStart = e.startTime; }
    clsLast = e.startTime;
    cls = Math.max(cls, clsWindow);
  });
  observe("event", (e) => { if (e.interactionId) inp = Math.max(inp, e.duration); }, { durationThreshold: 16 });
  observe("first-input", (e) => { inp = Math.max(inp, e.duration); });
  // flush reports the vitals that are final only when the page goes: LCP,
  // CLS and INP, once per document.
  const flush = () => {
    if (reported) return;
    reported = true;
    // Entries not yet handed to the observers' callbacks count too.
    for (const [o, cb] of observers) o.takeRecords().forEach(cb);
    if (lcp >= 0) send("LCP", lcp);
    send("CLS", cls);
    if (inp >= 0) send("INP", inp);
  };
  // As web-vitals does, LCP is final at the first input: report it then.
  const lcpFinal = () => {
    if (lcp >= 0) send("LCP", lcp);
    removeEventListener("keydown", lcpFinal, true);
    removeEventListener("click", lcpFinal, true);
  };
  addEventListener("keydown", lcpFinal, true);
  addEventListener("click", lcpFinal, true);
  addEventListener("pagehide", flush, true);
  addEventListener("visibilitychange", () => { if (document.visibilityState === "hidden") flush(); }, true);

  // leave waits for the page's first contentful paint, so that a page
  // closed right after it loaded has its FCP, then flushes. Chromium
  // records the paint two or three frames after load; a page that paints
  // no content is left without one after 10 frames. Frames, not time,
  // bound the wait, so that a loaded machine's slow frames lose no FCP;
  // 1.5 s caps it within the 2 s that page.close gives the flush.
  const leave = () => new Promise((resolve) => {
    let over = false;
    const done = () => { if (over) return; over = true; flush(); resolve(); };
    if (document.visibilityState !== "visible") return done();
    let frames = 0;
    const painted = () => performance.getEntriesByType("paint").some((e) => e.name === "first-contentful-paint");
    const frame = () => { if (painted() || ++frames >= 10) done(); else requestAnimationFrame(frame); };
    requestAnimationFrame(frame);
    setTimeout(done, 1500);
  });

  globalThis.__metronome = { all, visible, flush, leave };
})();
