/**
 * Tracked links and view images for tests that need one without a signature around it: the
 * installation's tracking (src/analytics/renderTracking.ts) is asked for them as the renderer asks,
 * so the rows and addresses are those an install creates and writes.
 */
import type { TrackTarget } from '../../src/analytics/links.ts';
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
