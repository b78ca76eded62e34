package backup

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.etcd.io/raft/v3/raftpb"

	"github.com/kiln-db/kiln/internal/engine"
	klog "github.com/kiln-db/kiln/internal/log"
)

// joinSource is source with a real membership change at n+2 (node 4 added as a learner), as a
// cluster's log has them.
func joinSource(t *testing.T, n, last uint64) Source {
	t.Helper()
	dir := t.TempDir()
	eng, err := engine.Open(filepath.Join(dir, "engine"), engine.Options{DisableWAL: true, CacheBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	b := eng.NewBatch()
	for i := 0; i < 30; i++ {
		b.Set([]byte(fmt.Sprintf("k%03d", i)), bytes.Repeat([]byte{byte(i)}, 100))
	}
	cs, _ := (&raftpb.ConfState{Voters: []uint64{1, 2, 3}}).Marshal()
	b.Set([]byte{0x00, 'c', 'o', 'n', 'f'}, cs)
	b.Set([]byte{0x00, 'm', 'e', 'm', 'b', 0, 0, 0, 0, 0, 0, 0, 2}, []byte("10.0.0.2:7001"))
	if err := eng.Apply(b, n, false); err != nil {
		t.Fatal(err)
	}
	lg, err := klog.Open(filepath.Join(dir, "log"), klog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lg.Close() })
	cc, _ := (&raftpb.ConfChangeV2{Changes: []raftpb.ConfChangeSingle{{Type: raftpb.ConfChangeAddLearnerNode, NodeID: 4}}}).Marshal()
	var ents []klog.Entry
	for i := uint64(1); i <= last; i++ {
		e := klog.Entry{Index: i, Term: 1 + i/10, Data: []byte(fmt.Sprintf("record-%d", i))}
		if i == n+2 {
			e.Type, e.Data = uint8(raftpb.EntryConfChangeV2), cc
		}
		ents = append(ents, e)
	}
	if err := lg.Append(ents); err != nil {
		t.Fatal(err)
	}
	if err := lg.SetHardState(klog.HardState{Term: 1 + last/10, Commit: last}); err != nil {
		t.Fatal(err)
	}
	if err := lg.Sync(); err != nil {
		t.Fatal(err)
	}
	return Source{Engine: eng, Log: lg, Applied: func() uint64 { return last }, HoldLog: func(uint64) func() { return func() {} },
		ClusterID: "c1", ClusterUUID: "3e11fa47-71ca-11e1-9e33-c80aa9429562", Node: 1, DataFormat: 1}
}

// Restore --join keeps the cluster: the engine's membership and member addresses as backed up, the
// log's entries exactly as the cluster has them (a membership change stays one), all committed up
// to the backup's end, and the end recorded for the node's check against the leader. A point in
// time, another cluster, and an id that is a member where the backup ends are refused, leaving
// nothing behind.
func TestRestoreJoin(t *testing.T) { forms(t, testRestoreJoin) }

func testRestoreJoin(t *testing.T, files bool) {
	src := joinSource(t, 20, 40)
	src.Files = files
	dir := filepath.Join(t.TempDir(), "b")
	m, err := Fetch(bytes.NewReader(stream(t, src)), dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(t.TempDir(), "data")
	res, err := Restore(dir, data, RestoreOptions{Join: true, JoinCluster: "c1", NodeID: 5})
	if err != nil {
		t.Fatal(err)
	}
	if res.Index != 40 || res.Term != m.EndTerm || res.Term != 5 {
		t.Fatalf("restore --join: %+v, want index 40 term 5", res)
	}
	eng, err := engine.Open(filepath.Join(data, "engine"), engine.Options{DisableWAL: true, CacheBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	var cs raftpb.ConfState
	if v, ok, _ := eng.Get([]byte{0x00, 'c', 'o', 'n', 'f'}); !ok || cs.Unmarshal(v) != nil || len(cs.Voters) != 3 {
		t.Fatalf("joined engine's membership %v (found %v): want the cluster's three voters", cs, ok)
	}
	if v, ok, _ := eng.Get([]byte{0x00, 'm', 'e', 'm', 'b', 0, 0, 0, 0, 0, 0, 0, 2}); !ok || string(v) != "10.0.0.2:7001" {
		t.Fatalf("joined engine lost member 2's address: %q %v", v, ok)
	}
	if v, ok, _ := eng.Get([]byte{0x00, 'j', 'o', 'i', 'n'}); !ok || len(v) != 16 || binary.BigEndian.Uint64(v) != 40 || binary.BigEndian.Uint64(v[8:]) != 5 {
		t.Fatalf("restored end record %x (found %v), want index 40 term 5", v, ok)
	}
	if a, _ := eng.AppliedPosition(); a != 20 {
		t.Fatalf("joined engine applied %d, want 20", a)
	}
	eng.Close()
	lg, err := klog.Open(filepath.Join(data, "log"), klog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer lg.Close()
	if lg.FirstIndex() != 21 || lg.LastIndex() != 40 || lg.HardState().Commit != 40 || lg.HardState().Term != 5 || lg.HardState().Vote != 0 {
		t.Fatalf("joined log %d..%d hard state %+v, want 21..40 commit 40 term 5 no vote", lg.FirstIndex(), lg.LastIndex(), lg.HardState())
	}
	ents, err := lg.Entries(21, 41, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.Term != 1+e.Index/10 {
			t.Fatalf("entry %d has term %d, the cluster's %d", e.Index, e.Term, 1+e.Index/10)
		}
		if e.Index == 22 && raftpb.EntryType(e.Type) != raftpb.EntryConfChangeV2 {
			t.Fatalf("entry 22 (a membership change) became type %d", e.Type)
		}
	}

	for _, tc := range []struct {
		name string
		o    RestoreOptions
		want string
	}{
		{"point in time", RestoreOptions{Join: true, NodeID: 5, ToIndex: 30}, "--to-index, --to-time and --to-gtid are for a new cluster"},
		{"gtid", RestoreOptions{Join: true, NodeID: 5, ToGTID: "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-30"}, "restore without --join"},
		{"another cluster", RestoreOptions{Join: true, NodeID: 5, JoinCluster: "c2"}, "the backup is of cluster c1, not c2"},
		{"no id", RestoreOptions{Join: true}, "needs the new member's --node-id"},
		{"a voter's id", RestoreOptions{Join: true, NodeID: 2}, "node 2 is a member of the cluster where the backup ends"},
		{"a learner added in the log", RestoreOptions{Join: true, NodeID: 4}, "node 4 is a member"},
	} {
		d := filepath.Join(t.TempDir(), "d")
		_, err := Restore(dir, d, tc.o)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Fatalf("%s: %v, want an error containing %q", tc.name, err, tc.want)
		}
		for _, sub := range []string{"engine", "log"} {
			if _, err := os.Stat(filepath.Join(d, sub)); err == nil {
				t.Fatalf("%s: a refused restore left %s behind", tc.name, sub)
			}
		}
	}
}
