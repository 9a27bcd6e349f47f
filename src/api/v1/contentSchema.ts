/**
 * GET /v1/content_schema (spec 2.13): the machine-readable content tree schema, its enums, the social
 * icon map, an example built from the caller's smart fields, and guidance. See src/render/contentSchema.ts.
 */
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../../context.ts';
import { contentSchemaDocument, type SmartFieldSummary } from '../../render/contentSchema.ts';
import { smartFieldSummaries } from '../../db/smartFields.ts';

export function contentSchemaRoutes(v1: FastifyInstance, app: AppContext): void {
  v1.get('/content_schema', async (req) => {
    const rows: SmartFieldSummary[] = await smartFieldSummaries(app.pool, req.workspaceId);
    return { data: contentSchemaDocument(rows) };
  });
}
