#!/usr/bin/env bash
# Runs every Go fuzz target for FUZZTIME each (default 10s): `make fuzz FUZZTIME=10m` for a long run,
# scripts/test.sh's fuzz step for a short one. New crashers land in the package's
# testdata/fuzz/<Target>/ directory: commit them with the fix, they then run as seeds in `go test`.
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime=${FUZZTIME:-10s}
targets=(
  "./internal/sql/ FuzzQuery"
  "./internal/sql/dml/ FuzzLoadDataFieldReader"
  "./internal/sql/rowenc/ FuzzDecodeRow"
  "./internal/mysql/ FuzzReadPacket"
  "./internal/mysql/ FuzzHandshakeResponse"
  "./internal/mysql/ FuzzStmtExecute"
)
# Every target in the tree must be listed above (a new one is not silently left out).
found=$(grep -rhoE '^func (Fuzz[A-Za-z0-9_]+)' --include='*_test.go' internal cmd tools 2>/dev/null | awk '{print $2}' | sort)
listed=$(for t in "${targets[@]}"; do echo "${t#* }"; done | sort)
if [[ "$found" != "$listed" ]]; then
  echo "fuzz targets in the tree and in scripts/fuzz.sh differ:" >&2
  diff <(echo "$listed") <(echo "$found") >&2 || true
  exit 1
fi
failed=0
for t in "${targets[@]}"; do
  pkg=${t% *} name=${t#* }
  echo "== $name ($pkg) for $fuzztime"
  if ! go test -run '^$' -fuzz "^${name}\$" -fuzztime "$fuzztime" -parallel 2 "$pkg"; then
    failed=1
  fi
done
exit $failed
