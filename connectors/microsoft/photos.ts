/**
 * Microsoft Graph photo source (category `assets`): GET /users/{id}/photo/$value, the largest photo
 * the user has (Entra ID or the Exchange mailbox).
 *
 * A user without a photo answers 404 `ImageNotFound`: that is an answer (null), not an error; so is
 * a user without a mailbox to hold one. The ETag Graph sends with the image is returned as the
 * photo's etag. https://learn.microsoft.com/graph/api/profilephoto-get
 */
import { definePhotoSource, type DirectoryUser, MailboxError, type Photo, type PhotoSource } from '../types.ts';
import { PHOTO_PERMISSIONS } from './auth.ts';
import { GraphApi, type GraphContext } from './graph.ts';
import { microsoftConfigSchema, microsoftCredentialsSchema } from './schemas.ts';

/** 404 codes that mean "no photo" rather than "no such user". */
const NO_PHOTO_CODES = new Set(['ImageNotFound', 'ErrorItemNotFound', 'MailboxNotEnabledForRESTAPI']);

export class MicrosoftPhotoSource implements PhotoSource {
  private readonly graph: GraphApi;

  constructor(graph: GraphApi) {
    this.graph = graph;
  }

  async fetchPhoto(user: { externalId: string; photo: DirectoryUser['photo'] }): Promise<Photo | null> {
    if (user.photo === null) return null;
    let res: Response;
    try {
      res = await this.graph.send('GET', this.graph.url(`users/${encodeURIComponent(user.externalId)}/photo/$value`), { scope: 'mailbox' });
    } catch (err) {
      if (err instanceof MailboxError && err.status === 404 && NO_PHOTO_CODES.has(err.providerCode ?? '')) return null;
      throw err;
    }
    const data = Buffer.from(await res.arrayBuffer());
    if (data.length === 0) return null;
    const photo: Photo = { contentType: res.headers.get('content-type')?.split(';')[0]?.trim() || 'image/jpeg', data };
    const etag = res.headers.get('etag') ?? user.photo.etag;
    if (etag) photo.etag = etag;
    return photo;
  }
}

export const microsoftPhotoSource = definePhotoSource({
  kind: 'microsoft_entra',
  capabilities: { unversionedPhotos: true },
  scopes: PHOTO_PERMISSIONS,
  configSchema: microsoftConfigSchema,
  credentialsSchema: microsoftCredentialsSchema,
  create: (ctx) => new MicrosoftPhotoSource(new GraphApi(ctx satisfies GraphContext)),
});
