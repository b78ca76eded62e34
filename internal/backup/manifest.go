package backup

import (
	"archive/tar"
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/kiln-db/kiln/internal/engine"
)

// ManifestName is the file that makes a backup directory complete (written last).
const ManifestName = "MANIFEST.json"

// Manifest describes a complete backup directory.
type Manifest struct {
	Format      int    `json:"format"`      // FormatVersion
	DataFormat  int    `json:"data_format"` // the source's on-disk format (DATA/FORMAT)
	ClusterID   string `json:"cluster_id"`
	ClusterUUID string `json:"cluster_uuid"`
	SourceNode  uint64 `json:"source_node"`
	// EngineIndex is N, the applied index of the engine snapshot; EndIndex the last log entry
	// copied. The backup restores to any index in [EngineIndex, EndIndex].
	EngineIndex uint64 `json:"engine_index"`
	EngineTerm  uint64 `json:"engine_term"`
	EndIndex    uint64 `json:"end_index"`
	EndTerm     uint64 `json:"end_term"`
	Keys        uint64 `json:"keys"`
	Entries     uint64 `json:"entries"`
	GTID        string `json:"gtid"` // the position at EndIndex: <cluster uuid>:1-<EndIndex>
	// EngineCommitTime is the commit time of the last commit at or below EngineIndex (if the node
	// knew it), EndCommitTime that of the last commit up to EndIndex: the range restore --to-time
	// can reach. Absent for commits written before commit times existed.
	EngineCommitTime *time.Time `json:"engine_commit_time,omitempty"`
	EndCommitTime    *time.Time `json:"end_commit_time,omitempty"`
	Started          time.Time  `json:"started"`
	Finished         time.Time  `json:"finished"`
	Files            []File     `json:"files"` // engine files in key order, then log files in index order
	// Parent, for an incremental backup (chain.go), is the backup it follows: this one holds no
	// engine files, only the log after the parent's end (EngineIndex = the parent's EndIndex).
	Parent *Parent `json:"parent,omitempty"`
}

// File is one data file of a backup, relative to its directory (slash-separated).
type File struct {
	Path  string `json:"path"`
	Bytes int64  `json:"bytes"`
	// SHA256 is the checksum of a format-1 (logical) backup's files, CRC32C (8 hex digits) that of
	// a file-form one's (files.go).
	SHA256 string `json:"sha256,omitempty"`
	CRC32C string `json:"crc32c,omitempty"`
	// Ref: the file is not in this backup's directory but in an earlier backup of its chain (the
	// newest one that holds a file of the same path, size and CRC32C): an incremental file-form
	// backup's unchanged sstable.
	Ref bool `json:"ref,omitempty"`
}

// GTIDSet is the MySQL GTID set of every commit up to index under the cluster's UUID.
func GTIDSet(clusterUUID string, index uint64) string {
	if index == 0 {
		return ""
	}
	return fmt.Sprintf("%s:1-%d", clusterUUID, index)
}

// ReadManifest reads dir's manifest; a directory without one is an incomplete backup.
func ReadManifest(dir string) (Manifest, error) {
	var m Manifest
	p := filepath.Join(dir, ManifestName)
	b, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return m, fmt.Errorf("backup %s: no %s: not a backup, or an incomplete one (interrupted before it finished)", dir, ManifestName)
	}
	if err != nil {
		return m, fmt.Errorf("backup: %w", err)
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(&m); err != nil {
		return m, fmt.Errorf("backup: %s: %w (damaged)", p, err)
	}
	if m.Format != FormatVersion && m.Format != FormatFiles {
		return m, fmt.Errorf("backup: %s: backup format %d; this build reads formats %d and %d", p, m.Format, FormatVersion, FormatFiles)
	}
	if m.EndIndex < m.EngineIndex || m.Entries != m.EndIndex-m.EngineIndex {
		return m, fmt.Errorf("backup: %s: engine index %d, end index %d and %d entries do not agree (damaged)", p, m.EngineIndex, m.EndIndex, m.Entries)
	}
	names := map[string]bool{}
	for _, f := range m.Files {
		if !validPath(f.Path, m.Format) || names[f.Path] {
			return m, fmt.Errorf("backup: %s: bad or repeated file name %q (damaged)", p, f.Path)
		}
		names[f.Path] = true
		if m.Format == FormatFiles && (len(f.CRC32C) != 8 || f.SHA256 != "") || m.Format != FormatFiles && (f.SHA256 == "" || f.CRC32C != "" || f.Ref) {
			return m, fmt.Errorf("backup: %s: file %s has the wrong checksum for format %d (damaged)", p, f.Path, m.Format)
		}
		if f.Ref && m.Parent == nil {
			return m, fmt.Errorf("backup: %s: file %s refers to an earlier backup, but this one has no parent (damaged)", p, f.Path)
		}
	}
	return m, nil
}

// validPath accepts only the names Fetch writes: engine/NNNNNN.kv (format 1) or engine/<a pebble
// file's name> (format 2), and log/NNNNNN.ent.
func validPath(p string, format int) bool {
	if name, ok := strings.CutPrefix(p, "engine/"); ok && format == FormatFiles {
		return validEngineName(name)
	}
	dir, name := filepath.Split(filepath.FromSlash(p))
	ext := map[string]string{"engine" + string(filepath.Separator): ".kv", "log" + string(filepath.Separator): ".ent"}[dir]
	if ext == "" || len(name) != 6+len(ext) || filepath.Ext(name) != ext {
		return false
	}
	for _, c := range name[:6] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// checkFiles compares dir's data files with the manifest: every listed file with its size and
// SHA-256, and no other file. Errors name the file.
// skipEngine leaves a file-form backup's engine files to the caller (Restore, which checks them
// as it copies them) but still refuses a missing one.
func checkFiles(dir string, m Manifest, skipEngine bool) error {
	listed := map[string]bool{}
	for _, f := range m.Files {
		if f.Ref {
			continue // in an earlier backup of the chain (verifyChain)
		}
		p := filepath.Join(dir, filepath.FromSlash(f.Path))
		listed[p] = true
		if skipEngine && strings.HasPrefix(f.Path, "engine/") && m.Format == FormatFiles {
			continue // Restore checks it as it copies it
		}
		got, n, err := fileSum(p, m.Format == FormatFiles)
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("backup: %s: %w (listed in the manifest)", p, err)
		}
		if err != nil {
			return fmt.Errorf("backup: read %s: %w", p, err)
		}
		if n != f.Bytes {
			return fmt.Errorf("backup: %s has %d bytes, the manifest says %d (truncated or damaged)", p, n, f.Bytes)
		}
		if want := f.SHA256 + f.CRC32C; got != want {
			kind := map[bool]string{true: "CRC32C", false: "SHA-256"}[m.Format == FormatFiles]
			return fmt.Errorf("backup: %s: %s %s, the manifest says %s (damaged)", p, kind, got, want)
		}
		if m.Format == FormatFiles && strings.HasSuffix(f.Path, ".sst") {
			// The CRC32C proves the copy is what the node sent; the sstable's own block checksums
			// prove the node's file was sound (a block damaged on the node's disk, or a manifest
			// rewritten along with its file) without a restore having to read that block.
			if err := engine.CheckTable(p); err != nil {
				return fmt.Errorf("backup: %w (damaged)", err)
			}
		}
	}
	var extra []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && p != filepath.Join(dir, ManifestName) && !listed[p] {
			extra = append(extra, p)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("backup: list %s: %w", dir, err)
	}
	if len(extra) > 0 {
		slices.Sort(extra)
		return fmt.Errorf("backup: %s is not listed in the manifest (a file of another backup, or damage)", extra[0])
	}
	return nil
}

// rollBytes is the size past which Fetch starts the next data file (a variable for tests).
var rollBytes int64 = 64 << 20

// fileSet writes a series of data files (sub/NNNNNN.ext), owner-only, with their checksums: into
// the directory root, or as entries of the tar stream tw (each file is held in memory until it is
// complete, since a tar header carries the size: at most rollBytes).
type fileSet struct {
	root, sub, ext string
	tw             *tar.Writer
	crc            bool // CRC32C (file form), not SHA-256
	files          []File
	open           bool
	f              *smoothFile
	mem            *bytes.Buffer
	w              *bufio.Writer
	h              hash.Hash
	n              int64
}

func (s *fileSet) write(b []byte) error {
	if !s.open || s.n >= rollBytes {
		if err := s.close(); err != nil {
			return err
		}
		rel := fmt.Sprintf("%s/%06d%s", s.sub, len(s.files)+1, s.ext)
		s.h, s.n = sha256.New(), 0
		if s.crc {
			s.h = newCRC()
		}
		if s.tw != nil {
			s.mem = new(bytes.Buffer)
			s.w = bufio.NewWriterSize(io.MultiWriter(s.mem, s.h), 256<<10)
		} else {
			f, err := os.OpenFile(filepath.Join(s.root, filepath.FromSlash(rel)), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
			if err != nil {
				return fmt.Errorf("backup: %w", err)
			}
			s.f = newSmoothFile(f)
			s.w = bufio.NewWriterSize(io.MultiWriter(s.f, s.h), 256<<10)
		}
		s.open = true
		s.files = append(s.files, File{Path: rel})
	}
	if _, err := s.w.Write(b); err != nil {
		return fmt.Errorf("backup: write %s: %w", s.files[len(s.files)-1].Path, err)
	}
	s.n += int64(len(b))
	return nil
}

// close finishes the current file: flushed and fsynced (or written to the tar stream), its size
// and checksum recorded.
func (s *fileSet) close() error {
	if !s.open {
		return nil
	}
	s.open = false
	last := &s.files[len(s.files)-1]
	err := s.w.Flush()
	if s.tw != nil {
		if err == nil {
			err = writeTarFile(s.tw, last.Path, s.mem.Bytes())
		}
		s.mem = nil
	} else {
		f := s.f
		s.f = nil
		if err == nil {
			err = f.sync()
		}
		if cerr := f.f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		return fmt.Errorf("backup: finish %s: %w", last.Path, err)
	}
	last.Bytes = s.n
	if s.crc {
		last.CRC32C = crcHex(s.h.(hash.Hash32).Sum32())
	} else {
		last.SHA256 = hex.EncodeToString(s.h.Sum(nil))
	}
	return nil
}

func (s *fileSet) abort() {
	if s.f != nil {
		s.f.f.Close()
		s.f = nil
	}
	s.open, s.mem = false, nil
}

func writeTarFile(tw *tar.Writer, name string, b []byte) error {
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o600, Size: int64(len(b)), ModTime: time.Now()}); err != nil {
		return err
	}
	_, err := tw.Write(b)
	return err
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
