#!/usr/bin/env bash
# Runs every Go fuzz target for FUZZTIME each (default 10s): `make fuzz FUZZTIME=10m` for a long run.
# FUZZTIME=seeds runs each target's seed corpus only (no fuzzing): scripts/test.sh's fuzz step, because
# CI must not depend on what a few seconds of random inputs happen to find (and see below).
# New crashers land in the package's testdata/fuzz/<Target>/ directory: commit them with the fix, they
# then run as seeds in `go test`.
#
# A timed run can end in "context deadline exceeded" with no crasher written: a race in Go's fuzz
# coordinator at the -fuzztime boundary (go.dev/issue/75804, fixed in Go 1.27; we build with 1.26).
# Such a run is reported as a harness flake, not a failure; a run that writes a crasher always fails.
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
# crashers lists the files in a target's corpus directory (seeds and crashers alike).
crashers() { { find "$1/testdata/fuzz/$2" -type f 2>/dev/null || true; } | sort; }
failed=0 flaked=0
for t in "${targets[@]}"; do
  pkg=${t% *} name=${t#* }
  if [[ $fuzztime == seeds ]]; then
    echo "== $name ($pkg): seed corpus"
    go test -count=1 -run "^${name}\$" "$pkg" || failed=1
    continue
  fi
  echo "== $name ($pkg) for $fuzztime"
  before=$(crashers "$pkg" "$name")
  out=$(mktemp)
  if go test -run '^$' -fuzz "^${name}\$" -fuzztime "$fuzztime" -parallel 2 "$pkg" 2>&1 | tee "$out"; then
    rm -f "$out"
    continue
  fi
  after=$(crashers "$pkg" "$name")
  if [[ "$before" == "$after" ]] && grep -q 'context deadline exceeded' "$out"; then
    echo "== $name: 'context deadline exceeded' with no crasher written: Go's fuzz coordinator race (go.dev/issue/75804), not counted" >&2
    flaked=$((flaked + 1))
  else
    failed=1
  fi
  rm -f "$out"
done
[[ $flaked -eq 0 ]] || echo "fuzz: $flaked target(s) hit the coordinator race; none wrote a crasher" >&2
exit $failed
