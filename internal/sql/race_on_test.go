//go:build race

package sql

// raceEnabled: the race detector is on; it adds allocations of its own (sync.Pool drops a share
// of what is put back), so allocation bounds below one per row do not hold.
const raceEnabled = true
