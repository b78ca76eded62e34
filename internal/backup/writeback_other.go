//go:build !linux

package backup

import "os"

// smoothFile is a plain file outside Linux (no sync_file_range): the final fsync writes it back.
type smoothFile struct{ f *os.File }

func newSmoothFile(f *os.File) *smoothFile { return &smoothFile{f: f} }

func (s *smoothFile) Write(p []byte) (int, error) { return s.f.Write(p) }

func (s *smoothFile) sync() error { return s.f.Sync() }
