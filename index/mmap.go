package index

import (
	"context"
	"fmt"
	"io"
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

// recoverFault, deferred after guardFault, turns a memory fault into *err.
// Any other panic is a bug, not a changed source: it goes on panicking.
func recoverFault(prev bool, err *error) {
	debug.SetPanicOnFault(prev)
	r := recover()
	if r == nil {
		return
	}
	// A fault's panic value is a runtime.Error with the faulting address.
	if _, fault := r.(interface{ Addr() uintptr }); !fault {
		panic(r)
	}
	*err = fmt.Errorf("index: the source changed while it was scanned (%v); try again", r)
}

// unmapped returns what a scan that copies every byte into a window of
// its own reads r through: for a mapped file (through interruptible's
// wrapper or not), the file itself by pread, since touching the pages of
// a map costs more than that copy; r otherwise.
func unmapped(ctx context.Context, r io.ReaderAt) io.ReaderAt {
	type unmapper interface{ Unmapped() io.ReaderAt }
	if cs, ok := r.(ctxSlicer); ok {
		r = cs.r
	}
	if u, ok := r.(unmapper); ok {
		return interruptible(ctx, u.Unmapped())
	}
	return r
}
