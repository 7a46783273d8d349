package fs

import (
	"io"
	"os"
)

// The spill buffer holds the content of a pending file: in memory while it
// fits (Options.MemLimit per file, Options.PendingMem for the whole tree),
// in an anonymous temporary file once it does not. Its owner serialises
// access (pending.mu).

// Defaults of the write options.
const (
	DefaultMemLimit   = 8 << 20   // bytes of a pending record kept in memory
	DefaultPendingMem = 64 << 20  // bytes of all pending records of a tree kept in memory
	DefaultMaxRecord  = 256 << 20 // largest record a created file may hold
)

// spillBuf is a growable byte buffer that moves to a temporary file past
// the memory limits of its tree.
type spillBuf struct {
	t    *Tree    // whose memory budget and spill directory it uses
	mem  []byte   // content while it fits in memory
	file *os.File // content once it did not
	size int64
}

// spilled reports whether the content lives in a temporary file.
func (b *spillBuf) spilled() bool { return b.file != nil }

// reserve makes room for size bytes, spilling to a temporary file past the
// file's memory limit or when the tree's pending memory is used up.
func (b *spillBuf) reserve(size int64) error {
	if b.file != nil {
		return nil
	}
	if size <= b.t.memLimit() {
		if size <= int64(cap(b.mem)) {
			if size > int64(len(b.mem)) {
				b.mem = b.mem[:size]
			}
			return nil
		}
		c := max(size, min(2*int64(cap(b.mem)), b.t.memLimit()), 4096)
		if b.t.takeMem(c - int64(cap(b.mem))) {
			m := make([]byte, size, c)
			copy(m, b.mem)
			b.mem = m
			return nil
		}
	}
	f, err := b.t.spillFile()
	if err != nil {
		return err
	}
	if _, err := f.WriteAt(b.mem[:b.size], 0); err != nil {
		f.Close()
		return err
	}
	b.file = f
	b.dropMem()
	return nil
}

// writeAt writes p at off, growing the content (with zeros in any gap).
func (b *spillBuf) writeAt(p []byte, off int64) error {
	end := off + int64(len(p))
	if err := b.reserve(end); err != nil {
		return err
	}
	if b.file != nil {
		if _, err := b.file.WriteAt(p, off); err != nil {
			return err
		}
	} else {
		copy(b.mem[off:end], p)
	}
	b.size = max(b.size, end)
	return nil
}

// readAt reads the content with io.ReaderAt semantics; off >= 0.
func (b *spillBuf) readAt(p []byte, off int64) (int, error) {
	if off >= b.size {
		return 0, io.EOF
	}
	n := int(min(int64(len(p)), b.size-off))
	if b.file != nil {
		if _, err := b.file.ReadAt(p[:n], off); err != nil && err != io.EOF {
			return 0, err
		}
	} else {
		copy(p, b.mem[off:off+int64(n)])
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// truncate sets the content's size; size >= 0.
func (b *spillBuf) truncate(size int64) error {
	if size > b.size {
		if err := b.reserve(size); err != nil {
			return err
		}
	}
	if b.file != nil {
		if err := b.file.Truncate(size); err != nil {
			return err
		}
	} else {
		// Bytes past the length stay zero, so that growing again by
		// reslicing (here or in reserve) shows zeros, not old content.
		clear(b.mem[min(b.size, size):b.size])
		b.mem = b.mem[:size]
	}
	b.size = size
	return nil
}

// content returns the bytes as one slice (read back into memory when
// spilled).
func (b *spillBuf) content() ([]byte, error) {
	if b.file == nil {
		return b.mem[:b.size], nil
	}
	c := make([]byte, b.size)
	if _, err := b.file.ReadAt(c, 0); err != nil && err != io.EOF {
		return nil, err
	}
	return c, nil
}

// reader returns a reader of the spilled content (spilled only).
func (b *spillBuf) reader() *io.SectionReader { return io.NewSectionReader(b.file, 0, b.size) }

// free releases the memory and the temporary file. The size stays.
func (b *spillBuf) free() {
	if b.file != nil {
		b.file.Close()
		b.file = nil
	}
	b.dropMem()
}

// dropMem frees the in-memory content and gives its bytes back to the tree.
func (b *spillBuf) dropMem() {
	b.t.pendMem.Add(-int64(cap(b.mem)))
	b.mem = nil
}

// takeMem takes n bytes of the tree's pending memory, if there are.
func (t *Tree) takeMem(n int64) bool {
	if t.pendMem.Add(n) > t.pendingMem() {
		t.pendMem.Add(-n)
		return false
	}
	return true
}

// spillFile makes an anonymous temporary file: created with O_EXCL and
// mode 0600 in the tree's private directory (0700, made in TempDir on
// first use) and unlinked at once, so it is gone with its descriptor.
func (t *Tree) spillFile() (*os.File, error) {
	t.spillMu.Lock()
	if t.spillDir == "" {
		d, err := os.MkdirTemp(t.o.TempDir, "recfs-pending-")
		if err != nil {
			t.spillMu.Unlock()
			return nil, err
		}
		t.spillDir = d
	}
	dir := t.spillDir
	t.spillMu.Unlock()
	f, err := os.CreateTemp(dir, "p-")
	if err != nil {
		return nil, err
	}
	if err := os.Remove(f.Name()); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

func (t *Tree) memLimit() int64 {
	if t.o.MemLimit > 0 {
		return t.o.MemLimit
	}
	return DefaultMemLimit
}

func (t *Tree) pendingMem() int64 {
	if t.o.PendingMem > 0 {
		return t.o.PendingMem
	}
	return DefaultPendingMem
}

func (t *Tree) maxRecord() int64 {
	if t.o.MaxRecord > 0 {
		return t.o.MaxRecord
	}
	return DefaultMaxRecord
}
