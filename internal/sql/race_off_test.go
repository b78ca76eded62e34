//go:build !race

package sql

// raceEnabled: see race_on_test.go.
const raceEnabled = false
