package backup

import (
	"archive/tar"
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/kiln-db/kiln/internal/engine"
	"github.com/kiln-db/kiln/internal/repl"
)

// Progress, if set, is called now and then with the bytes received so far.
type Progress func(bytes int64)

// Fetch reads a backup stream (Serve's) from r into dir, which must not exist or be empty, and
// returns its manifest. dir and its files are owner-only. The manifest is written last: a Fetch
// that fails (or a process killed during it) leaves no manifest, and Verify and Restore refuse the
// directory. On an error Fetch removes what it wrote.
func Fetch(r io.Reader, dir string, progress Progress) (m Manifest, err error) {
	return fetch(r, dir, "", progress)
}

// FetchIncremental is Fetch of an incremental backup stream (Source.After = the end of the backup
// in parentDir, which the caller has verified): the stream must continue parentDir's backup
// exactly (same cluster, starting right after its end index with its last term), and the
// manifest names parentDir (relative to dir) and the SHA-256 of its manifest.
func FetchIncremental(r io.Reader, dir, parentDir string, progress Progress) (Manifest, error) {
	if parentDir == "" {
		return Manifest{}, errors.New("backup: an incremental backup needs its parent")
	}
	return fetch(r, dir, parentDir, progress)
}

func fetch(r io.Reader, dir, parentDir string, progress Progress) (m Manifest, err error) {
	started := time.Now().UTC()
	var parent Manifest
	var parentSum, parentRel string
	if parentDir != "" {
		if parent, err = ReadManifest(parentDir); err != nil {
			return m, err
		}
		if parentSum, err = ManifestSum(parentDir); err != nil {
			return m, err
		}
		ad, err1 := filepath.Abs(dir)
		ap, err2 := filepath.Abs(parentDir)
		if err1 != nil || err2 != nil {
			return m, fmt.Errorf("backup: %v %v", err1, err2)
		}
		if parentRel, err = filepath.Rel(ad, ap); err != nil {
			parentRel = ap
		}
	}
	if ents, err := os.ReadDir(dir); err == nil && len(ents) > 0 {
		return m, fmt.Errorf("backup: %s is not empty", dir)
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return m, fmt.Errorf("backup: %w", err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return m, fmt.Errorf("backup: %w", err)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return m, fmt.Errorf("backup: %w", err)
	}
	kv := &fileSet{root: dir, sub: "engine", ext: ".kv"}
	files := &dirSink{dir: filepath.Join(dir, "engine")}
	lg := &fileSet{root: dir, sub: "log", ext: ".ent"}
	defer func() {
		if err != nil {
			kv.abort()
			files.abort()
			lg.abort()
			for _, sub := range []string{"engine", "log", ManifestName} {
				_ = os.RemoveAll(filepath.Join(dir, sub))
			}
		}
	}()
	for _, sub := range []string{"engine", "log"} {
		if err := os.Mkdir(filepath.Join(dir, sub), 0o700); err != nil {
			return m, fmt.Errorf("backup: %w", err)
		}
	}
	pr := bufio.NewReaderSize(&countingReader{r: r, progress: progress}, 256<<10)
	if isFileStream(pr) {
		var have map[string]HaveFile
		if parentDir != "" {
			if have, err = ChainHave(parentDir); err != nil {
				return m, err
			}
		}
		lg.crc = true
		if m, err = readFileStream(pr, files, lg, have); err != nil {
			return m, err
		}
	} else if m, err = readStream(pr, kv, lg, nil); err != nil {
		return m, err
	}
	switch {
	case parentDir == "" && m.Parent != nil:
		return m, errors.New("backup: the node sent an incremental backup, but none was asked for")
	case parentDir != "" && m.Format == FormatFiles:
		// A file-form incremental: its own engine (files not copied are references to the chain's).
		if m.ClusterUUID != parent.ClusterUUID {
			return m, fmt.Errorf("backup: the node is of cluster %s, the previous backup %s of cluster %s: take a full backup", m.ClusterUUID, parentDir, parent.ClusterUUID)
		}
		m.Parent = &Parent{Path: filepath.ToSlash(parentRel), ManifestSHA256: parentSum}
	case parentDir != "" && m.Parent == nil:
		return m, errors.New("backup: the node sent a full backup where an incremental one was asked for (an older node?)")
	case parentDir != "" && (m.ClusterUUID != parent.ClusterUUID || m.EngineIndex != parent.EndIndex || m.EngineTerm != parent.EndTerm):
		return m, fmt.Errorf("backup: the node's log does not continue the previous backup %s (it ends at index %d, term %d, of cluster %s; the node sent index %d, term %d, of cluster %s): take a full backup",
			parentDir, parent.EndIndex, parent.EndTerm, parent.ClusterUUID, m.EngineIndex, m.EngineTerm, m.ClusterUUID)
	case parentDir != "":
		m.Parent = &Parent{Path: filepath.ToSlash(parentRel), ManifestSHA256: parentSum}
		if parent.EndCommitTime != nil && m.EngineCommitTime == nil {
			m.EngineCommitTime = parent.EndCommitTime
		}
	}
	m.Started = started
	for _, sub := range []string{"engine", "log", ""} {
		if err := syncDir(filepath.Join(dir, sub)); err != nil {
			return m, fmt.Errorf("backup: %w", err)
		}
	}
	m.Finished = time.Now().UTC()
	if err := writeManifest(dir, m); err != nil {
		return m, err
	}
	return m, nil
}

// FetchTar is Fetch writing a tar stream to w instead of a directory (kiln backup --to -): the
// same files, then MANIFEST.json last. Extracted (tar -x), it is a backup directory. A stream
// that fails part-way ends without a manifest, so the extracted directory is refused as
// incomplete; w receives nothing more after an error.
func FetchTar(r io.Reader, w io.Writer, progress Progress) (Manifest, error) {
	started := time.Now().UTC()
	tw := tar.NewWriter(w)
	for _, d := range []string{"engine/", "log/"} {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: d, Mode: 0o700, ModTime: started}); err != nil {
			return Manifest{}, fmt.Errorf("backup: write the tar stream: %w", err)
		}
	}
	pr := bufio.NewReaderSize(&countingReader{r: r, progress: progress}, 256<<10)
	var m Manifest
	var err error
	if isFileStream(pr) {
		m, err = readFileStream(pr, tarSink{tw: tw}, &fileSet{sub: "log", ext: ".ent", tw: tw, crc: true}, nil)
	} else {
		m, err = readStream(pr, &fileSet{sub: "engine", ext: ".kv", tw: tw}, &fileSet{sub: "log", ext: ".ent", tw: tw}, nil)
	}
	if err != nil {
		return m, err
	}
	if m.Parent != nil {
		return m, errors.New("backup: the node sent an incremental backup, but none was asked for")
	}
	m.Started, m.Finished = started, time.Now().UTC()
	b, _ := json.MarshalIndent(m, "", "  ")
	if err := writeTarFile(tw, ManifestName, append(b, '\n')); err != nil {
		return m, fmt.Errorf("backup: write the tar stream: %w", err)
	}
	if err := tw.Close(); err != nil {
		return m, fmt.Errorf("backup: write the tar stream: %w", err)
	}
	return m, nil
}

// isFileStream reports whether r holds a file-form stream (and if so consumes its magic).
func isFileStream(r *bufio.Reader) bool {
	b, err := r.Peek(len(fileStreamMagic))
	if err != nil || string(b) != fileStreamMagic {
		return false
	}
	_, _ = r.Discard(len(fileStreamMagic))
	return true
}

// readStream reads a backup stream from r into the file sets, checking it as it goes (frame order,
// key order, contiguous entries, the trailer's counts, the SHA-256), and returns the manifest of
// what it wrote (without times).
func readStream(r io.Reader, eng, lg *fileSet, progress Progress) (m Manifest, err error) {
	cr := &countingReader{r: r, progress: progress}
	h := sha256.New()
	raw := bufio.NewReaderSize(cr, 256<<10)
	br := hashing{r: raw, h: h}
	magic := make([]byte, len(streamMagic))
	if _, err := io.ReadFull(br, magic); err != nil || string(magic) != streamMagic {
		return m, fmt.Errorf("backup: the node did not send a backup stream (bad magic %q, %v)", magic, err)
	}
	var hdr Header
	var tr Trailer
	var last []byte
	var keys, entries uint64
	var appliedSeen bool
	var next uint64
	var kvBuf, entBuf []byte
	var endTime int64 // the last commit time seen
	for done := false; !done; {
		kind, err := br.ReadByte()
		if err != nil {
			return m, fmt.Errorf("backup: stream %w", short(err))
		}
		switch {
		case kind == frameHeader && next == 0:
			b, err := readBytes(br, maxJSONBytes, "header")
			if err != nil {
				return m, fmt.Errorf("backup: stream header: %w", err)
			}
			if err := json.Unmarshal(b, &hdr); err != nil {
				return m, fmt.Errorf("backup: stream header: %w", err)
			}
			if hdr.Format != FormatVersion {
				return m, fmt.Errorf("backup: the node sends backup format %d; this build reads %d", hdr.Format, FormatVersion)
			}
			next = hdr.EngineIndex + 1
			endTime = hdr.EngineTime
		case kind == frameKV && next != 0 && entries == 0 && !hdr.Incremental:
			k, v, err := readKV(br)
			if err != nil {
				return m, fmt.Errorf("backup: stream engine key: %w", err)
			}
			if last != nil && bytes.Compare(k, last) <= 0 {
				return m, fmt.Errorf("backup: stream engine key %x after %x: out of order", k, last)
			}
			last = k
			if bytes.Equal(k, engine.AppliedKey()) {
				appliedSeen = true
			}
			kvBuf = appendKV(kvBuf[:0], k, v)
			if err := eng.write(kvBuf); err != nil {
				return m, err
			}
			keys++
		case kind == frameEntry && next != 0:
			e, err := readEntry(br)
			if err != nil {
				return m, fmt.Errorf("backup: stream log entry: %w", err)
			}
			if e.Index != next {
				return m, fmt.Errorf("backup: stream log entry %d where %d was expected", e.Index, next)
			}
			next++
			if entries == 0 {
				if err := eng.close(); err != nil {
					return m, err
				}
			}
			entBuf = appendEntry(entBuf[:0], e)
			if err := lg.write(entBuf); err != nil {
				return m, err
			}
			entries++
			tr.EndIndex, tr.EndTerm = e.Index, e.Term
			if at, ok := repl.EntryCommitTime(e); ok {
				endTime = at
			}
		case kind == frameTrailer && next != 0:
			b, err := readBytes(br, maxJSONBytes, "trailer")
			if err != nil {
				return m, fmt.Errorf("backup: stream trailer: %w", err)
			}
			sum := h.Sum(nil)
			want := make([]byte, sha256.Size)
			if _, err := io.ReadFull(raw, want); err != nil {
				return m, fmt.Errorf("backup: stream checksum: %w", short(err))
			}
			if !bytes.Equal(sum, want) {
				return m, errors.New("backup: stream SHA-256 mismatch: the copy was damaged in transit")
			}
			var got Trailer
			if err := json.Unmarshal(b, &got); err != nil {
				return m, fmt.Errorf("backup: stream trailer: %w", err)
			}
			if entries == 0 {
				tr.EndIndex, tr.EndTerm = hdr.EngineIndex, hdr.EngineTerm
			}
			if got.Keys != keys || got.Entries != entries || got.EndIndex != tr.EndIndex || got.EndTerm != tr.EndTerm {
				return m, fmt.Errorf("backup: stream trailer says %+v, received %d keys and %d entries ending at %d", got, keys, entries, tr.EndIndex)
			}
			done = true
		default:
			return m, fmt.Errorf("backup: stream frame %q out of place (damaged or not a backup stream)", kind)
		}
	}
	if !appliedSeen && hdr.EngineIndex > 0 && !hdr.Incremental {
		return m, fmt.Errorf("backup: the engine snapshot holds no applied index")
	}
	if err := eng.close(); err != nil {
		return m, err
	}
	if err := lg.close(); err != nil {
		return m, err
	}
	m = Manifest{Format: FormatVersion, DataFormat: hdr.DataFormat, ClusterID: hdr.ClusterID, ClusterUUID: hdr.ClusterUUID,
		SourceNode: hdr.Node, EngineIndex: hdr.EngineIndex, EngineTerm: hdr.EngineTerm, EndIndex: tr.EndIndex, EndTerm: tr.EndTerm,
		Keys: keys, Entries: entries, GTID: GTIDSet(hdr.ClusterUUID, tr.EndIndex),
		Files: append(eng.files, lg.files...), EngineCommitTime: nanoTime(hdr.EngineTime), EndCommitTime: nanoTime(endTime)}
	if hdr.Incremental {
		m.Parent = &Parent{} // filled in by FetchIncremental, refused by Fetch
	}
	return m, nil
}

// nanoTime is Unix nanoseconds as a UTC time, nil for 0 (unknown).
func nanoTime(n int64) *time.Time {
	if n == 0 {
		return nil
	}
	t := time.Unix(0, n).UTC()
	return &t
}

func writeManifest(dir string, m Manifest) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	p := filepath.Join(dir, ManifestName)
	tmp := p + ".tmp"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	_, err = f.Write(append(b, '\n'))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, p)
	}
	if err == nil {
		err = syncDir(dir)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("backup: write %s: %w", p, err)
	}
	return nil
}

type countingReader struct {
	r        io.Reader
	n        int64
	last     time.Time
	progress Progress
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	if c.progress != nil && time.Since(c.last) > time.Second {
		c.last = time.Now()
		c.progress(c.n)
	}
	return n, err
}
