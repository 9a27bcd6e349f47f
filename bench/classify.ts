/**
 * `classify`: the traffic classifier (src/analytics/classify.ts) on the labelled request set
 * (test/fixtures/traffic/requests.json: security gateways' link checks, image proxies and people
 * on desktop and mobile browsers, each address inside the real network it names). Goal: precision
 * and recall ≥ 0.95 for "not a person" (a request labelled scanner or proxy; classified scanner or
 * proxy) and for each class (human, scanner, proxy; a request classified `unknown` is a miss of its
 * label's class). Also the requests it got wrong, the data set's load time and lookups per second.
 *
 *   npm run bench -- classify
 *
 * `ratio` is the smallest of these precisions and recalls over the goal.
 */
import fs from 'node:fs';
import path from 'node:path';
import { classifyRequest, TRAFFIC_CLASSES, type TrafficClass } from '../src/analytics/classify.ts';
import { networkOf, openNetworks } from '../src/analytics/networks.ts';
import type { BenchArgs, Figures } from './types.ts';

export interface LabelledRequest {
  kind: 'click' | 'view';
  label: Exclude<TrafficClass, 'unknown'>;
  source: string;
  method: string;
  user_agent: string;
  referer?: string;
  ip: string;
}

export const FIXTURE = path.join(import.meta.dirname, '../test/fixtures/traffic/requests.json');
export const GOAL = 0.95;

export function labelledRequests(): LabelledRequest[] {
  return (JSON.parse(fs.readFileSync(FIXTURE, 'utf8')) as { requests: LabelledRequest[] }).requests;
}

const machine = (c: TrafficClass) => c === 'scanner' || c === 'proxy';
const ratio = (n: number, d: number) => (d ? Math.round((n / d) * 10_000) / 10_000 : null);

/** Precision and recall of "not a person" and of each class over the labelled requests. */
export function score(requests: LabelledRequest[]) {
  const got = requests.map((r) => ({ r, c: classifyRequest(r.kind, { method: r.method, userAgent: r.user_agent, referer: r.referer, ip: r.ip }) }));
  const pr = (truth: (r: LabelledRequest) => boolean, said: (c: TrafficClass) => boolean) => {
    const tp = got.filter((g) => truth(g.r) && said(g.c.class)).length;
    return {
      precision: ratio(tp, got.filter((g) => said(g.c.class)).length),
      recall: ratio(tp, got.filter((g) => truth(g.r)).length),
      n: got.filter((g) => truth(g.r)).length,
    };
  };
  const notPerson = pr((r) => r.label !== 'human', machine);
  const classes = Object.fromEntries(
    TRAFFIC_CLASSES.filter((c) => c !== 'unknown').map((c) => [
      c,
      pr(
        (r) => r.label === c,
        (x) => x === c,
      ),
    ]),
  );
  const wrong = got
    .filter((g) => g.c.class !== g.r.label)
    .map((g) => ({ source: g.r.source, kind: g.r.kind, label: g.r.label, class: g.c.class, reasons: g.c.reasons, org: g.c.org }));
  return { requests: got.length, not_a_person: notPerson, classes, unknown: got.filter((g) => g.c.class === 'unknown').length, wrong };
}

export async function classifyScenario({ log }: BenchArgs): Promise<Figures> {
  let t = performance.now();
  openNetworks();
  const loadMs = Math.round(performance.now() - t);
  log(`loaded the IP-to-ASN data set in ${loadMs} ms`);
  const requests = labelledRequests();
  const s = score(requests);
  for (const w of s.wrong)
    log(`wrong: ${w.kind} of ${w.source}: ${w.label} classified ${w.class} (${w.reasons.join(', ') || 'no signal'}; ${w.org ?? 'no network'})`);
  const ips = requests.map((r) => r.ip);
  const n = 200_000;
  t = performance.now();
  for (let i = 0; i < n; i++) networkOf(ips[i % ips.length]!);
  const lookupsPerSecond = Math.round(n / ((performance.now() - t) / 1000));
  const worst = Math.min(...[s.not_a_person, ...Object.values(s.classes)].flatMap((f) => [f.precision ?? 0, f.recall ?? 0]));
  return {
    requests: s.requests,
    precision: s.not_a_person.precision,
    recall: s.not_a_person.recall,
    classes: s.classes,
    unknown: s.unknown,
    wrong: s.wrong.length,
    load_ms: loadMs,
    lookups_per_second: lookupsPerSecond,
    goal: GOAL,
    ratio: Math.round((worst / GOAL) * 1000) / 1000,
  };
}
