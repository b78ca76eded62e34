package backup

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	klog "github.com/kiln-db/kiln/internal/log"
	"github.com/kiln-db/kiln/internal/repl"
)

// Point-in-time targets: restore --to-gtid and --to-time both become a log index, the only
// position a restore stops at (an entry is one whole commit, so no target is ever half a
// transaction).

// gtidTarget is the log index a GTID set names: a Kiln cluster's GTID set is <cluster uuid>:1-N
// (every commit up to index N, without gaps), so only such a set, of this backup's cluster, is a
// restore target. MySQL's single-transaction form <uuid>:1 is N = 1.
func gtidTarget(set string, m Manifest) (uint64, error) {
	set = strings.TrimSpace(set)
	uuid, ival, ok := strings.Cut(set, ":")
	if !ok || uuid == "" || strings.ContainsAny(ival, ":,") {
		return 0, fmt.Errorf("restore: --to-gtid %q: want <cluster uuid>:1-<index> (the commits up to an index; one cluster, no gaps)", set)
	}
	if !strings.EqualFold(uuid, m.ClusterUUID) {
		return 0, fmt.Errorf("restore: --to-gtid %q is a position of cluster %s; this backup is of cluster %s (%s)", set, uuid, m.ClusterUUID, m.GTID)
	}
	lo, hi, isRange := strings.Cut(ival, "-")
	if !isRange {
		hi = lo
	}
	first, err1 := strconv.ParseUint(lo, 10, 64)
	last, err2 := strconv.ParseUint(hi, 10, 64)
	if err1 != nil || err2 != nil || first != 1 || last < 1 {
		return 0, fmt.Errorf("restore: --to-gtid %q: want <cluster uuid>:1-<index>: a Kiln cluster's GTID set starts at 1 and has no gaps", set)
	}
	return last, nil
}

var errTargetFound = errors.New("target found")

// timeTarget is the last log index whose state is exactly the commits with commit time <= t: the
// entry before the first commit stamped after t (commit times never decrease along the log, see
// repl's entry data format 2). It refuses what the backup cannot answer exactly:
//   - t before the engine snapshot's last commit (or that commit's time unknown while no commit
//     after the snapshot is at or before t): the state at t is older than the backup;
//   - no commit in the backup stamped after t: a commit after the backup's end may still be at or
//     before t, so the backup does not hold the state at t (--to-index EndIndex takes all it has);
//   - commits without a commit time (written by an older build) right before the cut: they cannot
//     be placed in time (--to-index can).
//
// It returns the index and the commit time of the last commit it includes (0 if unknown).
func timeTarget(ls logSource, m Manifest, t time.Time) (uint64, int64, error) {
	limit := t.UnixNano()
	var engineTime int64
	if m.EngineCommitTime != nil {
		engineTime = m.EngineCommitTime.UnixNano()
	}
	to, at := m.EngineIndex, engineTime
	timedAfterEngine := false // a commit after the snapshot is at or before t
	var untimedFrom, untimedTo uint64
	found := false
	err := ls.scan(m.EndIndex, func(e klog.Entry) error {
		var stamp int64
		var timed, isCommit bool
		if e.Type == 0 {
			rec, ts, has, err := repl.EntryRecord(e.Data)
			if err != nil {
				return fmt.Errorf("log entry %d: %w", e.Index, err)
			}
			stamp, timed, isCommit = ts, has, rec != nil
		}
		switch {
		case timed && stamp > limit:
			found = true
			return errTargetFound
		case timed:
			to, at, timedAfterEngine, untimedFrom = e.Index, stamp, true, 0
		case isCommit:
			if untimedFrom == 0 {
				untimedFrom = e.Index
			}
			untimedTo = e.Index
		case untimedFrom == 0:
			to = e.Index // raft's empty entry or a membership change: no data, no time
		}
		return nil
	})
	if err != nil && !errors.Is(err, errTargetFound) {
		return 0, 0, err
	}
	ts := func(n int64) string { return time.Unix(0, n).UTC().Format(time.RFC3339Nano) }
	switch {
	case !found:
		last := ""
		if at != 0 {
			last = "its last commit time is " + ts(at) + ", "
		}
		return 0, 0, fmt.Errorf("restore: --to-time %s is not before any commit in this backup (%sindex %d): a later commit may also be at or before it, and the backup ends there; --to-index %d restores everything it holds",
			t.UTC().Format(time.RFC3339Nano), last, m.EndIndex, m.EndIndex)
	case untimedFrom != 0:
		return 0, 0, fmt.Errorf("restore: --to-time %s: log entries %d..%d were written without commit times (by an older version), so they cannot be placed before or after it; restore by --to-index",
			t.UTC().Format(time.RFC3339Nano), untimedFrom, untimedTo)
	case !timedAfterEngine && engineTime == 0:
		return 0, 0, fmt.Errorf("restore: --to-time %s is before the first commit after this backup's engine snapshot (index %d), and the snapshot's own commit time is unknown: the backup cannot tell whether the state at that time is older than it",
			t.UTC().Format(time.RFC3339Nano), m.EngineIndex)
	case !timedAfterEngine && engineTime > limit:
		return 0, 0, fmt.Errorf("restore: --to-time %s is before this backup's engine snapshot (index %d, last commit at %s): use an older backup",
			t.UTC().Format(time.RFC3339Nano), m.EngineIndex, ts(engineTime))
	}
	return to, at, nil
}
