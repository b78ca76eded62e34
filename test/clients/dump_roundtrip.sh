#!/usr/bin/env bash
# mysqldump round trip: dump a database from the server at HOST PORT with
# Debian's mariadb-dump, reload it with the mariadb CLI into a fresh Kiln, and
# check that both sides hold the same tables, definitions and bytes.
#
#   test/clients/dump_roundtrip.sh HOST PORT [KILN_BIN]
#
# 1. Creates database $DUMP_DB (kiln_dump_rt) on HOST:PORT from
#    test/clients/dump/base.sql: tables with primary, unique, secondary and
#    composite keys, AUTO_INCREMENT, defaults, comments, every common column
#    type and edge values (NULL, '', quotes, backslashes, control characters,
#    4-byte UTF-8, bytes 0x00-0xFF, integer extremes, zero dates).
#    DUMP_NEW_TYPES=1 also loads dump/new_types.sql (ENUM, SET, BIT, JSON,
#    foreign keys, views, CHECK constraints).
# 2. Starts a second Kiln on a temporary directory (scripts/kiln.sh with
#    KILN_BIN, default bin/kiln).
# 3. For each variant in $DUMP_VARIANTS, dumps with mariadb-dump, reloads the
#    dump with the mariadb CLI and compares, per table: SHOW CREATE TABLE, the
#    row count, and md5 of `SELECT * ... ORDER BY <primary key>` as the CLI
#    prints it and of the same rows with every string, binary, BIT and JSON
#    column as HEX() (byte-exact); also SHOW TABLES and SHOW CREATE DATABASE.
#    Variants:
#      default   mariadb-dump DB: its defaults (--opt: lock tables, add locks,
#                drop table, extended inserts, disable keys; triggers; tz-utc)
#      single    --single-transaction --routines --triggers --events --databases DB
#      hex       --hex-blob --skip-extended-insert --complete-insert
#                --add-drop-database --databases DB
#      all       --single-transaction --all-databases (system schemas included;
#                only when reloading into a fresh Kiln)
#    DUMP_VARIANTS defaults to all four. DUMP_NEW_TYPES=1 (the default) adds
#    ENUM/SET/BIT/JSON, foreign keys, views and CHECK constraints.
# 4. After the last variant, one more row into the AUTO_INCREMENT tables of
#    both sides must get the same id.
# 5. Stops the second Kiln and drops the database on HOST:PORT (trap). The
#    work directory (dumps, outputs) is kept when a check fails, or always with
#    DUMP_KEEP=1 (the database stays too).
#
# DUMP_TARGET=HOST2:PORT2 reloads into that running server instead of a fresh
# Kiln (to check this script against MariaDB: the same server as the source is
# fine, the copy is then database ${DUMP_DB}_copy).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
# shellcheck source=scripts/lib.sh
. "$repo/scripts/lib.sh"

[[ $# -eq 2 || $# -eq 3 ]] || { echo "usage: $0 HOST PORT [KILN_BIN]" >&2; exit 2; }
host=$1
port=$2
kiln_bin=${3:-${KILN_BIN:-$repo/bin/kiln}}
db=${DUMP_DB:-kiln_dump_rt}
variants=${DUMP_VARIANTS:-single default hex all}
new_types=${DUMP_NEW_TYPES:-1}

dump_cmd=$(command -v mariadb-dump || command -v mysqldump) ||
  die "no mariadb-dump: apt-get install -y mariadb-client"

work=$(mktemp -d /tmp/kiln-dump.XXXXXX)
failures=0
tdir=
t_host=
t_port=
tdb=$db
reloaded=

cleanup() {
  local rc=$?
  if [[ -n $tdir ]]; then
    KILN_BIN=$kiln_bin "$repo/scripts/kiln.sh" stop "$tdir" >/dev/null 2>&1 || true
  fi
  if [[ ${DUMP_KEEP:-0} == 1 ]]; then
    log "kept $work and database $db on $host:$port"
    return
  fi
  cli "$host" "$port" -e "DROP DATABASE IF EXISTS \`$db\`" >/dev/null 2>&1 || true
  if [[ -n ${DUMP_TARGET:-} && -n $t_port ]]; then
    cli "$t_host" "$t_port" -e "DROP DATABASE IF EXISTS \`$tdb\`" >/dev/null 2>&1 || true
  fi
  if [[ $failures -ne 0 || $rc -ne 0 ]]; then
    [[ -z $tdir ]] || rm -rf "$tdir/data"
    log "kept $work (dumps, outputs and the second server's log)"
  else
    rm -rf "$work"
  fi
}
trap cleanup EXIT
# A step's timeout(1) sends SIGTERM: stop the second Kiln (setsid, out of
# reach of the signal) and drop the database all the same.
trap 'exit 143' TERM
trap 'exit 130' INT

fail() { log "FAIL $*"; failures=$((failures + 1)); }

# cli HOST PORT ARGS...: the mariadb CLI as root in utf8mb4.
cli() {
  local h=$1 p=$2
  shift 2
  mysql_tcp "$h" "$p" --default-character-set=utf8mb4 "$@"
}
src() { cli "$host" "$port" "$@"; }
dst() { cli "$t_host" "$t_port" "$@"; }

# --- 1. the source database ----------------------------------------------
log "creating $db on $host:$port"
src -e "DROP DATABASE IF EXISTS \`$db\`; CREATE DATABASE \`$db\`"
fixtures=("$here/dump/base.sql")
[[ $new_types == 1 ]] && fixtures+=("$here/dump/new_types.sql")
for f in "${fixtures[@]}"; do
  src -D "$db" --init-command="SET time_zone = '+00:00'" <"$f" ||
    die "loading $(basename "$f") into $host:$port failed"
done

# --- 2. the target server -----------------------------------------------
if [[ -n ${DUMP_TARGET:-} ]]; then
  t_host=${DUMP_TARGET%:*}
  t_port=${DUMP_TARGET##*:}
  [[ $t_host == "$host" && $t_port == "$port" ]] && tdb=${db}_copy
else
  tdir=$work/kiln
  t_port=$(KILN_BIN=$kiln_bin "$repo/scripts/kiln.sh" start "$tdir")
  t_host=127.0.0.1
fi
log "reloading into $tdb on $t_host:$t_port"

# --- 3. dump, reload, compare -------------------------------------------
# pk_order TABLE: the ORDER BY list of a table's primary key (from the source);
# for a view, every column by position.
pk_order() {
  if [[ $(src -N -B -e "SELECT COUNT(*) FROM information_schema.VIEWS WHERE TABLE_SCHEMA = '$db' AND TABLE_NAME = '$1'") != 0 ]]; then
    src -N -B -e "SELECT ORDINAL_POSITION FROM information_schema.COLUMNS
      WHERE TABLE_SCHEMA = '$db' AND TABLE_NAME = '$1' ORDER BY ORDINAL_POSITION" | paste -sd, -
    return
  fi
  src -N -B -e "SELECT CONCAT('\`', REPLACE(COLUMN_NAME, '\`', '\`\`'), '\`') FROM information_schema.STATISTICS
    WHERE TABLE_SCHEMA = '$db' AND TABLE_NAME = '$1' AND INDEX_NAME = 'PRIMARY'
    ORDER BY SEQ_IN_INDEX" | paste -sd, -
}

# hex_list TABLE: the table's columns, strings, binaries, BIT and JSON as HEX().
hex_list() {
  src -N -B -e "SELECT COLUMN_NAME, DATA_TYPE FROM information_schema.COLUMNS
    WHERE TABLE_SCHEMA = '$db' AND TABLE_NAME = '$1' ORDER BY ORDINAL_POSITION" |
    while IFS=$'\t' read -r col type; do
      col=${col//\`/\`\`}
      case $type in
        *char | *text | *binary | *blob | bit | json | enum | set) echo "HEX(\`$col\`)" ;;
        *) echo "\`$col\`" ;;
      esac
    done | paste -sd, -
}

# snapshot SIDE DB OUTDIR: what is compared of one side, a file per table
# (OUTDIR/TABLE) with the query results it sums up in OUTDIR/raw. A query that
# fails stops the script (set -e): nothing is compared to an empty answer.
snapshot() {
  local side=$1 d=$2 out=$3 t q order hexes raw
  mkdir -p "$out/raw"
  "$side" -N -B -e "SHOW TABLES FROM \`$d\`" >"$out/tables"
  "$side" -N -B -e "SHOW CREATE DATABASE \`$d\`" | cut -f2- |
    sed "s/\`$d\`/\`DB\`/" >"$out/database"
  while read -r t; do
    q=${t//\`/\`\`}
    raw=$out/raw/$t
    order=$(pk_order "$t")
    [[ -n $order ]] || die "table $t has no primary key in the source"
    hexes=$(hex_list "$t")
    # SHOW CREATE TABLE as the CLI escapes it: one line, exact.
    "$side" -D "$d" -N -B -e "SHOW CREATE TABLE \`$q\`" | cut -f2- >"$raw.create"
    "$side" -D "$d" -N -B -e "SELECT COUNT(*) FROM \`$q\`" >"$raw.count"
    "$side" -D "$d" -N -B -e "SELECT * FROM \`$q\` ORDER BY $order" >"$raw.text"
    "$side" -D "$d" -N -B -e "SELECT $hexes FROM \`$q\` ORDER BY $order" >"$raw.hex"
    {
      echo "== $t"
      sed 's/\\n/\n/g' "$raw.create" # for the reader of a diff
      echo "create md5: $(md5sum <"$raw.create" | cut -d' ' -f1)"
      echo "rows: $(cat "$raw.count")"
      echo "md5 text: $(md5sum <"$raw.text" | cut -d' ' -f1)"
      echo "md5 hex: $(md5sum <"$raw.hex" | cut -d' ' -f1)"
    } >"$out/$t"
  done <"$out/tables"
}

# compare_dirs A B WHAT: diff two snapshots, file by file.
compare_dirs() {
  local a=$1 b=$2 what=$3 f n
  for f in "$a"/*; do
    [[ -f $f ]] || continue
    n=$(basename "$f")
    if ! diff -u "$f" "$b/$n" >"$work/diff" 2>&1; then
      fail "$what: $n differs (source vs reloaded):"
      head -c 4000 "$work/diff" >&2
      if [[ -f $a/raw/$n.hex ]] && ! cmp -s "$a/raw/$n.hex" "$b/raw/$n.hex"; then
        echo "first differing rows (HEX):" >&2
        diff "$a/raw/$n.hex" "$b/raw/$n.hex" | head -n 6 | cut -c1-400 >&2 || true
      fi
    fi
  done
}

snapshot src "$db" "$work/source"
[[ $(wc -l <"$work/source/tables") -ge 5 ]] ||
  die "the source database has fewer than 5 tables: $(paste -sd' ' "$work/source/tables")"

for v in $variants; do
  opts=()
  case $v in
    default) opts=("$db") ;;
    single) opts=(--single-transaction --routines --triggers --events --databases "$db") ;;
    hex) opts=(--hex-blob --skip-extended-insert --complete-insert --add-drop-database --databases "$db") ;;
    all)
      # Every database, the system ones included (a fresh target only: it reloads them all).
      if [[ $tdb != "$db" ]]; then
        log "variant all: skipped (the target is the source server)"
        continue
      fi
      opts=(--single-transaction --all-databases)
      ;;
    *) die "unknown dump variant $v (default, single, hex, all)" ;;
  esac
  log "variant $v: mariadb-dump ${opts[*]}"
  dump=$work/$v.sql
  if ! "$dump_cmd" --no-defaults --protocol=TCP -h "$host" -P "$port" -u root "${opts[@]}" \
    >"$dump" 2>"$work/$v.dump.err"; then
    fail "$v: mariadb-dump failed: $(head -c 2000 "$work/$v.dump.err")"
    continue
  fi
  [[ -s $work/$v.dump.err ]] && log "$v: mariadb-dump said: $(head -c 1000 "$work/$v.dump.err")"
  grep -q "^-- Dump completed" "$dump" || { fail "$v: the dump is not complete"; continue; }
  if [[ " ${opts[*]} " == *" --databases "* || " ${opts[*]} " == *" --all-databases "* ]]; then
    # The dump creates and selects the database itself; only its name may change.
    if [[ $tdb != "$db" ]]; then
      sed -i -E "/^(CREATE DATABASE|USE|\/\*!40000 DROP DATABASE)/s/\`$db\`/\`$tdb\`/" "$dump"
    fi
    dst -e "DROP DATABASE IF EXISTS \`$tdb\`"
    into=()
  else
    dst -e "DROP DATABASE IF EXISTS \`$tdb\`; CREATE DATABASE \`$tdb\`"
    into=(-D "$tdb")
  fi
  # Reloaded as a user would: `mysql [db] < dump.sql`, the client's own charset.
  if ! mysql_tcp "$t_host" "$t_port" "${into[@]}" <"$dump" >"$work/$v.load.out" 2>&1; then
    fail "$v: reloading the dump failed: $(head -c 2000 "$work/$v.load.out")"
    continue
  fi
  reloaded=$v
  snapshot dst "$tdb" "$work/$v.target"
  compare_dirs "$work/source" "$work/$v.target" "$v"
  log "variant $v: compared $(wc -l <"$work/source/tables") tables"
done

# --- 4. AUTO_INCREMENT continues where it was ---------------------------
# In the copy of the last variant that reloaded.
if [[ -n $reloaded ]]; then
  n=0
  while read -r t; do
    q=${t//\`/\`\`}
    a=$(src -D "$db" -N -B -e "INSERT INTO \`$q\` () VALUES (); SELECT LAST_INSERT_ID()")
    b=$(dst -D "$tdb" -N -B -e "INSERT INTO \`$q\` () VALUES (); SELECT LAST_INSERT_ID()")
    [[ $a == "$b" ]] || fail "next AUTO_INCREMENT id of $t: source $a, reloaded ($reloaded) $b"
    n=$((n + 1))
  done < <(src -N -B -e "SELECT TABLE_NAME FROM information_schema.COLUMNS
      WHERE TABLE_SCHEMA = '$db' AND EXTRA LIKE '%auto_increment%' ORDER BY TABLE_NAME")
  log "next AUTO_INCREMENT id checked in $n tables"
fi

if [[ $failures -ne 0 ]]; then
  log "dump round trip: $failures failure(s)"
  exit 1
fi
log "dump round trip: all checks passed (variants: $variants; new types: $new_types)"
