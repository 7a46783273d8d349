package index

import (
	"fmt"
	"runtime/debug"
)

// The memory map a table is built from (source.Mapper, source.MapFile) is
// used only while the table is built: the scanners slice their windows from
// it instead of copying them out of the page cache (codec.ByteSlicer),
// which is about half the cost of a scan. Reads that serve records later go
// through the source, never through a map.
//
// A map of a file that shrinks under it faults (SIGBUS) when the lost pages
// are touched; every goroutine that scans a map must run guardFault first,
// which turns such a fault into a panic that recoverFault turns into an
// error.

// guardFault makes a memory fault in the calling goroutine a panic rather
// than a crash of the process. It returns the previous setting, to be
// restored with debug.SetPanicOnFault.
func guardFault() bool { return debug.SetPanicOnFault(true) }

// recoverFault, deferred after guardFault, turns a fault into *err.
func recoverFault(prev bool, err *error) {
	debug.SetPanicOnFault(prev)
	if r := recover(); r != nil {
		*err = fmt.Errorf("index: the source changed while it was scanned (%v); try again", r)
	}
}
