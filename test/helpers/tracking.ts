/**
 * Tracked links and view images for tests that need one without a signature around it: the
 * installation's tracking (src/analytics/renderTracking.ts) is asked for them as the renderer asks,
 * so the rows and addresses are those an install creates and writes.
 */
import crypto from 'node:crypto';
import type { TrackTarget } from '../../src/analytics/links.ts';
import { clickTokens } from '../../src/analytics/token.ts';
import { setEventTracking } from '../../src/db/workspaces.ts';
import type { Api } from '../api/helpers.ts';
import { renderTracked } from '../../src/analytics/renderTracking.ts';
import type { AppContext } from '../../src/context.ts';
import { unescapeAttr } from '../../src/render/escape.ts';
import type { Anchor, RenderOutput, RenderTracking } from '../../src/render/render.ts';

type Ctx = Pick<AppContext, 'pool' | 'secrets' | 'config'>;

/** Runs the tracking with `ask` as the render, links written under `baseUrl`; answers what `ask` answered. */
async function ask<T>(ctx: Ctx, baseUrl: string, t: TrackTarget, question: (tracking: RenderTracking) => T): Promise<T> {
  let answer!: T;
  const render = (tracking: RenderTracking): RenderOutput => {
    answer = question(tracking);
    return { html: '', text: '', hash: '', banner: false, bannerAt: -1 };
  };
  await renderTracked({ ...ctx, config: { ...ctx.config, PUBLIC_BASE_URL: baseUrl } }, t, render);
  return answer;
}

/** The addresses an installation for `t` writes for these links (in the signature, or in the campaign's banner). */
export function trackedLinks(ctx: Ctx, baseUrl: string, t: TrackTarget, urls: string[], anchor: Anchor = 'signature'): Promise<string[]> {
  return ask(ctx, baseUrl, t, (tracking) => urls.map((u) => tracking.link(u, anchor)));
}

/** The address an installation for `t` writes for one link. */
export async function trackedLink(ctx: Ctx, baseUrl: string, t: TrackTarget, url: string): Promise<string> {
  return (await trackedLinks(ctx, baseUrl, t, [url]))[0]!;
}

/**
 * The view image an installation for `t` writes: the banner image `url` (t.campaignId set), or,
 * without `url`, the 1×1 image after the signature (with the campaign when t.campaignId is set).
 */
export function trackedImage(ctx: Ctx, baseUrl: string, t: TrackTarget, url?: string): Promise<string> {
  return ask(ctx, baseUrl, t, (tracking) => {
    if (url !== undefined) return tracking.image(url, 'campaign');
    const pixel = tracking.end(t.campaignId !== null);
    return unescapeAttr(/<img src="([^"]*)"/.exec(pixel)?.[1] ?? '');
  });
}

/**
 * A visitor of the caller's workspace, brought by a click id of a new tracked link and identified
 * as `userId` through the API (event tracking is switched on for it). Answers the visitor's id.
 */
export async function visitorOf(api: Api, userId: string): Promise<string> {
  await setEventTracking(api.t.ctx.pool, api.ws, true);
  const link = await trackedLink(
    api.t.ctx,
    api.base,
    { workspaceId: api.ws, signatureId: crypto.randomUUID(), campaignId: null, teammateId: crypto.randomUUID(), emailId: crypto.randomUUID() },
    'https://acme.test/',
  );
  const tokens = clickTokens(api.t.ctx.secrets);
  const clickId = tokens.clickId(tokens.verify(link.split('/c/')[1]!)!);
  const r = await api.call('POST', '/v1/analytics/events', { event: { name: 'signup', click_id: clickId, user_id: userId } });
  if (r.status !== 200) throw new Error(`the event was not recorded: ${r.text}`);
  const { rows } = await api.t.ctx.pool.query<{ id: string }>('select id from visitors where workspace_id = $1 and user_id = $2', [api.ws, userId]);
  return rows[0]!.id;
}
