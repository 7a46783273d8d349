//go:build recfs_lean

package main

// The lean link is never a daemon child: it hands mount and serve to
// recfs-full before they run, and recfs-full spawns its daemons from
// itself (daemon.go). So it links no fs/open/daemon.

// notChild stands for the daemon child's status pipe the lean link never
// has.
type notChild struct{}

// Progress does nothing: the lean link has no parent to report to.
func (*notChild) Progress(done, total int64) {}

// daemonStatus is nil in the lean link (see notChild).
func daemonStatus() *notChild { return nil }

// stopDaemonChild is set by main, unused in the lean link.
//
//lint:ignore U1000 main.go, shared by both links, sets it.
var stopDaemonChild func()

// daemonChild is false in the lean link.
func daemonChild() bool { return false }
