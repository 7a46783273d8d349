// Package source is recfs's storage seam: the bytes of one record file,
// wherever they live. It sits between the codecs and the index
// (codec ← source ← index ← fs): the index
// reads a Source and keys its saved tables by the Source's Identity; it never
// asks where the bytes come from.
//
// A Source is an io.ReaderAt with a size and an identity. Anything more —
// appending, locking, mapping into memory, re-checking for change — is an
// optional capability, discovered by type assertion the way io/fs discovers
// ReadDirFS or StatFS: a source that cannot do a thing simply does not
// implement its interface, and callers fall back or refuse.
package source

import (
	"context"
	"errors"
	"fmt"
	"io"
)

// ErrChanged reports that a source no longer holds the version its Identity
// names: the object was overwritten, the file rewritten or truncated. Bytes
// read across such a change are never returned.
var ErrChanged = errors.New("source: changed since it was opened")

// Identity names one version of one source. Key is stable across versions
// (a cleaned absolute path, or "s3://endpoint/bucket/key"); Version changes
// whenever the bytes may have changed other than by growing (dev/ino/times
// for a local file, ETag and size for an object). Saved indexes are keyed by
// Key and validated against Version.
type Identity struct {
	Key     string
	Version string
}

// Source is the bytes of one record file.
type Source interface {
	io.ReaderAt
	// Size is the length of the version the source was opened as.
	Size() int64
	// Identity names that version.
	Identity() Identity
}

// Stater is implemented by sources that can tell whether the underlying
// file or object changed since the source was opened: Stat returns the
// current identity and size without reading data (an fstat, an HTTP HEAD).
type Stater interface {
	Stat() (Identity, int64, error)
}

// Reopener is implemented by sources that can open the version their file
// or object holds now: after Stater reports a change, Reopen returns a
// Source naming the new version (its Size and Identity), which reads only
// that version. The old source stays as it was and is closed by its owner.
type Reopener interface {
	Reopen(ctx context.Context) (Source, error)
}

// FileStater is implemented by sources that are local files, for a check
// after every read that the file is still the version read. FileStat is
// the version the source names, typed (device, inode, size, mtime, ctime:
// what its Identity's Version renders as text); Fstat is the file's stat
// now, with one fstat of the descriptor and no allocation. Stater's text
// version cannot serve there: it allocates, and a file that only grew must
// be told from one rewritten, field by field.
type FileStater interface {
	FileStat() FileStat
	Fstat() (FileStat, error)
}

// FileStat is what identifies one version of a local file.
type FileStat struct {
	Dev, Ino     uint64
	Size         int64
	Mtime, Ctime int64 // nanoseconds
}

// Version renders st as the Version of a local file's Identity.
func (st FileStat) Version() string {
	return fmt.Sprintf("dev=%d ino=%d size=%d mtime=%d ctime=%d", st.Dev, st.Ino, st.Size, st.Mtime, st.Ctime)
}

// Closer is implemented by sources that hold resources (a descriptor, a
// mapping, idle connections).
type Closer interface {
	Close() error
}

// Locker is implemented by sources that can be locked against other
// writers: Lock takes the exclusive append lock every recfs appender and
// repair of the same bytes takes (in this process or another) and returns
// what releases it.
type Locker interface {
	Lock() (unlock func(), err error)
}

// Mapper is implemented by sources whose bytes can be mapped into memory
// for a scan (a local file). A scan of a mapping slices its windows instead
// of copying them; the mapping is only ever used while a table is built.
type Mapper interface {
	Map() (Mapping, error)
}

// Mapping is a read-only view of a source's bytes in memory, as returned by
// Mapper. It is an io.ReaderAt that also hands out its bytes without
// copying (codec.ByteSlicer). A mapped file that shrinks under the mapping
// faults when the lost pages are touched: scans of a mapping must guard
// against that (see index's guardFault).
type Mapping interface {
	io.ReaderAt
	// Slice returns the n bytes at off, read-only; fewer only with an error.
	Slice(off, n int64) ([]byte, error)
	// Close unmaps the bytes; no slice of them may be used after.
	Close() error
}

// Writer is implemented by sources the index can append to: bytes written
// at an offset, the end cut back, and both made durable.
type Writer interface {
	io.WriterAt
	Truncate(size int64) error
	Sync() error
}

// Streamer is implemented by sources whose bytes are cheaper to read as
// one sequential stream than by ReadAt when all of them are read in order
// (an object: one GET instead of a request per block). Stream returns the
// bytes from off to the end of the version the source names; a change of
// that version fails the stream with ErrChanged.
type Streamer interface {
	Stream(ctx context.Context, off int64) (io.ReadCloser, error)
}
