package cluster

import (
	"strings"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
)

// The register checks judge Kiln, so they are checked themselves, on small histories whose
// verdict is known. No process is started.

func regHistory(ops ...porcupine.Operation) *history {
	return &history{start: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), ops: ops}
}

func rd(client int, call, ret, v int64) porcupine.Operation {
	return porcupine.Operation{ClientId: client, Input: regInput{key: 1, op: "read"}, Output: regOutput{value: v}, Call: call, Return: ret, Metadata: "test"}
}

func wr(client int, call, ret, v int64) porcupine.Operation {
	return porcupine.Operation{ClientId: client, Input: regInput{key: 1, op: "write", value: v}, Output: regOutput{ok: true}, Call: call, Return: ret, Metadata: "test"}
}

func cas(client int, call, ret, from, to int64, ok bool) porcupine.Operation {
	return porcupine.Operation{ClientId: client, Input: regInput{key: 1, op: "cas", value: to, expect: from}, Output: regOutput{ok: ok}, Call: call, Return: ret, Metadata: "test"}
}

func TestRegisterChecker(t *testing.T) {
	for _, tc := range []struct {
		name         string
		h            *history
		linearizable bool
		stale        int
	}{
		{"sequential", regHistory(wr(0, 0, 10, 1), rd(1, 20, 30, 1), cas(0, 40, 50, 1, 2, true), rd(1, 60, 70, 2)), true, 0},
		{"concurrent read sees either", regHistory(wr(0, 0, 10, 1), wr(0, 20, 50, 2), rd(1, 30, 40, 1), rd(2, 30, 40, 2)), true, 0},
		{"failed cas needs another value", regHistory(wr(0, 0, 10, 1), cas(1, 20, 30, 1, 5, false)), false, 0},
		{"unknown write may or may not happen", regHistory(wr(0, 0, 10, 1),
			porcupine.Operation{ClientId: 2, Input: regInput{key: 1, op: "write", value: 9}, Output: regOutput{unknown: true}, Call: 15, Return: 1000},
			rd(1, 20, 30, 1), rd(1, 40, 50, 9)), true, 0},
		// A read sent after a newer write returned sees the older value: stale by real time.
		{"stale after a later write", regHistory(wr(0, 0, 10, 1), wr(2, 20, 30, 2), rd(1, 40, 50, 1)), false, 1},
		// The resumed-leader case where the old value's write is acknowledged late: 1 by the old
		// leader (returned at 100), 2 by the new one (returned at 30); a read sent after 1
		// returned sees 2, and a later one sees 1 again. Not linearizable, but real time alone
		// does not say which read is wrong, so only porcupine reports it.
		{"contradicting reads", regHistory(wr(0, 0, 100, 1), wr(2, 20, 30, 2), rd(1, 110, 120, 2), rd(3, 130, 140, 1)), false, 0},
		{"reading the initial value late", regHistory(wr(0, 0, 10, 1), rd(1, 20, 30, 0)), false, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := porcupine.CheckOperations(registerModel, tc.h.ops)
			if res != tc.linearizable {
				t.Errorf("porcupine says linearizable=%v, want %v", res, tc.linearizable)
			}
			stale := tc.h.staleReads()
			if len(stale) != tc.stale {
				t.Errorf("%d stale reads, want %d:\n%s", len(stale), tc.stale, strings.Join(stale, "\n"))
			}
		})
	}
}
