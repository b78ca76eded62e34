//go:build !linux

package main

// lowerPriority is Linux-only (per-thread nice values); elsewhere, run kiln backup under nice(1).
func lowerPriority(int) error { return nil }
