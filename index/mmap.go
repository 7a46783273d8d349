package index

import (
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"syscall"

	"github.com/recfs/recfs/codec"
)

// mapped is a read-only memory map of a source file, used only while a
// table is built: the scanners slice their windows from it instead of
// copying them out of the page cache (codec.ByteSlicer), which is about
// half the cost of a scan. Reads that serve records later go through the
// file, never through a map.
//
// A map of a file that shrinks under it faults (SIGBUS) when the lost pages
// are touched; every goroutine that scans a map must run guardFault first,
// which turns such a fault into a panic that recoverFault turns into an
// error.
type mapped struct {
	data []byte
}

var _ codec.ByteSlicer = (*mapped)(nil)

// mapFile maps the first size bytes of f, or returns nil if it cannot (the
// caller then reads the file as usual).
func mapFile(f *os.File, size int64) *mapped {
	if size <= 0 || int64(int(size)) != size {
		return nil
	}
	data, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil
	}
	_ = syscall.Madvise(data, syscall.MADV_SEQUENTIAL)
	return &mapped{data: data}
}

// ReadAt copies bytes of the map; it implements io.ReaderAt.
func (m *mapped) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("index: negative offset %d", off)
	}
	if off >= int64(len(m.data)) {
		return 0, io.EOF
	}
	n := copy(p, m.data[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// Slice returns n bytes of the map at off without copying.
func (m *mapped) Slice(off, n int64) ([]byte, error) {
	if off < 0 || n < 0 || off+n > int64(len(m.data)) {
		return nil, io.ErrUnexpectedEOF
	}
	return m.data[off : off+n : off+n], nil
}

// close unmaps the file.
func (m *mapped) close() error { return syscall.Munmap(m.data) }

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
