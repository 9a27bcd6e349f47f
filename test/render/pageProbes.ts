/**
 * Measurements taken inside the preview page in Chromium, for test/render/layout.test.ts. Written as
 * plain JavaScript (a string added to the page) so that nothing the test runner adds to functions
 * reaches the browser. Each probe reads what the browser laid out: boxes, computed styles, the
 * positions of characters.
 */
export const PROBES = String.raw`
window.probes = (() => {
  const sig = () => document.querySelector('#signature > table');
  const textNodes = (root) => {
    const out = [];
    const w = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    for (let n = w.nextNode(); n; n = w.nextNode()) out.push(n);
    return out;
  };
  // Left edge of each non-space character of the text node holding needle, in logical order.
  const charLefts = (needle) => {
    const node = textNodes(sig()).find((n) => n.data.includes(needle));
    if (!node) return null;
    const out = [];
    for (let i = 0; i < node.data.length; i++) {
      if (/\s/.test(node.data[i])) continue;
      const r = document.createRange();
      r.setStart(node, i);
      r.setEnd(node, i + 1);
      out.push({ ch: node.data[i], left: Math.round(r.getBoundingClientRect().left * 10) / 10 });
    }
    return { text: node.data, direction: getComputedStyle(node.parentElement).direction, lefts: out };
  };
  const channels = (css) => {
    const m = /rgba?\(([^)]+)\)/.exec(css);
    const p = m[1].split(',').map((x) => Number(x.trim()));
    return { r: p[0], g: p[1], b: p[2], a: p.length > 3 ? p[3] : 1 };
  };
  const luminance = ({ r, g, b }) => {
    const f = (c) => { c /= 255; return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4; };
    return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
  };
  const ratio = (x, y) => { const a = luminance(x), b = luminance(y); return (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05); };
  const backgroundOf = (el) => {
    for (let e = el; e; e = e.parentElement) {
      const c = channels(getComputedStyle(e).backgroundColor);
      if (c.a > 0) return c;
    }
    return { r: 255, g: 255, b: 255, a: 1 };
  };
  // Contrast of every run of text that carries letters or digits (separators such as " | " are decoration).
  const contrasts = () => textNodes(sig()).filter((n) => /[\p{L}\p{N}]/u.test(n.data)).map((n) => {
    const el = n.parentElement;
    return { text: n.data.trim().slice(0, 40), color: getComputedStyle(el).color, contrast: Math.round(ratio(channels(getComputedStyle(el).color), backgroundOf(el)) * 100) / 100 };
  });
  // Whether CSS draws an underline under the text: text-decoration propagates from every ancestor box.
  const underlined = (needle) => {
    const node = textNodes(sig()).find((n) => n.data.includes(needle));
    for (let e = node.parentElement; e && e !== document.body; e = e.parentElement) {
      if (getComputedStyle(e).textDecorationLine.includes('underline')) return true;
    }
    return false;
  };
  const box = (el) => { const r = el.getBoundingClientRect(); return { left: r.left, top: r.top, width: r.width, height: r.height }; };
  return { sig: () => box(sig()), charLefts, contrasts, underlined, box };
})();
`;
