package index

import (
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"sync"

	"github.com/recfs/recfs/source"
)

// identity says which bytes a table was built from, as saved with the
// table and compared before it is served: the source's Identity version,
// its size and checksums of its first and last block, and for a local file
// the typed fields of that version (device and inode, mtime and ctime),
// so that a file rewritten in place with the same size and a restored
// mtime is still told apart (its ctime moved: no one can set it, and since
// identify queried it the kernel gives the next change a fine-grained,
// distinct one). The per-read source check compares those fields.
type identity struct {
	dev, ino uint64
	size     int64
	mtime    int64 // nanoseconds
	ctime    int64 // nanoseconds
	head     uint32
	tail     uint32
	version  string // the source.Identity version
}

// identBlock is how many bytes at each end of the file the checksums cover.
const identBlock = 32768

// identify returns the identity of the version src names (its Size and
// Identity), with its ends checksummed: the one place a table's identity is
// made, for local files (whose source.FileStater gives the typed fields)
// and other sources alike.
func identify(src source.Source) (identity, error) {
	head, err := rangeCRC(src, 0, min(src.Size(), identBlock))
	if err != nil {
		return identity{}, err
	}
	return identifyHead(src, head)
}

// identifyHead is identify for a caller that has the checksum of the first
// min(size, identBlock) bytes of src already: it reads only the tail.
func identifyHead(src source.Source, head uint32) (identity, error) {
	id := identity{size: src.Size(), version: src.Identity().Version, head: head}
	if fs, ok := src.(source.FileStater); ok {
		st := fs.FileStat()
		id.dev, id.ino, id.mtime, id.ctime = st.Dev, st.Ino, st.Mtime, st.Ctime
	}
	tailOff := max(0, id.size-identBlock)
	var err error
	if id.tail, err = rangeCRC(src, tailOff, id.size-tailOff); err != nil {
		return identity{}, err
	}
	return id, nil
}

// identifyHeadBytes is identifyHead, also returning the bytes its tail
// checksum covers (the file's last min(size, identBlock) bytes), in a
// buffer of their own.
func identifyHeadBytes(src source.Source, head uint32) (identity, []byte, error) {
	id := identity{size: src.Size(), version: src.Identity().Version, head: head}
	if fs, ok := src.(source.FileStater); ok {
		st := fs.FileStat()
		id.dev, id.ino, id.mtime, id.ctime = st.Dev, st.Ino, st.Mtime, st.Ctime
	}
	tailOff := max(0, id.size-identBlock)
	b := make([]byte, id.size-tailOff)
	if _, err := src.ReadAt(b, tailOff); err != nil && !errors.Is(err, io.EOF) {
		return identity{}, nil, fmt.Errorf("index: checksum of source bytes: %w", err)
	}
	id.tail = crc32.Checksum(b, castagnoliTable)
	return id, b, nil
}

// identBufs holds identBlock-sized buffers for rangeCRC: identify runs on
// every refresh and append, so its reads should not allocate.
var identBufs = sync.Pool{New: func() any { b := make([]byte, identBlock); return &b }}

// castagnoliTable is the CRC-32C table of source identities.
var castagnoliTable = crc32.MakeTable(crc32.Castagnoli)

// rangeCRC returns the CRC-32C of n (at most identBlock) bytes of r at off.
func rangeCRC(r io.ReaderAt, off, n int64) (uint32, error) {
	bp := identBufs.Get().(*[]byte)
	defer identBufs.Put(bp)
	buf := (*bp)[:n]
	if _, err := r.ReadAt(buf, off); err != nil && !errors.Is(err, io.EOF) {
		return 0, fmt.Errorf("index: checksum of source bytes: %w", err)
	}
	return crc32.Checksum(buf, castagnoliTable), nil
}

// sameFile reports whether a and b name the same file.
func (a identity) sameFile(b identity) bool { return a.dev == b.dev && a.ino == b.ino }
