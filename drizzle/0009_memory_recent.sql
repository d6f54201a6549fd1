CREATE TABLE "memory_recent" (
	"item_id" text PRIMARY KEY NOT NULL,
	"space_id" text NOT NULL,
	"recorded_at" timestamp with time zone NOT NULL,
	"search" "tsvector" NOT NULL
);
--> statement-breakpoint
ALTER TABLE "memory_recent" ADD CONSTRAINT "memory_recent_item_id_memory_items_id_fk" FOREIGN KEY ("item_id") REFERENCES "memory_items"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "memory_recent_search_idx" ON "memory_recent" USING gin ("search") WITH (fastupdate=false);--> statement-breakpoint
CREATE INDEX "memory_recent_space_idx" ON "memory_recent" USING btree ("space_id","recorded_at");--> statement-breakpoint
-- Each statement that records items adds them, and trims the spaces it wrote to to their newest 10,000
-- (RECENT_WINDOW in src/org/memory/search.ts): recorded_at is unique per item, so the 10,001st newest and every
-- older item go. Search needs every one of the newest and is indifferent to a few more, and a trim reads the
-- 10,000 newest entries of the space (about 0.6 ms), so a statement of fewer than 32 items trims one time in 32
-- (at random, so no counter row serialises writers): about 32 more kept per space on average. A trim sees only
-- what its transaction sees: one racing another keeps more, never fewer.
CREATE FUNCTION "memory_recent_kept"() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
  INSERT INTO memory_recent (item_id, space_id, recorded_at, search) SELECT id, space_id, recorded_at, search FROM new_items;
  IF (SELECT count(*) FROM new_items) >= 32 OR random() < 1.0 / 32 THEN
    DELETE FROM memory_recent AS kept
    USING (SELECT DISTINCT space_id FROM new_items) AS written
    CROSS JOIN LATERAL (SELECT recorded_at FROM memory_recent AS newest WHERE newest.space_id = written.space_id
                        ORDER BY recorded_at DESC OFFSET 10000 LIMIT 1) AS oldest_gone
    WHERE kept.space_id = written.space_id AND kept.recorded_at <= oldest_gone.recorded_at;
  END IF;
  RETURN NULL;
END $$;--> statement-breakpoint
CREATE TRIGGER "memory_recent_kept" AFTER INSERT ON "memory_items" REFERENCING NEW TABLE AS new_items
  FOR EACH STATEMENT EXECUTE FUNCTION "memory_recent_kept"();--> statement-breakpoint
INSERT INTO "memory_recent" ("item_id", "space_id", "recorded_at", "search")
SELECT "id", "space_id", "recorded_at", "search"
FROM (SELECT *, row_number() OVER (PARTITION BY "space_id" ORDER BY "recorded_at" DESC) AS "newness" FROM "memory_items") AS "ranked"
WHERE "newness" <= 10000;
