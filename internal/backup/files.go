package backup

import (
	"archive/tar"
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/kiln-db/kiln/internal/engine"
	"github.com/kiln-db/kiln/internal/repl"
)

// The file form of a backup (format 2, the default): the engine part is a pebble checkpoint of
// the node's engine, copied file by file, instead of every key read through a snapshot and
// re-encoded. The node hard-links its sstables (engine.Checkpoint), so the copy costs it a disk
// read and a socket write per byte and no per-key work; the checkpoint is removed when the
// backup ends, the client goes away, or (after a crash) at start-up.
//
// Checksums are CRC32C (Castagnoli, hardware-accelerated): per file, computed by the node as it
// sends and by the client as it receives, and recorded in the manifest; Verify and Restore check
// them. SHA-256 is not used for the file form: it guards against damage, not against a forger
// (TLS does that in transit; anyone who can rewrite a backup can rewrite its manifest too), and it
// costs several times the CPU. Format-1 (logical) backups keep their SHA-256 and still verify
// and restore.
//
// The stream Serve writes for the file form:
//
//	stream  = "KILNBAK2" header file* entry* trailer crc32c[4]
//	header  = 'h' uvarint(len) header-json
//	file    = 'f' name uvarint(size) bytes[size] crc32c[4]  (a file's bytes and their CRC32C)
//	        | 'r' name uvarint(size) crc32c[4]              (the client already has this file)
//	entry   = 'l' entry                                     (as in format 1)
//	trailer = 't' uvarint(len) trailer-json
//	name    = uvarint(len) bytes
//
// The final CRC32C covers every byte of the stream before it except the files' contents, which
// their own CRC32C covers.
//
// An incremental file-form backup (kiln backup --incremental-from PREV) sends the node the
// engine files PREV's chain holds (name, size, CRC32C); a checkpoint file with the same name
// and size whose CRC32C also matches is sent as a reference ('r'), not copied: sstables are
// immutable, so the same name, size and checksum are the same file. The new backup's manifest
// lists it with "ref": true, and Verify and Restore find it in an earlier backup of the chain.
const (
	fileStreamMagic = "KILNBAK2"
	frameFile       = 'f'
	frameRef        = 'r'

	// FormatFiles is the format of a file-form backup directory and stream.
	FormatFiles = 2

	maxFileBytes = 1 << 40
	maxNameBytes = 255
)

func newCRC() hash.Hash32 { return crc32.New(castagnoli) }

// crcHex is the manifest's spelling of a CRC32C.
func crcHex(c uint32) string { return fmt.Sprintf("%08x", c) }

// HaveFile is an engine file a client already holds (the body of an incremental file-form
// request).
type HaveFile struct {
	Name   string `json:"name"`
	Bytes  int64  `json:"bytes"`
	CRC32C string `json:"crc32c"`
}

// serveFiles is Serve for the file form.
func serveFiles(ctx context.Context, w io.Writer, src Source) error {
	// Hold the whole log until the checkpoint's index N is known: a purge that was already running
	// removes only entries at or below the applied index it read, which is at or below what the
	// flush in Checkpoint persists, so at or below N (repl.HoldLog).
	release0 := src.HoldLog(src.Log.FirstIndex())
	cp, err := src.Engine.Checkpoint()
	if err != nil {
		release0()
		return fmt.Errorf("backup: %w", err)
	}
	defer cp.Remove()
	n := cp.Applied
	release := src.HoldLog(n + 1)
	release0()
	defer release()
	if first := src.Log.FirstIndex(); first > n+1 {
		return fmt.Errorf("backup: the log starts at %d, after the engine checkpoint's index %d (purged)", first, n)
	}
	var nTerm uint64
	if n > 0 {
		if nTerm, err = src.Log.Term(n); err != nil {
			return fmt.Errorf("backup: term of the checkpoint's index %d: %w", n, err)
		}
	}
	if src.MaxRate > 0 {
		w = &paced{ctx: ctx, w: w, rate: float64(src.MaxRate), start: time.Now()}
	}
	bw := bufio.NewWriterSize(w, 256<<10)
	sum := newCRC()
	mw := io.MultiWriter(bw, sum)
	hdr, _ := json.Marshal(Header{Format: FormatFiles, DataFormat: src.DataFormat, ClusterID: src.ClusterID,
		ClusterUUID: src.ClusterUUID, Node: src.Node, EngineIndex: n, EngineTerm: nTerm, EngineTime: commitTimeAt(src.Log, n)})
	buf := append([]byte(fileStreamMagic), frameHeader)
	buf = appendJSON(buf, hdr)
	if _, err := mw.Write(buf); err != nil {
		return err
	}
	var tr Trailer
	copyBuf := make([]byte, 256<<10)
	for _, f := range cp.Files {
		if err := ctx.Err(); err != nil {
			return err
		}
		if h, ok := src.Have[f.Name]; ok && h.Bytes == f.Bytes {
			c, err := fileCRC(cp.Path(f.Name))
			if err != nil {
				return fmt.Errorf("backup: %w", err)
			}
			if crcHex(c) == h.CRC32C {
				buf = appendName(append(buf[:0], frameRef), f.Name)
				buf = binary.AppendUvarint(buf, uint64(f.Bytes))
				buf = binary.BigEndian.AppendUint32(buf, c)
				if _, err := mw.Write(buf); err != nil {
					return err
				}
				tr.Refs++
				continue
			}
		}
		buf = appendName(append(buf[:0], frameFile), f.Name)
		buf = binary.AppendUvarint(buf, uint64(f.Bytes))
		if _, err := mw.Write(buf); err != nil {
			return err
		}
		c, err := sendFile(ctx, bw, cp.Path(f.Name), f.Bytes, copyBuf)
		if err != nil {
			return err
		}
		if _, err := mw.Write(binary.BigEndian.AppendUint32(buf[:0], c)); err != nil {
			return err
		}
		tr.Files++
	}
	if err := serveTail(ctx, mw, src, n, nTerm, &tr); err != nil {
		return err
	}
	if _, err := bw.Write(binary.BigEndian.AppendUint32(nil, sum.Sum32())); err != nil {
		return err
	}
	return bw.Flush()
}

// sendFile writes exactly size bytes of the file at p to w and returns their CRC32C. The
// checkpoint's files are links to immutable sstables (or copies), so a size that changed means
// something is badly wrong: refused.
func sendFile(ctx context.Context, w io.Writer, p string, size int64, buf []byte) (uint32, error) {
	f, err := os.Open(p)
	if err != nil {
		return 0, fmt.Errorf("backup: %w", err)
	}
	defer f.Close()
	var c uint32
	var done int64
	for done < size {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		k, err := io.ReadFull(f, buf[:min(int64(len(buf)), size-done)])
		if err != nil {
			return 0, fmt.Errorf("backup: read %s: %w (it was %d bytes when the checkpoint was taken)", p, err, size)
		}
		c = crc32.Update(c, castagnoli, buf[:k])
		if _, err := w.Write(buf[:k]); err != nil {
			return 0, err
		}
		done += int64(k)
	}
	return c, nil
}

// fileCRC is the CRC32C of the file at p.
func fileCRC(p string) (uint32, error) {
	f, err := os.Open(p)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	h := newCRC()
	if _, err := io.Copy(h, f); err != nil {
		return 0, fmt.Errorf("read %s: %w", p, err)
	}
	return h.Sum32(), nil
}

func appendName(b []byte, name string) []byte {
	b = binary.AppendUvarint(b, uint64(len(name)))
	return append(b, name...)
}

// validEngineName accepts a checkpoint file's name: pebble's (000123.sst, MANIFEST-000045,
// OPTIONS-000047, marker.format-version.000001.020, 000044.log), nothing with a path in it.
func validEngineName(n string) bool {
	if n == "" || len(n) > maxNameBytes || n[0] == '.' {
		return false
	}
	for _, c := range n {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// engineSink receives the engine files of a file-form stream: into a directory, or a tar stream.
type engineSink interface {
	// create starts file name of size bytes; the writer is closed (finished) with finish.
	create(name string, size int64) (io.Writer, error)
	finish() error
	abort()
}

type dirSink struct {
	dir string
	f   *smoothFile
	bw  *bufio.Writer
}

func (s *dirSink) create(name string, _ int64) (io.Writer, error) {
	f, err := os.OpenFile(filepath.Join(s.dir, name), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, fmt.Errorf("backup: %w", err)
	}
	// Written back in small steps as it goes, not in a burst at the fsync (writeback_linux.go).
	s.f = newSmoothFile(f)
	if s.bw == nil {
		s.bw = bufio.NewWriterSize(s.f, 256<<10)
	} else {
		s.bw.Reset(s.f)
	}
	return s.bw, nil
}

func (s *dirSink) finish() error {
	f := s.f
	s.f = nil
	err := s.bw.Flush()
	if err == nil {
		err = f.sync()
	}
	if cerr := f.f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("backup: finish %s: %w", f.f.Name(), err)
	}
	return nil
}

func (s *dirSink) abort() {
	if s.f != nil {
		s.f.f.Close()
		s.f = nil
	}
}

type tarSink struct{ tw *tar.Writer }

func (s tarSink) create(name string, size int64) (io.Writer, error) {
	if err := s.tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: "engine/" + name, Mode: 0o600, Size: size, ModTime: time.Now()}); err != nil {
		return nil, fmt.Errorf("backup: write the tar stream: %w", err)
	}
	return s.tw, nil
}

func (s tarSink) finish() error { return nil }
func (s tarSink) abort()        {}

// readFileStream reads a file-form stream (after its magic, which the caller has checked) into
// eng and lg, checking it as it goes (frame order, contiguous entries, every file's CRC32C, the
// trailer's counts, the stream's CRC32C). have is what the client told the node it holds: a
// reference to anything else is refused. It returns the manifest of what it wrote (without times
// or parent).
func readFileStream(r *bufio.Reader, eng engineSink, lg *fileSet, have map[string]HaveFile) (m Manifest, err error) {
	sum := newCRC()
	sum.Write([]byte(fileStreamMagic))
	br := hashing{r: r, h: sum}
	var hdr Header
	var tr Trailer
	var files []File
	seen := map[string]bool{}
	var entries, next uint64
	var endTime int64
	var entBuf []byte
	copyBuf := make([]byte, 256<<10)
	readName := func() (string, error) {
		b, err := readBytes(br, maxNameBytes, "file name")
		if err != nil {
			return "", err
		}
		n := string(b)
		if !validEngineName(n) {
			return "", fmt.Errorf("bad engine file name %q (damaged)", n)
		}
		if seen[n] {
			return "", fmt.Errorf("engine file %s sent twice (damaged)", n)
		}
		seen[n] = true
		return n, nil
	}
	readCRC := func() (uint32, error) {
		var b [4]byte
		if _, err := io.ReadFull(br, b[:]); err != nil {
			return 0, short(err)
		}
		return binary.BigEndian.Uint32(b[:]), nil
	}
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
			if hdr.Format != FormatFiles || hdr.Incremental {
				return m, fmt.Errorf("backup: the node sends backup format %d (incremental %v) in a file-form stream (damaged)", hdr.Format, hdr.Incremental)
			}
			next = hdr.EngineIndex + 1
			endTime = hdr.EngineTime
		case (kind == frameFile || kind == frameRef) && next != 0 && entries == 0:
			name, err := readName()
			if err != nil {
				return m, fmt.Errorf("backup: stream engine file: %w", err)
			}
			size, err := binary.ReadUvarint(br)
			if err != nil {
				return m, fmt.Errorf("backup: stream engine file %s: %w", name, short(err))
			}
			if size > maxFileBytes {
				return m, fmt.Errorf("backup: stream engine file %s of %d bytes (damaged)", name, size)
			}
			f := File{Path: "engine/" + name, Bytes: int64(size)}
			if kind == frameRef {
				c, err := readCRC()
				if err != nil {
					return m, fmt.Errorf("backup: stream engine file %s: %w", name, err)
				}
				h, ok := have[name]
				if !ok || h.Bytes != int64(size) || h.CRC32C != crcHex(c) {
					return m, fmt.Errorf("backup: the node refers to engine file %s (%d bytes, CRC32C %s), which the previous backups do not hold", name, size, crcHex(c))
				}
				f.CRC32C, f.Ref = crcHex(c), true
				files = append(files, f)
				tr.Refs++
				continue
			}
			w, err := eng.create(name, int64(size))
			if err != nil {
				return m, err
			}
			// The contents go around the stream's hash: the file's own CRC32C covers them.
			var c uint32
			for left := int64(size); left > 0; {
				k, err := io.ReadFull(r, copyBuf[:min(int64(len(copyBuf)), left)])
				if err != nil {
					return m, fmt.Errorf("backup: stream engine file %s: %w", name, short(err))
				}
				c = crc32.Update(c, castagnoli, copyBuf[:k])
				if _, err := w.Write(copyBuf[:k]); err != nil {
					return m, fmt.Errorf("backup: write engine file %s: %w", name, err)
				}
				left -= int64(k)
			}
			want, err := readCRC()
			if err != nil {
				return m, fmt.Errorf("backup: stream engine file %s: %w", name, err)
			}
			if c != want {
				return m, fmt.Errorf("backup: engine file %s: CRC32C %s, the node sent %s: damaged in transit", name, crcHex(c), crcHex(want))
			}
			if err := eng.finish(); err != nil {
				return m, err
			}
			f.CRC32C = crcHex(c)
			files = append(files, f)
			tr.Files++
		case kind == frameEntry && next != 0:
			e, err := readEntry(br)
			if err != nil {
				return m, fmt.Errorf("backup: stream log entry: %w", err)
			}
			if e.Index != next {
				return m, fmt.Errorf("backup: stream log entry %d where %d was expected", e.Index, next)
			}
			next++
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
			got := sum.Sum32()
			var want [4]byte
			if _, err := io.ReadFull(r, want[:]); err != nil {
				return m, fmt.Errorf("backup: stream checksum: %w", short(err))
			}
			if got != binary.BigEndian.Uint32(want[:]) {
				return m, errors.New("backup: stream CRC32C mismatch: the copy was damaged in transit")
			}
			var t Trailer
			if err := json.Unmarshal(b, &t); err != nil {
				return m, fmt.Errorf("backup: stream trailer: %w", err)
			}
			if entries == 0 {
				tr.EndIndex, tr.EndTerm = hdr.EngineIndex, hdr.EngineTerm
			}
			tr.Entries = entries
			if t != tr {
				return m, fmt.Errorf("backup: stream trailer says %+v, received %+v", t, tr)
			}
			done = true
		default:
			return m, fmt.Errorf("backup: stream frame %q out of place (damaged or not a backup stream)", kind)
		}
	}
	if !hasPrefix(seen, "MANIFEST-") {
		return m, errors.New("backup: the node sent no engine MANIFEST: not a pebble checkpoint")
	}
	if err := lg.close(); err != nil {
		return m, err
	}
	m = Manifest{Format: FormatFiles, DataFormat: hdr.DataFormat, ClusterID: hdr.ClusterID, ClusterUUID: hdr.ClusterUUID,
		SourceNode: hdr.Node, EngineIndex: hdr.EngineIndex, EngineTerm: hdr.EngineTerm, EndIndex: tr.EndIndex, EndTerm: tr.EndTerm,
		Entries: entries, GTID: GTIDSet(hdr.ClusterUUID, tr.EndIndex),
		Files: append(files, lg.files...), EngineCommitTime: nanoTime(hdr.EngineTime), EndCommitTime: nanoTime(endTime)}
	return m, nil
}

func hasPrefix(set map[string]bool, p string) bool {
	for n := range set {
		if strings.HasPrefix(n, p) {
			return true
		}
	}
	return false
}

// ChainHave is what the backup chain ending in dir holds of engine files (file form only), by
// name: what an incremental file-form backup following dir need not copy. It reads the manifests
// only; the caller verifies the chain first (Verify).
func ChainHave(dir string) (map[string]HaveFile, error) {
	have := map[string]HaveFile{}
	seen := map[string]bool{}
	for len(seen) < maxChain {
		abs, err := filepath.Abs(dir)
		if err != nil {
			return nil, fmt.Errorf("backup: %w", err)
		}
		if seen[abs] {
			return nil, fmt.Errorf("backup %s: the chain of parents loops", dir)
		}
		seen[abs] = true
		m, err := ReadManifest(dir)
		if err != nil {
			return nil, err
		}
		for _, f := range m.Files {
			name, ok := strings.CutPrefix(f.Path, "engine/")
			if !ok || f.Ref || m.Format != FormatFiles {
				continue
			}
			if _, dup := have[name]; !dup { // the newest backup's copy wins
				have[name] = HaveFile{Name: name, Bytes: f.Bytes, CRC32C: f.CRC32C}
			}
		}
		if m.Parent == nil {
			return have, nil
		}
		dir = parentDir(dir, m.Parent)
	}
	return nil, fmt.Errorf("backup %s: the chain of parents exceeds %d backups", dir, maxChain)
}

func parentDir(dir string, p *Parent) string {
	if filepath.IsAbs(p.Path) {
		return p.Path
	}
	return filepath.Join(dir, filepath.FromSlash(p.Path))
}

// hasEngine: the backup holds an engine (format 1 full, or format 2), not only log.
func hasEngine(m Manifest) bool { return m.Format == FormatFiles || m.Parent == nil }

// resolveRef finds the backup of chain[:i] (newest first) that holds file f physically.
func resolveRef(chain []link, i int, f File) (string, error) {
	for j := i - 1; j >= 0; j-- {
		for _, g := range chain[j].m.Files {
			if !g.Ref && g.Path == f.Path && g.Bytes == f.Bytes && g.CRC32C == f.CRC32C {
				return filepath.Join(chain[j].dir, filepath.FromSlash(g.Path)), nil
			}
		}
	}
	return "", fmt.Errorf("backup %s: %s (%d bytes, CRC32C %s) is a reference to an earlier backup, but no backup of its chain holds it",
		chain[i].dir, f.Path, f.Bytes, f.CRC32C)
}

// copyChecked copies src to dst (owner-only, fsynced), checking size and CRC32C on the way:
// Restore's copy of an engine file, refused naming the file if it does not match.
func copyChecked(src, dst string, f File, buf []byte) error {
	in, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	h := newCRC()
	n, err := io.CopyBuffer(io.MultiWriter(out, h), in, buf)
	if err == nil {
		err = out.Sync()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("restore: copy %s: %w", src, err)
	}
	if n != f.Bytes {
		return fmt.Errorf("restore: %s has %d bytes, the manifest says %d (truncated or damaged)", src, n, f.Bytes)
	}
	if got := crcHex(h.Sum32()); got != f.CRC32C {
		return fmt.Errorf("restore: %s: CRC32C %s, the manifest says %s (damaged)", src, got, f.CRC32C)
	}
	return nil
}

// restoreEngineFiles builds dataDir/engine from the engine files of chain[i] (format 2): copied
// (references from the earlier backups of the chain), checked, then opened to check the applied
// index and given its membership (a new cluster's, or the source's for a joining member).
func restoreEngineFiles(chain []link, i int, dataDir string, o RestoreOptions) error {
	m := chain[i].m
	dst := filepath.Join(dataDir, "engine")
	if err := os.MkdirAll(dst, 0o700); err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	buf := make([]byte, 1<<20)
	for _, f := range m.Files {
		name, ok := strings.CutPrefix(f.Path, "engine/")
		if !ok {
			continue
		}
		src := filepath.Join(chain[i].dir, filepath.FromSlash(f.Path))
		if f.Ref {
			var err error
			if src, err = resolveRef(chain, i, f); err != nil {
				return err
			}
		}
		if err := copyChecked(src, filepath.Join(dst, name), f, buf); err != nil {
			return err
		}
	}
	if err := syncDir(dst); err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	eng, err := engine.Open(dst, engine.Options{Logger: o.Logger, DisableWAL: true, CacheBytes: 16 << 20})
	if err != nil {
		return fmt.Errorf("restore: open the engine files of %s: %w", chain[i].dir, err)
	}
	defer eng.Close()
	if got, err := eng.AppliedPosition(); err != nil || got != m.EngineIndex {
		return fmt.Errorf("restore: the engine files of %s hold applied index %d (%v), the manifest says %d (damaged)", chain[i].dir, got, err, m.EngineIndex)
	}
	return o.membership(eng, m.EngineIndex)
}

// fileSum is a data file's checksum as the manifest spells it: CRC32C for format 2, SHA-256 for
// format 1.
func fileSum(p string, crc bool) (string, int64, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	var h hash.Hash
	if crc {
		h = newCRC()
	} else {
		h = sha256.New()
	}
	n, err := io.Copy(h, f)
	if err != nil {
		return "", n, err
	}
	if crc {
		return crcHex(h.(hash.Hash32).Sum32()), n, nil
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}
