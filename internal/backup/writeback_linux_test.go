//go:build linux

package backup

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// resident is the fraction of each writebackChunk of the file at p that is in the page cache.
func resident(t *testing.T, p string) []float64 {
	t.Helper()
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	m, err := unix.Mmap(int(f.Fd()), 0, int(fi.Size()), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(m)
	page := os.Getpagesize()
	vec := make([]byte, (len(m)+page-1)/page)
	if _, _, e := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&m[0])), uintptr(len(m)), uintptr(unsafe.Pointer(&vec[0]))); e != 0 {
		t.Fatal(e)
	}
	per := writebackChunk / page
	var out []float64
	for lo := 0; lo < len(vec); lo += per {
		hi := min(lo+per, len(vec))
		in := 0
		for _, v := range vec[lo:hi] {
			in += int(v & 1)
		}
		out = append(out, float64(in)/float64(hi-lo))
	}
	return out
}

// A backup file is written back in chunks as it is written, not in one burst at its fsync, and
// leaves the page cache once on disk: while the fourth chunk is written, the first two are
// already gone from the cache (only clean pages can be dropped: they were written back); after
// finish, the whole file is.
func TestSmoothWriteback(t *testing.T) {
	dir := t.TempDir()
	var fs unix.Statfs_t
	if err := unix.Statfs(dir, &fs); err != nil {
		t.Fatal(err)
	}
	if fs.Type == unix.TMPFS_MAGIC {
		t.Skip("tmpfs: no writeback, pages cannot be dropped")
	}
	s := &dirSink{dir: dir}
	w, err := s.create("000001.sst", 0)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64<<10)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range buf {
		buf[i] = byte(r.Uint32())
	}
	write := func(n int) {
		for ; n > 0; n -= len(buf) {
			if _, err := w.Write(buf); err != nil {
				t.Fatal(err)
			}
		}
	}
	write(3*writebackChunk + writebackChunk/2)
	s.bw.Flush() // what bufio still holds is not the point
	p := filepath.Join(dir, "000001.sst")
	got := resident(t, p)
	t.Logf("resident per chunk while writing: %.2f", got)
	for i := 0; i < 2; i++ {
		if got[i] > 0.1 {
			t.Fatalf("chunk %d is %.0f%% in the page cache while chunk 4 is written: not written back as it went (%.2f)", i, got[i]*100, got)
		}
	}
	write(writebackChunk)
	if err := s.finish(); err != nil {
		t.Fatal(err)
	}
	got = resident(t, p)
	t.Logf("resident per chunk after finish: %.2f", got)
	for i, v := range got {
		if v > 0.1 {
			t.Fatalf("chunk %d is %.0f%% in the page cache after finish (%.2f)", i, v*100, got)
		}
	}
	b, err := os.ReadFile(p)
	if err != nil || len(b) != 4*writebackChunk+writebackChunk/2 {
		t.Fatalf("file of %d bytes, %v", len(b), err)
	}
	for off := 0; off < len(b); off += len(buf) {
		if string(b[off:off+len(buf)]) != string(buf) {
			t.Fatalf("the file differs from what was written at %d", off)
		}
	}
}
