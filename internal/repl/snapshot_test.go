package repl

import (
	"context"
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/kiln-db/kiln/internal/engine"
	klog "github.com/kiln-db/kiln/internal/log"
)

// A crash during an engine snapshot install is finished or rolled back at the next start:
// after the ingest the log is reset after the snapshot; between the clear and the ingest the engine
// and the log start over empty (the member then needs a snapshot again). Either way the node starts.
func TestSnapshotInstallCrash(t *testing.T) {
	for _, tc := range []struct {
		name     string
		ingested bool
	}{{"after ingest", true}, {"before ingest", false}} {
		t.Run(tc.name, func(t *testing.T) {
			fs := vfs.NewMem()
			lg, err := klog.Open("/log", klog.Options{FS: fs})
			if err != nil {
				t.Fatal(err)
			}
			eng, err := engine.Open("/engine", engine.Options{FS: fs, DisableWAL: true})
			if err != nil {
				t.Fatal(err)
			}
			// An old history: entries 1..5 of term 1.
			var ents []klog.Entry
			for i := uint64(1); i <= 5; i++ {
				ents = append(ents, klog.Entry{Index: i, Term: 1})
			}
			if err := lg.Append(ents); err != nil {
				t.Fatal(err)
			}
			if err := lg.SetHardState(klog.HardState{Term: 3, Vote: 2, Commit: 5}); err != nil {
				t.Fatal(err)
			}
			if err := lg.Sync(); err != nil {
				t.Fatal(err)
			}
			const idx, term = 100, 3
			l, err := eng.NewSnapshotLoader("snapshot-staging")
			if err != nil {
				t.Fatal(err)
			}
			if tc.ingested {
				_ = l.Add(engine.AppliedKey(), binary.BigEndian.AppendUint64(nil, idx))
				for i := 0; i < 10; i++ {
					_ = l.Add([]byte(fmt.Sprintf("k%02d", i)), []byte("v"))
				}
				if err := l.Install(snapMarkerKey, binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(nil, idx), term)); err != nil {
					t.Fatal(err)
				}
			} else {
				// The state a crash leaves between the clear and the ingest: only the marker.
				b := eng.NewBatch()
				_ = b.DeleteRange([]byte{0x00}, []byte{0xff})
				_ = b.Set(snapMarkerKey, binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(nil, idx), term))
				if err := eng.Apply(b, 0, false); err != nil {
					t.Fatal(err)
				}
				b.Close()
				_ = eng.Flush()
				// Apply wrote applied=0; a real clear leaves no applied key at all, which reads as 0 too.
			}
			if err := recoverSnapshotInstall(lg, eng); err != nil {
				t.Fatal(err)
			}
			if _, ok, _ := eng.Get(snapMarkerKey); ok {
				t.Fatal("marker left after recovery")
			}
			hs := lg.HardState()
			if hs.Term != 3 || hs.Vote != 2 {
				t.Fatalf("term/vote lost: %+v", hs)
			}
			if tc.ingested {
				if lg.FirstIndex() != idx+1 || lg.LastIndex() != idx {
					t.Fatalf("log [%d, %d], want to start after %d", lg.FirstIndex(), lg.LastIndex(), idx)
				}
				if tm, err := lg.Term(idx); err != nil || tm != term {
					t.Fatalf("Term(%d) = %d %v", idx, tm, err)
				}
				if _, ok, _ := eng.Get([]byte("k09")); !ok {
					t.Fatal("snapshot data lost")
				}
			} else if lg.FirstIndex() != 1 || lg.LastIndex() != 0 {
				t.Fatalf("log [%d, %d], want empty", lg.FirstIndex(), lg.LastIndex())
			}
			n, err := Start(context.Background(), Config{Log: lg, Engine: eng, Applier: testApplier(), ID: 1, Join: true, PurgeInterval: -1, Transport: &memTransport{net: &memNet{nodes: map[uint64]*Node{}, cut: map[[2]uint64]bool{}}}})
			if err != nil {
				t.Fatalf("start after recovery: %v", err)
			}
			n.Stop()
			eng.Close()
			lg.Close()
		})
	}
}
