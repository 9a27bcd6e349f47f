/**
 * A standalone preview page for one rendered signature: the signature as a mail client would show
 * it, a short fact sheet (teammate, signature, banner, hash, size against each destination's limit),
 * and the plain-text alternative. Everything but the signature's own HTML goes through `cleanText`
 * here: cleaned like a smart-field value (control characters and bidi overrides such as U+202E
 * removed) and escaped, exactly as the signature's own values are.
 *
 * The page carries the fonts that draw names in any script (src/render/fonts.ts): the signature's
 * own fonts first, then Noto for Arabic, Hebrew, Devanagari, CJK and emoji.
 */
import { cleanText } from './escape.ts';
import { previewFontCss, withFallbacks } from './fonts.ts';
import { sizeReport } from './limits.ts';
import type { RenderOutput } from './render.ts';

export function previewPage(rendered: RenderOutput, facts: readonly (readonly [string, string])[], title = 'Signature preview'): string {
  const sizes = sizeReport(rendered.html)
    .map((s) => `${s.destination} ${s.size}/${s.limit} ${s.fits ? 'fits' : 'TOO LONG'}`)
    .join(', ');
  const rows = [...facts, ['sha256', rendered.hash], ['size', sizes]]
    .map(
      ([k, v]) =>
        `<tr><th style="text-align:left;padding:2px 12px 2px 0;color:#52606d;font-weight:normal">${cleanText(k)}</th><td style="padding:2px 0">${cleanText(v)}</td></tr>`,
    )
    .join('');
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${cleanText(title)}</title>
<style>
${previewFontCss('#signature', rendered.html + rendered.text + rows)}
</style></head>
<body style="margin:0;background:#f5f7fa;font-family:${withFallbacks('Arial,Helvetica,sans-serif').replace(/"/g, "'")};font-size:13px;color:#1f2933">
<div style="max-width:860px;margin:24px auto;padding:0 16px">
<div id="signature" style="background:#ffffff;border:1px solid #e4e7eb;border-radius:6px;padding:24px 28px">
<p style="margin:0 0 4px 0">Best regards,</p>
<p style="margin:0 0 16px 0;color:#7b8794">--</p>
${rendered.html}
</div>
<table style="margin:16px 0;border-collapse:collapse">${rows}</table>
<pre style="font-family:${withFallbacks('monospace').replace(/"/g, "'")};white-space:pre-wrap;background:#ffffff;border:1px solid #e4e7eb;border-radius:6px;padding:12px 16px;margin:0">${cleanText(rendered.text)}</pre>
</div>
</body>
</html>
`;
}
