/**
 * The `optOut` block: validated like other blocks (its own members only, a text within bounds, field
 * paths in the errors), rendered as a text line linking to the workspace's opt-out link that the
 * render is given (left out without one), and, in an installation's render with tracking on, that
 * link is the workspace's own `/o/{token}`, never a tracked link.
 */
import { describe, expect, it } from 'vitest';
import { OptOutTokens } from '../../src/analytics/privacy.ts';
import { setEventTracking } from '../../src/db/workspaces.ts';
import { renderForAddress } from '../../src/analytics/addressRender.ts';
import { renderSignature } from '../../src/render/render.ts';
import type { ContentTree } from '../../src/render/schema.ts';
import { validateContent } from '../../src/render/validate.ts';
import { useApi } from '../api/helpers.ts';
import { seedAddinWorld } from '../addin/fixtures.ts';

const FIELD = 'signature.draft_content';
const URL_ = 'https://signatures.acme.test/o/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA';
const tree = (optOut: Record<string, unknown>): ContentTree =>
  ({
    type: 'stack',
    children: [
      { type: 'text', tokens: [{ type: 'textToken', value: 'Regards', href: { text: 'https://acme.test/' } }] },
      { type: 'optOut', ...optOut },
    ],
  }) as ContentTree;
const render = (t: ContentTree, optOutUrl?: string) => renderSignature({ tree: t, values: {}, signatureId: 'sig', optOutUrl });

describe('the optOut block', () => {
  it('is validated like other blocks', () => {
    expect(validateContent(tree({}), { field: FIELD, smartFieldIds: new Set() })).toMatchObject({ ok: true });
    expect(
      validateContent(tree({ text: 'No tracking, please', textStyle: { fontSize: 10, color: '#616e7c' }, blockStyle: { marginTop: 8 } }), {
        field: FIELD,
        smartFieldIds: new Set(),
      }),
    ).toMatchObject({ ok: true });
    const fields = (t: ContentTree) => {
      const r = validateContent(t, { field: FIELD, smartFieldIds: new Set() });
      return r.ok ? [] : r.details.map((d) => d.field);
    };
    expect(fields(tree({ text: '' }))).toEqual([`${FIELD}.children[1].text`]);
    expect(fields(tree({ text: 'x'.repeat(2001) }))).toEqual([`${FIELD}.children[1].text`]);
    expect(fields(tree({ textStyle: { fontSize: 400 } }))).toEqual([`${FIELD}.children[1].textStyle.fontSize`]);
    // The link is the workspace's: a tree cannot set it.
    expect(fields(tree({ href: { text: 'https://evil.test/' } }))).toEqual([`${FIELD}.children[1].href`]);
  });

  it('renders a line with the given link and the default text, styled as a text link; without a link it is left out', () => {
    const out = render(tree({}), URL_);
    expect(out.html).toContain(`<a href="${URL_}"`);
    expect(out.html).toContain('>Stop tracking me</a>');
    expect(out.text).toContain(`Stop tracking me (${URL_})`);
    const styled = render(tree({ text: 'Unsubscribe from tracking', textStyle: { color: '#616e7c', fontSize: 10 } }), URL_);
    expect(styled.html).toMatch(/<a href="[^"]+"[^>]*style="[^"]*color:#616e7c[^"]*"[^>]*>Unsubscribe from tracking<\/a>/);
    const without = render(tree({}));
    expect(without.html).not.toContain('Stop tracking me');
    expect(without.html).not.toContain('opt-out.invalid');
    // A signature without the block renders the same with or without a link.
    const plain = { type: 'stack', children: [{ type: 'text', tokens: [{ type: 'textToken', value: 'Regards' }] }] } as ContentTree;
    expect(render(plain, URL_).html).toBe(render(plain).html);
  });

  describe('in an installation', () => {
    const api = useApi({ PUBLIC_BASE_URL: 'https://signatures.acme.test' });

    it("links to the workspace's own opt-out link, never tracked, while the other links are", async () => {
      const { pool } = api.t.ctx;
      const w = await seedAddinWorld(api.t.ctx, api.ws);
      try {
        await setEventTracking(pool, api.ws, true);
        await pool.query(`update signatures set content = $2 where id = $1`, [w.signatureId, JSON.stringify(tree({ text: 'Stop tracking me' }))]);
        const r = await renderForAddress(api.t.ctx, {
          workspaceId: api.ws,
          teammateId: w.ann.id,
          signatureId: w.signatureId,
          kind: 'primary',
          emailId: w.ann.emailIds[0],
        });
        const own = new OptOutTokens(api.t.ctx.secrets).url('https://signatures.acme.test', api.ws);
        const hrefs = [...r.html.matchAll(/<a href="([^"]+)"/g)].map((m) => m[1]);
        expect(hrefs).toHaveLength(2);
        expect(hrefs[0]).toMatch(/^https:\/\/signatures\.acme\.test\/c\//);
        expect(hrefs[1]).toBe(own);
        // The link opens the opt-out page of this workspace.
        const page = await fetch(`${api.base}${new URL(own).pathname}`);
        expect(page.status).toBe(200);
      } finally {
        await w.emulator.close();
      }
    });
  });
});
