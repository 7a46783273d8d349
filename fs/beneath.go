package fs

import (
	"errors"
	"fmt"
	iofs "io/fs"
	"os"
	"syscall"

	"github.com/recfs/recfs/source/local"
)

// ErrStale is returned when the source entry behind a node is no longer
// the one that was looked up: it was replaced (by another file, a
// directory or a symbolic link) or a directory on its path was. The tree
// never serves the other object's bytes. It maps to ESTALE, on which the
// kernel looks the path up again.
var ErrStale = errors.New("fs: source entry changed since it was looked up")

// File types of statInfo.typ (the S_IFMT values).
const (
	typeDir = 0o040000
	typeReg = 0o100000
)

// SourceFile is a record file of a directory tree, opened by the tree
// beneath the mount's source root without following symbolic links, as
// OpenFunc and CreateFunc receive it.
type SourceFile struct {
	// File is the open file (read-only, or read-write for CreateFunc).
	// The function keeps it for its table on success; on failure the
	// tree closes it.
	File *os.File
	// Path is the file's absolute path, for messages and saved tables.
	// Opening it again would resolve it anew: use Reopen.
	Path string
	// Reopen opens the file now at Path (read-only) the same safe way, for
	// refreshes that must look at the path again (see Local).
	Reopen func() (*os.File, error)
}

// Local returns the file as a local source whose refreshes look at its
// path again through Reopen. It takes File over: closing it closes File.
func (sf SourceFile) Local() (*local.File, error) {
	return local.NewReopening(sf.File, sf.Path, sf.Reopen)
}

// same reports whether st and o describe the same file.
func (st statInfo) same(o statInfo) bool { return st.dev == o.dev && st.ino == o.ino }

// sameAs reports whether st is the entry the mirrored node n was looked up
// as: same identity and still a directory for KindDir, a regular file for
// KindFile.
func (st statInfo) sameAs(n Node) bool {
	if st.dev != n.dev || st.ino != n.ino {
		return false
	}
	if n.Kind == KindDir {
		return st.typ == typeDir
	}
	return st.typ == typeReg
}

// srcErr turns the failure of an access to the source entry rel into the
// tree's error: ENOENT when it is gone, ErrStale (logged) when a component
// of its path was swapped for something else, else an *OpError.
func (t *Tree) srcErr(op, rel string, err error) error {
	err = unwrapPath(err)
	switch {
	case errors.Is(err, syscall.ENOENT):
		return iofs.ErrNotExist
	case errors.Is(err, ErrStale):
		return &OpError{Op: op, Path: t.abs(rel), Name: rel, Record: -1, Off: -1, Err: err}
	case resolveGone(err):
		return &OpError{Op: op, Path: t.abs(rel), Name: rel, Record: -1, Off: -1, Err: fmt.Errorf("%w: %w", ErrStale, err)}
	}
	return &OpError{Op: op, Path: t.abs(rel), Name: rel, Record: -1, Off: -1, Err: err}
}

// unwrapPath returns the error an *iofs.PathError of the source file
// system wraps (the tree's own errors name the entry), or err.
func unwrapPath(err error) error {
	var pe *iofs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// staleErr is the error for a source entry rel found to be another object
// (st) than the node's.
func (t *Tree) staleErr(op, rel string, st statInfo) error {
	return &OpError{Op: op, Path: t.abs(rel), Name: rel, Record: -1, Off: -1,
		Err: fmt.Errorf("%w (now device %d inode %d)", ErrStale, st.dev, st.ino)}
}

// openDir opens the mirrored directory n beneath the root and checks that
// it is still the directory n was looked up as; list asks for a descriptor
// that can be listed.
func (t *Tree) openDir(n Node, list bool) (*dirFD, error) {
	d, err := t.rootd.openDir(n.rel, list)
	if err != nil {
		return nil, t.srcErr("opendir", n.rel, err)
	}
	if !d.st.sameAs(n) {
		d.close()
		return nil, t.staleErr("opendir", n.rel, d.st)
	}
	return d, nil
}

// openSource opens the record file rd of a directory tree, checking that
// it is still the file rd was made for.
func (t *Tree) openSource(rd *recDir) (*os.File, error) {
	f, st, err := t.rootd.openFile(rd.rel)
	if err == nil && !st.same(rd.st) {
		f.Close()
		return nil, t.staleErr("index", rd.rel, st)
	}
	if err != nil {
		return nil, t.srcErr("index", rd.rel, err)
	}
	return f, nil
}

// reopener returns the SourceFile.Reopen of rd.
func (t *Tree) reopener(rd *recDir) func() (*os.File, error) {
	return func() (*os.File, error) {
		f, _, err := t.rootd.openFile(rd.rel)
		if err != nil {
			if resolveGone(err) && t.sourceDeleted(rd) {
				t.sourceGone(rd)
			}
			return nil, err
		}
		return f, nil
	}
}

// Permission bits of the entries. The mount shows the source's read
// permissions, so that with --allow-other (and default_permissions) the
// kernel gives other users what the source file system gives them, and no
// more.

// readPerm keeps the read bits of mode.
func readPerm(mode uint32) uint32 { return mode & 0o444 }

// searchPerm gives the search (x) bit to every class that may read mode.
func searchPerm(mode uint32) uint32 { return (mode & 0o444) >> 2 }

// recDirPerm returns the permissions of the record directory of a source
// file with permissions mode: r-x where the file is readable and, in a
// writable tree, -wx where it is writable (appends go to the file).
func (t *Tree) recDirPerm(mode uint32) uint32 {
	p := readPerm(mode) | searchPerm(mode)
	if t.o.ReadWrite {
		p |= mode&0o222 | (mode&0o222)>>1
	}
	return p
}

// dirPerm returns the permissions of a mirrored directory: its own, without
// the write bits unless the tree is writable (mkdir makes record files).
func (t *Tree) dirPerm(mode uint32) uint32 {
	if t.o.ReadWrite {
		return mode & 0o777
	}
	return mode & 0o555
}

// typeOf returns the statInfo.typ of a file mode.
func typeOf(m os.FileMode) uint32 {
	switch {
	case m.IsDir():
		return typeDir
	case m.IsRegular():
		return typeReg
	}
	return 0
}
