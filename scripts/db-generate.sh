#!/usr/bin/env bash
# Appends a migration for what changed in the drizzle schema: `npm run db:generate -- --name what_changed`.
# The numbered migrations already released are never rewritten (a database that ran them keeps its journal).
# drizzle-kit qualifies types and foreign-key targets with "public"; each service applies the migrations in
# its own schema through search_path, so the qualifier is removed from the generated SQL (the snapshot,
# which drizzle-kit diffs against, is left as it is).
set -euo pipefail
cd "$(dirname "$0")/.."
exec 9>/tmp/atrium-db-generate.lock
flock 9
npx drizzle-kit generate "$@"
for file in drizzle/*.sql; do sed -i 's/"public"\.//g' "$file"; done
