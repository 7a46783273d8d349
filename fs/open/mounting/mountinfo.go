package mounting

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// FSType is how recfs mounts appear in /proc/self/mountinfo.
const FSType = "fuse.recfs"

// Entry is one line of /proc/self/mountinfo.
type Entry struct {
	Point  string // mount point
	FSType string // e.g. "fuse.recfs"
	Source string // the FsName: recfs puts the source path here
}

// String says what is mounted, for messages: "TYPE (SOURCE)".
func (e Entry) String() string { return fmt.Sprintf("%s (%s)", e.FSType, e.Source) }

// ParseMountinfo reads mountinfo lines (proc(5)): the fifth field is the
// mount point, and after the " - " separator come the type and the
// source. Octal escapes (\040 for a space) are decoded; lines of another
// shape are skipped.
func ParseMountinfo(r io.Reader) ([]Entry, error) {
	var out []Entry
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		sep := -1
		for i := 6; i < len(f); i++ {
			if f[i] == "-" {
				sep = i
				break
			}
		}
		if len(f) < 5 || sep < 0 || sep+2 >= len(f) {
			continue
		}
		out = append(out, Entry{Point: unescape(f[4]), FSType: f[sep+1], Source: unescape(f[sep+2])})
	}
	return out, sc.Err()
}

// unescape decodes the \ooo escapes of mountinfo fields.
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// mounts returns the current mount table.
func mounts() ([]Entry, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ParseMountinfo(f)
}

// At returns the topmost mount whose mount point is dir, if any.
func At(dir string) (Entry, bool, error) {
	ms, err := mounts()
	if err != nil {
		return Entry{}, false, err
	}
	var found Entry
	ok := false
	for _, m := range ms {
		if m.Point == dir {
			found, ok = m, true // later lines are mounted on top
		}
	}
	return found, ok, nil
}

// CleanPoint returns the absolute, symlink-free path of dir without
// touching dir itself (a dead FUSE mount fails every stat with ENOTCONN):
// only its parent is resolved, and dir only when it is a symbolic link.
func CleanPoint(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	if abs == "/" {
		return abs, nil
	}
	parent, err := filepath.EvalSymlinks(filepath.Dir(abs))
	if err != nil {
		return "", err
	}
	p := filepath.Join(parent, filepath.Base(abs))
	if fi, err := os.Lstat(p); err == nil && fi.Mode()&os.ModeSymlink != 0 {
		return filepath.EvalSymlinks(p)
	}
	return p, nil
}

// Within reports whether path is dir or lies below it (both clean and
// absolute).
func Within(path, dir string) bool {
	if path == dir {
		return true
	}
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}

// IsStale reports whether the FUSE mount at dir has lost its server. It
// asks for the file system's statistics rather than stat-ing it: the
// kernel may answer a stat from its attribute cache, but statfs always
// reaches the server (and fails with ENOTCONN once the server is gone),
// and unlike an open of the directory it does not make the server list it
// (a listing of a large S3 prefix takes long).
func IsStale(dir string) bool {
	var st syscall.Statfs_t
	return errors.Is(syscall.Statfs(dir, &st), syscall.ENOTCONN)
}
