package backup

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// logStream is ServeLog's stream of src's log after index after, up to its applied index.
func logStream(t *testing.T, src Source, after uint64) []byte {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var buf bytes.Buffer
	flushes := 0
	err := ServeLog(ctx, &buf, src, after, func() {
		if flushes++; flushes > 1 { // the header, then everything applied
			cancel()
		}
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("ServeLog: %v", err)
	}
	return buf.Bytes()
}

func archive(t *testing.T, dir string, stream []byte) *Archiver {
	t.Helper()
	a, err := OpenArchive(dir, 300)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Follow(bytes.NewReader(stream)); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("Follow: %v", err)
	}
	return a
}

// An archive written in two runs (the second resuming after the first, past an unfinished record)
// rolls a backup forward to the archive's end exactly as a full backup at that point restores;
// an archive of another cluster, one with a gap after the backup, or a stream that does not
// continue the archive is refused.
func TestArchiveRestore(t *testing.T) {
	src := source(t, 20, 40, 10)
	root := t.TempDir()
	full := filepath.Join(root, "full")
	if _, err := Fetch(bytes.NewReader(stream(t, src)), full, nil); err != nil {
		t.Fatal(err)
	}
	arc := filepath.Join(root, "arc")
	grow(t, &src, 41, 50)
	a := archive(t, arc, logStream(t, src, 0))
	if a.Last() != 50 {
		t.Fatalf("archived to %d", a.Last())
	}
	a.Close()
	segs, _ := filepath.Glob(filepath.Join(arc, "*.arc"))
	if len(segs) < 3 {
		t.Fatalf("%d segments", len(segs))
	}
	f, _ := os.OpenFile(segs[len(segs)-1], os.O_WRONLY|os.O_APPEND, 0)
	f.Write([]byte{0x30, 9})
	f.Close()
	if st, err := VerifyArchive(arc); err != nil || st.Unfinished == "" || st.First != 1 || st.Last != 50 {
		t.Fatalf("verify with an unfinished record: %+v %v", st, err)
	}
	grow(t, &src, 51, 60)
	if _, err := OpenArchive(arc, 300); err != nil {
		t.Fatal(err)
	}
	a = archive(t, arc, logStream(t, src, 50))
	if a.Last() != 60 {
		t.Fatalf("resumed archive ends at %d", a.Last())
	}
	// The same stream again does not continue it.
	if err := a.Follow(bytes.NewReader(logStream(t, src, 50))); err == nil || !strings.Contains(err.Error(), "does not continue the archive") {
		t.Fatalf("a stream that does not continue the archive: %v", err)
	}
	a.Close()
	whole := filepath.Join(root, "whole")
	if _, err := Fetch(bytes.NewReader(stream(t, src)), whole, nil); err != nil {
		t.Fatal(err)
	}
	for _, to := range []uint64{0, 45, 60} {
		a, b := filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b")
		res, err := Restore(full, a, RestoreOptions{LogDir: arc, ToIndex: to})
		if err != nil || (to == 0 && res.Index != 60) {
			t.Fatalf("restore with the archive to %d: %+v %v", to, res, err)
		}
		if _, err := Restore(whole, b, RestoreOptions{ToIndex: res.Index}); err != nil {
			t.Fatal(err)
		}
		if da, db := dump(t, a), dump(t, b); da != db {
			t.Fatalf("to %d: backup + archive restores\n%s\na full backup\n%s", to, da, db)
		}
	}
	// An archiver killed inside its first record: the next run starts over where the node says.
	fresh := filepath.Join(root, "fresh")
	os.MkdirAll(fresh, 0o700)
	os.WriteFile(filepath.Join(fresh, "00000000000000000007.arc"), []byte{0x30, 1}, 0o600)
	if a := archive(t, fresh, logStream(t, src, 30)); a.Last() != 60 {
		t.Fatalf("archive restarted after an unfinished first record ends at %d", a.Last())
	} else {
		a.Close()
	}
	if st, err := VerifyArchive(fresh); err != nil || st.First != 31 || st.Last != 60 {
		t.Fatalf("restarted archive: %+v %v", st, err)
	}
	// A gap: an archive that starts after the backup's end.
	gap := filepath.Join(root, "gap")
	archive(t, gap, logStream(t, src, 45)).Close()
	if _, err := Restore(full, filepath.Join(t.TempDir(), "g"), RestoreOptions{LogDir: gap}); err == nil || !strings.Contains(err.Error(), "starts at index 46, after the backup's end 40") {
		t.Fatalf("restore across a gap: %v", err)
	}
	// Another cluster's archive.
	b, _ := os.ReadFile(filepath.Join(arc, ArchiveFileName))
	os.WriteFile(filepath.Join(arc, ArchiveFileName), bytes.Replace(b, []byte(testUUID), []byte("4e11fa47-71ca-11e1-9e33-c80aa9429562"), 1), 0o600)
	if _, err := Restore(full, filepath.Join(t.TempDir(), "o"), RestoreOptions{LogDir: arc}); err == nil || !strings.Contains(err.Error(), "is the log of cluster 4e11fa47") {
		t.Fatalf("restore with another cluster's archive: %v", err)
	}
}
