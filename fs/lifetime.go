package fs

import (
	"fmt"
	"os"
	"sync"

	"github.com/recfs/recfs/index"
)

// Lifetime of the record files a directory tree opens. A record file stays
// open while anything may still need it: open handles of its records or
// trailer, reads and appends in progress, following, and nodes the kernel
// references. Once the file is found deleted (by following, whose refresh
// looks at the path), or deleted, replaced or renamed away when the kernel
// forgets the file's last node and the tree looks, it is doomed: it takes no new
// users, and it is closed as soon as its last user is done, so that a
// directory whose files are rotated away (a database's write-ahead logs)
// does not pin every deleted file until unmount.

// user is one counted user of a record file: an open handle. Its Close
// releases the file once.
type user struct {
	t    *Tree
	rd   *recDir
	once sync.Once
}

// Close releases the handle's hold on the file.
func (u *user) Close() error {
	u.once.Do(func() { u.t.release(u.rd) })
	return nil
}

// release ends one use of rd's file (see acquire) and closes it if it is
// doomed and that was the last use.
func (t *Tree) release(rd *recDir) {
	rd.mu.Lock()
	rd.users--
	src := rd.takeIfIdle()
	rd.mu.Unlock()
	if src != nil {
		t.closeGone(rd, src)
	}
}

// takeIfIdle detaches and returns the source of a doomed file without
// users; rd.mu is held.
func (rd *recDir) takeIfIdle() Records {
	if !rd.doomed || rd.users > 0 || rd.src == nil {
		return nil
	}
	src := rd.src
	rd.src, rd.err = nil, rd.goneErr()
	return src
}

// goneErr is what uses of a doomed file get.
func (rd *recDir) goneErr() error {
	return &OpError{Op: "index", Path: rd.path, Name: rd.rel, Record: -1, Off: -1, Err: fmt.Errorf("%w: deleted or replaced", ErrStale)}
}

// sourceGone dooms rd, whose file is no longer at its path: following
// stops, the tree forgets the name's entry, and the file is closed now or
// when its last user is done. It never closes the file while a user (such
// as the refresh that noticed) is still running.
func (t *Tree) sourceGone(rd *recDir) {
	rd.mu.Lock()
	if rd.doomed || rd.src == nil {
		rd.mu.Unlock()
		return
	}
	rd.doomed = true
	stop := rd.stopFollow
	src := rd.takeIfIdle()
	rd.mu.Unlock()
	if stop != nil {
		stop()
	}
	t.mu.Lock()
	if pe := t.files[rd.rel]; pe != nil && pe.rd == rd {
		delete(t.files, rd.rel)
	}
	t.mu.Unlock()
	if src != nil {
		t.closeGone(rd, src)
	}
}

// closeGone closes the source of a doomed file and drops it from the
// tree's lists.
func (t *Tree) closeGone(rd *recDir, src Records) {
	err := src.Close()
	t.mu.Lock()
	for i, o := range t.opens {
		if o == rd {
			t.opens = append(t.opens[:i], t.opens[i+1:]...)
			break
		}
	}
	if t.follow != nil {
		delete(t.follow.started, rd)
	}
	t.mu.Unlock()
	t.elog.log.WithField("file", rd.path).WithError(err).Debug("closed a deleted or replaced source")
}

// fileStater is implemented by sources that can stat the file they read
// (*index.Table).
type fileStater interface {
	Stat() (os.FileInfo, error)
}

var _ fileStater = (*index.Table)(nil)

// sourceDeleted reports whether the file rd's source reads has no name
// left. A file that was only renamed (a write-ahead log recycled under a
// new name) is not: it stays open, and is closed when the kernel forgets
// it (Forget).
func (t *Tree) sourceDeleted(rd *recDir) bool {
	rd.mu.Lock()
	src := rd.src
	rd.mu.Unlock()
	sf, ok := src.(fileStater)
	if !ok {
		return src != nil
	}
	fi, err := sf.Stat()
	if err != nil {
		return false
	}
	n, ok := linkCount(fi)
	return ok && n == 0
}

// Hold tells the tree that the kernel references n: adapters call it when
// they make the kernel-facing node of an entry, and Forget when the kernel
// forgets it.
func (t *Tree) Hold(n Node) {
	if n.rd == nil {
		return
	}
	n.rd.mu.Lock()
	n.rd.kref++
	n.rd.mu.Unlock()
}

// Forget tells the tree that the kernel no longer references n. When that
// was the last node of a record file of a directory tree, the tree looks
// at the file's path and closes the file if it was deleted or replaced.
func (t *Tree) Forget(n Node) {
	rd := n.rd
	if rd == nil {
		return
	}
	rd.mu.Lock()
	rd.kref--
	idle := rd.kref <= 0 && rd.src != nil && !rd.doomed
	rd.mu.Unlock()
	if !idle || rd.rel == "" || t.rootd == nil {
		return
	}
	st, err := t.rootd.stat(rd.rel)
	if err != nil && resolveGone(err) || err == nil && !st.same(rd.st) {
		t.sourceGone(rd)
	}
}
