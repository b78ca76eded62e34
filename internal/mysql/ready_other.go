//go:build !linux

package mysql

import "time"

const readySupported = false

// readyPoller is Linux's (ready_linux.go); elsewhere parked connections wait for Go's poller.
type readyPoller struct{}

func newReadyPoller() *readyPoller             { return nil }
func (p *readyPoller) add(*conn, int)          {}
func (p *readyPoller) remove(*conn)            {}
func (p *readyPoller) kickReady(time.Time) int { return 0 }
func (p *readyPoller) close()                  {}
