package backup

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"

	klog "github.com/kiln-db/kiln/internal/log"
)

// Incremental backups. The engine is a function of the log, so a backup that follows a previous
// one needs no engine file at all: it holds the log entries after the previous backup's end
// (P+1..E), and the chain full -> incremental -> incremental restores like a full backup at E.
// Its manifest has no engine files and no keys, engine_index P (the parent's end_index, with its
// term), and names its parent (directory, relative to its own, and the SHA-256 of the parent's
// manifest), so a chain cannot silently mix backups of different histories. It needs the node's
// log to still hold P+1 (kiln backup says so otherwise: take a full backup then).

// Parent names the backup an incremental one follows.
type Parent struct {
	// Path is the parent's directory, relative to this backup's directory (or absolute).
	Path string `json:"path"`
	// ManifestSHA256 is the SHA-256 of the parent's MANIFEST.json as it was when this backup was
	// taken.
	ManifestSHA256 string `json:"manifest_sha256"`
}

// maxChain bounds a chain's length (and so a cycle of parents).
const maxChain = 1000

// link is one backup of a chain.
type link struct {
	dir string
	m   Manifest
}

// verifyChain verifies the backup in dir and, for an incremental, every backup it follows: each
// one's files (Verify's checks), and that each follows its parent exactly (the parent's manifest
// unchanged, the same cluster, the log continuing at the parent's end with the parent's last
// term). It returns the chain, the full backup first.
//
// A file-form incremental backup (files.go) holds an engine of its own: it need not continue its
// parent's log, only belong to the same cluster; the engine files it refers to must be held by an
// earlier backup of the chain. skipEngine: checkFiles's.
func verifyChain(dir string, skipEngine bool) ([]link, error) {
	var chain []link
	seen := map[string]bool{}
	for {
		abs, err := filepath.Abs(dir)
		if err != nil {
			return nil, fmt.Errorf("backup: %w", err)
		}
		if seen[abs] || len(chain) >= maxChain {
			return nil, fmt.Errorf("backup %s: the chain of parents loops or exceeds %d backups", dir, maxChain)
		}
		seen[abs] = true
		m, err := verifyOne(dir, skipEngine)
		if err != nil {
			return nil, err
		}
		chain = append(chain, link{dir: dir, m: m})
		if m.Parent == nil {
			break
		}
		pdir := m.Parent.Path
		if !filepath.IsAbs(pdir) {
			pdir = filepath.Join(dir, pdir)
		}
		b, err := os.ReadFile(filepath.Join(pdir, ManifestName))
		if err != nil {
			return nil, fmt.Errorf("backup %s: its parent backup %s: %w", dir, pdir, err)
		}
		if sum := sha256.Sum256(b); hex.EncodeToString(sum[:]) != m.Parent.ManifestSHA256 {
			return nil, fmt.Errorf("backup %s: the manifest of its parent %s changed since it was taken (SHA-256 %x, recorded %s): not the same backup", dir, pdir, sum, m.Parent.ManifestSHA256)
		}
		pm, err := ReadManifest(pdir)
		if err != nil {
			return nil, err
		}
		if m.Format == FormatFiles {
			if pm.ClusterUUID != m.ClusterUUID {
				return nil, fmt.Errorf("backup %s is of cluster %s, its parent %s of cluster %s", dir, m.ClusterUUID, pdir, pm.ClusterUUID)
			}
		} else if pm.ClusterUUID != m.ClusterUUID || pm.EndIndex != m.EngineIndex || pm.EndTerm != m.EngineTerm {
			return nil, fmt.Errorf("backup %s does not follow its parent %s: it starts after index %d (term %d) of cluster %s, the parent ends at %d (term %d) of cluster %s",
				dir, pdir, m.EngineIndex, m.EngineTerm, m.ClusterUUID, pm.EndIndex, pm.EndTerm, pm.ClusterUUID)
		}
		dir = pdir
	}
	for i, j := 0, len(chain)-1; i < j; i, j = i+1, j-1 {
		chain[i], chain[j] = chain[j], chain[i]
	}
	for i, l := range chain {
		for _, f := range l.m.Files {
			if f.Ref {
				if _, err := resolveRef(chain, i, f); err != nil {
					return nil, err
				}
			}
		}
	}
	return chain, nil
}

// engineLink is the index in chain of the backup whose engine a restore starts from: the newest
// one that holds an engine.
func engineLink(chain []link) int {
	for i := len(chain) - 1; i > 0; i-- {
		if hasEngine(chain[i].m) {
			return i
		}
	}
	return 0
}

// view is the chain as one backup: the engine of chain[0] (the full backup, or the newest
// file-form one: engineLink), the last backup's end.
func view(chain []link) Manifest {
	m := chain[len(chain)-1].m
	root := chain[0].m
	m.EngineIndex, m.EngineTerm, m.EngineCommitTime = root.EngineIndex, root.EngineTerm, root.EngineCommitTime
	m.Keys = root.Keys
	m.Entries = m.EndIndex - m.EngineIndex
	return m
}

// logSource is where a restore reads the log from: a chain of backups, then optionally a log
// archive (restore --log-dir) continuing after the chain's end.
type logSource struct {
	chain   []link
	archive string
}

// scan passes every log entry up to upTo to fn, in index order.
func (ls logSource) scan(upTo uint64, fn func(klog.Entry) error) error {
	end := uint64(0)
	for _, l := range ls.chain {
		end = l.m.EndIndex
		if l.m.EngineIndex >= upTo {
			return nil
		}
		if err := scan(l.dir, l.m, upTo, nil, fn); err != nil {
			return err
		}
	}
	if ls.archive != "" && upTo > end {
		_, err := readArchive(ls.archive, end, upTo, fn)
		return err
	}
	return nil
}

// ManifestSum is the SHA-256 of dir's MANIFEST.json (what an incremental backup records of its
// parent).
func ManifestSum(dir string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dir, ManifestName))
	if err != nil {
		return "", fmt.Errorf("backup: %w", err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}
