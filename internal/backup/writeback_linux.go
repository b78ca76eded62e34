//go:build linux

package backup

import (
	"os"

	"golang.org/x/sys/unix"
)

// smoothFile writes a backup file so that its bytes reach the disk in small, steady pieces
// instead of one burst at the final fsync, and leave the page cache once they are there.
//
// Why: a backup file written through the page cache stays dirty until the kernel's flusher (or
// the file's fsync) writes it back all at once. On the disk that holds the node's log, that burst
// is what the node's commit fsyncs queue behind (and, on ext4 with data=ordered, its journal
// commits wait for the backup's dirty data too): p99 commit latency rises during a backup. So
// every writebackChunk bytes the writer starts the chunk's writeback (sync_file_range
// SYNC_FILE_RANGE_WRITE, asynchronous) and waits for the previous chunk's, which has had a chunk's
// time to finish: at most two chunks of the backup are ever dirty. The written chunks are then
// dropped from the page cache (POSIX_FADV_DONTNEED): a backup is read rarely, and the cache is
// better spent on the node's data. The final fsync (finish) still makes the file durable; these
// calls are advice, and a filesystem that does not support them only loses the smoothing.
type smoothFile struct {
	f *os.File
	// off is the bytes written; started the offset up to which writeback has been started;
	// settled the offset up to which it has finished and the pages were dropped.
	off, started, settled int64
}

// writebackChunk is how many bytes a backup file may have dirty before their writeback is
// started: small enough that the log's fsync never waits behind much, large enough that the
// disk sees large sequential writes (pebble syncs its own sstables every 512 KiB).
const writebackChunk = 4 << 20

func newSmoothFile(f *os.File) *smoothFile { return &smoothFile{f: f} }

func (s *smoothFile) Write(p []byte) (int, error) {
	n, err := s.f.Write(p)
	s.off += int64(n)
	if err == nil && s.off-s.started >= writebackChunk {
		s.step()
	}
	return n, err
}

// step starts the writeback of what was written since the last step and settles the previous one.
func (s *smoothFile) step() {
	fd := int(s.f.Fd())
	_ = unix.SyncFileRange(fd, s.started, s.off-s.started, unix.SYNC_FILE_RANGE_WRITE)
	if s.started > s.settled {
		_ = unix.SyncFileRange(fd, s.settled, s.started-s.settled,
			unix.SYNC_FILE_RANGE_WAIT_BEFORE|unix.SYNC_FILE_RANGE_WRITE|unix.SYNC_FILE_RANGE_WAIT_AFTER)
		_ = unix.Fadvise(fd, s.settled, s.started-s.settled, unix.FADV_DONTNEED)
		s.settled = s.started
	}
	s.started = s.off
}

// sync makes the file durable (fsync) and drops the rest of it from the page cache.
func (s *smoothFile) sync() error {
	if err := s.f.Sync(); err != nil {
		return err
	}
	_ = unix.Fadvise(int(s.f.Fd()), 0, 0, unix.FADV_DONTNEED)
	s.started, s.settled = s.off, s.off
	return nil
}
