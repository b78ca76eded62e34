package repl

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path"
	"sort"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// simCrashClone is pebble's CrashClone made deterministic. vfs.MemFS.CrashClone with
// 0 < UnsyncedDataPercent < 100 draws from its RNG while ranging over Go maps (a directory's children,
// then the recursion into them), so which file gets which draw changes from run to run whatever the
// RNG's seed: the clone is not reproducible. Here pebble makes two exact clones, one with only the
// synced state (0%) and one with everything (100%), and the choice between them is made per file and
// per 4 KiB block by a hash of (seed, path, block), independent of any iteration order.
//
// Every outcome is one pebble's own crash model allows (a subset of them, never more):
//   - an entry present in both with the synced content a prefix of the current one (a file appended
//     to): the synced bytes, plus each current 4 KiB block kept with probability pct (later bytes of a
//     kept block past the synced length, and holes before it, as pebble does: zeros in holes);
//   - an entry present in both with other content (rewritten or replaced by a rename): the synced
//     version or, with probability pct, the current one, whole;
//   - only in the synced state (removed since the directory's last sync): kept, synced content
//     (pebble keeps every synced directory entry);
//   - only in the current state (created since the last directory sync): absent or, with probability
//     pct, present with its current content (a whole new directory likewise).
func simCrashClone(fs *vfs.MemFS, seed uint64, pct int) (*vfs.MemFS, error) {
	synced := fs.CrashClone(vfs.CrashCloneCfg{})
	// 100% draws from the RNG but keeps everything whatever it draws.
	cur := fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 100, RNG: rand.New(rand.NewPCG(0, 0))})
	out := vfs.NewCrashableMem()
	c := &crashCopier{synced: synced, cur: cur, out: out, seed: seed, pct: pct}
	if err := c.dir("/", true, true); err != nil {
		return nil, err
	}
	// Everything written to out becomes its synced state.
	return out.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 100, RNG: rand.New(rand.NewPCG(0, 0))}), nil
}

type crashCopier struct {
	synced, cur, out *vfs.MemFS
	seed             uint64
	pct              int
}

// keep decides, from the seed and the path alone, whether an unsynced piece survives.
func (c *crashCopier) keep(p string, block int) bool {
	if c.pct <= 0 {
		return false
	}
	if c.pct >= 100 {
		return true
	}
	h := c.seed ^ 0x9e3779b97f4a7c15
	for i := 0; i < len(p); i++ {
		h ^= uint64(p[i])
		h *= 0x100000001b3
	}
	h ^= uint64(block) * 0xbf58476d1ce4e5b9
	h = splitmix(h)
	return int(h%100) < c.pct
}

func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

func simList(fs *vfs.MemFS, dir string) map[string]bool {
	names, err := fs.List(dir)
	if err != nil {
		return nil
	}
	m := make(map[string]bool, len(names))
	for _, n := range names {
		fi, err := fs.Stat(path.Join(dir, n))
		if err != nil {
			continue
		}
		m[n] = fi.IsDir()
	}
	return m
}

func simReadAll(fs *vfs.MemFS, p string) ([]byte, error) {
	f, err := fs.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// dir copies directory d; inSynced/inCur say which states hold it.
func (c *crashCopier) dir(d string, inSynced, inCur bool) error {
	if d != "/" {
		if err := c.out.MkdirAll(d, os.ModePerm); err != nil {
			return err
		}
	}
	var s, k map[string]bool
	if inSynced {
		s = simList(c.synced, d)
	}
	if inCur {
		k = simList(c.cur, d)
	}
	names := make([]string, 0, len(s)+len(k))
	for n := range s {
		names = append(names, n)
	}
	for n := range k {
		if _, ok := s[n]; !ok {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	for _, name := range names {
		p := path.Join(d, name)
		sDir, sOK := s[name]
		kDir, kOK := k[name]
		switch {
		case sOK && kOK && sDir && kDir:
			if err := c.dir(p, true, true); err != nil {
				return err
			}
		case sOK && kOK && !sDir && !kDir:
			old, err := simReadAll(c.synced, p)
			if err != nil {
				return err
			}
			now, err := simReadAll(c.cur, p)
			if err != nil {
				return err
			}
			data := old
			if bytes.HasPrefix(now, old) {
				const block = 4096
				data = append([]byte(nil), old...)
				for i := 0; i < len(now); i += block {
					if !c.keep(p, i/block+1) {
						continue
					}
					b := now[i:min(i+block, len(now))]
					if grow := i + len(b) - len(data); grow > 0 {
						data = append(data, make([]byte, grow)...)
					}
					copy(data[i:], b)
				}
			} else if c.keep(p, 0) {
				data = now
			}
			if err := c.file(p, data); err != nil {
				return err
			}
		case sOK && (!kOK || sDir != kDir):
			// Removed (or replaced by another kind) since the last directory sync: the synced entry
			// stays, unless the replacement survives.
			if kOK && c.keep(p, 0) {
				if err := c.whole(p, kDir, c.cur); err != nil {
					return err
				}
				continue
			}
			if err := c.whole(p, sDir, c.synced); err != nil {
				return err
			}
		case kOK:
			if c.keep(p, 0) {
				if err := c.whole(p, kDir, c.cur); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// whole copies p (a file or a directory tree) from one state as it is.
func (c *crashCopier) whole(p string, isDir bool, from *vfs.MemFS) error {
	if !isDir {
		data, err := simReadAll(from, p)
		if err != nil {
			return err
		}
		return c.file(p, data)
	}
	if err := c.out.MkdirAll(p, os.ModePerm); err != nil {
		return err
	}
	names := simList(from, p)
	sorted := make([]string, 0, len(names))
	for n := range names {
		sorted = append(sorted, n)
	}
	sort.Strings(sorted)
	for _, n := range sorted {
		if err := c.whole(path.Join(p, n), names[n], from); err != nil {
			return err
		}
	}
	return nil
}

func (c *crashCopier) file(p string, data []byte) error {
	f, err := c.out.Create(p, vfs.WriteCategoryUnspecified)
	if err != nil {
		return fmt.Errorf("crash clone: create %s: %w", p, err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// syncHookFS calls before(name) ahead of every fsync of a file or directory opened through it whose
// name starts with prefix. A power loss taken there (simCrashClone) finds the bytes written since the
// last fsync unsynced: a torn tail of the log, which recovery must cut off.
type syncHookFS struct {
	vfs.FS
	prefix string
	before func(name string)
}

func (f *syncHookFS) wrap(name string, file vfs.File, err error) (vfs.File, error) {
	if err != nil || len(name) < len(f.prefix) || name[:len(f.prefix)] != f.prefix {
		return file, err
	}
	return &syncHookFile{File: file, name: name, before: f.before}, nil
}

func (f *syncHookFS) Create(name string, c vfs.DiskWriteCategory) (vfs.File, error) {
	file, err := f.FS.Create(name, c)
	return f.wrap(name, file, err)
}

func (f *syncHookFS) Open(name string, opts ...vfs.OpenOption) (vfs.File, error) {
	file, err := f.FS.Open(name, opts...)
	return f.wrap(name, file, err)
}

func (f *syncHookFS) OpenReadWrite(name string, c vfs.DiskWriteCategory, opts ...vfs.OpenOption) (vfs.File, error) {
	file, err := f.FS.OpenReadWrite(name, c, opts...)
	return f.wrap(name, file, err)
}

func (f *syncHookFS) OpenDir(name string) (vfs.File, error) {
	file, err := f.FS.OpenDir(name)
	return f.wrap(name, file, err)
}

func (f *syncHookFS) ReuseForWrite(oldname, newname string, c vfs.DiskWriteCategory) (vfs.File, error) {
	file, err := f.FS.ReuseForWrite(oldname, newname, c)
	return f.wrap(newname, file, err)
}

func (f *syncHookFS) Unwrap() vfs.FS { return f.FS }

type syncHookFile struct {
	vfs.File
	name   string
	before func(string)
}

func (f *syncHookFile) Sync() error {
	f.before(f.name)
	return f.File.Sync()
}

func (f *syncHookFile) SyncData() error {
	f.before(f.name)
	return f.File.SyncData()
}

func (f *syncHookFile) SyncTo(length int64) (bool, error) {
	f.before(f.name)
	return f.File.SyncTo(length)
}
