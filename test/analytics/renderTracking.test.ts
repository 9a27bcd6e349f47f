/**
 * Tracked links written by the renderer (src/analytics/renderTracking.ts) against the rewrite of
 * finished HTML they replaced (kept below as the reference, `rewriteFinishedHtml`, as it was in
 * src/analytics/links.ts and viewImages.ts): for the same signature, campaign, values and variant,
 * an installation's HTML and hash are the same bytes, through the database's own anchors, links
 * and view images, whichever path met a link first. Cases: the golden cases, the sandbox's signature
 * and banner, banners whose images are in several places of a line or a list item, and random
 * valid trees with hostile values (test/render/arbitraries.ts).
 *
 * The plain text differs by design in two cases: a banner link whose address the signature also
 * links now shows the campaign's tracked link (the rewrite gave it the signature's), and a value
 * that happens to contain `(address)` is no longer rewritten. Elsewhere it is the same.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { linkKey, resolveLinks, type AnchorSource, type TrackTarget } from '../../src/analytics/links.ts';
import { renderTracked } from '../../src/analytics/renderTracking.ts';
import { clickTokens, viewTokens } from '../../src/analytics/token.ts';
import { pixelHtml, viewImageId } from '../../src/analytics/viewImages.ts';
import { unescapeAttr } from '../../src/render/escape.ts';
import { createWorkspace } from '../../src/db/workspaces.ts';
import type { VariantSettings } from '../../src/campaigns/choice.ts';
import type { CampaignInput } from '../../src/render/render.ts';
import { hashHtml, renderSignature, type RenderInput, type RenderOutput } from '../../src/render/render.ts';
import type { ContentTree } from '../../src/render/schema.ts';
import { sandboxBannerTree, sandboxSignatureTree } from '../../src/sandbox/seed.ts';
import { useTestContext } from '../helpers/db.ts';
import { validTree, values as randomValues } from '../render/arbitraries.ts';
import { CASES, readCase, sf, SIGNATURE_ID, smartFieldKinds } from '../render/helpers.ts';

const tc = useTestContext();
let workspaceId: string;
beforeAll(async () => {
  workspaceId = (await createWorkspace(tc.ctx.pool, 'Tracked')).id;
});

const WEB_HREF = /<a href="(https?:\/\/[^"]*)"/gi;
const WEB = /^https?:\/\//i;

/**
 * The reference: a finished render with its view image and then its links rewritten by regular
 * expressions, hashed again (the install path before the renderer wrote tracked links itself).
 */
async function rewriteFinishedHtml(t: TrackTarget, out: RenderOutput): Promise<{ html: string; text: string; hash: string }> {
  const { pool, config } = tc.ctx;
  const baseUrl = config.PUBLIC_BASE_URL;
  // The view image: the banner's first http(s) image, else a 1×1 image after everything.
  const trackedImage = async (url: string) => `${baseUrl}/v/${viewTokens(tc.ctx.secrets).sign(await viewImageId(pool, t, url))}`;
  let viewed: string | undefined;
  if (out.bannerAt >= 0 && t.campaignId) {
    for (const m of out.html.slice(out.bannerAt).matchAll(/<img src="([^"]*)"/g)) {
      const url = unescapeAttr(m[1]!);
      if (!WEB.test(url)) continue;
      const start = out.bannerAt + m.index + '<img src="'.length;
      viewed = out.html.slice(0, start) + (await trackedImage(url)) + out.html.slice(start + m[1]!.length);
      break;
    }
  }
  viewed ??= out.html + pixelHtml(await trackedImage(''));
  // The links: every http(s) href, the campaign's from where the banner starts; `(url)` in the text.
  const sourceAt = (index: number): AnchorSource =>
    out.bannerAt >= 0 && index >= out.bannerAt && t.campaignId ? { kind: 'campaign', id: t.campaignId } : { kind: 'signature', id: t.signatureId };
  const matches = [...viewed.matchAll(/<a href="([^"]*)"/g)]
    .map((m) => ({ index: m.index, raw: m[1]!, url: unescapeAttr(m[1]!) }))
    .filter((m) => WEB.test(m.url));
  if (!matches.length) return { html: viewed, text: out.text, hash: hashHtml(viewed) };
  const links = await resolveLinks(
    pool,
    t,
    matches.map((m) => ({ source: sourceAt(m.index), url: m.url })),
  );
  let html = '';
  let at = 0;
  let text = out.text;
  for (const m of matches) {
    const start = m.index + '<a href="'.length;
    const link = `${baseUrl}/c/${clickTokens(tc.ctx.secrets).sign(links.get(linkKey(t, sourceAt(m.index), m.url))!)}`;
    html += viewed.slice(at, start) + link;
    at = start + m.raw.length;
    text = text.replaceAll(`(${m.url})`, `(${link})`);
  }
  html += viewed.slice(at);
  return { html, text, hash: hashHtml(html) };
}

/** The http(s) addresses a piece of HTML links to. */
const linked = (html: string) => new Set([...html.matchAll(WEB_HREF)].map((m) => m[1]!));

interface Case {
  input: RenderInput;
  campaignId: string;
}

/**
 * Renders the case for a new address through both paths, the one that meets the links first
 * alternating, and compares them. Answers the new path's output.
 */
async function compare(c: Case, newFirst: boolean) {
  const target = { workspaceId, signatureId: c.input.signatureId, teammateId: crypto.randomUUID(), emailId: crypto.randomUUID() };
  const rewrite = async () => {
    const out = renderSignature(c.input);
    return rewriteFinishedHtml({ ...target, campaignId: out.banner ? c.campaignId : null }, out);
  };
  const written = () => renderTracked(tc.ctx, { ...target, campaignId: c.campaignId }, (tracking) => renderSignature(c.input, tracking));
  const [before, after] = newFirst
    ? await written().then(async (w) => [await rewrite(), w] as const)
    : await rewrite().then(async (r) => [r, await written()] as const);
  expect(after.html).toBe(before.html);
  expect(after.hash).toBe(before.hash);
  const plain = renderSignature(c.input);
  const sigLinks = linked(plain.banner ? plain.html.slice(0, plain.bannerAt) : plain.html);
  const shared = plain.banner && [...linked(plain.html.slice(plain.bannerAt))].some((u) => sigLinks.has(u));
  const literalAddress = [...linked(plain.html)].some((u) => Object.values(c.input.values).some((v) => typeof v === 'string' && v.includes(`(${u})`)));
  if (!shared && !literalAddress) expect(after.text).toBe(before.text);
  return after;
}

const campaignOf = (content: unknown, id = crypto.randomUUID()): CampaignInput & { id: string } => ({
  id,
  status: 'active',
  content: content as ContentTree,
  signature_template_ids: [SIGNATURE_ID],
  smart_fields_conditions: [],
});

const image = (id: string, assetUuid: string, href?: string) => ({ type: 'textToken', id, value: 'img', assetUuid, ...(href ? { href: { text: href } } : {}) });
const photo = (id: string, href?: string) => ({ type: 'textToken', id, value: 'photo', smartFieldUuid: sf.photo!, ...(href ? { href: { text: href } } : {}) });

describe('tracked links written by the renderer', () => {
  it('the golden cases: the same HTML and hash as the rewrite of the finished HTML', async () => {
    let n = 0;
    for (const name of fs.readdirSync(CASES)) {
      const g = readCase(name);
      const campaign = g.campaign ? { ...g.campaign, id: crypto.randomUUID() } : null;
      const input: RenderInput = {
        tree: g.tree,
        values: g.values,
        smartFieldKinds,
        signatureId: g.signatureId,
        campaign,
        variant: g.variant ?? null,
        assets: g.assets ? new Map(Object.entries(g.assets)) : undefined,
      };
      for (const newFirst of [true, false]) {
        const out = await compare({ input, campaignId: campaign?.id ?? crypto.randomUUID() }, newFirst);
        expect(out.html).toContain('/v/');
      }
      n++;
    }
    expect(n).toBeGreaterThanOrEqual(10);
  });

  it("the sandbox's signature and banner, as the primary signature and as variants with and without campaigns", async () => {
    const fields = Object.fromEntries(
      ['full_name', 'job_title', 'phone', 'full_name_m365', 'job_title_m365', 'phone_m365'].map((slug) => [slug, crypto.randomUUID()]),
    );
    const tree = sandboxSignatureTree(fields) as unknown as ContentTree;
    const campaign = campaignOf(sandboxBannerTree({ name: 'Summit', text: 'Join us', link_text: 'Register', href: 'https://acme.test/summit' }));
    const values = { [fields.full_name!]: 'Ann Lee', [fields.job_title!]: 'CFO', [fields.phone!]: '+1 555 0100' };
    for (const variant of [
      null,
      { kind: 'reply', show_marketing_campaigns: true },
      { kind: 'internal', show_marketing_campaigns: false },
    ] as (VariantSettings | null)[]) {
      const out = await compare({ input: { tree, values, signatureId: SIGNATURE_ID, campaign, variant }, campaignId: campaign.id }, variant === null);
      expect(out.html).toMatch(/href="http:\/\/[^"]+\/c\/[\w-]{24}"/);
      expect(out.html).toContain('href="mailto:hello@acme.test"');
      // The signature's text names no address beside its label; the banner's `Register (link)` does.
      expect(/Register \(http:\/\/[^)]+\/c\/[\w-]{24}\)/.test(out.text)).toBe(variant?.show_marketing_campaigns ?? true);
    }
  });

  it('the view image is the first http(s) image of the banner as it reads: an asset before an image field in one line, a label before its value, social icons', async () => {
    const [logo, banner] = [crypto.randomUUID(), crypto.randomUUID()];
    const assets = new Map([
      [logo, { url: 'https://sig.acme.test/assets/logo' }],
      [banner, { url: 'https://sig.acme.test/assets/banner' }],
    ]);
    const tree = {
      type: 'stack',
      id: 'root',
      children: [
        { type: 'text', id: 'l', tokens: [image('logo', logo)] },
        { type: 'text', id: 'n', tokens: [{ type: 'textToken', id: 'n1', value: 'Ann Lee', href: { text: 'https://acme.test/' } }] },
      ],
    };
    const banners = {
      assetThenField: { type: 'stack', id: 'b', children: [{ type: 'text', id: 'x', tokens: [image('a', banner, 'https://acme.test/summit'), photo('p')] }] },
      fieldThenAsset: {
        type: 'stack',
        id: 'b',
        children: [{ type: 'text', id: 'x', tokens: [photo('p', 'https://acme.test/team'), { type: 'textToken', id: 's', value: ' ' }, image('a', banner)] }],
      },
      labelThenValue: {
        type: 'stack',
        id: 'b',
        children: [
          {
            type: 'list',
            id: 'l',
            children: [
              { type: 'listItem', id: 'i', label: { type: 'listItemLabel', tokens: [image('a', banner)] }, tokens: [photo('p', 'https://acme.test/summit')] },
            ],
          },
        ],
      },
      socialFirst: {
        type: 'stack',
        id: 'b',
        children: [
          {
            type: 'socialList',
            id: 's',
            children: [{ type: 'socialListItem', id: 's1', network: 'linkedin', href: { text: 'https://www.linkedin.com/company/acme' } }],
          },
          { type: 'text', id: 'x', tokens: [image('a', banner)] },
        ],
      },
      noImage: {
        type: 'stack',
        id: 'b',
        children: [{ type: 'text', id: 'x', tokens: [{ type: 'textToken', id: 'j', value: 'Join us', href: { text: 'https://acme.test/summit' } }] }],
      },
    };
    for (const [name, content] of Object.entries(banners)) {
      const campaign = campaignOf(content);
      for (const newFirst of [true, false]) {
        const input: RenderInput = {
          tree: tree as unknown as ContentTree,
          values: { [sf.photo!]: 'https://img.acme.test/ann.png' },
          smartFieldKinds,
          assets,
          signatureId: SIGNATURE_ID,
          campaign,
        };
        const out = await compare({ input, campaignId: campaign.id }, newFirst);
        const srcs = [...out.html.matchAll(/<img src="([^"]*)"/g)].map((m) => m[1]!);
        expect(srcs[0], name).toBe('https://sig.acme.test/assets/logo');
        expect(
          srcs.filter((s) => s.includes('/v/')),
          name,
        ).toHaveLength(1);
        expect(out.html.includes('width="1" height="1"'), name).toBe(name === 'noImage');
      }
    }
  });

  it("a banner link the signature also links: the same HTML, and the banner's text shows the campaign's link as its HTML does", async () => {
    const url = 'https://acme.test/summit';
    const tree = {
      type: 'stack',
      id: 'root',
      children: [{ type: 'text', id: 'n', tokens: [{ type: 'textToken', id: 't', value: 'Summit', href: { text: url } }] }],
    };
    const campaign = campaignOf({
      type: 'stack',
      id: 'b',
      children: [{ type: 'text', id: 'x', tokens: [{ type: 'textToken', id: 'j', value: 'Join us', href: { text: url } }] }],
    });
    const out = await compare(
      { input: { tree: tree as unknown as ContentTree, values: {}, signatureId: SIGNATURE_ID, campaign }, campaignId: campaign.id },
      true,
    );
    const hrefs = [...out.html.matchAll(/<a href="([^"]*)"/g)].map((m) => m[1]!);
    expect(hrefs).toHaveLength(2);
    expect(hrefs[0]).not.toBe(hrefs[1]);
    expect(out.text).toBe(`Summit (${hrefs[0]})\n\nJoin us (${hrefs[1]})`);
  });

  it('random valid trees, banners, variants and hostile values: the same HTML and hash', async () => {
    const variant = fc.option(fc.record({ kind: fc.constantFrom('reply' as const, 'internal' as const), show_marketing_campaigns: fc.boolean() }), {
      nil: null,
    });
    await fc.assert(
      fc.asyncProperty(validTree, fc.option(validTree, { nil: null }), randomValues, variant, fc.boolean(), async (tree, banner, values, v, newFirst) => {
        const campaign = banner ? campaignOf(banner) : null;
        await compare(
          { input: { tree, values, smartFieldKinds, signatureId: SIGNATURE_ID, campaign, variant: v }, campaignId: campaign?.id ?? crypto.randomUUID() },
          newFirst,
        );
      }),
      { numRuns: 150 },
    );
  });
});
