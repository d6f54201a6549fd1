import type { HttpServer } from '../../platform/http.js';
import type { ContentContext } from '../context.js';
import { registerActivityRoutes } from './activity.js';
import { registerAssetRoutes } from './assets.js';
import { registerSecretCheck } from './auth.js';
import { registerBlogRoutes } from './blog.js';
import { registerChangelogRoutes } from './changelog.js';
import { registerHealthRoutes } from './health.js';
import { registerLandingRoute } from './landing.js';
import { registerRevalidateRoutes } from './revalidate.js';
import { registerRoadmapRoutes } from './roadmap.js';
import { registerSearchRoutes } from './search.js';

/** Every REST route of spec section 4.4, one module per resource, and the landing route. */
export function registerRestRoutes(app: HttpServer, ctx: ContentContext): void {
  registerSecretCheck(app, ctx);
  registerLandingRoute(app, ctx);
  registerHealthRoutes(app, ctx);
  registerAssetRoutes(app, ctx);
  registerBlogRoutes(app, ctx);
  registerChangelogRoutes(app, ctx);
  registerRoadmapRoutes(app, ctx);
  registerSearchRoutes(app, ctx);
  registerActivityRoutes(app, ctx);
  registerRevalidateRoutes(app, ctx);
}
