package memory

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// DefaultLimit is kiln serve's default --memory-limit: half of the machine's memory, or of the
// cgroup's limit when that is smaller (a container). 0 when neither can be read.
func DefaultLimit() int64 {
	total := memTotal()
	if c := cgroupLimit(); c > 0 && (total == 0 || c < total) {
		total = c
	}
	return total / 2
}

// memTotal reads MemTotal from /proc/meminfo.
func memTotal() int64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "MemTotal:" {
			kb, err := strconv.ParseInt(fields[1], 10, 64)
			if err != nil {
				return 0
			}
			return kb << 10
		}
	}
	return 0
}

// cgroupLimit reads the memory limit of this process's cgroup (v2, then v1); 0 when unlimited or
// unknown.
func cgroupLimit() int64 {
	for _, p := range []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"} {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		s := strings.TrimSpace(string(b))
		if s == "max" {
			return 0
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n <= 0 || n >= 1<<62 { // cgroup v1 writes a huge number for "unlimited"
			return 0
		}
		return n
	}
	return 0
}

// ParseSize parses a byte count with an optional K, M, G or T suffix (powers of 1024; a trailing
// B or iB is accepted: "512MiB", "8G", "1073741824").
func ParseSize(s string) (int64, error) {
	t := strings.ToUpper(strings.TrimSpace(s))
	t = strings.TrimSuffix(strings.TrimSuffix(t, "B"), "I")
	shift := 0
	if n := len(t); n > 0 {
		switch t[n-1] {
		case 'K':
			shift = 10
		case 'M':
			shift = 20
		case 'G':
			shift = 30
		case 'T':
			shift = 40
		}
		if shift > 0 {
			t = t[:n-1]
		}
	}
	n, err := strconv.ParseInt(strings.TrimSpace(t), 10, 64)
	if err != nil || n < 0 || n > (1<<62)>>shift {
		return 0, fmt.Errorf("invalid size %q: want bytes with an optional K, M, G or T suffix", s)
	}
	return n << shift, nil
}
