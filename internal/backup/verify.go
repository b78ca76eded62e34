package backup

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/kiln-db/kiln/internal/engine"
	klog "github.com/kiln-db/kiln/internal/log"
)

// Verify checks a backup directory without changing it: the manifest is complete and consistent,
// every data file has its size and SHA-256 and there is no other, the engine keys are in order and
// hold the snapshot's applied index, and the log runs without a gap from EngineIndex+1 to EndIndex.
// Errors name the file at fault.
//
// For an incremental backup it verifies the whole chain (verifyChain) and returns the last
// backup's manifest.
func Verify(dir string) (Manifest, error) {
	chain, err := verifyChain(dir, false)
	if err != nil {
		return Manifest{}, err
	}
	return chain[len(chain)-1].m, nil
}

// verifyOne is Verify's checks of one backup directory, without its parents.
// skipEngine: checkFiles's.
func verifyOne(dir string, skipEngine bool) (Manifest, error) {
	m, err := ReadManifest(dir)
	if err != nil {
		return m, err
	}
	if err := checkFiles(dir, m, skipEngine); err != nil {
		return m, err
	}
	return m, scan(dir, m, m.EndIndex, nil, nil)
}

// scan reads the data files in order, checking their contents against the manifest, and passes
// every engine key to kv and every log entry up to upTo to entry (either may be nil).
func scan(dir string, m Manifest, upTo uint64, kv func(k, v []byte) error, entry func(klog.Entry) error) error {
	var last []byte
	var keys, entries uint64
	applied := uint64(0)
	appliedSeen := false
	next, prevTerm := m.EngineIndex+1, m.EngineTerm
	for _, f := range m.Files {
		p := filepath.Join(dir, filepath.FromSlash(f.Path))
		isKV := strings.HasPrefix(f.Path, "engine/")
		if isKV && entries > 0 {
			return fmt.Errorf("backup: %s: engine file listed after log files in the manifest (damaged)", p)
		}
		if isKV && m.Format == FormatFiles {
			continue // a pebble file: its CRC32C is all Verify checks (Restore opens it)
		}
		fh, err := os.Open(p)
		if err != nil {
			return fmt.Errorf("backup: %w", err)
		}
		r := bufio.NewReaderSize(fh, 256<<10)
		err = func() error {
			for {
				if _, err := r.Peek(1); err == io.EOF {
					return nil
				}
				if isKV {
					k, v, err := readKV(r)
					if err != nil {
						return err
					}
					if last != nil && bytes.Compare(k, last) <= 0 {
						return fmt.Errorf("key %x after %x: out of order", k, last)
					}
					last = k
					keys++
					if bytes.Equal(k, engine.AppliedKey()) && len(v) == 8 {
						applied, appliedSeen = binary.BigEndian.Uint64(v), true
					}
					if kv != nil {
						if err := kv(k, v); err != nil {
							return err
						}
					}
					continue
				}
				e, err := readEntry(r)
				if err != nil {
					return err
				}
				if e.Index != next {
					return fmt.Errorf("log entry %d where %d was expected (a gap)", e.Index, next)
				}
				if e.Term < prevTerm {
					return fmt.Errorf("log entry %d has term %d after term %d", e.Index, e.Term, prevTerm)
				}
				next, prevTerm = next+1, e.Term
				entries++
				if entry != nil && e.Index <= upTo {
					if err := entry(e); err != nil {
						return err
					}
				}
			}
		}()
		fh.Close()
		if err != nil {
			return fmt.Errorf("backup: %s: %w", p, err)
		}
	}
	switch {
	case keys != m.Keys:
		return fmt.Errorf("backup %s: %d engine keys, the manifest says %d", dir, keys, m.Keys)
	case m.Parent != nil && keys > 0:
		return fmt.Errorf("backup %s: an incremental backup with engine keys (damaged)", dir)
	case m.Format != FormatFiles && m.Parent == nil && m.EngineIndex > 0 && (!appliedSeen || applied != m.EngineIndex):
		return fmt.Errorf("backup %s: the engine files hold applied index %d, the manifest says %d", dir, applied, m.EngineIndex)
	case entries != m.Entries || next != m.EndIndex+1:
		return fmt.Errorf("backup %s: the log files end at %d, the manifest says %d", dir, next-1, m.EndIndex)
	case prevTerm != m.EndTerm:
		return fmt.Errorf("backup %s: the last entry has term %d, the manifest says %d", dir, prevTerm, m.EndTerm)
	}
	return nil
}
