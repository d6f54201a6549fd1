CREATE TABLE "content_totals" (
	"list" text PRIMARY KEY NOT NULL,
	"total" bigint NOT NULL
);
--> statement-breakpoint
-- GET /blog reports how many posts are published; counting them reads every one (a million: longer than the
-- page). Statement triggers keep the count instead, one UPDATE per statement however many rows it changes; each
-- function keeps the search_path of the migration (the service's schema), whoever writes. A statement that changes
-- no published post (an edit, an insert that met its slug taken) leaves the row unlocked: racing creates retry
-- slugs held by each other's uncommitted inserts, and must not also wait on this row.
INSERT INTO "content_totals" ("list", "total") SELECT 'blog.published', count(*) FROM "blog_posts" WHERE "status" = 'published';--> statement-breakpoint
CREATE FUNCTION "blog_posts_published_inserted"() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
DECLARE delta bigint := (SELECT count(*) FROM new_posts WHERE status = 'published');
BEGIN
  IF delta <> 0 THEN UPDATE content_totals SET total = total + delta WHERE list = 'blog.published'; END IF;
  RETURN NULL;
END $$;--> statement-breakpoint
CREATE FUNCTION "blog_posts_published_updated"() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
DECLARE delta bigint := (SELECT count(*) FROM new_posts WHERE status = 'published') - (SELECT count(*) FROM old_posts WHERE status = 'published');
BEGIN
  IF delta <> 0 THEN UPDATE content_totals SET total = total + delta WHERE list = 'blog.published'; END IF;
  RETURN NULL;
END $$;--> statement-breakpoint
CREATE FUNCTION "blog_posts_published_deleted"() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
DECLARE delta bigint := (SELECT count(*) FROM old_posts WHERE status = 'published');
BEGIN
  IF delta <> 0 THEN UPDATE content_totals SET total = total - delta WHERE list = 'blog.published'; END IF;
  RETURN NULL;
END $$;--> statement-breakpoint
CREATE TRIGGER "blog_posts_published_inserted" AFTER INSERT ON "blog_posts" REFERENCING NEW TABLE AS new_posts
  FOR EACH STATEMENT EXECUTE FUNCTION "blog_posts_published_inserted"();--> statement-breakpoint
CREATE TRIGGER "blog_posts_published_updated" AFTER UPDATE ON "blog_posts" REFERENCING OLD TABLE AS old_posts NEW TABLE AS new_posts
  FOR EACH STATEMENT EXECUTE FUNCTION "blog_posts_published_updated"();--> statement-breakpoint
CREATE TRIGGER "blog_posts_published_deleted" AFTER DELETE ON "blog_posts" REFERENCING OLD TABLE AS old_posts
  FOR EACH STATEMENT EXECUTE FUNCTION "blog_posts_published_deleted"();
