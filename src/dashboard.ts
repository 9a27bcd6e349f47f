/**
 * Where a person fixes what an API error or an event points at: the `dashboard_url` of remediations,
 * of integrations and the `reconnect_url` of integration.access_lost. One function builds every one,
 * so that a browser console can take them over by changing it alone.
 *
 * Integrations open their page of the console (/console/integrations/{id}; the list without an id).
 * What the console has no page for yet is an anchor of the remediation guide the API server serves
 * at GET /help/remediation (docs/remediation.md): what to do, with the CLI command that does it; the
 * id of the thing to fix rides along as a query parameter.
 */

export type DashboardTarget =
  | { page: 'integrations' }
  | { page: 'integration'; id: string }
  | { page: 'teammate'; id: string }
  | { page: 'signature'; id: string }
  | { page: 'assets' }
  | { page: 'event_tracking' };

/** The path of the remediation guide on the API server. */
export const REMEDIATION_PATH = '/help/remediation';

const ANCHORS: Record<Exclude<DashboardTarget['page'], 'integrations' | 'integration'>, string> = {
  teammate: 'teammates',
  signature: 'signatures',
  assets: 'assets',
  event_tracking: 'event-tracking',
};

/** The URL of `target` under the deployment's public base URL. */
export function dashboardUrl(publicBaseUrl: string, target: DashboardTarget): string {
  const base = publicBaseUrl.replace(/\/+$/, '');
  if (target.page === 'integrations') return `${base}/console/integrations`;
  if (target.page === 'integration') return `${base}/console/integrations/${encodeURIComponent(target.id)}`;
  const query = 'id' in target ? `?${target.page}=${encodeURIComponent(target.id)}` : '';
  return `${base}${REMEDIATION_PATH}${query}#${ANCHORS[target.page]}`;
}

/** An integration's dashboard_url: the one stored with it, else its console page; without one, the list. */
export function integrationDashboardUrl(publicBaseUrl: string, integration?: { id: string; dashboard_url?: string | null }): string {
  if (!integration) return dashboardUrl(publicBaseUrl, { page: 'integrations' });
  return integration.dashboard_url ?? dashboardUrl(publicBaseUrl, { page: 'integration', id: integration.id });
}
