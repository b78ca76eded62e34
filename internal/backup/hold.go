package backup

import (
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"time"
)

// MaxHoldTTL bounds how long a node keeps an archiver's hold without hearing from it: a hold is
// a promise to keep log on disk for a reader that may be gone.
const MaxHoldTTL = 7 * 24 * time.Hour

// ArchiveHolds are named purge holds on a node's log that log archivers renew (kiln log archive
// --hold): while one stands, the node does not purge the log from its index on, so entries the
// archiver has not yet written to its disk stay available to it across its restarts and the
// node's purges. Every hold is bounded so a dead archiver cannot fill the node's disk: it lapses
// TTL after its last renewal, and, if it has a byte bound, as soon as the log it keeps is larger
// than that. Holds live in the node's memory: a restarted node has none until its archivers renew.
type ArchiveHolds struct {
	hold     func(from uint64) (release func()) // repl.Node.HoldLog
	logBytes func(from uint64) int64            // klog.Log.BytesFrom
	logger   *slog.Logger
	// CheckEvery is how often byte bounds are checked (default 1s).
	CheckEvery time.Duration

	mu       sync.Mutex
	m        map[string]*archiveHold
	checking bool // a byte-bound check is scheduled
}

type archiveHold struct {
	HoldInfo
	release func()
	timer   *time.Timer
}

// HoldInfo describes one archiver's hold (GET /log/holds).
type HoldInfo struct {
	Name     string    `json:"name"`
	From     uint64    `json:"from"`      // the first log index kept
	Expires  time.Time `json:"expires"`   // lapses then unless renewed
	MaxBytes int64     `json:"max_bytes"` // lapses once the log kept is larger (0: no byte bound)
	LogBytes int64     `json:"log_bytes"` // the log kept now (segment files from From on)
}

// NewArchiveHolds returns an empty set of holds taken with hold and measured with logBytes.
func NewArchiveHolds(hold func(from uint64) (release func()), logBytes func(from uint64) int64, logger *slog.Logger) *ArchiveHolds {
	if logger == nil {
		logger = slog.Default()
	}
	return &ArchiveHolds{hold: hold, logBytes: logBytes, logger: logger, m: map[string]*archiveHold{}}
}

// ErrHoldTooLarge: the log a hold would keep is already larger than its byte bound.
var ErrHoldTooLarge = errors.New("over its byte bound")

// Renew sets (or moves) name's hold to keep the log from index from on, for ttl from now. A hold
// whose log from from on is already larger than maxBytes (if > 0) is dropped and refused
// (ErrHoldTooLarge): the archiver goes on without one.
func (h *ArchiveHolds) Renew(name string, from uint64, ttl time.Duration, maxBytes int64) (HoldInfo, error) {
	switch {
	case name == "":
		return HoldInfo{}, errors.New("hold: a name is required")
	case ttl <= 0 || ttl > MaxHoldTTL:
		return HoldInfo{}, fmt.Errorf("hold: ttl %v: want more than 0 and at most %v", ttl, MaxHoldTTL)
	case maxBytes < 0:
		return HoldInfo{}, fmt.Errorf("hold: max bytes %d: want 0 (none) or more", maxBytes)
	}
	if from == 0 {
		from = 1
	}
	// Hold first, measure after: a purge cannot slip in between and the size is what is kept.
	release := h.hold(from)
	size := h.logBytes(from)
	h.mu.Lock()
	defer h.mu.Unlock()
	old := h.m[name]
	if maxBytes > 0 && size > maxBytes {
		release()
		if old != nil {
			h.dropLocked(name, old, "its log grew over its byte bound")
		}
		return HoldInfo{}, fmt.Errorf("hold %q: the log from index %d is %d bytes, %w of %d: not held", name, from, size, ErrHoldTooLarge, maxBytes)
	}
	if old != nil {
		old.timer.Stop()
		old.release()
	} else {
		h.logger.Info("log purge hold set", "name", name, "from", from, "ttl", ttl, "max_bytes", maxBytes)
	}
	ah := &archiveHold{HoldInfo: HoldInfo{Name: name, From: from, Expires: time.Now().Add(ttl), MaxBytes: maxBytes, LogBytes: size}, release: release}
	ah.timer = time.AfterFunc(ttl, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		if h.m[name] == ah {
			h.dropLocked(name, ah, "not renewed within its ttl")
		}
	})
	h.m[name] = ah
	if maxBytes > 0 && !h.checking {
		h.checking = true
		time.AfterFunc(h.checkEvery(), h.checkBytes)
	}
	return ah.HoldInfo, nil
}

// Release drops name's hold, if any (an archiver that stops for good).
func (h *ArchiveHolds) Release(name string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	ah := h.m[name]
	if ah == nil {
		return false
	}
	h.dropLocked(name, ah, "released")
	return true
}

// List returns the holds standing now, by name.
func (h *ArchiveHolds) List() []HoldInfo {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]HoldInfo, 0, len(h.m))
	for _, ah := range h.m {
		hi := ah.HoldInfo
		hi.LogBytes = h.logBytes(hi.From)
		out = append(out, hi)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func (h *ArchiveHolds) dropLocked(name string, ah *archiveHold, why string) {
	ah.timer.Stop()
	ah.release()
	delete(h.m, name)
	h.logger.Warn("log purge hold dropped", "name", name, "from", ah.From, "why", why, "max_bytes", ah.MaxBytes)
}

func (h *ArchiveHolds) checkEvery() time.Duration {
	if h.CheckEvery > 0 {
		return h.CheckEvery
	}
	return time.Second
}

// checkBytes drops the holds whose log grew past their byte bound; it reschedules itself while
// some hold has one.
func (h *ArchiveHolds) checkBytes() {
	h.mu.Lock()
	defer h.mu.Unlock()
	bounded := false
	for name, ah := range h.m {
		if ah.MaxBytes == 0 {
			continue
		}
		if size := h.logBytes(ah.From); size > ah.MaxBytes {
			h.dropLocked(name, ah, fmt.Sprintf("its log is %d bytes, over its byte bound", size))
			continue
		}
		bounded = true
	}
	if h.checking = bounded; bounded {
		time.AfterFunc(h.checkEvery(), h.checkBytes)
	}
}
