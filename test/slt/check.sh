#!/usr/bin/env bash
# sqllogictest conformance check: runs tools/sltrun against the server at
# HOST:PORT and fails if any folder passes fewer records than its floor in
# test/slt/floor.json.
#
#   test/slt/check.sh HOST:PORT [ci|full]
#
# ci (default) runs the files of test/slt/ci-files.txt and compares with
# mariadb-baseline-ci.json; full runs the whole corpus and compares with
# mariadb-baseline.json (the floor is for the ci list: use full for
# docs/conformance.md, not for CI).
#
# Writes to $SLT_OUT (default a new /tmp/kiln-slt.XXXX): result.json,
# failures.txt (every failure with file:line and SQL), conformance.md (the
# per-folder table for docs/conformance.md: Kiln passed / MariaDB passed /
# records).
#
# Knobs: SLT_CORPUS (default ../shared/sqllogictest/test), SLT_PARALLEL (2),
# SLT_TIMEOUT (per statement, 10s), SLT_MAX_TIMEOUTS (per file, 10),
# SLT_DEADLINE (whole run, 9m: what is not run by then fails), SLT_INIT (a
# statement run on every connection, e.g. "SET SESSION sql_mode='...'"),
# SLTRUN (a prebuilt sltrun binary; default: built into $SLT_OUT).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
# shellcheck source=scripts/lib.sh
. "$repo/scripts/lib.sh"

[[ $# -ge 1 && $# -le 2 ]] || { echo "usage: $0 HOST:PORT [ci|full]" >&2; exit 2; }
addr=$1
set_name=${2:-ci}
corpus=${SLT_CORPUS:-$repo/../shared/sqllogictest/test}
out=${SLT_OUT:-$(mktemp -d /tmp/kiln-slt.XXXXXX)}
mkdir -p "$out"
[[ -d $corpus ]] || die "sqllogictest corpus not found at $corpus (set SLT_CORPUS)"
corpus=$(cd "$corpus" && pwd)

sltrun=${SLTRUN:-}
if [[ -z $sltrun ]]; then
  sltrun=$out/sltrun
  (cd "$repo" && go build -o "$sltrun" ./tools/sltrun) || die "building tools/sltrun failed"
fi

case $set_name in
  ci) files=(-files-from "$here/ci-files.txt"); baseline=$here/mariadb-baseline-ci.json ;;
  full) files=("$corpus"); baseline=$here/mariadb-baseline.json ;;
  *) die "unknown set $set_name (ci or full)" ;;
esac

init=()
[[ -z ${SLT_INIT:-} ]] || init=(-init "$SLT_INIT")

log "sltrun ($set_name) against $addr -> $out"
rc=0
"$sltrun" -addr "$addr" -root "$corpus" -parallel "${SLT_PARALLEL:-2}" \
  -timeout "${SLT_TIMEOUT:-10s}" -max-timeouts "${SLT_MAX_TIMEOUTS:-10}" -deadline "${SLT_DEADLINE:-9m}" \
  -max-failures 100000 -json "$out/result.json" -v "${init[@]}" "${files[@]}" >"$out/failures.txt" || rc=$?
# The table sltrun prints comes last in its output.
sed -n '/^ *folder  *files/,$p' "$out/failures.txt"
[[ $rc -eq 0 && -s $out/result.json ]] || die "sltrun failed (exit $rc); see $out/failures.txt"

"$PYTHON" "$here/compare.py" "$out/result.json" "$here/floor.json" "$baseline" "$out/conformance.md" ||
  die "below the floor in test/slt/floor.json; failures in $out/failures.txt"
log "slt check passed; table in $out/conformance.md"
