package index

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/recfs/recfs/source/local"
)

// ErrChanged is returned by reads when the source file changed since the
// table was made (rewritten, truncated, its ctime moved) or, for
// ReadAtGeneration, when the table moved on to another generation. The
// bytes read are not returned: they may belong to neither version. Refresh
// (or following) makes the table describe the new version.
var ErrChanged = errors.New("index: source file changed")

// grownStat is a stat of the source that checkSource accepted for a
// snapshot because the source only grew: the bytes the snapshot covers are
// still there.
type grownStat struct {
	snap               *snapshot
	size, mtime, ctime int64
}

// checkSource checks, after a read of snapshot s, that the source still is
// the version s describes, with one fstat: same size, mtime and ctime as
// when s was made. A source that only grew (the checksums of the first and
// last block s covers unchanged) is accepted too, once per stat; so are a
// moved ctime alone (with the same checksums) and reads racing an append
// that has not grown the file yet. While an
// append of ours runs (records is true), record reads skip the check: our
// appends leave every existing record where it is.
//
// Why after: a change that touched the bytes a read returned happened
// before the read ended, and updated the times before it wrote; since the
// table's identity queried the ctime, the kernel gives that change a
// fine-grained, distinct ctime, which this fstat sees.
func (t *Table) checkSource(s *snapshot, records bool) error {
	if s.fst == nil {
		return nil // not a local file: its reads refuse another version themselves (source.ErrChanged)
	}
	if records && t.writing.Load() > 0 {
		return nil
	}
	st, err := s.fst.Fstat()
	if errors.Is(err, os.ErrClosed) {
		// The table let go of this file (replaced at its path, or closed).
		return fmt.Errorf("%w: the table no longer reads this file", ErrChanged)
	}
	if err != nil {
		return err
	}
	size, mtime, ctime := st.Size, st.Mtime, st.Ctime
	if size == s.id.size && mtime == s.id.mtime && ctime == s.id.ctime {
		return nil
	}
	if g := t.grown.Load(); g != nil && g.snap == s && g.size == size && g.mtime == mtime && g.ctime == ctime {
		return nil
	}
	if size == s.id.size && mtime == s.id.mtime {
		// Only the ctime moved: a chmod, a link or unlink (a rename
		// replaced the file), or a same-size rewrite with its mtime put
		// back, which the checksums of the first and last block tell.
		if s.prefixIntact() {
			t.grown.Store(&grownStat{snap: s, size: size, mtime: mtime, ctime: ctime})
			return nil
		}
		return ErrChanged
	}
	if size == s.id.size {
		// An appender's write moves the times before its first bytes
		// land and the size grows: look again a moment later. A same-size
		// change is not accepted: it may rewrite any byte.
		time.Sleep(appendGrace)
		if st, err = s.fst.Fstat(); err != nil {
			return err
		}
		size, mtime, ctime = st.Size, st.Mtime, st.Ctime
	}
	if size > s.id.size && s.prefixIntact() {
		t.grown.Store(&grownStat{snap: s, size: size, mtime: mtime, ctime: ctime})
		return nil
	}
	return ErrChanged
}

// appendGrace is how long checkSource waits for the size of a source whose
// times moved to grow (an append in progress).
const appendGrace = 500 * time.Microsecond

// prefixIntact reports whether the bytes s covers still start and end as
// they did when s was made (the identity's head and tail checksums over the
// same ranges).
func (s *snapshot) prefixIntact() bool {
	head, err := rangeCRC(s.src, 0, min(s.id.size, identBlock))
	if err != nil || head != s.id.head {
		return false
	}
	tailOff := max(0, s.id.size-identBlock)
	tail, err := rangeCRC(s.src, tailOff, s.id.size-tailOff)
	return err == nil && tail == s.id.tail
}

// appendedTo reports whether s, made by a refresh of old, only adds records
// to it: the same file grew, the bytes old covers start and end as they did
// (for appends of ours, which may move a recordio trailer, the end is not
// compared), and every record of old keeps its place and length (known
// when s extends old's own record arrays: kept is set).
func (t *Table) appendedTo(old, s *snapshot, kept bool) bool {
	if !s.id.sameFile(old.id) || s.size < old.size || s.n < old.n || s.format != old.format {
		return false
	}
	a, ok := s.src.(*local.File)
	b, okOld := old.src.(*local.File)
	if !ok || !okOld || !a.SameDescriptor(b) {
		return false // another descriptor
	}
	head, err := rangeCRC(s.src, 0, min(old.id.size, identBlock))
	if err != nil || head != old.id.head {
		return false
	}
	if t.writing.Load() == 0 {
		tailOff := max(0, old.id.size-identBlock)
		tail, err := rangeCRC(s.src, tailOff, old.id.size-tailOff)
		if err != nil || tail != old.id.tail {
			return false
		}
	}
	if kept {
		return true
	}
	return s.tab.samePrefix(old.tab, old.n)
}
