/**
 * Where a person fixes what an API error or an event points at: the `dashboard_url` of remediations,
 * of integrations and the `reconnect_url` of integration.access_lost. One function builds every one,
 * so that a browser console can take them over by changing it alone.
 *
 * Until there is a console, each URL is an anchor of the remediation guide the API server serves at
 * GET /help/remediation (docs/remediation.md): what to do, with the CLI command that does it. The
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

const ANCHORS: Record<DashboardTarget['page'], string> = {
  integrations: 'integrations',
  integration: 'reconnect-an-integration',
  teammate: 'teammates',
  signature: 'signatures',
  assets: 'assets',
  event_tracking: 'event-tracking',
};

/** The URL of `target` under the deployment's public base URL. */
export function dashboardUrl(publicBaseUrl: string, target: DashboardTarget): string {
  const query = 'id' in target ? `?${target.page}=${encodeURIComponent(target.id)}` : '';
  return `${publicBaseUrl.replace(/\/+$/, '')}${REMEDIATION_PATH}${query}#${ANCHORS[target.page]}`;
}
