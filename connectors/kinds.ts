/**
 * The provider kinds that have connectors (connectors/registry.ts maps each to its definitions).
 * Apart from the registry so that the CLI can list them without loading the provider SDKs.
 */
export const CONNECTOR_KINDS = ['google_workspace', 'microsoft_entra', 'slack'] as const;

export type ConnectorKind = (typeof CONNECTOR_KINDS)[number];
