package open

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/recfs/recfs/codec"
	"github.com/recfs/recfs/codec/decode"
	"github.com/recfs/recfs/codec/decoders"
	"github.com/recfs/recfs/fs"
	"github.com/recfs/recfs/index"
	"github.com/recfs/recfs/source/local"
)

// View wraps src, the source at target, in the view plan makes for it
// (the decoder plan chooses, told of target's directory when it is
// local); src itself without a plan.
func View(plan *decoders.Plan, src fs.Records, target string) (fs.Records, error) {
	if plan == nil {
		return src, nil
	}
	s, why, err := plan.Open(src, DecodeEnv(target, src.Info().Format))
	if err != nil {
		return nil, err
	}
	return fs.View(src, s, why), nil
}

// DecodeEnv describes the source at target, of format f, to its decoder:
// a local file's directory is there to read sibling files from (plain
// names, no symbolic link followed); a remote object has none.
func DecodeEnv(target string, f codec.Format) decode.Env {
	env := decode.Env{Path: target, Format: f}
	if !Remote(target) {
		env.Dir = localDir{dir: filepath.Dir(target)}
	}
	return env
}

// DecodeParams are a decoder's parameters as a user names them: the
// files (a MANIFEST, .proto files and the directories of their imports)
// made absolute, since a daemon or a later reopen reads them from another
// working directory, and read as the commands read files ([OpenFile],
// [OpenRecords]).
func DecodeParams(manifest string, proto, protoPath []string) decode.Params {
	return decode.Params{Manifest: absPaths(manifest)[0], Proto: absPaths(proto...), ProtoPath: absPaths(protoPath...),
		Open: OpenFile, OpenRecords: OpenRecords}
}

// absPaths returns ps with every local path made absolute; URLs and empty
// names stay as they are.
func absPaths(ps ...string) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p
		if a, err := filepath.Abs(p); err == nil && p != "" && !Remote(p) {
			out[i] = a
		}
	}
	return out
}

// OpenRecords opens a local record file named by the user (a decoder's
// parameter), without saved tables.
func OpenRecords(path string) (decode.RecordsCloser, error) {
	if Remote(path) {
		return nil, fmt.Errorf("%s: give a local file", path)
	}
	return index.Open(context.Background(), path, index.Options{CacheDir: "-"})
}

// localDir is the directory beside a local source, for its decoder: plain
// names only, symbolic links not followed. sub, when set, is a directory
// in dir (a Prometheus checkpoint), entered without following a link.
type localDir struct{ dir, sub string }

// plainName reports whether name names an entry of a directory.
func plainName(name string) bool {
	return name != "" && name != "." && name != ".." && !strings.ContainsAny(name, "/\x00")
}

// openDir opens the directory d is.
func (d localDir) openDir() (*os.File, error) {
	p, flags := d.dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC
	if d.sub != "" {
		p, flags = filepath.Join(d.dir, d.sub), flags|unix.O_NOFOLLOW
	}
	fd, err := unix.Open(p, flags, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: p, Err: err}
	}
	return os.NewFile(uintptr(fd), p), nil
}

// open opens name in the directory: a regular file, no symbolic link.
func (d localDir) open(name string) (*os.File, error) {
	if !plainName(name) {
		return nil, fmt.Errorf("%q: not a file name in %s", name, d.dir)
	}
	dir, err := d.openDir()
	if err != nil {
		return nil, err
	}
	defer dir.Close()
	p := filepath.Join(dir.Name(), name)
	fd, err := unix.Openat(int(dir.Fd()), name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: p, Err: err}
	}
	f := os.NewFile(uintptr(fd), p)
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = fmt.Errorf("%s: not a regular file", p)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// Sub returns the directory name in d: one level, no symbolic link.
func (d localDir) Sub(name string) (decode.Dir, error) {
	if !plainName(name) || d.sub != "" {
		return nil, fmt.Errorf("%q: not a directory name in %s", name, d.dir)
	}
	s := localDir{dir: d.dir, sub: name}
	f, err := s.openDir()
	if err != nil {
		return nil, err
	}
	return s, f.Close()
}

// Names lists the directory.
func (d localDir) Names() ([]string, error) {
	f, err := d.openDir()
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Readdirnames(-1)
}

// ReadFile reads the small regular file name.
func (d localDir) ReadFile(name string, max int64) ([]byte, error) {
	f, err := d.open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err == nil && int64(len(b)) > max {
		err = fmt.Errorf("%s: larger than %d bytes", f.Name(), max)
	}
	return b, err
}

// OpenRecords opens the record file name.
func (d localDir) OpenRecords(name string) (decode.RecordsCloser, error) {
	f, err := d.open(name)
	if err != nil {
		return nil, err
	}
	src, err := local.New(f, f.Name())
	if err != nil {
		f.Close()
		return nil, err
	}
	t, err := index.OpenSource(context.Background(), src, index.Options{CacheDir: "-"})
	if err != nil {
		f.Close()
		return nil, err
	}
	return t, nil
}
