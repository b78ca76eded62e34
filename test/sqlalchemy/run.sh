#!/usr/bin/env bash
# SQLAlchemy's dialect compliance suite (test/dialect/test_suite.py of the
# SQLAlchemy sdist, the suite third-party dialects run) against Kiln, with a
# floor of passing tests.
#
#   test/sqlalchemy/run.sh HOST:PORT
#
# Installs the pinned packages of requirements.txt into a venv, downloads the
# SQLAlchemy sdist of the pinned version (it carries test/ and the pytest
# plugin), creates the databases test, test_schema and test_schema_2, runs
#   pytest test/dialect/test_suite.py --dburi mysql+pymysql://root@HOST:PORT/test
# (the whole suite: about 1,700 tests, 20-30 s), prints passed / failed /
# errors / skipped and fails if Kiln passes fewer tests than floor.json.
#
# SQLA_MARIADB=1 also starts a MariaDB (scripts/mariadb.sh) and runs the same
# suite against it, to record MariaDB's count beside Kiln's
# (docs/conformance.md) and list the tests MariaDB passes and Kiln does not.
#
# Writes to $SQLA_OUT (default a new /tmp/kiln-sqla.XXXX): kiln.xml / kiln.log
# (and mariadb.*), counts.json, categories.txt (Kiln's failures grouped by
# error), kiln-only-failures.txt. $SQLA_CACHE (default ~/.cache/kiln-sqla)
# keeps the venv and the sdist between runs; pip's own cache is used too.
# The databases test, test_schema and test_schema_2 are dropped and created
# afresh before the run and dropped after it (SQLA_KEEP=1 keeps them): never
# point this at a server whose databases of those names hold data.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
# shellcheck source=scripts/lib.sh
. "$repo/scripts/lib.sh"

[[ $# -eq 1 ]] || { echo "usage: $0 HOST:PORT" >&2; exit 2; }
host=${1%:*}
port=${1##*:}
out=${SQLA_OUT:-$(mktemp -d /tmp/kiln-sqla.XXXXXX)}
mkdir -p "$out"
out=$(cd "$out" && pwd)
cache=${SQLA_CACHE:-$HOME/.cache/kiln-sqla}
version=$(sed -n 's/^SQLAlchemy==//p' "$here/requirements.txt")
[[ -n $version ]] || die "no SQLAlchemy pin in $here/requirements.txt"
# The sdist's digest, as PyPI lists it for this version: the tests we run are
# exactly the ones the floor was recorded with.
sdist_sha256=2acdcec9836b7c1514a9ad426e7731669a1186d96481a2e82c50bf2aebb49061

# The venv is keyed by the requirements file, so a changed pin builds a new one.
key=$(sha256sum "$here/requirements.txt" | cut -c1-12)
venv=$cache/venv-$key
if [[ ! -x $venv/bin/pytest ]]; then
  log "creating $venv"
  rm -rf "$venv"
  mkdir -p "$cache"
  "$PYTHON" -m venv "$venv" || die "python3 -m venv failed (Debian: apt-get install python3-venv)"
  "$venv/bin/pip" install -q --disable-pip-version-check -r "$here/requirements.txt" ||
    die "pip install -r $here/requirements.txt failed"
fi
src=$cache/sqlalchemy-$version
if [[ ! -f $src/test/dialect/test_suite.py ]]; then
  # pip prepares the sdist's metadata in an isolated build environment: about
  # 2 minutes the first time; the unpacked sdist stays in $cache.
  log "downloading the SQLAlchemy $version sdist"
  "$venv/bin/pip" download -q --disable-pip-version-check --no-deps --no-binary :all: \
    -d "$cache/dl" "SQLAlchemy==$version" || die "pip download of the SQLAlchemy sdist failed"
  tgz=$cache/dl/sqlalchemy-$version.tar.gz
  echo "$sdist_sha256  $tgz" | sha256sum -c --quiet - || die "$tgz does not have the pinned sha256"
  tar -xzf "$tgz" -C "$cache" || die "unpacking the sdist failed"
fi

dbs=(test test_schema test_schema_2)
# sql HOST PORT STATEMENT...: one statement per database of dbs, e.g. "DROP DATABASE IF EXISTS %s".
sql() {
  local h=$1 p=$2 stmt=$3 d q=""
  for d in "${dbs[@]}"; do
    # shellcheck disable=SC2059 # the statement is the format
    q+="$(printf "$stmt" "$d"); "
  done
  mariadb --no-defaults -h "$h" -P "$p" -uroot -e "$q"
}

# run NAME HOST PORT: the suite against one server; the report in $out/NAME.xml. The databases
# are created afresh (a failed fixture leaves tables behind, and a table left by an earlier run
# changes what later tests see) and dropped afterwards unless SQLA_KEEP=1.
run() {
  local name=$1 h=$2 p=$3
  if ! sql "$h" "$p" 'DROP DATABASE IF EXISTS %s' || ! sql "$h" "$p" 'CREATE DATABASE %s'; then
    die "creating the databases ${dbs[*]} on $name failed"
  fi
  log "SQLAlchemy $version dialect suite against $name at $h:$p"
  local t0 rc=0
  t0=$(date +%s)
  # The sdist's pyproject sets --maxfail=250; every test must run to be counted.
  # pytest exits 1 when a test fails: that is expected, the floor decides.
  (cd "$src" && "$venv/bin/python" -m pytest test/dialect/test_suite.py \
    --dburi "mysql+pymysql://root@$h:$p/test" -p no:cacheprovider -q --maxfail=100000 --tb=line \
    --junitxml="$out/$name.xml" -o junit_family=xunit2) >"$out/$name.log" 2>&1 || rc=$?
  log "$name: pytest exit $rc in $(($(date +%s) - t0)) s; $(tail -n 1 "$out/$name.log")"
  [[ ${SQLA_KEEP:-0} == 1 ]] || sql "$h" "$p" 'DROP DATABASE IF EXISTS %s' || die "dropping ${dbs[*]} on $name failed"
  [[ $rc -le 1 && -s $out/$name.xml ]] || { tail -n 30 "$out/$name.log" >&2; die "pytest failed to run (exit $rc)"; }
}

run kiln "$host" "$port"
maria=()
if [[ ${SQLA_MARIADB:-0} == 1 ]]; then
  mdir=$out/mariadb-server
  trap '"$repo/scripts/mariadb.sh" stop "$mdir" >/dev/null 2>&1 || true; rm -rf "$mdir/data"' EXIT
  mport=$("$repo/scripts/mariadb.sh" start "$mdir" | tail -n 1)
  run mariadb 127.0.0.1 "$mport"
  maria=(--maria "$out/mariadb.xml")
fi
"$PYTHON" "$here/summarize.py" "$out/kiln.xml" "${maria[@]}" --floor "$here/floor.json" --out "$out" ||
  die "below the floor in test/sqlalchemy/floor.json; see $out/categories.txt and $out/kiln.log"
log "sqlalchemy check passed; results in $out"
