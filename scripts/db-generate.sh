#!/usr/bin/env bash
# Regenerates the migration set from the drizzle schema.
# Until the first release the set is a single `0000_init.sql`, regenerated from scratch so that parallel
# schema work never produces conflicting numbered migrations. (After the first release, drop the `rm` and
# the `--name` and let drizzle-kit append migrations.)
# drizzle-kit qualifies types and foreign-key targets with "public"; each service applies the migrations in
# its own schema through search_path, so the qualifier is removed from the generated SQL (the snapshot,
# which drizzle-kit diffs against, is left as it is).
set -euo pipefail
cd "$(dirname "$0")/.."
exec 9>/tmp/atrium-db-generate.lock
flock 9
rm -rf drizzle
npx drizzle-kit generate --name init "$@"
for file in drizzle/*.sql; do sed -i 's/"public"\.//g' "$file"; done
