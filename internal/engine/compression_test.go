package engine

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// fillFlush writes n keys (the same keys every call, new values) and flushes them into an L0 table.
func fillFlush(t *testing.T, e *Engine, round, n int) {
	t.Helper()
	b := e.NewBatch()
	defer b.Close()
	for i := range n {
		k := []byte(fmt.Sprintf("k%06d", i))
		v := []byte(fmt.Sprintf("value %d of round %d, compressible compressible compressible", i, round))
		if err := b.Set(k, v); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.Apply(b, uint64(round), false); err != nil {
		t.Fatal(err)
	}
	if err := e.Flush(); err != nil {
		t.Fatal(err)
	}
}

// compressionByLevel names the compression of every table, per level.
func compressionByLevel(t *testing.T, e *Engine) map[int][]string {
	t.Helper()
	levels, err := e.db.SSTables(pebble.WithProperties())
	if err != nil {
		t.Fatal(err)
	}
	out := map[int][]string{}
	for l, tables := range levels {
		for _, ti := range tables {
			out[l] = append(out[l], ti.Properties.CompressionName)
		}
	}
	return out
}

// TestCompressionByLevel: flushes write uncompressed tables, compactions into the bottom level
// write Snappy ones (setCompression).
func TestCompressionByLevel(t *testing.T) {
	e := openTest(t)
	defer e.Close()
	fillFlush(t, e, 1, 2000)
	fillFlush(t, e, 2, 2000) // overlaps the first: the compaction below rewrites, not moves
	got := compressionByLevel(t, e)
	if len(got[0]) == 0 {
		t.Fatalf("no L0 table after the flushes: %v", got)
	}
	for _, c := range got[0] {
		if c != "NoCompression" {
			t.Errorf("L0 table compressed with %s, want NoCompression", c)
		}
	}
	if err := e.db.Compact(t.Context(), []byte("k"), []byte("l"), false); err != nil {
		t.Fatal(err)
	}
	got = compressionByLevel(t, e)
	if len(got[6]) == 0 {
		t.Fatalf("no L6 table after a full compaction: %v", got)
	}
	for l, cs := range got {
		for _, c := range cs {
			if want := map[bool]string{true: "Snappy", false: "NoCompression"}[l == 6]; c != want {
				t.Errorf("L%d table compressed with %s, want %s", l, c, want)
			}
		}
	}
}

// TestBlockSize: flushed and compacted tables have BlockSize data blocks (pebble's default, 4 KiB,
// would make about four times as many).
func TestBlockSize(t *testing.T) {
	e := openTest(t)
	defer e.Close()
	fillFlush(t, e, 1, 20000)
	fillFlush(t, e, 2, 20000)
	check := func(when string) {
		t.Helper()
		levels, err := e.db.SSTables(pebble.WithProperties())
		if err != nil {
			t.Fatal(err)
		}
		var size, blocks uint64
		for _, tables := range levels {
			for _, ti := range tables {
				size += ti.Properties.RawKeySize + ti.Properties.RawValueSize // before compression
				blocks += ti.Properties.NumDataBlocks
			}
		}
		if blocks == 0 || size < 40*BlockSize {
			t.Fatalf("%s: %d bytes in %d data blocks: too little to tell", when, size, blocks)
		}
		if avg := size / blocks; avg < BlockSize*3/4 {
			t.Errorf("%s: data blocks of %d bytes on average, want about %d", when, avg, BlockSize)
		}
	}
	check("after the flushes")
	if err := e.db.Compact(t.Context(), []byte("k"), []byte("l"), false); err != nil {
		t.Fatal(err)
	}
	check("after a full compaction")
}

// TestOpensStoreWithOtherCompression: a store written with pebble's defaults (Snappy at every
// level, as Kiln wrote before setCompression) opens, reads and compacts as before.
func TestOpensStoreWithOtherCompression(t *testing.T) {
	fs := vfs.NewMem()
	dir := filepath.Join("data", "e")
	old, err := pebble.Open(dir, &pebble.Options{FS: fs})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 1000 {
		if err := old.Set([]byte(fmt.Sprintf("k%06d", i)), []byte(fmt.Sprintf("old %d", i)), pebble.NoSync); err != nil {
			t.Fatal(err)
		}
	}
	if err := old.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}
	e, err := Open(dir, Options{FS: fs})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if got := compressionByLevel(t, e); len(got[0]) == 0 || got[0][0] != "Snappy" {
		t.Fatalf("the old store's table: %v, want Snappy in L0", got)
	}
	fillFlush(t, e, 1, 1000) // rewrites the old keys, uncompressed in L0
	if err := e.db.Compact(t.Context(), []byte("k"), []byte("l"), false); err != nil {
		t.Fatal(err)
	}
	for i := range 1000 {
		v, ok, err := e.Get([]byte(fmt.Sprintf("k%06d", i)))
		if want := fmt.Sprintf("value %d of round 1", i); err != nil || !ok || string(v[:len(want)]) != want {
			t.Fatalf("k%06d = %q, %v, %v; want %q...", i, v, ok, err, want)
		}
	}
}
