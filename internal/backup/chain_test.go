package backup

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kiln-db/kiln/internal/engine"
	klog "github.com/kiln-db/kiln/internal/log"
)

// grow appends commit entries from..to to src's log (what the node commits after a backup) and
// makes them applied.
func grow(t *testing.T, src *Source, from, to uint64) {
	t.Helper()
	var ents []klog.Entry
	for i := from; i <= to; i++ {
		ents = append(ents, klog.Entry{Index: i, Term: 1 + i/10, Data: []byte(fmt.Sprintf("record-%d", i))})
	}
	if err := src.Log.Append(ents); err != nil {
		t.Fatal(err)
	}
	if err := src.Log.SetHardState(klog.HardState{Term: 1 + to/10, Commit: to}); err != nil {
		t.Fatal(err)
	}
	if err := src.Log.Sync(); err != nil {
		t.Fatal(err)
	}
	src.Applied = func() uint64 { return to }
}

func fetchIncremental(t *testing.T, src Source, after uint64, parent string) (string, Manifest, error) {
	t.Helper()
	src.After = after
	var buf bytes.Buffer
	if err := Serve(context.Background(), &buf, src); err != nil {
		return "", Manifest{}, err
	}
	dir := filepath.Join(filepath.Dir(parent), fmt.Sprintf("inc-after-%d", after))
	m, err := FetchIncremental(&buf, dir, parent, nil)
	return dir, m, err
}

// dump is a restored data directory's state: every engine key and every log entry.
func dump(t *testing.T, data string) string {
	t.Helper()
	var sb strings.Builder
	eng, err := engine.Open(filepath.Join(data, "engine"), engine.Options{DisableWAL: true, CacheBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	it, err := eng.NewSnapshot().NewIter(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for it.First(); it.Valid(); it.Next() {
		fmt.Fprintf(&sb, "%x=%x\n", it.Key(), it.Value())
	}
	it.Close()
	eng.Close()
	lg, err := klog.Open(filepath.Join(data, "log"), klog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer lg.Close()
	ents, err := lg.Entries(lg.FirstIndex(), lg.LastIndex()+1, 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		fmt.Fprintf(&sb, "%d/%d/%d/%q\n", e.Index, e.Term, e.Type, e.Data)
	}
	fmt.Fprintf(&sb, "hardstate %+v", lg.HardState())
	return sb.String()
}

// A full backup and two incrementals restore, to every index they cover, to exactly what a full
// backup taken at the end restores to; verify checks the whole chain; incrementals hold only the
// new log.
func TestIncrementalChain(t *testing.T) {
	src := source(t, 20, 40, 50)
	root := t.TempDir()
	full := filepath.Join(root, "full")
	if _, err := Fetch(bytes.NewReader(stream(t, src)), full, nil); err != nil {
		t.Fatal(err)
	}
	grow(t, &src, 41, 55)
	inc1, m1, err := fetchIncremental(t, src, 40, full)
	if err != nil {
		t.Fatal(err)
	}
	grow(t, &src, 56, 70)
	inc2, m2, err := fetchIncremental(t, src, 55, inc1)
	if err != nil {
		t.Fatal(err)
	}
	if m1.EngineIndex != 40 || m1.EndIndex != 55 || m1.Keys != 0 || m1.Parent == nil || m1.Parent.Path != "../full" ||
		m2.EngineIndex != 55 || m2.EndIndex != 70 || m2.Parent == nil || m2.Parent.Path != "../inc-after-40" {
		t.Fatalf("incremental manifests %+v %+v", m1, m2)
	}
	for _, f := range append(m1.Files, m2.Files...) {
		if !strings.HasPrefix(f.Path, "log/") {
			t.Fatalf("an incremental backup holds %s", f.Path)
		}
	}
	if m, err := Verify(inc2); err != nil || m.EndIndex != 70 || m.GTID != testUUID+":1-70" {
		t.Fatalf("verify of the chain: %+v %v", m, err)
	}
	// The full backup at the same point (the engine snapshot is still at 20: its log runs 21..70).
	whole := filepath.Join(root, "whole")
	src.After = 0
	if _, err := Fetch(bytes.NewReader(stream(t, src)), whole, nil); err != nil {
		t.Fatal(err)
	}
	for _, to := range []uint64{20, 40, 41, 55, 56, 63, 70} {
		a, b := filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b")
		if _, err := Restore(inc2, a, RestoreOptions{ToIndex: to}); err != nil {
			t.Fatalf("restore of the chain to %d: %v", to, err)
		}
		if _, err := Restore(whole, b, RestoreOptions{ToIndex: to}); err != nil {
			t.Fatal(err)
		}
		if da, db := dump(t, a), dump(t, b); da != db {
			t.Fatalf("to %d: the chain restores\n%s\nthe full backup\n%s", to, da, db)
		}
	}
	// An incremental restores to what its own chain covers; a restore of the middle one stops at 55.
	if _, err := Restore(inc1, filepath.Join(t.TempDir(), "c"), RestoreOptions{ToIndex: 56}); err == nil || !strings.Contains(err.Error(), "outside this backup, which restores to 20..55") {
		t.Fatalf("restore of inc1 past its end: %v", err)
	}
}

// A chain that does not hold together is refused by verify and restore, naming what is wrong; an
// incremental the node cannot serve, or one that does not continue its parent, is never written.
func TestIncrementalChainRefused(t *testing.T) {
	src := source(t, 20, 40, 50)
	root := t.TempDir()
	full := filepath.Join(root, "full")
	if _, err := Fetch(bytes.NewReader(stream(t, src)), full, nil); err != nil {
		t.Fatal(err)
	}
	grow(t, &src, 41, 55)
	inc1, _, err := fetchIncremental(t, src, 40, full)
	if err != nil {
		t.Fatal(err)
	}
	refused := func(what, dir, want string) {
		t.Helper()
		if _, err := Verify(dir); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: verify: %v, want %q", what, err, want)
		}
		if _, err := Restore(dir, filepath.Join(t.TempDir(), "d"), RestoreOptions{}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: restore: %v, want %q", what, err, want)
		}
	}
	// A damaged file in the parent.
	copyTree := func(name string) (string, string) {
		dst := filepath.Join(t.TempDir(), "c")
		for _, d := range []string{"full", filepath.Base(inc1)} {
			filepath.WalkDir(filepath.Join(root, d), func(p string, e os.DirEntry, err error) error {
				rel, _ := filepath.Rel(root, p)
				if e.IsDir() {
					return os.MkdirAll(filepath.Join(dst, rel), 0o700)
				}
				b, _ := os.ReadFile(p)
				return os.WriteFile(filepath.Join(dst, rel), b, 0o600)
			})
		}
		return filepath.Join(dst, "full"), filepath.Join(dst, filepath.Base(inc1))
	}
	f, i := copyTree("damaged")
	p := filepath.Join(f, "engine", "000001.kv")
	b, _ := os.ReadFile(p)
	b[len(b)/2] ^= 1
	os.WriteFile(p, b, 0o600)
	refused("a damaged engine file in the parent", i, p)

	f, i = copyTree("missing")
	os.RemoveAll(f)
	refused("a missing parent", i, "its parent backup")

	// The parent replaced by another backup (a new manifest).
	f, i = copyTree("replaced")
	mb, _ := os.ReadFile(filepath.Join(f, ManifestName))
	os.WriteFile(filepath.Join(f, ManifestName), append(mb, ' '), 0o600)
	refused("a changed parent manifest", i, "changed since it was taken")

	// The node cannot serve what the chain needs, or its history is another one.
	if _, _, err := fetchIncremental(t, src, 56, inc1); err == nil || !strings.Contains(err.Error(), "beyond this node's applied index") {
		t.Errorf("incremental after an index the node has not applied: %v", err)
	}
	other := source(t, 20, 40, 50)
	grow(t, &other, 41, 60)
	other.ClusterUUID = "4e11fa47-71ca-11e1-9e33-c80aa9429562"
	if dir, _, err := fetchIncremental(t, other, 55, inc1); err == nil || !strings.Contains(err.Error(), "does not continue the previous backup") {
		t.Errorf("incremental from another cluster: %v", err)
	} else if _, serr := os.Stat(filepath.Join(dir, ManifestName)); serr == nil {
		t.Error("a refused incremental left a manifest")
	}
	src.After = 40
	var buf bytes.Buffer
	if err := Serve(context.Background(), &buf, src); err != nil {
		t.Fatal(err)
	}
	if _, err := Fetch(bytes.NewReader(buf.Bytes()), filepath.Join(t.TempDir(), "x"), nil); err == nil || !strings.Contains(err.Error(), "none was asked for") {
		t.Errorf("an incremental stream fetched as a full backup: %v", err)
	}
}
