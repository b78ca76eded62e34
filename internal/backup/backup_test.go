package backup

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.etcd.io/raft/v3/raftpb"

	"github.com/kiln-db/kiln/internal/engine"
	klog "github.com/kiln-db/kiln/internal/log"
)

// source builds an engine applied to index n with keys k000..k{keys-1} and a log holding entries
// 1..last, and returns a Source over them (applied = last).
func source(t *testing.T, n, last uint64, keys int) Source {
	t.Helper()
	return sourceWith(t, n, last, keys, func(i uint64) []byte { return []byte(fmt.Sprintf("record-%d", i)) })
}

// sourceWith is source with entry i's data data(i) (entry n+2 is still a membership change).
func sourceWith(t *testing.T, n, last uint64, keys int, data func(i uint64) []byte) Source {
	t.Helper()
	dir := t.TempDir()
	eng, err := engine.Open(filepath.Join(dir, "engine"), engine.Options{DisableWAL: true, CacheBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	b := eng.NewBatch()
	for i := 0; i < keys; i++ {
		b.Set([]byte(fmt.Sprintf("k%03d", i)), bytes.Repeat([]byte{byte(i)}, 100))
	}
	// The source cluster's membership: three voters, a member address.
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
	var ents []klog.Entry
	for i := uint64(1); i <= last; i++ {
		e := klog.Entry{Index: i, Term: 1 + i/10, Data: data(i)}
		if i == n+2 {
			e.Type, e.Data = 1, []byte("a membership change") // raft's EntryConfChange
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

func stream(t *testing.T, src Source) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := Serve(context.Background(), &buf, src); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// Serve -> Fetch -> Verify -> Restore to each index: the engine as snapshotted (membership reset),
// the log holding exactly the entries after it up to the target, a membership change turned into
// a no-op at its own index.
func TestRoundTrip(t *testing.T) { forms(t, testRoundTrip) }

func testRoundTrip(t *testing.T, files bool) {
	old := rollBytes
	rollBytes = 1000 // several files of each kind
	defer func() { rollBytes = old }()
	src := source(t, 20, 40, 50)
	src.Files = files
	dir := filepath.Join(t.TempDir(), "b")
	m, err := Fetch(bytes.NewReader(stream(t, src)), dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if m.EngineIndex != 20 || m.EndIndex != 40 || m.Entries != 20 || m.EndTerm != 5 || m.GTID != "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-40" {
		t.Fatalf("manifest %+v", m)
	}
	if len(m.Files) < 4 {
		t.Fatalf("want several files, got %+v", m.Files)
	}
	if _, err := Verify(dir); err != nil {
		t.Fatal(err)
	}
	for _, to := range []uint64{20, 21, 22, 23, 40} {
		data := filepath.Join(t.TempDir(), "data")
		res, err := Restore(dir, data, RestoreOptions{ToIndex: to})
		if err != nil {
			t.Fatalf("restore to %d: %v", to, err)
		}
		if res.Index != to || res.EngineIndex != 20 {
			t.Fatalf("restore to %d: %+v", to, res)
		}
		eng, err := engine.Open(filepath.Join(data, "engine"), engine.Options{DisableWAL: true, CacheBytes: 1 << 20})
		if err != nil {
			t.Fatal(err)
		}
		if a, _ := eng.AppliedPosition(); a != 20 {
			t.Fatalf("restored engine applied %d", a)
		}
		for i := 0; i < 50; i++ {
			v, ok, _ := eng.Get([]byte(fmt.Sprintf("k%03d", i)))
			if !ok || !bytes.Equal(v, bytes.Repeat([]byte{byte(i)}, 100)) {
				t.Fatalf("restored key k%03d: %v %x", i, ok, v)
			}
		}
		var cs raftpb.ConfState
		if v, ok, _ := eng.Get([]byte{0x00, 'c', 'o', 'n', 'f'}); !ok || cs.Unmarshal(v) != nil || len(cs.Voters) != 1 || cs.Voters[0] != 1 {
			t.Fatalf("restored membership %v (found %v): want the new node alone", cs, ok)
		}
		if _, ok, _ := eng.Get([]byte{0x00, 'm', 'e', 'm', 'b', 0, 0, 0, 0, 0, 0, 0, 2}); ok {
			t.Fatal("restored engine kept an old member's address")
		}
		eng.Close()
		lg, err := klog.Open(filepath.Join(data, "log"), klog.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if lg.FirstIndex() != 21 || lg.LastIndex() != to || lg.HardState().Commit != to {
			t.Fatalf("restored log %d..%d commit %d, want 21..%d", lg.FirstIndex(), lg.LastIndex(), lg.HardState().Commit, to)
		}
		if tm, _ := lg.Term(20); tm != 3 {
			t.Fatalf("term of the engine's index: %d", tm)
		}
		if to > 20 {
			ents, err := lg.Entries(21, to+1, 1<<20)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range ents {
				want := fmt.Sprintf("record-%d", e.Index)
				if e.Index == 22 {
					want = "" // the membership change, now a no-op
					if e.Type != 0 {
						t.Fatalf("entry 22 kept type %d", e.Type)
					}
				}
				if string(e.Data) != want {
					t.Fatalf("entry %d: %q, want %q", e.Index, e.Data, want)
				}
			}
		}
		lg.Close()
	}
	for _, to := range []uint64{19, 41} {
		if _, err := Restore(dir, filepath.Join(t.TempDir(), "d"), RestoreOptions{ToIndex: to}); err == nil || !strings.Contains(err.Error(), "outside this backup") {
			t.Fatalf("restore to %d: %v", to, err)
		}
	}
}

// A damaged or cut stream is refused, never half-written: no manifest, no files left; no panic.
func TestFetchRefusesDamage(t *testing.T) { forms(t, testFetchRefusesDamage) }

func testFetchRefusesDamage(t *testing.T, files bool) {
	src := source(t, 5, 12, 30)
	src.Files = files
	good := stream(t, src)
	try := func(what string, b []byte) {
		t.Helper()
		dir := filepath.Join(t.TempDir(), "b")
		if _, err := Fetch(bytes.NewReader(b), dir, nil); err == nil {
			t.Fatalf("%s: Fetch accepted it", what)
		}
		if ents, _ := os.ReadDir(dir); len(ents) != 0 {
			t.Fatalf("%s: Fetch left %v behind", what, ents)
		}
	}
	for i := 0; i < len(good); i += 1 + len(good)/97 {
		b := append([]byte(nil), good...)
		b[i] ^= 0x10
		try(fmt.Sprintf("byte %d flipped", i), b)
	}
	for n := 0; n < len(good); n += 1 + len(good)/53 {
		try(fmt.Sprintf("cut at %d", n), good[:n])
	}
	try("cut by one", good[:len(good)-1])
}

// FetchTar writes the same backup as a tar stream: extracted, it verifies and restores like a
// directory backup, with the same manifest.
func TestFetchTar(t *testing.T) { forms(t, testFetchTar) }

func testFetchTar(t *testing.T, files bool) {
	src := source(t, 20, 40, 50)
	src.Files = files
	var tarBuf bytes.Buffer
	m, err := FetchTar(bytes.NewReader(stream(t, src)), &tarBuf, nil)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "x")
	tr := tar.NewReader(&tarBuf)
	var names []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, h.Name)
		p := filepath.Join(dir, filepath.FromSlash(h.Name))
		if h.Typeflag == tar.TypeDir {
			if h.Mode != 0o700 {
				t.Fatalf("%s: mode %o", h.Name, h.Mode)
			}
			os.MkdirAll(p, 0o700)
			continue
		}
		if h.Mode != 0o600 {
			t.Fatalf("%s: mode %o", h.Name, h.Mode)
		}
		b, _ := io.ReadAll(tr)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if names[len(names)-1] != ManifestName {
		t.Fatalf("the manifest is not the last file of the tar: %v", names)
	}
	got, err := Verify(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got.EndIndex != m.EndIndex || got.Keys != m.Keys || len(got.Files) != len(m.Files) || got.Files[0] != m.Files[0] {
		t.Fatalf("extracted manifest %+v, FetchTar returned %+v", got, m)
	}
	if _, err := Restore(dir, filepath.Join(t.TempDir(), "d"), RestoreOptions{ToIndex: 30}); err != nil {
		t.Fatal(err)
	}
}
