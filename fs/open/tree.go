package open

import (
	"context"
	"fmt"
	"io"
	iofs "io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/sirupsen/logrus"

	"github.com/recfs/recfs/codec"
	"github.com/recfs/recfs/codec/recordio"
	"github.com/recfs/recfs/fs"
	"github.com/recfs/recfs/index"
)

// TreeOptions say how to serve a target as a tree: what mount and serve
// share once their flags are read.
type TreeOptions struct {
	Options
	HideOther bool // a directory tree hides files that are not record files
	Follow    bool // the sources are followed (the caller starts following)
	ReadWrite bool // records may be appended (local sources)
	// NewFormat and NewTrailer: what mkdir makes in a writable directory
	// tree whose new name's extension names no format (see NewFileFormat).
	NewFormat  codec.Format
	NewTrailer bool
	// CacheMem, when above 0, is the budget of the block cache every
	// recordio reader of this process shares.
	CacheMem int64
	FS       fs.Options // the tree's options; the fields above fill the rest
}

// Tree opens what target names as the tree a mount or a server shows: an
// s3:// prefix or object, an http(s):// file, a local directory of record
// files, or one local record file. A local target is made absolute.
func Tree(ctx context.Context, target string, o TreeOptions) (*fs.Tree, error) {
	if o.CacheMem > 0 {
		recordio.DefaultBlockCache().SetBudget(o.CacheMem)
	}
	return kindOf(target).tree(ctx, target, o)
}

// fileTree is the tree of one local record file.
func fileTree(ctx context.Context, path string, o TreeOptions) (*fs.Tree, error) {
	t, err := localTable(ctx, path, o.Options, noFollowReach(path))
	if err != nil {
		return nil, err
	}
	v, err := View(o.Decode, t, path)
	if err != nil {
		t.Close()
		return nil, err
	}
	fo := o.FS
	fo.ReadWrite = o.ReadWrite
	return fs.NewFile(path, v, fo)
}

// dirTree is the tree of a local directory: its record files indexed on
// first use, mkdir making new ones when writable.
func dirTree(path string, o TreeOptions) (*fs.Tree, error) {
	fo := o.FS
	fo.Open = func(ctx context.Context, sf fs.SourceFile) (fs.Records, error) {
		logrus.WithField("file", sf.Path).Debug("indexing")
		src, err := sf.Local()
		if err != nil {
			return nil, err
		}
		t, err := index.OpenSource(ctx, src, o.Index)
		if err != nil {
			return nil, err
		}
		v, err := View(o.Decode, t, sf.Path)
		if err != nil {
			t.Close()
			return nil, err
		}
		return v, nil
	}
	fo.Detect = detect
	fo.EmptyRecord = index.EmptyRecordName
	fo.HideOther, fo.ReadWrite = o.HideOther, o.ReadWrite
	fo.Create = createFunc(o)
	return fs.NewDir(path, fo)
}

// createFunc returns how a writable tree makes the record file it created
// (empty, O_EXCL) at sf: the empty record file of its format is written
// into it under its lock. Bytes another writer put into it first made it
// their format: the table is of that (never the new file's format forced
// onto them), and one of another format than the new file's is refused
// with an error matching fs.ErrExist (EEXIST; the tree leaves the file to
// its writer) and a log line, so that no record is added in a format the
// file is not.
func createFunc(o TreeOptions) fs.CreateFunc {
	return func(ctx context.Context, sf fs.SourceFile) (fs.Records, error) {
		nf := NewFileFormat(sf.Path, o.NewFormat)
		logrus.WithFields(logrus.Fields{"file": sf.Path, "format": nf}).Info("creating record file")
		src, err := sf.Local()
		if err != nil {
			return nil, err
		}
		t, err := index.CreateSource(ctx, src, nf, nf == codec.RecordIO && o.NewTrailer, o.Index)
		if err != nil {
			return nil, err
		}
		if got := t.Format(); got != nf && t.Info().FileSize > 0 {
			t.Close()
			logrus.WithFields(logrus.Fields{"file": sf.Path, "format": nf, "found": got}).Error("another writer made the new record file its format first; not creating it")
			return nil, fmt.Errorf("%s: %w: another writer made it a %s file before the %s file was written", sf.Path, iofs.ErrExist, got, nf)
		}
		return t, nil
	}
}

// NewFileFormat is the format of a record file created as path: the one
// its extension names (index.FormatOfName), else def.
func NewFileFormat(path string, def codec.Format) codec.Format {
	if f := index.FormatOfName(strings.ToLower(filepath.Ext(path))); f != codec.Unknown {
		return f
	}
	return def
}

// noFollowReach is how the table of a mounted file looks at its path
// again: never through a symbolic link, only at a regular file.
func noFollowReach(path string) *pathReach {
	return &pathReach{reopen: reopenNoFollow(path), stat: lstatPath(path)}
}

// lstatPath returns the attributes of what reopenNoFollow would open at
// path, without opening it: it fails where reopenNoFollow would refuse
// what is there (a symbolic link, anything but a regular file).
func lstatPath(path string) func() (os.FileInfo, error) {
	return func() (os.FileInfo, error) {
		fi, err := os.Lstat(path)
		if err == nil && !fi.Mode().IsRegular() {
			return nil, fmt.Errorf("%s: no longer a regular file", path)
		}
		return fi, err
	}
}

// reopenNoFollow opens path again for a table's refresh, refusing a
// symbolic link or anything but a regular file there now.
func reopenNoFollow(path string) func() (*os.File, error) {
	return func() (*os.File, error) {
		f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
		if err != nil {
			return nil, err
		}
		if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
			f.Close()
			return nil, fmt.Errorf("%s: no longer a regular file", path)
		}
		return f, nil
	}
}

// detect tells whether the bytes are a record file of a known format.
func detect(r io.ReaderAt, size int64) bool {
	_, err := index.Detect(r, size)
	return err == nil
}
