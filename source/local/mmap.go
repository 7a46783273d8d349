package local

import (
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"

	"github.com/recfs/recfs/source"
)

// ErrNoMap means a file cannot be mapped (empty, too large for the address
// space, or mmap refused); callers read it instead.
var ErrNoMap = errors.New("local: cannot map the file")

// mapped is a read-only shared memory map of a file.
type mapped struct {
	data []byte
	f    *os.File
}

// MapFile maps the first size bytes of f read-only, advising sequential
// access, or fails with ErrNoMap.
func MapFile(f *os.File, size int64) (source.Mapping, error) {
	if size <= 0 || int64(int(size)) != size {
		return nil, ErrNoMap
	}
	data, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoMap, err)
	}
	_ = syscall.Madvise(data, syscall.MADV_SEQUENTIAL)
	return &mapped{data: data, f: f}, nil
}

// ReadAt copies bytes of the map; it implements io.ReaderAt.
func (m *mapped) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("local: negative offset %d", off)
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

// Unmapped returns the mapped bytes read from the file itself (pread),
// not through the map: for a scan that copies every byte into a window of
// its own anyway, for which mapping the pages costs more than the copy.
func (m *mapped) Unmapped() io.ReaderAt { return io.NewSectionReader(m.f, 0, int64(len(m.data))) }

// Slice returns n bytes of the map at off without copying.
func (m *mapped) Slice(off, n int64) ([]byte, error) {
	if off < 0 || n < 0 || off+n > int64(len(m.data)) {
		return nil, io.ErrUnexpectedEOF
	}
	return m.data[off : off+n : off+n], nil
}

// Release drops the pages that lie wholly inside [off, off+n) from the
// process's resident memory (madvise MADV_DONTNEED): the bytes stay
// mapped and are read again from the page cache if touched. A scan
// releases what it has passed, so that scanning a large mapped file does
// not make all of it resident at once.
func (m *mapped) Release(off, n int64) {
	ps := int64(os.Getpagesize())
	lo := max(off, 0) + ps - 1
	lo -= lo % ps
	hi := min(off+n, int64(len(m.data)))
	hi -= hi % ps
	if hi > lo {
		_ = syscall.Madvise(m.data[lo:hi], syscall.MADV_DONTNEED)
	}
}

// Close unmaps the file.
func (m *mapped) Close() error { return syscall.Munmap(m.data) }
