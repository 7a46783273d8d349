// Package open assembles sources: it turns what a user names — a local
// path, an s3:// URL of an object or of a prefix, an http(s):// URL — and
// options into an [index.Table] (for reading records: cat, info, verify,
// index, append, ls) or an [fs.Tree] (for serving them: a mount, recfs
// serve). Every command and server assembles its sources here, so that a
// record file opens the same way whatever shows it.
//
// It sits between fs and the adapters' callers (codec ← index ← fs ←
// open ← cmd): it knows every source kind, and nothing of flags or
// terminals — progress and options come in [Options].
//
// A new source kind is one package under source/ and one row in this
// package's table of kinds (kinds.go): its spelling and its three openers
// (see CONTRIBUTING.md, "Adding a source").
package open

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/sirupsen/logrus"

	"github.com/recfs/recfs/codec/decoders"
	"github.com/recfs/recfs/index"
	"github.com/recfs/recfs/index/report"
	"github.com/recfs/recfs/source/local"
)

// Kind is the kind of source a target names.
type Kind int

// The kinds of target.
const (
	Local    Kind = iota // a path on this machine
	S3Object             // s3://bucket/key
	S3Prefix             // s3://bucket or s3://bucket/prefix/
	HTTP                 // http:// or https:// URL of one file
)

// KindOf tells the kind of source target names, from its spelling alone
// (the first row of the table of kinds whose spelling matches): the one
// place recfs tells URLs from paths.
func KindOf(target string) Kind { return kindOf(target).kind }

// Remote reports whether target names a source that is not a local path
// (nothing to make absolute, stat or resolve beneath a directory).
func Remote(target string) bool { return KindOf(target) != Local }

// LocalDir reports whether target is a local directory (a URL never is).
func LocalDir(target string) bool {
	if Remote(target) {
		return false
	}
	fi, err := os.Stat(target)
	return err == nil && fi.IsDir()
}

// Refresh brings t, the table [Table] opened for target, up to date with
// a local file that may have changed since (see index.Table.Refresh),
// and reports whether it changed. A remote target's table is keyed by
// the object's version: it cannot be stale, and Refresh does nothing.
func Refresh(ctx context.Context, t *index.Table, target string) (bool, error) {
	if Remote(target) {
		return false, nil
	}
	return t.Refresh(ctx)
}

// ErrNotLinked reports a source kind this build of recfs leaves out: the
// lean link (build tag recfs_lean) has no S3 sources; recfs-full, the
// default build, has them.
var ErrNotLinked = errors.New("s3:// and http(s):// sources are not linked into this recfs (the lean build): run recfs-full")

// Options say how to open sources.
type Options struct {
	Index index.Options // how tables are built, loaded and saved
	S3    S3Options     // the client of s3:// targets
	HTTP  HTTPOptions   // the client of http(s):// targets
	// Decode, when set, shows records decoded as it says (trees and
	// [View]); nil shows them raw.
	Decode *decoders.Plan
	// Progress, when set, is called as a table's build starts with what
	// it indexes; it returns the build's progress callback and a function
	// called when the build ends. Trees call it for their first table only.
	Progress func(what string) (update func(done, total int64), done func())
}

// progress starts o's progress report of what into io, and returns what
// ends it.
func (o Options) progress(what string, io *index.Options) func() {
	if o.Progress == nil {
		return func() {}
	}
	update, done := o.Progress(what)
	io.Progress = update
	return done
}

// UsageError reports a target the user spelt wrong (a prefix where one
// object is wanted, a malformed URL): the command line, not the source, is
// at fault. It is report's, so that one test tells every usage error.
type UsageError = report.UsageError

func usagef(format string, a ...any) error { return report.Usagef(format, a...) }

// IsUsage reports whether err is, or wraps, a [UsageError].
func IsUsage(err error) bool { return report.IsUsage(err) }

// Table opens the record file target names and returns its table: loaded
// from the cache directory when a table saved for its version is there,
// else built (and saved). A local target must be a regular file.
func Table(ctx context.Context, target string, o Options) (*index.Table, error) {
	return kindOf(target).table(ctx, target, o)
}

// pathReach is how a local table looks at its path again: reopen opens
// the file now there (for refreshes), stat returns its attributes without
// opening it (the check before each append).
type pathReach struct {
	reopen func() (*os.File, error)
	stat   func() (os.FileInfo, error)
}

// openLocal is index.Open of path, refreshed through reach when set.
func openLocal(ctx context.Context, path string, o index.Options, reach *pathReach) (*index.Table, error) {
	if reach == nil {
		return index.Open(ctx, path, o)
	}
	f, err := local.OpenPath(path, o.Writable, false)
	if err != nil {
		return nil, err
	}
	src, err := local.NewReopeningStat(f, path, reach.reopen, reach.stat)
	if err != nil {
		f.Close()
		return nil, err
	}
	t, err := index.OpenSource(ctx, src, o)
	if err != nil {
		src.Close()
		return nil, err
	}
	return t, nil
}

// localOpen is Table for a local path (its row's opener).
func localOpen(ctx context.Context, path string, o Options) (*index.Table, error) {
	return localTable(ctx, path, o, nil)
}

// localTable is Table for a local path.
// reach, when set, is how the table looks at the path again (the local
// source's; nil: by the path, never through a symlink).
func localTable(ctx context.Context, path string, o Options, reach *pathReach) (*index.Table, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if err := CheckRegular(path, fi); err != nil {
		return nil, err
	}
	io := o.Index
	done := o.progress("indexing "+path, &io)
	t, err := openLocal(ctx, path, io, reach)
	done()
	if err != nil {
		if !strings.Contains(err.Error(), path) {
			err = fmt.Errorf("%s: %w", path, err)
		}
		return nil, err
	}
	inf := t.Info()
	logrus.WithFields(logrus.Fields{
		"file": path, "format": inf.Format.String(), "records": inf.Records,
		"source": inf.Loaded, "time": inf.BuildTime,
	}).Debug("index ready")
	return t, nil
}

// CheckRegular refuses directories, pipes and devices: a record file is a
// regular file (reading a FIFO would block, and a device has no size).
func CheckRegular(path string, fi os.FileInfo) error {
	switch {
	case fi.IsDir():
		return fmt.Errorf("%s is a directory, not a record file (recfs mount mirrors directories)", path)
	case !fi.Mode().IsRegular():
		return fmt.Errorf("%s is a %s, not a regular file", path, fileKind(fi.Mode()))
	}
	return nil
}

// fileKind names the type of a non-regular file.
func fileKind(m os.FileMode) string {
	switch {
	case m&os.ModeNamedPipe != 0:
		return "named pipe"
	case m&os.ModeSocket != 0:
		return "socket"
	case m&os.ModeCharDevice != 0:
		return "character device"
	case m&os.ModeDevice != 0:
		return "block device"
	case m&os.ModeSymlink != 0:
		return "symbolic link"
	}
	return "special file"
}

// OpenFile opens a local file a decoder names (a descriptor set, a
// manifest); it is decode.Params.Open for the commands.
func OpenFile(path string) (io.ReadCloser, error) { return os.Open(path) }
