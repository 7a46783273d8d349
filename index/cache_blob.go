package index

import (
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
)

// The blob region of a saved table: bytes a table keeps in its cache file
// but does not read when it is loaded (the checkpoint windows of a
// compressed TFRecord file, most of its table), read later only where a
// read needs them. A cache file is
//
//	body | CRC-32C of body | seal (0 or 32 bytes) | blob | blob length (u64) | seal length (u8)
//
// The body is what loadCache decodes, checks and (when sealed) proves
// whole; the blob lies outside the checksum and the seal. Each piece of it
// is described in the body by its length and a digest the body holds (for
// windows, SHA-256: tfrecord.StoredWindow), and is used only if it matches
// that digest, so the body's checks cover the blob piece by piece, as it
// is read. The pieces lie in the blob in the order the body names them.

// blobPiece is a piece of the blob an encoder writes after the seal: n
// bytes, got when they are written.
type blobPiece struct {
	n   int
	get func() ([]byte, error)
}

// blob adds a piece of n bytes to the blob region the encoder writes
// after the body; get returns its bytes when it is written.
func (e *encoder) blob(n int, get func() ([]byte, error)) {
	e.blobs = append(e.blobs, blobPiece{n: n, get: get})
	e.blobLen += int64(n)
}

// writeBlob writes the blob region and the trailer (blob length and seal
// length) to w, within the encoder's bound.
func (e *encoder) writeBlob(w io.Writer, sealLen int) {
	for _, p := range e.blobs {
		if e.err != nil {
			return
		}
		b, err := p.get()
		switch {
		case err != nil:
			e.err = err
		case len(b) != p.n:
			e.err = fmt.Errorf("index: a saved table's piece is %d bytes, not %d", len(b), p.n)
		case e.n+int64(len(b)) > e.bound:
			e.err = errCacheTooLarge
		default:
			e.n += int64(len(b))
			_, e.err = w.Write(b)
		}
	}
	if e.err == nil {
		_, e.err = w.Write(append(binary.LittleEndian.AppendUint64(nil, uint64(e.blobLen)), byte(sealLen)))
	}
}

// cacheTrailer is the length of a cache file's trailer: the blob's length
// and the seal's.
const cacheTrailer = 8 + 1

// cacheBlob is the blob region of a loaded cache file, an io.ReaderAt of
// its bytes. It keeps the file open (the one the body was read from, so
// that a cache file replaced meanwhile does not change what it reads)
// until close.
type cacheBlob struct {
	size int64 // the region's length; -1 while unknown (decoding in memory)
	used int64 // bytes the decoded body has named

	mu   sync.Mutex
	f    io.ReaderAt // the region's bytes start at base
	base int64
	file *os.File // f when it is the cache file, closed by close
}

// blobPiece returns the blob and the offset in it of the next piece of the
// blob, n bytes long (setting d.err when the blob is shorter).
func (d *decoder) blobPiece(n int) (*cacheBlob, int64) {
	if d.blob == nil {
		d.blob = &cacheBlob{size: -1}
	}
	b := d.blob
	if d.err != nil || n < 0 || b.size >= 0 && int64(n) > b.size-b.used {
		d.err = errBadCache
		return nil, 0
	}
	off := b.used
	b.used += int64(n)
	return b, off
}

// attach makes the blob read r from offset base on.
func (b *cacheBlob) attach(r io.ReaderAt, base int64, file *os.File) {
	b.mu.Lock()
	b.f, b.base, b.file = r, base, file
	b.mu.Unlock()
}

// blobReadHook, when set (by a test), is called as a read of a blob
// starts.
var blobReadHook atomic.Pointer[func(b *cacheBlob)]

// ReadAt reads the blob's bytes [off, off+len(p)).
func (b *cacheBlob) ReadAt(p []byte, off int64) (int, error) {
	if h := blobReadHook.Load(); h != nil {
		(*h)(b)
	}
	b.mu.Lock()
	f, base := b.f, b.base
	b.mu.Unlock()
	if f == nil {
		return 0, os.ErrClosed
	}
	if off < 0 || off+int64(len(p)) > b.used {
		return 0, io.ErrUnexpectedEOF
	}
	return f.ReadAt(p, base+off)
}

// close closes the cache file the blob reads; later reads fail with
// os.ErrClosed.
func (b *cacheBlob) close() {
	b.mu.Lock()
	file := b.file
	b.f, b.file = nil, nil
	b.mu.Unlock()
	if file != nil {
		file.Close()
	}
}

// savedHolder is a table that reads parts of its cache file after it was
// loaded (its blob region).
type savedHolder interface {
	// closeSaved closes that file.
	closeSaved()
	// savedBlob returns the blob the table reads (nil if none).
	savedBlob() *cacheBlob
}

// releaseSaved closes the cache file s's table reads, if any: s is no
// longer used (its Table closed, or loading it failed).
func releaseSaved(s *snapshot) {
	if h, ok := s.tab.(savedHolder); ok {
		h.closeSaved()
	}
}

// swapSnap makes next the table's current snapshot in place of old and
// closes the cache file old's table reads, unless next reads it too.
func (t *Table) swapSnap(old, next *snapshot) {
	t.snap.Store(next)
	releaseReplaced(old, next)
}

// releaseReplaced closes the cache file old's table reads once next has
// taken old's place as a table's snapshot, unless next's table reads the
// same one (a table extended from old's shares its stored windows). A read
// of old still running then fails as a read racing Table.Close does.
func releaseReplaced(old, next *snapshot) {
	h, ok := old.tab.(savedHolder)
	if !ok {
		return
	}
	if nh, ok := next.tab.(savedHolder); ok && nh.savedBlob() == h.savedBlob() {
		return
	}
	h.closeSaved()
}
