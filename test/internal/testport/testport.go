// Package testport hands out loopback TCP ports for the servers that the test suites start as
// separate processes.
//
// A port is picked below the kernel's ephemeral range. Between the moment a port is found free
// and the moment the server binds it (and, for a node restarted with the same command, across its
// restarts) nothing holds it. An ephemeral port (what net.Listen ":0" hands out) may meanwhile be
// taken as the local end of some outgoing connection, on a machine where other builds and tests
// open thousands of them; CI saw exactly that ("bind: address already in use" when a restored node
// started). Ports below that range are never handed out that way, so only another listener could
// take one, and the random pick makes that unlikely.
package testport

import (
	"fmt"
	"math/rand"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

var (
	mu   sync.Mutex
	used = map[int]bool{}
	rnd  = rand.New(rand.NewSource(time.Now().UnixNano() ^ int64(os.Getpid())<<20))
)

// ephemeralLow is the lowest port the kernel hands out for outgoing connections.
func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			if n, err := strconv.Atoi(f[0]); err == nil && n > 12000 {
				return n
			}
		}
	}
	return 32768
}

// Addr returns "127.0.0.1:port" for a port that was free just now, below the ephemeral range, and
// not returned before by this process.
func Addr(t testing.TB) string {
	t.Helper()
	mu.Lock()
	defer mu.Unlock()
	hi, lo := ephemeralLow(), 10000
	for range 1000 {
		p := lo + rnd.Intn(hi-lo)
		if used[p] {
			continue
		}
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
		if err != nil {
			continue
		}
		l.Close()
		used[p] = true
		return l.Addr().String()
	}
	t.Fatal("no free port below the ephemeral range")
	return ""
}
