#!/usr/bin/env bash
# The whole sqllogictest corpus against Kiln, for docs/conformance.md.
#
#   scripts/conformance.sh [ci|full]     (default full)
#
# Starts bin/kiln ($KILN_BIN) on a temporary data dir, runs
# test/slt/check.sh on it, stops it. The per-folder table (Kiln passed /
# MariaDB passed / records) lands in $SLT_OUT/conformance.md (printed at the
# end). With the full corpus the floor (set for the ci list) is not a gate:
# the exit status is that of the run itself.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(dirname "$here")
# shellcheck source=scripts/lib.sh
. "$here/lib.sh"

set_name=${1:-full}
work=$(mktemp -d /tmp/kiln-conformance.XXXXXX)
trap '"$here/kiln.sh" stop "$work/kiln" || true' EXIT
port=$("$here/kiln.sh" start "$work/kiln")
export SLT_OUT=${SLT_OUT:-$work/slt}
# A full run has no deadline of CI's.
SLT_DEADLINE=${SLT_DEADLINE:-0} "$repo/test/slt/check.sh" "127.0.0.1:$port" "$set_name" ||
  [[ $set_name == full && -s $SLT_OUT/conformance.md ]]
log "table: $SLT_OUT/conformance.md"
