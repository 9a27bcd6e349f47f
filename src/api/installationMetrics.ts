/**
 * `sigsync_installations{status, integration_kind}` on the API's /metrics: how many installations are
 * in each status, per kind of destination, for alerting (for example on `failed` rising).
 *
 * Cheap to scrape: the figures come from one grouped count over the index on (integration_id,
 * status) (an index-only scan, no row is read), computed at most once per INSTALLATION_METRICS_TTL_MS
 * however often, and by however many scrapers, /metrics is read; a scrape in between answers the
 * last figures. Without the database the gauge has no series and the rest of /metrics answers.
 * Every status of a kind that has installations is present, at 0 when none.
 */
import { Gauge } from 'prom-client';
import type { AppContext } from '../context.ts';
import { INSTALL_STATUSES } from '../domain.ts';
import { countsByStatus } from '../installations/queries.ts';

export const INSTALLATION_METRIC = 'sigsync_installations';
export const INSTALLATION_METRICS_TTL_MS = 15_000;

/** Registers the gauge on the context's registry (once per registry). */
export function registerInstallationMetrics(app: AppContext): void {
  if (app.metrics.registry.getSingleMetric(INSTALLATION_METRIC)) return;
  let computed: { at: number; figures: Promise<{ status: string; integration_kind: string; n: number }[]> } | undefined;
  const figures = () => {
    const now = Date.now();
    if (!computed || now - computed.at >= INSTALLATION_METRICS_TTL_MS) {
      const figures = countsByStatus(app.pool);
      computed = { at: now, figures };
      // A failed count is not kept: the next scrape asks again.
      figures.catch(() => {
        if (computed?.figures === figures) computed = undefined;
      });
    }
    return computed.figures;
  };
  new Gauge({
    name: INSTALLATION_METRIC,
    help: `Installations by status and integration kind (recounted at most every ${INSTALLATION_METRICS_TTL_MS / 1000} s).`,
    labelNames: ['status', 'integration_kind'],
    registers: [app.metrics.registry],
    async collect() {
      this.reset();
      // Without the database the series are absent (an alert on absence catches it); the other metrics still answer.
      const rows = await figures().catch(() => []);
      for (const kind of new Set(rows.map((r) => r.integration_kind))) for (const status of INSTALL_STATUSES) this.set({ status, integration_kind: kind }, 0);
      for (const r of rows) this.set({ status: r.status, integration_kind: r.integration_kind }, r.n);
    },
  });
}
