CREATE TABLE "decision_approvals" (
	"decision_id" text NOT NULL,
	"person_id" text NOT NULL,
	"via" text NOT NULL,
	"note" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "decision_approvals_decision_id_person_id_pk" PRIMARY KEY("decision_id","person_id")
);
--> statement-breakpoint
CREATE TABLE "event_deliveries" (
	"event_id" text NOT NULL,
	"endpoint_id" text NOT NULL,
	"type" text NOT NULL,
	"body" jsonb NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"first_attempt_at" timestamp with time zone,
	"last_status" integer,
	"last_error" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "event_deliveries_event_id_endpoint_id_pk" PRIMARY KEY("event_id","endpoint_id")
);
--> statement-breakpoint
CREATE TABLE "event_endpoints" (
	"id" text PRIMARY KEY NOT NULL,
	"key" text NOT NULL,
	"url" text NOT NULL,
	"events" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"secret_env" text,
	"signing_secret" text,
	"enabled" boolean DEFAULT true NOT NULL,
	"managed_by" text DEFAULT 'console' NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "event_endpoints_key_unique" UNIQUE("key")
);
--> statement-breakpoint
CREATE TABLE "invitations" (
	"id" text PRIMARY KEY NOT NULL,
	"email" text NOT NULL,
	"name" text NOT NULL,
	"role" text NOT NULL,
	"space_ids" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"token_hash" text NOT NULL,
	"invited_by" text,
	"expires_at" timestamp with time zone NOT NULL,
	"accepted_at" timestamp with time zone,
	"revoked_at" timestamp with time zone,
	"person_id" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "invitations_token_hash_unique" UNIQUE("token_hash")
);
--> statement-breakpoint
CREATE TABLE "notifications" (
	"id" text PRIMARY KEY NOT NULL,
	"person_id" text NOT NULL,
	"subject" text NOT NULL,
	"reason" text NOT NULL,
	"channel" text DEFAULT 'email' NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"last_error" text,
	"sent_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "standing_rules" DROP CONSTRAINT "standing_rules_position_unique";--> statement-breakpoint
ALTER TABLE "agent_usage" ADD COLUMN "threshold_announced_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "agents" ADD COLUMN "signing_secret" text;--> statement-breakpoint
ALTER TABLE "agents" ADD COLUMN "managed_by" text DEFAULT 'console' NOT NULL;--> statement-breakpoint
ALTER TABLE "capabilities" ADD COLUMN "signing_secret" text;--> statement-breakpoint
ALTER TABLE "capabilities" ADD COLUMN "managed_by" text DEFAULT 'console' NOT NULL;--> statement-breakpoint
ALTER TABLE "decisions" ADD COLUMN "approvals_required" integer DEFAULT 1 NOT NULL;--> statement-breakpoint
ALTER TABLE "decisions" ADD COLUMN "reminded_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "organization" ADD COLUMN "approvals_by_risk" jsonb DEFAULT '{}'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "people" ADD COLUMN "status" text DEFAULT 'active' NOT NULL;--> statement-breakpoint
ALTER TABLE "people" ADD COLUMN "email_notifications" boolean DEFAULT true NOT NULL;--> statement-breakpoint
ALTER TABLE "people" ADD COLUMN "managed_by" text DEFAULT 'console' NOT NULL;--> statement-breakpoint
ALTER TABLE "spaces" ADD COLUMN "managed_by" text DEFAULT 'console' NOT NULL;--> statement-breakpoint
ALTER TABLE "standing_rules" ADD COLUMN "approvals" integer;--> statement-breakpoint
ALTER TABLE "standing_rules" ADD COLUMN "managed_by" text DEFAULT 'console' NOT NULL;--> statement-breakpoint
ALTER TABLE "standing_rules" ADD COLUMN "updated_at" timestamp with time zone DEFAULT now() NOT NULL;--> statement-breakpoint
ALTER TABLE "decision_approvals" ADD CONSTRAINT "decision_approvals_decision_id_decisions_id_fk" FOREIGN KEY ("decision_id") REFERENCES "decisions"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "decision_approvals" ADD CONSTRAINT "decision_approvals_person_id_people_id_fk" FOREIGN KEY ("person_id") REFERENCES "people"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "event_deliveries" ADD CONSTRAINT "event_deliveries_endpoint_id_event_endpoints_id_fk" FOREIGN KEY ("endpoint_id") REFERENCES "event_endpoints"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "invitations" ADD CONSTRAINT "invitations_invited_by_people_id_fk" FOREIGN KEY ("invited_by") REFERENCES "people"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "invitations" ADD CONSTRAINT "invitations_person_id_people_id_fk" FOREIGN KEY ("person_id") REFERENCES "people"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "notifications" ADD CONSTRAINT "notifications_person_id_people_id_fk" FOREIGN KEY ("person_id") REFERENCES "people"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "event_deliveries_endpoint_idx" ON "event_deliveries" USING btree ("endpoint_id","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "notifications_once_idx" ON "notifications" USING btree ("person_id","subject","reason");--> statement-breakpoint
CREATE INDEX "notifications_subject_idx" ON "notifications" USING btree ("subject");--> statement-breakpoint
-- Before the console, standing rules and declared agents could only come from the organization file.
UPDATE "standing_rules" SET "managed_by" = 'file';--> statement-breakpoint
UPDATE "agents" SET "managed_by" = 'file' WHERE "kind" = 'declared';
