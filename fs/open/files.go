package open

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/recfs/recfs/index"
	"github.com/recfs/recfs/index/report"
)

// Expand returns the files args name: files and s3:// URLs as
// given, directories walked in name order (recursively, symbolic links not
// followed) for the record files under them. Files under a directory that
// are not record files (a database's LOCK, CURRENT, OPTIONS, saved-index
// sidecars) are counted in other, not returned.
func Expand(args []string) (files []string, other int, err error) {
	for _, a := range args {
		fi, serr := os.Stat(a)
		if Remote(a) || serr != nil || !fi.IsDir() {
			files = append(files, a)
			continue
		}
		err := filepath.WalkDir(a, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.Type().IsRegular() {
				return nil
			}
			if IsRecordFile(p) {
				files = append(files, p)
			} else {
				other++
			}
			return nil
		})
		if err != nil {
			return nil, 0, err
		}
	}
	return files, other, nil
}

// recordNames are the name endings of record files: a file under a
// directory with one of them is checked even when its first bytes are
// damaged (the damage is what verify is for).
var recordNames = []string{".log", ".rio", ".recordio", ".tfrecord", ".tfrecords", ".grail-rpk", ".grail-rpk-gz"}

// IsRecordFile reports whether the regular file at p holds one of the
// record formats: its first bytes say so, or its name (see recordNames,
// and a MANIFEST-NNNNNN).
func IsRecordFile(p string) bool {
	base := filepath.Base(p)
	if strings.HasSuffix(base, SidecarSuffix) {
		return false
	}
	if strings.HasPrefix(base, "MANIFEST-") {
		return true
	}
	for _, suf := range recordNames {
		if strings.HasSuffix(base, suf) {
			return true
		}
	}
	f, fi, err := openRegular(p)
	if err != nil {
		return true // named to the command, which says what is wrong
	}
	defer f.Close()
	_, err = index.Detect(f, fi.Size())
	return err == nil
}

// DirEntries returns the entries of the local directory dir in name
// order, each file with its size and record format (see [FileFormat]).
func DirEntries(dir string) ([]report.Entry, error) {
	des, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	ents := make([]report.Entry, len(des))
	for i, e := range des {
		ents[i] = report.Entry{Name: e.Name(), Dir: e.IsDir(), Format: "dir"}
		// Not opened when the directory says it is a FIFO, a device or a
		// socket: opening a device may act (see openRegular).
		if t := e.Type() & fs.ModeType; t&^(fs.ModeDir|fs.ModeSymlink) != 0 {
			ents[i].Format = "other"
		} else if !e.IsDir() {
			ents[i].Format, ents[i].Size = FileFormat(filepath.Join(dir, e.Name()))
		}
	}
	return ents, nil
}

// FileFormat returns the record format of the local file at p ("other"
// for any other file, unreadable ones included) and its size. Only a
// regular file is opened (openRegular: a stat first, then a look at what
// was opened), so that neither a device nor a FIFO put in its place is
// opened to wait or to act.
func FileFormat(p string) (format string, size int64) {
	f, fi, err := openRegular(p)
	if err != nil {
		// Not readable: the size of a regular file all the same, from a
		// stat (which no kind of file makes wait).
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			return "other", fi.Size()
		}
		return "other", 0
	}
	defer f.Close()
	kind, err := index.Detect(f, fi.Size())
	if err != nil {
		return "other", fi.Size()
	}
	return kind.String(), fi.Size()
}

// Resolve returns the target a mount or a server serves: a local file or
// directory made absolute with its links resolved, or a URL as given.
// Anything else (a device, a socket, a missing path) is an error.
func Resolve(target string) (string, error) {
	if Remote(target) {
		return target, nil
	}
	fi, err := os.Stat(target)
	if err != nil {
		return "", fmt.Errorf("source: %w", err)
	}
	abs, err := filepath.Abs(target)
	if err == nil {
		abs, err = filepath.EvalSymlinks(abs)
	}
	if err != nil {
		return "", fmt.Errorf("source: %w", err)
	}
	if !fi.IsDir() && !fi.Mode().IsRegular() {
		return "", fmt.Errorf("source %s is neither a regular file nor a directory", target)
	}
	return abs, nil
}
