package serve

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/recfs/recfs/fs"
)

// Stamps remember when each record directory of a followed tree last
// changed. Network clients cache attributes and contents by what the
// server reports (NFS by size, mtime and ctime, HTTP and WebDAV by ETag
// and Last-Modified), and a tree's attributes are those of its source when
// it was opened: adapters fold the stamps into what they report, so that
// a directory that gained records looks changed and a record of a
// rewritten source gets a new ETag. A nil *Stamps (a tree that is not
// followed) has no stamps.
type Stamps struct {
	mu sync.Mutex
	m  map[fs.Node]Stamp // by record directory: one entry per followed record file
}

// Stamp is what changed in one record directory since it was opened.
type Stamp struct {
	Changed   time.Time // the last change: records added or the source rewritten
	Rewritten time.Time // the last rewrite, after which existing records differ
	Epoch     uint64    // rewrites seen
	Len       int64     // the record count after the last change
}

// Follow makes t follow its sources every interval (0: the index's
// default) and returns the stamps it keeps, and the function that ends
// following (call it before closing t). also, if not nil, is called after
// each change is stamped.
func Follow(t *fs.Tree, interval time.Duration, also func(fs.Change)) (*Stamps, func()) {
	s := &Stamps{m: map[fs.Node]Stamp{}}
	stop := t.Follow(interval, func(c fs.Change) {
		s.note(c, time.Now())
		if also != nil {
			also(c)
		}
	})
	return s, stop
}

// note records the change c, seen at now.
func (s *Stamps) note(c fs.Change, now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.m[c.Dir]
	st.Changed, st.Len = now, c.NewLen
	if c.Rewritten {
		st.Rewritten = now
		st.Epoch++
	}
	s.m[c.Dir] = st
}

// Of returns the stamp of the record directory dir (zero when it never
// changed, or s is nil).
func (s *Stamps) Of(dir fs.Node) Stamp {
	if s == nil {
		return Stamp{}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.m[dir]
}

// DirAttr folds dir's stamp into its attributes a: the times move to the
// last change.
func (s *Stamps) DirAttr(dir fs.Node, a *fs.Attr) {
	st := s.Of(dir)
	if st.Changed.After(a.Mtime) {
		a.Mtime, a.Ctime = st.Changed, st.Changed
	}
}

// RecordAttr folds the stamp of dir into the attributes a of one of its
// files: the times move to the last rewrite.
func (s *Stamps) RecordAttr(dir fs.Node, a *fs.Attr) Stamp {
	st := s.Of(dir)
	if st.Rewritten.After(a.Mtime) {
		a.Mtime, a.Ctime = st.Rewritten, st.Rewritten
	}
	return st
}

// Attr returns the attributes of n, whose directory is parent, with the
// stamps folded in: a record directory's times move to its last change,
// those of its records (and trailer) to the last rewrite, and those of
// .recfs and .recfs-summary, which change with the directory, to its
// last change. It returns the stamp that applies to n.
func (s *Stamps) Attr(ctx context.Context, t *fs.Tree, n, parent fs.Node) (fs.Attr, Stamp, error) {
	a, err := t.Getattr(ctx, n)
	if err != nil {
		return a, Stamp{}, err
	}
	var st Stamp
	switch n.Kind {
	case fs.KindRecordDir:
		st = s.Of(n)
		s.DirAttr(n, &a)
	case fs.KindRecord, fs.KindTrailerDir, fs.KindTrailer:
		st = s.RecordAttr(parent, &a)
	case fs.KindInfo, fs.KindSummary:
		st = s.Of(parent)
		s.DirAttr(parent, &a)
	}
	return a, st, nil
}

// ETag returns a strong HTTP validator of an entry with attributes a and
// stamp st: its inode number (which the tree derives from the source
// file's identity and the record number), size, time and the rewrites its
// record directory went through.
func ETag(a fs.Attr, st Stamp) string {
	return fmt.Sprintf(`"%x-%x-%x-%x"`, a.Ino, a.Size, a.Mtime.UnixNano(), st.Epoch)
}
