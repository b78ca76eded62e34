//go:build !race

package repl

// simRace: the simulation runs fewer seeds under the race detector (sim_test.go).
const simRace = false
