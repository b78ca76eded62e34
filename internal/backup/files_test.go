package backup

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fileSource is source in the file form.
func fileSource(t *testing.T, n, last uint64, keys int) Source {
	t.Helper()
	src := source(t, n, last, keys)
	src.Files = true
	return src
}

// checkpointsLeft lists what is left under the engine's checkpoint directory.
func checkpointsLeft(t *testing.T, src Source) []string {
	t.Helper()
	dir := src.Engine.CheckpointsDir()
	ents, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

// A file-form backup holds the engine's pebble files with their CRC32C (format 2), verifies, and
// restores like the logical form (TestRoundTrip runs both); the node's checkpoint is gone after.
func TestFileFormManifest(t *testing.T) {
	src := fileSource(t, 20, 40, 50)
	dir := filepath.Join(t.TempDir(), "b")
	m, err := Fetch(bytes.NewReader(stream(t, src)), dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if left := checkpointsLeft(t, src); len(left) != 0 {
		t.Fatalf("the checkpoint was not removed: %v", left)
	}
	var ssts, logs int
	for _, f := range m.Files {
		switch {
		case strings.HasPrefix(f.Path, "engine/") && strings.HasSuffix(f.Path, ".sst"):
			ssts++
		case strings.HasPrefix(f.Path, "log/"):
			logs++
		}
		if len(f.CRC32C) != 8 || f.SHA256 != "" || f.Ref {
			t.Fatalf("file %+v: want a CRC32C only", f)
		}
		if fi, err := os.Stat(filepath.Join(dir, f.Path)); err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("%s: %v %v, want owner-only", f.Path, fi, err)
		}
	}
	if m.Format != FormatFiles || m.EngineIndex != 20 || m.EndIndex != 40 || ssts == 0 || logs == 0 {
		t.Fatalf("manifest %+v", m)
	}
	if _, err := Verify(dir); err != nil {
		t.Fatal(err)
	}
}

// An incremental file-form chain copies only the sstables the chain does not hold and restores
// to exactly what a full backup taken at the same point restores to; a target before the
// incremental's own engine is refused, naming the backups that reach it.
func TestFileIncrementalChain(t *testing.T) {
	src := fileSource(t, 20, 40, 200)
	root := t.TempDir()
	full := filepath.Join(root, "full")
	mf, err := Fetch(bytes.NewReader(stream(t, src)), full, nil)
	if err != nil {
		t.Fatal(err)
	}
	incremental := func(parent, name string, n, last uint64, changed int) (string, Manifest) {
		t.Helper()
		// The node changes a few keys at index n (a new sstable once flushed), commits up to last.
		b := src.Engine.NewBatch()
		for i := 0; i < changed; i++ {
			b.Set([]byte(fmt.Sprintf("k%03d", i)), []byte(fmt.Sprintf("changed at %d", n)))
		}
		if err := src.Engine.Apply(b, n, false); err != nil {
			t.Fatal(err)
		}
		grow(t, &src, src.Applied()+1, last)
		have, err := ChainHave(parent)
		if err != nil {
			t.Fatal(err)
		}
		s := src
		s.Have = have
		dir := filepath.Join(root, name)
		m, err := FetchIncremental(bytes.NewReader(stream(t, s)), dir, parent, nil)
		if err != nil {
			t.Fatal(err)
		}
		return dir, m
	}
	inc1, m1 := incremental(full, "inc1", 45, 55, 10)
	inc2, m2 := incremental(inc1, "inc2", 60, 70, 5)
	refs := func(m Manifest) (n int, copied int64) {
		for _, f := range m.Files {
			if f.Ref {
				n++
			} else if strings.HasPrefix(f.Path, "engine/") {
				copied += f.Bytes
			}
		}
		return n, copied
	}
	var fullBytes int64
	for _, f := range mf.Files {
		if strings.HasPrefix(f.Path, "engine/") {
			fullBytes += f.Bytes
		}
	}
	for _, m := range []Manifest{m1, m2} {
		n, copied := refs(m)
		if n == 0 || m.Parent == nil || m.Format != FormatFiles {
			t.Fatalf("incremental %+v: want references to the chain's sstables", m)
		}
		t.Logf("incremental at %d: %d files by reference, %d engine bytes copied (the full backup: %d)", m.EngineIndex, n, copied, fullBytes)
	}
	if m1.EngineIndex != 45 || m1.EndIndex != 55 || m2.EngineIndex != 60 || m2.EndIndex != 70 {
		t.Fatalf("incremental positions %d..%d, %d..%d", m1.EngineIndex, m1.EndIndex, m2.EngineIndex, m2.EndIndex)
	}
	if m, err := Verify(inc2); err != nil || m.EndIndex != 70 {
		t.Fatalf("verify of the chain: %+v %v", m, err)
	}
	whole := filepath.Join(root, "whole")
	if _, err := Fetch(bytes.NewReader(stream(t, src)), whole, nil); err != nil {
		t.Fatal(err)
	}
	for _, to := range []uint64{60, 61, 70} {
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
	// The middle one restores on its own chain too.
	if _, err := Restore(inc1, filepath.Join(t.TempDir(), "m"), RestoreOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := Restore(inc2, filepath.Join(t.TempDir(), "c"), RestoreOptions{ToIndex: 50}); err == nil || !strings.Contains(err.Error(), "before the engine index 60") {
		t.Fatalf("restore of inc2 to before its engine: %v", err)
	}
	// A log-only incremental (format 1) still follows a file-form backup.
	grow(t, &src, 71, 80)
	lo := src
	lo.Files, lo.After = false, 70
	var buf bytes.Buffer
	if err := Serve(context.Background(), &buf, lo); err != nil {
		t.Fatal(err)
	}
	inc3 := filepath.Join(root, "inc3")
	if _, err := FetchIncremental(&buf, inc3, inc2, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := Restore(inc3, filepath.Join(t.TempDir(), "l"), RestoreOptions{ToIndex: 75}); err != nil {
		t.Fatalf("restore of a log-only incremental after a file-form one: %v", err)
	}
}

// A flipped byte or a cut in an engine file of a file-form backup (its own, or one an
// incremental refers to) is found by verify and by restore, naming the file.
func TestFileFormCorruption(t *testing.T) {
	src := fileSource(t, 20, 40, 200)
	root := t.TempDir()
	full := filepath.Join(root, "full")
	m, err := Fetch(bytes.NewReader(stream(t, src)), full, nil)
	if err != nil {
		t.Fatal(err)
	}
	grow(t, &src, 41, 50)
	have, err := ChainHave(full)
	if err != nil {
		t.Fatal(err)
	}
	s := src
	s.Have = have
	inc := filepath.Join(root, "inc")
	if _, err := FetchIncremental(bytes.NewReader(stream(t, s)), inc, full, nil); err != nil {
		t.Fatal(err)
	}
	var sst string
	for _, f := range m.Files {
		if strings.HasSuffix(f.Path, ".sst") {
			sst = filepath.Join(full, filepath.FromSlash(f.Path))
		}
	}
	orig, err := os.ReadFile(sst)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		what string
		b    []byte
	}{
		{"a flipped byte", func() []byte { b := bytes.Clone(orig); b[len(b)/3] ^= 0x40; return b }()},
		{"truncated", orig[:len(orig)-7]},
	} {
		if err := os.WriteFile(sst, c.b, 0o600); err != nil {
			t.Fatal(err)
		}
		for _, dir := range []string{full, inc} {
			if _, err := Verify(dir); err == nil || !strings.Contains(err.Error(), sst) {
				t.Errorf("%s: verify %s: %v, want an error naming %s", c.what, dir, err, sst)
			}
			data := filepath.Join(t.TempDir(), "d")
			if _, err := Restore(dir, data, RestoreOptions{}); err == nil || !strings.Contains(err.Error(), sst) {
				t.Errorf("%s: restore %s: %v, want an error naming %s", c.what, dir, err, sst)
			}
			if ents, _ := os.ReadDir(data); len(ents) != 0 {
				t.Errorf("%s: a refused restore left %v", c.what, ents)
			}
		}
	}
}

// A client that goes away mid-way (its writes fail) ends the backup with the checkpoint removed;
// a checkpoint a crash left behind goes at start-up (RemoveCheckpoints); the next backup works.
func TestFileFormClientGone(t *testing.T) {
	src := fileSource(t, 20, 40, 2000)
	for _, limit := range []int{10, 5000} {
		err := Serve(context.Background(), &failingWriter{left: limit}, src)
		if err == nil {
			t.Fatalf("limit %d: Serve succeeded on a failing writer", limit)
		}
		if left := checkpointsLeft(t, src); len(left) != 0 {
			t.Fatalf("limit %d: checkpoint left behind: %v", limit, left)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Serve(ctx, &bytes.Buffer{}, src); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
	if left := checkpointsLeft(t, src); len(left) != 0 {
		t.Fatalf("cancelled: checkpoint left behind: %v", left)
	}
	if _, err := src.Engine.Checkpoint(); err != nil { // as if the node died during a backup
		t.Fatal(err)
	}
	if left := checkpointsLeft(t, src); len(left) != 1 {
		t.Fatalf("want one checkpoint, have %v", left)
	}
	if err := src.Engine.RemoveCheckpoints(); err != nil {
		t.Fatal(err)
	}
	if left := checkpointsLeft(t, src); len(left) != 0 {
		t.Fatalf("RemoveCheckpoints left %v", left)
	}
	if _, err := Fetch(bytes.NewReader(stream(t, src)), filepath.Join(t.TempDir(), "b"), nil); err != nil {
		t.Fatal(err)
	}
}

type failingWriter struct{ left int }

func (w *failingWriter) Write(p []byte) (int, error) {
	if len(p) > w.left {
		n := w.left
		w.left = 0
		return n, errors.New("client went away")
	}
	w.left -= len(p)
	return len(p), nil
}

// forms runs a test for the logical form and the file form.
func forms(t *testing.T, f func(t *testing.T, files bool)) {
	for _, files := range []bool{false, true} {
		t.Run(map[bool]string{false: "logical", true: "files"}[files], func(t *testing.T) { f(t, files) })
	}
}

// kiln backup verify checks each sstable's own block checksums too: a byte flipped inside a data
// block, with the manifest's CRC32C recomputed to match (the damage happened on the node, before
// the copy), is found by Verify on its own, naming the file.
func TestVerifyChecksSSTableBlocks(t *testing.T) {
	src := fileSource(t, 20, 40, 200)
	dir := filepath.Join(t.TempDir(), "full")
	m, err := Fetch(bytes.NewReader(stream(t, src)), dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	var sst string
	for i, f := range m.Files {
		if !strings.HasSuffix(f.Path, ".sst") {
			continue
		}
		sst = filepath.Join(dir, filepath.FromSlash(f.Path))
		b, err := os.ReadFile(sst)
		if err != nil {
			t.Fatal(err)
		}
		// The first block of an sstable, at offset 0, is a data block.
		b[16] ^= 0x40
		if err := os.WriteFile(sst, b, 0o600); err != nil {
			t.Fatal(err)
		}
		c, _, err := fileSum(sst, true)
		if err != nil {
			t.Fatal(err)
		}
		m.Files[i].CRC32C = c
		break
	}
	if sst == "" {
		t.Fatal("no sstable in the backup")
	}
	if err := writeManifest(dir, m); err != nil {
		t.Fatal(err)
	}
	_, err = Verify(dir)
	if err == nil || !strings.Contains(err.Error(), sst) || !strings.Contains(err.Error(), "checksum") {
		t.Fatalf("verify: %v, want a block checksum error naming %s", err, sst)
	}
	t.Log(err)
}
