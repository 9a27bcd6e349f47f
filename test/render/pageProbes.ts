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
  // Outlook on the web's dark mode, roughly: light backgrounds the message sets are darkened and dark
  // text colours it sets are lightened (the lightness mirrored, hue and saturation kept).
  const mirror = ({ r, g, b }) => {
    const [R, G, B] = [r / 255, g / 255, b / 255];
    const max = Math.max(R, G, B), min = Math.min(R, G, B), l = (max + min) / 2, d = max - min;
    const s = d === 0 ? 0 : d / (1 - Math.abs(2 * l - 1));
    const h = d === 0 ? 0 : max === R ? ((G - B) / d + 6) % 6 : max === G ? (B - R) / d + 2 : (R - G) / d + 4;
    const L = 1 - l, c = (1 - Math.abs(2 * L - 1)) * s, x = c * (1 - Math.abs((h % 2) - 1)), m = L - c / 2;
    const [r1, g1, b1] = h < 1 ? [c, x, 0] : h < 2 ? [x, c, 0] : h < 3 ? [0, c, x] : h < 4 ? [0, x, c] : h < 5 ? [x, 0, c] : [c, 0, x];
    return 'rgb(' + [r1, g1, b1].map((v) => Math.round((v + m) * 255)).join(',') + ')';
  };
  const rewriteDark = () => {
    for (const el of [sig(), ...sig().querySelectorAll('*')]) {
      const cs = getComputedStyle(el);
      if (el.style.backgroundColor || el.getAttribute('bgcolor')) {
        const c = channels(cs.backgroundColor);
        if (luminance(c) > 0.18) { el.style.backgroundColor = mirror(c); el.setAttribute('data-ogsb', ''); }
      }
      if (el.style.color) {
        const c = channels(cs.color);
        if (luminance(c) < 0.18) { el.style.color = mirror(c); el.setAttribute('data-ogsc', ''); }
      }
    }
    return sig().querySelectorAll('[data-ogsb],[data-ogsc]').length;
  };
  const box = (el) => { const r = el.getBoundingClientRect(); return { left: r.left, top: r.top, width: r.width, height: r.height }; };
  return { sig: () => box(sig()), charLefts, contrasts, underlined, box, rewriteDark };
})();
`;
